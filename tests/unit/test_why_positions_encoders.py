"""Issue #59, the positions and encoders lessons: each why-sentence rewritten there is checked here against
an independent computation (the model run directly, torch's own modules, closed forms), and the old
sentence is shown gone."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import torch
from torch.nn import functional as F

from explorer.kit.prose import lesson_text
from explorer.kit.steps import load_steps
from explorer.lessons.encoders.spec import ENCODER_SIMILARITY
from explorer.lessons.encoders.view import PRESETS, SimilaritySettings, shared_piece_cosines, similarity_view
from explorer.lessons.positions import boxes as measured
from explorer.lessons.positions.claims import neighbour_facts, table_facts
from explorer.lessons.positions.encodings import REVERSE_TASK, encoder_output, float64_encoder, reversal_run
from explorer.lessons.positions.spec import POSITIONS
from explorer.lessons.positions.view import PositionSettings, index_vanishes, position_view
from explorer.training.minilm import SENTENCE_TOKENS, load_minilm
from explorer.training.pretrained import load_model, model_name
from explorer.training.tasks import get_task
from harness.apptest import ROOT
from harness.claims import answer

DOG, MAN = PRESETS["word order"][:2]


def _cosine(x: np.ndarray, y: np.ndarray) -> float:
    x, y = x.astype(np.float64), y.astype(np.float64)
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


def _step(page: str, title: str):
    return next(step for step in load_steps(page) if step.title == title)


# --- encoders: "Who bit whom?" --------------------------------------------------------------------------


def test_who_bit_whom_blames_the_model_not_the_averaging():
    """Without any averaging the swap shows as little: MiniLM's [CLS] vectors of the two sentences, and
    "dog" as subject and as object, are nearly the same, computed here from the hidden states."""
    model = load_minilm()
    (a, _, ha), (b, _, hb) = model.trace(DOG, SENTENCE_TOKENS), model.trace(MAN, SENTENCE_TOKENS)
    cls = _cosine(ha[0], hb[0])
    dog = _cosine(ha[a.tokens.index("dog")], hb[b.tokens.index("dog")])
    mean = _cosine(ha.mean(axis=0), hb.mean(axis=0))
    assert cls > mean > 0.95 and dog > 0.95  # [CLS], no averaging at all, is closer than the mean
    assert shared_piece_cosines(DOG, MAN)["dog"] == dog and shared_piece_cosines(DOG, MAN)["[CLS]"] == cls
    text = answer("encoders", _step("encoders", "Who bit whom?"))
    assert "washes" not in text and "not because of the averaging" in text  # the cause is no longer the mean
    assert f"[CLS] vectors score {cls:.2f}" in text and f"“dog” as subject and as object {dog:.2f}" in text
    assert f"{mean:.2f}: nearly the same vector" in text


def test_who_bit_whom_is_hidden_where_the_unaveraged_vectors_do_move():
    """The claim reads [CLS] and the noun's own vector: sentences whose swap does move them hide it."""
    claim = ENCODER_SIMILARITY.claims["order_in_the_vectors"]
    lines = "\n".join(PRESETS["word order"])
    view = similarity_view(SimilaritySettings(preset="word order", sentences=lines))
    shown = type("Shown", (), {"view": view, "settings": None})
    assert claim.holds(shown)
    values = claim.values(shown)
    assert values["noun"] == "dog" and values["cls01"] == view.by_pooling["cls"][0, 1]
    assert values["token"] == shared_piece_cosines(DOG, MAN)["dog"]
    moved = {"mean": view.by_pooling["mean"], "cls": view.by_pooling["cls"] * 0.5}
    broken = type("Shown", (), {"view": dataclasses.replace(view, by_pooling=moved), "settings": None})
    assert not claim.holds(broken)  # a [CLS] cosine of about 0.49 no longer says "not the averaging"


def test_without_position_vectors_a_reordering_leaves_both_sentence_vectors_exactly_alone():
    """The similarity prose: with MiniLM's position table zeroed (a copy), the dog and the man swapped give
    the same [CLS] vector and the same mean, to rounding; with the table, they differ."""
    model = load_minilm()
    blind = copy.deepcopy(model.encoder)
    with torch.no_grad():
        blind.position.table.zero_()
    vectors = {}
    for name, encoder in (("with", model.encoder), ("without", blind)):
        out = [encoder(torch.tensor([model.encode(s, SENTENCE_TOKENS).ids]), causal=False, valid=None)[0][0]
               for s in (DOG, MAN)]
        vectors[name] = [(o[0], o.mean(dim=0)) for o in out]
    (cls_a, mean_a), (cls_b, mean_b) = vectors["without"]
    assert torch.allclose(cls_a, cls_b, atol=1e-5) and torch.allclose(mean_a, mean_b, atol=1e-5)
    (cls_a, mean_a), (cls_b, mean_b) = vectors["with"]
    assert (cls_a - cls_b).abs().max() > 1e-2 and (mean_a - mean_b).abs().max() > 1e-2
    prose = (ROOT / "explorer/lessons/encoders/prose.md").read_text()
    assert "after pooling the vectors are averaged" not in prose
    assert "the mean and [CLS] would both stay *exactly* the same" in prose


# --- positions: the notes' "useful range [0..1]" ----------------------------------------------------------


def _sinusoid(n: int, d: int, base: float) -> np.ndarray:
    """The table written out from the formula, column by column (independent of the library's)."""
    return np.array([[np.sin(p / base ** (j / d)) if j % 2 == 0 else np.cos(p / base ** ((j - 1) / d))
                      for j in range(d)] for p in range(n)])


def test_the_range_box_quotes_the_notes_and_answers_their_zero_to_one():
    notes = next((ROOT.parent / "shared/seeds").glob("004_*.txt"), None)
    if notes is not None:  # the lecture notes beside the project: the quotation is theirs
        assert "useful range [0..1]" in notes.read_text()
    for n, d, base in ((4, 4, 100.0), (100, 512, 10000.0), (9, 5, 30.0)):
        box = measured.sinusoidal_bounds(n, d, base)
        table = _sinusoid(n, d, base)
        negative = int((table < 0).sum())
        assert "“useful range [0..1]”" in box.notes_say
        assert f"{negative:,} of the {n * d:,} values are negative" in box.finding and "not [0, 1]" in box.finding
        assert box.rows[0][3] == negative and np.isclose(box.rows[0][1], table.min())
        lengths = np.sqrt((table**2).sum(axis=1))
        assert np.isclose(box.rows[0][4], lengths.min()) and np.isclose(box.rows[0][5], lengths.max())
        assert np.isclose(box.rows[1][5], (n - 1) * np.sqrt(d))  # the raw index's last row: p in every dimension
        if d % 2 == 0:
            assert np.allclose(lengths, np.sqrt(d / 2)) and f"√(d/2) = {np.sqrt(d / 2):.4g}" in box.finding
    one = measured.sinusoidal_bounds(1, 4, 100.0)  # one position: no negative value, and it says why
    assert "none of these 4 values is negative" in one.finding and "not [0, 1]" in one.finding


# --- positions: why the index encoding fails here ---------------------------------------------------------


def test_layernorm_removes_a_constant_added_to_every_feature_and_the_index_model_is_blind():
    """Independently of the view: torch's layer_norm of x + c·1 equals that of x; the shipped index model is
    pre-norm, and its float64 encoder's outputs only move with their letters when the input is reversed."""
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(5, 64, generator=generator, dtype=torch.float64)
    shifted = x + torch.arange(5, dtype=torch.float64)[:, None]  # the index: p in every feature
    assert torch.allclose(F.layer_norm(shifted, (64,)), F.layer_norm(x, (64,)), atol=1e-12)
    assert (shifted - x).abs().max() == 4  # the index itself is not small

    model = load_model(model_name(REVERSE_TASK, "index"))
    assert model.model.config.norm == "pre"
    encoder = float64_encoder("index")
    ids = torch.tensor([get_task(REVERSE_TASK).encode(list("ABCDEFG"))])
    before, after = encoder_output(encoder, ids)[0], encoder_output(encoder, ids.flip(1))[0]
    assert (after - before.flip(0)).abs().max() < 1e-9
    facts = index_vanishes()
    assert facts["layernorm"] < 1e-12 and facts["shuffle"] < 1e-9 and facts["largest"] == 6
    assert facts["index_accuracy"] == model.card["heldout_accuracy"]
    shown = type("Shown", (), {"view": type("View", (), {"index": facts})(), "settings": None})
    assert POSITIONS.claims["index_vanishes"].holds(shown)
    learned = type("Shown", (), {"view": type("View", (), {"index": {**facts, "shuffle": 3.2}})(), "settings": None})
    assert not POSITIONS.claims["index_vanishes"].holds(learned)  # an encoding that reaches attention: hidden


# --- positions: "inputs to most layer types (e.g., Fully Connected) are unordered" -------------------------


def test_a_dense_layer_sees_order_attention_without_positions_does_not():
    """Against torch's modules, built here with other weights: Linear over the flattened sequence changes
    under a permutation in a way the permutation does not undo; MultiheadAttention (no positions) and a
    per-position Linear only permute their outputs.  The box says the same from its own measurement."""
    T, d = 6, 8
    generator = torch.Generator().manual_seed(1)
    x = torch.randn(1, T, d, generator=generator, dtype=torch.float64)
    perm = torch.tensor([2, 0, 5, 1, 4, 3])
    torch.manual_seed(1)
    dense = torch.nn.Linear(T * d, T * d, dtype=torch.float64)
    attention = torch.nn.MultiheadAttention(d, 2, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        dense_out, dense_perm = dense(x.flatten(1)).view(T, d), dense(x[:, perm].flatten(1)).view(T, d)
        att_out, att_perm = attention(x, x, x)[0][0], attention(x[:, perm], x[:, perm], x[:, perm])[0][0]
    assert (dense_perm - dense_out[perm]).abs().max() > 0.1
    assert (att_perm - att_out[perm]).abs().max() < 1e-12

    box = measured.order_seen(7)
    (_, _, dense_undone), (_, shared_change, shared_undone), (_, _, attention_undone) = box.rows
    assert dense_undone > 0.1 and shared_change > 0.1 and max(shared_undone, attention_undone) < 1e-12
    assert "“e.g., Fully Connected”" in box.notes_say and "so it sees the order." in box.finding
    assert "only move each output with its input" in box.finding
    prose = (ROOT / "explorer/lessons/positions/prose.md").read_text()
    assert "does see the order; the box below measures all three" in prose
    assert "self-attention treats its input as a *set*" not in prose


# --- positions: the learned table's last row --------------------------------------------------------------


def test_the_learned_tables_last_row_is_its_initial_draw_shrunk_by_weight_decay():
    """Rebuilt with torch.manual_seed (not the library's seeded()), the shipped learned model's last position
    row points exactly where it started and is shorter (AdamW's weight decay): the text said 'still the
    random start'; it now quotes both.  A training input reaches only its own rows: the gradient of an
    input of three letters is zero in every other row."""
    from explorer.model.transformer import Transformer, TransformerConfig

    shipped = load_model(model_name(REVERSE_TASK, "learned"))
    torch.manual_seed(shipped.card["seed"])
    fresh = Transformer(TransformerConfig.from_dict(shipped.card["config"]))
    start = fresh.encoder.position.table.detach()[-1].double()
    last = shipped.model.encoder.position.table.detach()[-1].double()
    cosine = float(start @ last / (start.norm() * last.norm()))
    ratio = float(last.norm() / start.norm())
    assert cosine > 0.99999 and 0.9 < ratio < 0.999
    assert get_task(REVERSE_TASK).max_input_tokens == shipped.model.encoder.position.table.shape[0] - 1

    encoder = copy.deepcopy(shipped.model.encoder).requires_grad_(True)
    encoder.embed_tokens(torch.tensor([get_task(REVERSE_TASK).encode(list("ABC"))])).sum().backward()
    grad = encoder.position.table.grad
    assert grad[:3].abs().sum() > 0 and not grad[3:].any()

    learned = position_view(PositionSettings(kind="learned"))
    text = lesson_text("positions", "matrix: learned", n_rows=11, n_cols=64, model="m", **table_facts(learned))
    assert f"cosine {cosine:.3f} with the row drawn at initialisation, {ratio:.0%} of its length" in text
    geometry = lesson_text("positions", "geometry: learned", **neighbour_facts(learned))
    assert "no row at all past\nposition 10." in geometry
    assert "no row for positions longer than its training inputs" not in geometry  # row 10 is longer, unused


# --- positions: why ALiBi fails at reversal ----------------------------------------------------------------


def test_the_alibi_model_answers_a_word_and_its_mirror_image_alike():
    """Section 4's ALiBi sentence, on the shipped model: its float64 encoder's outputs for a reversed input
    are the outputs reversed, and greedy decoding gives the same answer to a word and to its mirror image."""
    encoder = float64_encoder("alibi")
    task = get_task(REVERSE_TASK)
    for word in ("ABCDEFG", "HELLO", "JABBEDCODE"):
        ids = torch.tensor([task.encode(list(word))])
        before, after = encoder_output(encoder, ids)[0], encoder_output(encoder, ids.flip(1))[0]
        assert (after - before.flip(0)).abs().max() < 1e-9
        assert reversal_run("alibi", tuple(word)).answer == reversal_run("alibi", tuple(word[::-1])).answer
    assert reversal_run("sinusoidal", tuple("ABC")).answer != reversal_run("sinusoidal", tuple("CBA")).answer
    prose = lesson_text("positions", "reversal: the other encodings")
    assert "the model gives a word and its\nmirror image the same answer" in prose


def test_an_index_on_one_dimension_survives_layernorm_and_far_along_outweighs_the_letter():
    """The box the index text points to, against torch's layer_norm on the shipped letters: the cosine of two
    different letters at position p, recomputed; small where training reaches, near 1 far beyond."""
    view = position_view(PositionSettings(kind="index"))
    box = view.boxes[-1]
    assert box.title == "A raw index that survives LayerNorm"
    assert "“doesn't generalize well to arbitrary lengths of sentences”" in box.notes_say
    encoder = float64_encoder("index")
    ids = torch.tensor(get_task(REVERSE_TASK).encode(list("ABCDEFGHIJKLMNOP")))
    letters = encoder.embed(ids).detach() * 8.0  # √64: the model scales its embeddings
    for p, cosine in box.rows:
        shifted = letters.clone()
        shifted[:, 0] += p
        unit = F.normalize(F.layer_norm(shifted, (64,)), dim=1)
        pairs = unit @ unit.T
        assert np.isclose(cosine, float((pairs.sum() - pairs.trace()) / (16 * 15)), atol=1e-6)
    found = dict(box.rows)
    assert abs(found[get_task(REVERSE_TASK).max_input_tokens - 1]) < 0.1 and found[1000] > 0.99
    assert "the position outweighs the letter" in box.finding
    with_every = letters + 1000.0  # the index in every dimension: LayerNorm removes it, letters stay apart
    unit = F.normalize(F.layer_norm(with_every, (64,)), dim=1)
    assert float(((unit @ unit.T).sum() - 16) / (16 * 15)) < 0.1
    assert position_view(PositionSettings(kind="sinusoidal")).boxes[-1].title != box.title  # index only
    assert "the last box of section 2 puts the index on one\ndimension" in lesson_text(
        "positions", "matrix: index")
