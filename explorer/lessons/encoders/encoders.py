"""Lesson: what encoders are for — sentence vectors, similarity, semantic search, attention sinks, and the
bidirectional RNN beside unmasked attention.  The prose is in lessons/encoders.md; every number in it is
read from the view."""

import functools

import numpy as np
import streamlit as st

from explorer.figures.common import frame_csv, matrix_csv
from explorer.kit.draw import Section, download_csv, escape_markdown, lesson_text, plotly_chart
from explorer.lessons.encoders.figures import CLIP_PERCENTILE, vectors_frame
from explorer.lessons.encoders.spec import ENCODER_BIRNN, ENCODER_SEARCH, ENCODER_SIMILARITY, ENCODER_SINKS, ENCODERS
from explorer.lessons.encoders.view import BIRNN_WIDTH
from explorer.serve.adapter import serve_lesson

text = functools.partial(lesson_text, "encoders")
PERCENT = {"format": "percent"}


def problem_shown(view) -> bool:
    """Say why the model could not be used (a missing or damaged file); say what text was replaced."""
    if view.problem is not None:
        st.error(f"The real model could not be loaded.\n\n{escape_markdown(view.problem)}\n\nThe BiRNN section "
                 "and every other page work without it.", icon=":material/error:")
        return True
    for note in getattr(view, "notes", ()):
        st.warning(escape_markdown(note, 400), icon=":material/text_fields:")
    return False


def vectors(shown) -> None:
    """1 · The key figure: one vector per word piece, and their mean."""
    view = shown.view
    st.subheader("1 · From token vectors to one sentence vector")
    if problem_shown(view):
        return
    chart_col, bars_col = st.columns([3, 2], gap="large")
    plotly_chart(shown.figures.vectors, where=chart_col, key="vectors")
    plotly_chart(shown.figures.to_mean, where=bars_col, key="to_mean")
    low, high = int(np.argmin(view.to_mean)), int(np.argmax(view.to_mean))
    st.markdown(text("vectors", n=len(view.tokens), d=view.hidden.shape[1], layers=view.layers,
                     clipped=100 - CLIP_PERCENTILE, low=view.to_mean[low], low_token=escape_markdown(view.tokens[low]),
                     high=view.to_mean[high], high_token=escape_markdown(view.tokens[high]),
                     cls_mean=view.cls_mean))


def pooling(shown) -> None:
    """Under the key figure: each token against the mean, and [CLS] against the mean on the corpus."""
    view, figures = shown.view, shown.figures
    if view.problem is not None:
        return
    download_csv("token_vectors.csv", "Download the token vectors and their mean (CSV)", frame_csv,
                 vectors_frame(view.tokens, view.hidden, view.mean).reset_index(), key="vectors_csv")
    st.subheader("2 · [CLS] or the mean?")
    chart_col, text_col = st.columns([1, 1], gap="large")
    plotly_chart(figures.pooling, where=chart_col, key="pooling_chart")
    mean, cls = view.report["mean"], view.report["cls"]
    verdict = "poorer" if cls.paraphrase - cls.unrelated < mean.paraphrase - mean.unrelated else "no worse"
    text_col.markdown(text("pooling", corpus=view.corpus_size, pairs=mean.pairs["unrelated"],
                     paraphrases=mean.pairs["paraphrase"], mp=mean.paraphrase, cp=cls.paraphrase,
                     mo=mean.order, co=cls.order, mu=mean.unrelated, cu=cls.unrelated,
                     mg=mean.paraphrase - mean.unrelated, cg=cls.paraphrase - cls.unrelated,
                     ms=mean.separation, cs=cls.separation, mn=mean.nearest_is_paraphrase,
                     cn=cls.nearest_is_paraphrase, verdict=verdict))
    st.dataframe(figures.table, hide_index=True, column_config={
        c: st.column_config.NumberColumn(c, format="%.5f" if c.startswith("P(") else "%.3f")
        for c in figures.table.columns[1:]})
    download_csv("pooling_report.csv", "Download the pooling report (CSV)", frame_csv, figures.table, key="pooling_csv")
    st.markdown(text("pooling why", verdict=verdict))


def similarity(shown) -> None:
    """3 · Cosines of the user's sentences beside word overlap."""
    view, figures = shown.view, shown.figures
    if problem_shown(view):
        return
    left, right = st.columns(2, gap="large")
    plotly_chart(figures.cosine, where=left, key="cosine")
    plotly_chart(figures.overlap, where=right, key="overlap")
    # Under the matrices, so that they are on a projector's first screen with a step's answer.
    st.markdown("  \n".join(f"**S{i + 1}** {escape_markdown(s, 200)}" for i, s in enumerate(view.sentences)))
    download_csv("similarity.csv", "Download the cosines (CSV)", matrix_csv, view.cosine, view.sentences,
                 view.sentences, key="cosine_csv", where=left)
    download_csv("word_overlap.csv", "Download the word overlaps (CSV)", matrix_csv, view.overlap, view.sentences,
                 view.sentences, key="overlap_csv", where=right)
    n = len(view.sentences)
    i, j = np.triu_indices(n, 1)
    best, worst = int(np.argmax(view.cosine[i, j])), int(np.argmin(view.cosine[i, j]))
    lines = [text("similarity closest", a=i[best] + 1, b=j[best] + 1, c=view.cosine[i[best], j[best]],
                  o=view.overlap[i[best], j[best]]),
             text("similarity farthest", a=i[worst] + 1, b=j[worst] + 1, c=view.cosine[i[worst], j[worst]],
                  o=view.overlap[i[worst], j[worst]])]
    same = [(a, b) for a, b in zip(i, j, strict=True) if view.overlap[a, b] == 1.0]
    if same:
        mean, cls = view.by_pooling["mean"], view.by_pooling["cls"]
        pairs = ", ".join(f"S{a + 1} and S{b + 1} (mean {mean[a, b]:.2f}, [CLS] {cls[a, b]:.2f})" for a, b in same)
        lines.append(text("similarity same words", pairs=pairs))
    st.markdown(" ".join(lines) + "\n\n" + text("similarity"))


def search(shown) -> None:
    """4 · The corpus searched by meaning and by spelling."""
    view, figures = shown.view, shown.figures
    if problem_shown(view):
        return
    meaning_col, overlap_col = st.columns(2, gap="large")
    meaning_col.markdown(f"**By meaning** (MiniLM, {'mean pooling' if view.pooling == 'mean' else '[CLS]'})")
    # Tables, not data grids: five rows whose sentences wrap, so the scores the answer quotes stay on
    # screen beside them in a half-width column (a grid cut them off when presenting).
    scores = {"cosine": "{:.3f}", "word overlap": "{:.2f}"}
    # A fixed uuid each: pandas draws a random one per Styler, and the bytes would change every run
    meaning_col.table(figures.meaning.style.format(scores).set_uuid("by_meaning"), hide_index=True)
    overlap_col.markdown("**By spelling** (word overlap: shared words ÷ all words)")
    overlap_col.table(figures.overlap.style.format(scores).set_uuid("by_spelling"), hide_index=True)
    download_csv("search_meaning.csv", "Download (CSV)", frame_csv, figures.meaning, key="meaning_csv",
                 where=meaning_col)
    download_csv("search_overlap.csv", "Download (CSV)", frame_csv, figures.overlap, key="overlap_search_csv",
                 where=overlap_col)
    (top, score), (spelled, spelled_score) = view.meaning[0], view.overlap[0]
    missed = sum(i not in {j for j, _ in view.overlap} for i, _ in view.meaning)
    st.markdown(text("search", top=escape_markdown(view.corpus[top]), score=score, shared=view.overlap_of_meaning[0],
                     spelled=escape_markdown(view.corpus[spelled]), spelled_score=spelled_score, missed=missed,
                     k=len(view.meaning)))
    if figures.parts is None:
        st.caption(text("parts cls"))
        return
    chart_col, text_col = st.columns([3, 2], gap="large")
    plotly_chart(figures.parts, where=chart_col, key="parts")
    order = np.argsort(-view.top_parts)[:3]
    text_col.markdown(text("parts", total=float(view.top_parts.sum()), score=score,
                           biggest=", ".join(f"“{escape_markdown(view.top_tokens[i])}” ({view.top_parts[i]:.3f})"
                                             for i in order)))


def sinks(shown) -> None:
    """5 · Attention to [CLS] and [SEP], per layer and head."""
    view, figures = shown.view, shown.figures
    if problem_shown(view):
        return
    plotly_chart(figures.cls, key="sink_cls")  # one under the other: 12 heads need the width for their numbers
    plotly_chart(figures.sep, key="sink_sep")
    download_csv("attention_sinks.csv", "Download the weights (CSV)", frame_csv, figures.frame, key="sinks_csv")
    per_layer = view.cls.mean(axis=1)
    st.markdown(text("sinks", texts=view.texts, rows=view.rows, uniform=view.uniform, first=per_layer[0],
                     later=float(per_layer[1:].mean()), ratio=float(per_layer[1:].mean() / view.uniform),
                     half=int((view.cls > 0.5).sum()), heads=view.cls.size, sep=float(view.sep.mean()),
                     most=float(view.cls.max()), layer=int(np.argmax(view.cls) // view.cls.shape[1]) + 1,
                     head=int(np.argmax(view.cls) % view.cls.shape[1]) + 1))


def birnn(shown) -> None:
    """6 · The bidirectional RNN beside the one-way loop and unmasked attention."""
    view, figures = shown.view, shown.figures
    T = next(iter(view.paths.values())).shape[0]
    plotly_chart(figures.figure, width="stretch", key="birnn")
    left, right = st.columns(2)
    download_csv(f"birnn_dependency_T{T}.csv", "Download the matrices (CSV)", frame_csv, figures.frame,
                 key="birnn_csv", where=left)
    download_csv(f"birnn_paths_T{T}.csv", "Download the path lengths (CSV)", frame_csv, figures.paths,
                 key="birnn_paths_csv", where=right)
    longest = {kind: int(np.max(steps[np.isfinite(steps)])) for kind, steps in view.paths.items()}
    st.markdown(text("birnn", T=T, width=BIRNN_WIDTH, reach_rnn=view.reach["rnn"], reach_birnn=view.reach["birnn"],
                     reach_unmasked=view.reach["unmasked"], long_rnn=longest["rnn"], long_birnn=longest["birnn"],
                     long_unmasked=longest["unmasked"], d=view.distance, fall_birnn=f"{10 ** view.fall['birnn']:.1e}",
                     fall_unmasked=f"{10 ** view.fall['unmasked']:.2g}"))


def fill_in(shown) -> None:
    """7 · Why there is no masked-word fill-in here."""
    st.subheader("7 · Masked-word fill-in: not offered here")
    if shown.view.problem is None:
        st.markdown(text("fill in", vocabulary=f"{shown.view.vocabulary:,}"))


serve_lesson(
    ENCODERS,
    lead=text("lead"),
    sidebar="Sentence vectors",
    sections=[
        Section("vectors", vectors),
        Section("pooling", pooling),
        Section("similarity", similarity, part=ENCODER_SIMILARITY, title="3 · How alike are these sentences?"),
        Section("search", search, part=ENCODER_SEARCH, title="4 · Semantic search over the corpus"),
        Section("sinks", sinks, part=ENCODER_SINKS, title="5 · Attention sinks: where idle heads look"),
        Section("birnn", birnn, part=ENCODER_BIRNN, title="6 · Both directions: a BiRNN beside unmasked attention"),
        Section("fill in", fill_in),
    ],
    working=lambda s: "Running all-MiniLM-L6-v2…",
)
