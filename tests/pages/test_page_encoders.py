"""AppTest: the encoders page (sentence vectors, similarity, search, attention sinks, the BiRNN), read
back from the rendered figures and tables and compared with the model computed directly."""

import re

import numpy as np
import pytest

from explorer.analysis.dependency import dependency_path_lengths
from explorer.analysis.encoders import attention_sinks, pooling_report
from explorer.kit.steps import load_steps
from explorer.lessons.encoders.view import DEFAULT_QUERY, DEFAULT_TEXT, PRESETS
from explorer.lessons.gradients.measures import dependency_views
from explorer.training.minilm import load_minilm
from explorer.training.sentences import load_corpus, word_overlap_search, words
from harness.apptest import (
    assert_no_exception,
    heatmap_z,
    info_text,
    plotly_array_1d,
    plotly_figures,
    run_page,
)
from harness.claims import answer

PAGE = "explorer/lessons/encoders/encoders.py"
HOSTILE = {
    "empty": ("", "is empty"),
    "spaces": ("   \n\t ", "is empty"),
    "punctuation": ("?!... ,;:", "only punctuation"),
    "emoji": ("🙂🙂🙂 🚀", "no word pieces for"),
    "another script": ("Привет, как дела?", "Latin alphabet"),
    "Chinese": ("你好世界", "Latin alphabet"),
}



def figure(at, title_part: str) -> dict:
    """The first Plotly figure whose title contains `title_part` (or the key figure for "")."""
    for spec in plotly_figures(at):
        if title_part in spec["layout"].get("title", {}).get("text", "") or not title_part:
            return spec
    raise AssertionError(f"no figure titled {title_part!r}")


def markdown(at) -> str:
    return "\n".join(el.value for el in at.markdown)


def vectors_z(at) -> np.ndarray:
    return heatmap_z(at, 0)


def table(at, column: str):
    return next(df.value for df in [*at.dataframe, *at.table] if column in df.value.columns)


def test_default_view_token_vectors_pooled_as_the_model_computes_them():
    at = run_page(PAGE)
    assert not info_text(at), "a clean URL must not produce a note"
    model = load_minilm()
    hidden = model.hidden(DEFAULT_TEXT, 256).astype(np.float64)
    z = vectors_z(at)
    assert z.shape == (len(hidden) + 1, 384)
    np.testing.assert_allclose(z[:-1], hidden, atol=1e-5)
    np.testing.assert_allclose(z[-1], hidden.mean(axis=0), atol=1e-5)  # the mean row pools the rows above
    mean = z[-1] / np.linalg.norm(z[-1])
    np.testing.assert_allclose(mean, model.embed([DEFAULT_TEXT])[0], atol=1e-5)  # what `embed` returns
    cls_mean = float(hidden[0] @ mean / np.linalg.norm(hidden[0]))
    assert f"has cosine **{cls_mean:.2f}** with the mean" in markdown(at)
    report = pooling_report()
    shown = table(at, "paraphrase pairs")
    for pooling, row in zip(("mean", "cls"), shown.itertuples(index=False), strict=True):
        assert row[1] == pytest.approx(report[pooling].paraphrase)
        assert row[3] == pytest.approx(report[pooling].unrelated)
    text = markdown(at)
    assert f"**{report['mean'].unrelated:.2f}**" in text and f"already {report['cls'].unrelated:.2f}" in text
    assert "[CLS] is the poorer sentence vector" in text
    assert len(at.get("download_button")) == 9, "a CSV for every matrix and table"
    assert "no such head" in text, "the page says why there is no masked-word fill-in"


def test_similarity_matrix_follows_the_preset_and_the_edited_sentences():
    at = run_page(PAGE)
    model = load_minilm()
    cosine = heatmap_z(at, plotly_figures(at).index(figure(at, "MiniLM: cosine")))
    np.testing.assert_allclose(cosine, model.similarity(list(PRESETS["tired / wide"])), atol=1e-6)
    at.selectbox(key="sims").set_value("word order").run()
    assert_no_exception(at)
    assert at.text_area(key="lines").value == "\n".join(PRESETS["word order"])
    overlap = heatmap_z(at, plotly_figures(at).index(figure(at, "Word overlap")))
    assert overlap[0, 1] == 1.0 and overlap[2, 3] == 1.0, "the same words: order-blind overlap is 1"
    assert "Same set of words: S1 and S2" in markdown(at)
    mine = ["A cat sleeps on the mat.", "The kitten naps on a rug.", "Stock prices fell sharply today."]
    at.text_area(key="lines").set_value("\n".join(mine)).run()
    assert_no_exception(at)
    cosine = heatmap_z(at, plotly_figures(at).index(figure(at, "MiniLM: cosine")))
    np.testing.assert_allclose(cosine, model.similarity(mine), atol=1e-6)
    assert cosine[0, 1] > cosine[0, 2], "the paraphrase is nearer than the unrelated sentence"
    at.radio(key="pooling").set_value("cls").run()  # the sidebar's pooling reaches the section
    cosine = heatmap_z(at, plotly_figures(at).index(figure(at, "MiniLM: cosine")))
    np.testing.assert_allclose(cosine, model.similarity(mine, "cls"), atol=1e-6)


def test_search_ranks_by_cosine_beside_word_overlap():
    at = run_page(PAGE)
    corpus = load_corpus()
    model = load_minilm()
    expected = model.search(DEFAULT_QUERY, corpus.sentences, 5)
    meaning = table(at, "cosine")
    assert list(meaning["sentence"]) == [corpus.sentences[i] for i, _ in expected]
    np.testing.assert_allclose(meaning["cosine"], [s for _, s in expected], atol=1e-9)
    assert list(meaning["cosine"]) == sorted(meaning["cosine"], reverse=True)
    vectors = model.corpus_vectors(corpus.sentences).astype(np.float64)
    direct = vectors @ model.embed([DEFAULT_QUERY])[0].astype(np.float64)
    assert [corpus.sentences[i] for i in np.argsort(-direct)[:5]] == list(meaning["sentence"])
    overlap = next(df.value for df in at.table if "cosine" not in df.value.columns and "word overlap" in df.value)
    assert list(overlap["sentence"]) == [corpus.sentences[i] for i, _ in word_overlap_search(DEFAULT_QUERY,
                                                                                           corpus.sentences, 5)]
    parts = plotly_array_1d(figure(at, "What each word piece")["data"][0]["x"])
    assert parts.sum() == pytest.approx(expected[0][1], abs=1e-5), "the pieces' terms add up to the cosine"
    at.slider(key="k").set_value(8).run()
    assert len(table(at, "cosine")) == 8
    at.text_area(key="query").set_value("Will it rain tomorrow?").run()
    assert_no_exception(at)
    top = table(at, "cosine")["topic"].iloc[0]
    assert top == "weather"
    at.radio(key="pooling").set_value("cls").run()
    ranked = model.search("Will it rain tomorrow?", corpus.sentences, 8, "cls")
    np.testing.assert_allclose(table(at, "cosine")["cosine"], [s for _, s in ranked], atol=1e-9)
    assert any("does not split over the hit's words" in c.value for c in at.caption)


def test_attention_sinks_and_birnn_sections_show_the_measurements():
    at = run_page(PAGE)
    sinks = attention_sinks()
    np.testing.assert_allclose(heatmap_z(at, plotly_figures(at).index(figure(at, "to [CLS]"))), sinks.cls, atol=1e-9)
    np.testing.assert_allclose(heatmap_z(at, plotly_figures(at).index(figure(at, "to [SEP]"))), sinks.sep, atol=1e-9)
    text = markdown(at)
    assert f"**{sinks.uniform:.3f}**" in text and f"**{sinks.cls[1:].mean():.2f}**" in text
    assert f"{int((sinks.cls > 0.5).sum())} of the 72 heads" in text
    birnn = next(spec for spec in plotly_figures(at) if any("BiRNN" in a.get("text", "")
                                                             for a in spec["layout"].get("annotations", [])))
    index = plotly_figures(at).index(birnn)
    expected = dependency_views("birnn", 24, 16).recurrent
    np.testing.assert_allclose(heatmap_z(at, index, trace=1), np.log10(expected), atol=1e-9)
    assert np.isfinite(heatmap_z(at, index, trace=1)).all(), "the BiRNN depends on every input"
    assert np.isnan(heatmap_z(at, index, trace=0)[0, 1]), "the one-way loop does not read ahead"
    assert f"up to **{int(dependency_path_lengths(24, 'birnn').max())}** steps" in text
    at.select_slider(key="birnn_T").set_value(8).run()
    assert heatmap_z(at, index, trace=1).shape == (8, 8)


@pytest.mark.parametrize("name", HOSTILE)
def test_typed_text_the_model_cannot_read_gets_a_message_and_the_default(name):
    value, reason = HOSTILE[name]
    at = run_page(PAGE)
    default = vectors_z(at)
    at.text_area(key="text").set_value(value).run()
    assert_no_exception(at)
    assert reason in info_text(at) and "Showing the default instead" in info_text(at)
    np.testing.assert_array_equal(vectors_z(at), default)
    at.text_area(key="query").set_value(value).run()
    assert_no_exception(at)
    assert "The query " in info_text(at) and info_text(at).count(reason) == 2
    assert table(at, "cosine")["sentence"].iloc[0] == "The puppy fell asleep on the sofa."
    at.text_area(key="lines").set_value(f"{value}\n{value}").run()
    assert_no_exception(at)
    assert "Fewer than two sentences" in info_text(at)
    assert heatmap_z(at, plotly_figures(at).index(figure(at, "MiniLM: cosine"))).shape == (3, 3)


@pytest.mark.parametrize("key, label", [("text", "Sentence to pool"), ("query", "Query"),
                                        ("lines", "Sentences, one per line")])
def test_a_100_kb_link_value_is_refused_with_a_note_and_the_default(key, label):
    at = run_page(PAGE, {key: "word " * 20_000})
    assert label in info_text(at)
    assert len(at.text_area(key=key).value) < 2000
    assert vectors_z(at).shape[0] == len(load_minilm().tokenize(DEFAULT_TEXT)) + 1


def test_mixed_text_is_read_and_a_line_it_cannot_read_is_left_out():
    at = run_page(PAGE, {"text": "A robot 🤖 ordered crème brûlée."})
    assert not info_text(at)
    assert vectors_z(at).shape[0] == len(load_minilm().tokenize("A robot 🤖 ordered crème brûlée.")) + 1
    at.text_area(key="lines").set_value("The cat sat.\n🙂\nA dog lay down.").run()
    assert "Line 2 is made only of characters" in info_text(at)
    assert heatmap_z(at, plotly_figures(at).index(figure(at, "MiniLM: cosine"))).shape == (2, 2)


def test_the_numbers_in_the_step_reveals_are_the_views():
    steps = {step.title: answer("encoders", step) for step in load_steps("encoders")}  # as revealed
    model = load_minilm()
    hidden = model.hidden(DEFAULT_TEXT, 256).astype(np.float64)
    mean = hidden.mean(axis=0)
    to_mean = hidden @ mean / np.linalg.norm(hidden, axis=1) / np.linalg.norm(mean)
    tokens = model.tokenize(DEFAULT_TEXT)
    for token, expected in (("[SEP]", "0.89"), (".", "0.86"), ("puppy", "0.66"), ("[CLS]", "0.60")):
        assert f"{to_mean[tokens.index(token)]:.2f}" == expected
        assert expected in steps["One vector per word piece"]
    report = pooling_report()
    mean_s, cls_s = report["mean"], report["cls"]
    assert [f"{v:.2f}" for v in (mean_s.unrelated, cls_s.unrelated, mean_s.paraphrase, cls_s.paraphrase,
                                 mean_s.paraphrase - mean_s.unrelated, cls_s.paraphrase - cls_s.unrelated)] == \
        ["0.06", "0.58", "0.77", "0.92", "0.71", "0.34"]
    tired = model.similarity(list(PRESETS["tired / wide"]))
    assert (f"{tired[1, 2]:.2f}", f"{tired[0, 1]:.2f}") == ("0.94", "0.83")
    order = model.similarity(list(PRESETS["word order"]))
    assert (f"{order[0, 1]:.2f}", f"{order[2, 3]:.2f}") == ("0.98", "0.98")
    corpus = load_corpus()
    hits = model.search(DEFAULT_QUERY, corpus.sentences, 5)
    assert corpus.sentences[hits[0][0]] == DEFAULT_TEXT and f"{hits[0][1]:.2f}" == "0.77"
    spelled = word_overlap_search(DEFAULT_QUERY, corpus.sentences, 5)
    assert hits[0][0] not in [i for i, _ in spelled] and f"{spelled[0][1]:.2f}" == "0.40"
    cls_hits = model.search(DEFAULT_QUERY, corpus.sentences, 5, "cls")
    assert [f"{cls_hits[0][1]:.2f}", f"{cls_hits[4][1]:.2f}", f"{hits[4][1]:.2f}"] == ["0.89", "0.71", "0.31"]
    assert corpus.sentences[cls_hits[4][0]] in steps["Search with [CLS]"]
    sinks = attention_sinks()
    assert [f"{sinks.cls[1:].mean():.2f}", str(int((sinks.cls > 0.5).sum())), f"{sinks.sep.mean():.2f}",
            f"{sinks.uniform:.3f}"] == ["0.56", "38", "0.04", "0.095"]
    birnn = dependency_views("birnn", 24, 16).recurrent
    gap = np.abs(np.subtract.outer(np.arange(24), np.arange(24)))
    assert f"{birnn[gap == 10].mean() / np.diag(birnn).mean():.1e}" == "1.5e-04"
    assert "1.5e-04" in steps["Both directions"]


def test_search_says_what_share_of_the_two_sentences_words_are_in_both():
    # The percentage is word overlap (shared words ÷ the words of the two together), not a share of the
    # hit's own words: the sentence says so.
    text = markdown(run_page(PAGE))
    said = re.search(r"The best hit by meaning is “(.+?)” \(cosine [\d.]+\); of the words it and the query use "
                     r"between\s+them, (\d+)% are in both\.", text)
    assert said is not None, text
    top, query = words(said.group(1)), words(DEFAULT_QUERY)
    assert int(said.group(2)) == round(100 * len(top & query) / len(top | query))
    assert round(100 * len(top & query) / len(top)) != int(said.group(2))  # not the hit's own words' share


def test_who_bit_whom_does_not_blame_the_averaging():
    # Issue #59: [CLS] (no averaging) is even closer than the mean, so the answer names the model's vectors,
    # not mean pooling, and quotes the unaveraged cosines it rests on.
    model = load_minilm()
    text = answer("encoders", next(s for s in load_steps("encoders") if s.title == "Who bit whom?"))
    cls = model.similarity(list(PRESETS["word order"][:2]), "cls")[0, 1]
    assert "washes" not in text and f"the [CLS] vectors score {cls:.2f}" in text


def test_explanations_say_what_is_shown_or_cite_it():
    # Issue #59: step 1 said "what sets one sentence apart sits in smaller differences" (nothing measures it):
    # now what the bars show, the average nearest [SEP] (0.89) and "puppy" farther (0.66). The sinks prose
    # said what flows from [CLS] is "close to a constant" (not measured): now cited, without it.
    from explorer.kit.prose import lesson_sections

    steps = {step.title: answer("encoders", step) for step in load_steps("encoders")}
    first = steps["One vector per word piece"]
    assert "smaller differences" not in first and "The average sits nearest the end marker every text has" in first
    assert first.startswith("Neither word: [SEP] is closest")
    assert "parks its weight there" not in steps["Where idle heads look"]
    sections = lesson_sections("encoders")
    assert "close to a constant" not in sections["sinks"] and "Clark et al." in sections["sinks"]
    assert "Reimers & Gurevych" in sections["pooling why"] and "Devlin et al., *BERT*" in sections["vectors"]
    assert "then it does carry the sentence" not in sections["pooling why"]
    assert "meaningless for the other" not in sections["pooling"]  # a threshold does not carry over; it still ranks
