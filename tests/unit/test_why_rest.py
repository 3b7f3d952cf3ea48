"""Issue #59 for the home page and the length, real and train lessons: each explanation these pages give
is shown on the spot, cited, or says what the figure shows.  Every test here failed on the text it
replaced."""

import re

from explorer.training.pretrained import PRETRAINED_DIR
from tests.support.apptest import assert_no_exception, page_test


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if s.strip()]


def test_home_does_not_state_the_notes_long_range_claim_as_fact_and_cites_the_recall_runs():
    """The home page said attention 'is why transformers train in parallel and learn long-range dependencies
    that RNNs lose'. This project's own recall runs carried a letter across 512 steps through each loop
    trained with long gaps; the sentence is now the notes', and the measurement is cited."""
    at = page_test("app.py").run()
    assert_no_exception(at)
    text = "\n".join(el.value for el in at.markdown)
    about = [s for s in _sentences(text) if "long-range" in s]
    assert about and all("lecture notes" in s for s in about), about
    assert "pretrained/recall-experiments.md" in text
    record = " ".join((PRETRAINED_DIR / "recall-experiments.md").read_text().split())
    assert "still 100 % at every band up to 257–512: the loops learned a latch" in record
    assert "all three loops learned to carry the letter across 128 steps (and 512" in record


def test_length_says_why_the_raw_index_fails_and_shows_it_on_the_spot():
    """'The raw index and no encoding fail inside the band, because they cannot tell the model where a letter
    stands' gave the index's failure no cause; here it is a LayerNorm artefact (the index adds p to every
    dimension and each pre-norm LayerNorm removes the mean). The sentence now says so, and its claim checks
    that the index model's logits are its weights' with no encoding: checked here independently, with the
    model's own LayerNorms and torch's layer_norm."""
    import dataclasses
    import types

    import torch

    from explorer.analysis.length import REVERSAL_MODELS
    from explorer.serve import runtime
    from explorer.serve.lessons import LENGTH
    from explorer.serve.prose import lesson_sections
    from explorer.training.pretrained import load_model
    from explorer.views.claims import say
    from explorer.views.length import LENGTH_CLAIMS, LengthSettings

    model = load_model(REVERSAL_MODELS["index"]).model
    assert model.config.norm == "pre" and model.config.encoding == "index"
    x = torch.randn(5, model.config.d_model, generator=torch.Generator().manual_seed(0))
    shifted = x + torch.arange(5.0)[:, None]  # the index: position p added to every dimension
    for norm in (model.encoder.layers[0].attn_norm, model.decoder.layers[0].attn_norm, model.encoder.final_norm):
        torch.testing.assert_close(norm(shifted), norm(x), atol=1e-5, rtol=0)
    one = x.clone()
    one[:, 0] += torch.arange(5.0)  # the index in one dimension only: LayerNorm keeps it
    assert (torch.nn.functional.layer_norm(one, (x.shape[1],)) - torch.nn.functional.layer_norm(x, (x.shape[1],))
            ).abs().max() > 0.5

    text = lesson_sections("length")["claim: fail_inside"]
    shown = runtime.shown(LENGTH, LengthSettings())
    said = say(LENGTH_CLAIMS, "fail_inside", text, shown)
    assert said is not None and "LayerNorm" in said and "every dimension" in said
    assert shown.view.index_unseen < 1e-3
    assert f"{shown.view.index_unseen:.0e}" in said
    # Were the index seen (a model whose outputs differ), the sentence would not be said.
    seen = types.SimpleNamespace(settings=shown.settings, view=dataclasses.replace(shown.view, index_unseen=0.5))
    assert say(LENGTH_CLAIMS, "fail_inside", text, seen) is None
