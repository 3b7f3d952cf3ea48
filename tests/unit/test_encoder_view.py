"""explorer.lessons.encoders.view and explorer.lessons.encoders.figures: the encoders lesson's views against direct
computations (the model run by hand, torch-free closed forms), text the model cannot read, the
settings' bounds, a missing model, and figures that pass Plotly's full validation."""

import dataclasses
import re

import numpy as np
import plotly.graph_objects as go
import pytest

from explorer.analysis.dependency import dependency_path_lengths
from explorer.kit.settings import check
from explorer.lessons.encoders import figures
from explorer.lessons.encoders import view as encoders
from explorer.lessons.encoders.view import (
    MAX_SENTENCES,
    PRESETS,
    BiRNNSettings,
    EncoderSettings,
    SearchSettings,
    SimilaritySettings,
    SinkSettings,
    unreadable,
)
from explorer.lessons.gradients.measures import dependency_views
from explorer.training.minilm import MiniLMError, load_minilm
from explorer.training.sentences import load_corpus


def validated(fig: go.Figure) -> dict:
    return go.Figure(fig.to_dict()).to_dict()


@pytest.mark.parametrize("text, readable", [
    ("The cat sat.", True), ("ok 🙂", True), ("café", True), ("12.50", True), ("Привет and hello", True),
    ("", False), (" \n\t", False), ("\u200b\u200b", False), ("?!...;", False), ("🙂🚀", False),
    ("Привет мир", False), ("你好世界", False), ("—–…", False),
])
def test_unreadable_text_is_named_and_readable_text_passes(text, readable):
    assert (unreadable(text) is None) == readable


def test_encoder_view_is_the_model_run_directly():
    view = encoders.encoder_view(EncoderSettings(text="A dog barked at the postman."))
    model = load_minilm()
    hidden = model.hidden("A dog barked at the postman.", 256).astype(np.float64)
    assert view.tokens == tuple(model.tokenize("A dog barked at the postman."))
    np.testing.assert_allclose(view.hidden, hidden, atol=1e-6)
    np.testing.assert_allclose(view.mean / np.linalg.norm(view.mean), model.embed(["A dog barked at the postman."])[0],
                               atol=1e-6)
    direct = hidden @ view.mean / np.linalg.norm(hidden, axis=1) / np.linalg.norm(view.mean)
    np.testing.assert_allclose(view.to_mean, direct, atol=1e-12)
    cls = model.embed(["A dog barked at the postman."], "cls")[0]
    assert view.cls_mean == pytest.approx(float(cls @ (view.mean / np.linalg.norm(view.mean))), abs=1e-6)
    assert set(view.report) == {"mean", "cls"} and view.corpus_size == len(load_corpus())
    assert not view.notes and view.problem is None


def test_a_text_beyond_the_sentence_limit_is_cut_with_a_note():
    text = "1." * 150  # 300 characters, 300 word pieces
    view = encoders.encoder_view(EncoderSettings(text=text))
    assert len(view.tokens) == 256 and "were left out" in view.notes[0]


@pytest.mark.parametrize("text", ["", "!!!", "🙂", "Привет мир"])
def test_unreadable_sentence_and_query_fall_back_to_the_defaults(text):
    view = encoders.encoder_view(EncoderSettings(text=text))
    assert view.text == encoders.DEFAULT_TEXT and "Showing the default" in view.notes[0]
    search = encoders.search_view(SearchSettings(query=text))
    assert search.query == encoders.DEFAULT_QUERY and "The query" in search.notes[0]


def test_similarity_view_reads_lines_keeps_at_most_eight_and_falls_back_to_the_preset():
    lines = [f"Sentence number {n} is about topic {n}." for n in range(10)]
    view = encoders.similarity_view(SimilaritySettings(sentences="\n".join(["🙂", *lines, "", "  "])))
    assert view.sentences == tuple(lines[:MAX_SENTENCES])
    assert any("Line 1" in note for note in view.notes) and any("first 8" in note for note in view.notes)
    model = load_minilm()
    np.testing.assert_allclose(view.cosine, model.similarity(lines[:MAX_SENTENCES]), atol=1e-12)
    assert np.allclose(np.diag(view.overlap), 1)
    assert view.overlap[0, 1] == pytest.approx(5 / 7)  # {sentence, number, is, about, topic} of 7 words
    alone = encoders.similarity_view(SimilaritySettings(preset="word order", sentences="Just one line."))
    assert alone.sentences == PRESETS["word order"] and "Fewer than two" in alone.notes[-1]
    cls = encoders.similarity_view(SimilaritySettings(pooling="cls", sentences="\n".join(lines[:3])))
    np.testing.assert_allclose(cls.cosine, model.similarity(lines[:3], "cls"), atol=1e-12)


@pytest.mark.parametrize("query", ["Will it rain tomorrow?", "How do I cook pasta?"])
def test_search_view_is_cosine_order_and_its_parts_add_up_to_the_best_score(query):
    view = encoders.search_view(SearchSettings(query=query, k=7))
    model, corpus = load_minilm(), load_corpus()
    scores = model.corpus_vectors(corpus.sentences).astype(np.float64) @ model.embed([query])[0].astype(np.float64)
    assert [i for i, _ in view.meaning] == list(np.argsort(-scores, kind="stable")[:7])
    assert view.top_parts.sum() == pytest.approx(view.meaning[0][1], abs=1e-5)
    assert view.top_tokens == tuple(model.tokenize(corpus.sentences[view.meaning[0][0]]))
    for (i, _), shared in zip(view.meaning, view.overlap_of_meaning, strict=True):
        a, b = (set(re.findall(r"[^\W_]+|_+", text.lower())) for text in (query, corpus.sentences[i]))
        assert shared == pytest.approx(len(a & b) / len(a | b))
    cls = encoders.search_view(SearchSettings(query=query, k=3, pooling="cls"))
    assert cls.top_parts is None and cls.meaning == tuple(model.search(query, corpus.sentences, 3, "cls"))


def test_sink_view_and_birnn_view_against_their_measurements():
    sinks = encoders.sink_view(SinkSettings())
    assert sinks.cls.shape == (6, 12) and 0 < sinks.uniform < 1 and sinks.texts == len(load_corpus())
    view = encoders.birnn_view(BiRNNSettings(T=16))
    np.testing.assert_array_equal(view.panels[1][1], dependency_views("birnn", 16, 16).recurrent)
    np.testing.assert_array_equal(view.panels[0][1], dependency_views("rnn", 16, 16).recurrent)
    np.testing.assert_array_equal(view.paths["birnn"], dependency_path_lengths(16, "birnn"))
    assert view.reach == {"rnn": pytest.approx(17 / 32), "birnn": 1.0, "unmasked": 1.0}
    assert view.fall["birnn"] < -2 < view.fall["unmasked"], "the loop fades with distance, attention does not"


def test_settings_are_bounded():
    for bad in (EncoderSettings(text="x" * 301), SearchSettings(k=11), SearchSettings(k=0),
                SimilaritySettings(preset="nope"), BiRNNSettings(T=12), EncoderSettings(pooling="max")):
        with pytest.raises(ValueError):
            check(bad)
    check(SimilaritySettings(preset="paraphrases", sentences="anything"))


def test_a_missing_model_is_reported_not_raised(monkeypatch):
    def missing():
        raise MiniLMError("the files are missing")

    monkeypatch.setattr(encoders, "load_minilm", missing)
    for view, draw in ((encoders.encoder_view(EncoderSettings(text="Other text.")), figures.encoder_figures),
                       (encoders.similarity_view(SimilaritySettings()), figures.similarity_figures),
                       (encoders.search_view(SearchSettings(query="Another query.")), figures.search_figures)):
        assert view.problem == "the files are missing"
        assert all(value is None for value in dataclasses.astuple(draw(view)))


def test_every_figure_is_valid():
    made = [figures.encoder_figures(encoders.encoder_view(EncoderSettings())),
            figures.similarity_figures(encoders.similarity_view(SimilaritySettings())),
            figures.search_figures(encoders.search_view(SearchSettings())),
            figures.sink_figures(encoders.sink_view(SinkSettings())),
            figures.birnn_figures(encoders.birnn_view(BiRNNSettings(T=8)))]
    count = 0
    for made_figures in made:
        for field in dataclasses.fields(made_figures):
            value = getattr(made_figures, field.name)
            if isinstance(value, go.Figure):
                validated(value)
                count += 1
    assert count == 9
