"""Lesson: length and memory — past the trained length per encoding, the bytes attention costs, and
three ways to spend fewer (GQA, tiled attention, sliding windows).  The prose is in lessons/length.md."""

import streamlit as st

from explorer.analysis.claims import PUBLISHED_LENGTHS
from explorer.analysis.length import REVERSAL_MODELS, SAMPLES
from explorer.figures.common import frame_csv
from explorer.kit.draw import Section, altair_chart, claimed, download_csv, lesson_text, plotly_chart
from explorer.lessons.length.figures import gqa_sharing, human_bytes
from explorer.lessons.length.spec import LENGTH, LENGTH_GQA, LENGTH_MEMORY, LENGTH_TILED, LENGTH_WINDOW
from explorer.lessons.length.view import ENCODING_LABELS
from explorer.serve.adapter import serve_lesson

PAGE = "length"
PERCENT = st.column_config.NumberColumn(format="percent")


def text(name: str, **values) -> str:
    return lesson_text(PAGE, name, **values)


def accuracy(shown) -> None:
    """1 · The key figure: accuracy against length per encoding, the trained band shaded."""
    view, figures = shown.view, shown.figures
    low, high = view.trained
    st.subheader("1 · Past the trained length")
    chart_col, text_col = st.columns([3, 2], gap="large")
    altair_chart(figures.chart, where=chart_col, key="length_chart")
    if figures.coinciding:
        chart_col.caption(figures.coinciding)
    with text_col:
        st.markdown(text("accuracy", low=low, high=high, samples=SAMPLES, first=int(view.lengths[0]),
                         last=int(view.lengths[-1]), tested=", ".join(str(n) for n in view.lengths)))
        for encoding, problem in view.damaged.items():  # a model file that could not be read: a real fault
            st.warning(f"**{ENCODING_LABELS[encoding]}: left out.** {problem}", icon=":material/hourglass_empty:")
        for encoding, reason in view.refused.items():  # how the model is built, not a fault: a caption
            if reason:
                st.caption(f"**Why the {ENCODING_LABELS[encoding]}'s line stops.** {reason}.")
    summary = figures.summary
    st.dataframe(summary, hide_index=True, column_config={c: PERCENT for c in summary.columns[2:]})
    st.caption("None: no accuracy at that length, because the model refuses it (the reason is beside the chart).")
    download_csv("accuracy_by_length.csv", "Download accuracy by length (CSV)", frame_csv, figures.frame,
                 key="length_csv")


def _published() -> str:
    return "\n".join(f"- **{p.model}**: {p.what} ({p.source})" for p in PUBLISHED_LENGTHS)


def limits(shown) -> None:
    """Under the key figure: where a maximum length comes from, and what the curves say past the band
    (each sentence only where its claim holds for the figure: explorer.lessons.length.view.LENGTH_CLAIMS)."""
    view = shown.view
    left, right = st.columns(2, gap="large")
    if view.learned_rows is not None:
        left.markdown(text("limits", rows=view.learned_rows, last_row=view.learned_rows - 1, published=_published()))
    said = [sentence for name in ("falls_past_band", "t5_buckets", "fail_inside", "alibi_mirror")
            if (sentence := claimed(LENGTH, name, shown))]
    if said:
        right.markdown("\n\n".join([text("beyond"), *said]))


def attention(shown) -> None:
    """2 · One model at a length it never saw, beside the longest it was trained on."""
    view, figures, settings = shown.view, shown.figures, shown.settings
    label = ENCODING_LABELS[settings.encoding]
    st.markdown(f"**The {label} model** (`{view.models[settings.encoding]}`). " + text("attention"))
    seen_col, unseen_col = st.columns(2, gap="large")
    for where, at, figure, frame, key in ((seen_col, view.seen, figures.seen, figures.seen_csv, "seen"),
                                          (unseen_col, view.unseen, figures.unseen, figures.unseen_csv, "unseen")):
        with where:
            if at.refused:
                st.info(f"**{at.length} letters: refused.** {at.refused}.", icon=":material/block:")
                continue
            plotly_chart(figure, key=f"attention_{key}")
            verdict = "reverses it right" if at.reversed_right else "gets it wrong"
            st.markdown(f"Mean weight on the letter being written: **{at.on_target:.0%}** (spread evenly it "
                        f"would be {1 / at.length:.0%}). Decoding on its own, the model {verdict}.")
            download_csv(f"cross_attention_{settings.encoding}_{at.length}.csv", "Download the weights (CSV)",
                         frame_csv, frame, key=f"attention_{key}_csv")


def memory(shown) -> None:
    """3 · Bytes against T for real shapes, with their sources, and a measurement here."""
    view, figures, settings = shown.view, shown.figures, shown.settings
    if view.missing:
        st.warning("Left out:\n\n" + "\n".join(f"- {m}" for m in view.missing), icon=":material/hourglass_empty:")
    altair_chart(figures.kv_chart, key="kv_chart")  # figures first: a step's figure on the first screen
    altair_chart(figures.scores_chart, key="scores_chart")
    st.markdown(text("memory"))
    st.markdown(f"**At T = {settings.T:,}** (the KV cache in {settings.bytes_per_value}-byte values):")
    # The sources under the table, not in it: a column of them ran the table past a projector's width.
    shown_table = figures.table.drop(columns=["KV cache (bytes)", "scores (bytes)", "source"])
    st.dataframe(shown_table, hide_index=True, column_config={"longest input": st.column_config.TextColumn(width=150)})
    with st.expander("Where these shapes come from"):
        st.markdown("\n".join(f"- **{row.configuration}**: {row.source}" for row in figures.table.itertuples()))
    download_csv(f"attention_bytes_T{settings.T}.csv", "Download the table (CSV)", frame_csv, figures.table,
                 key="memory_table_csv")
    download_csv("attention_bytes_by_T.csv", "Download bytes against T (CSV)", frame_csv, figures.frame,
                 key="memory_csv")
    last = -1
    ratio = view.measured_peak[last] / view.formula[last]
    text_col, table_col = st.columns([3, 2], gap="large")
    text_col.markdown(text("measured", heads=view.shapes[0].n_heads, d_model=view.shapes[0].n_heads
                           * view.shapes[0].d_head, T=f"{view.measured_T[last]:,}",
                           largest=f"{view.measured_largest[last]:,}", formula=f"{view.formula[last]:,}",
                           peak=f"{view.measured_peak[last]:,}", ratio=ratio))
    table_col.markdown("Bytes, measured and by the formula:")
    table_col.dataframe(figures.measured, hide_index=True)
    download_csv("measured_attention_memory.csv", "Download the measurements (CSV)", frame_csv, figures.measured,
                 key="measured_csv", where=table_col)


def gqa(shown) -> None:
    """4 · Grouped-query attention: the grid grouped over shared K/V heads, and the cache for h, g and 1."""
    view, figures = shown.view, shown.figures
    plotly_chart(figures.grid, key="gqa_grid")
    per = view.heads // view.kv_heads
    shared = (f"shared by {per} query heads, which still attend in their own ways because their queries differ"
              if per > 1 else "read by one query head only: nothing is shared, as in ordinary multi-head attention")
    st.markdown(text("gqa", h=view.heads, g=view.kv_heads, shared=shared, sharing=gqa_sharing(view.heads,
                                                                                                view.kv_heads)))
    table_col, _ = st.columns([4, 1])
    with table_col:
        st.markdown("**KV cache bytes** for the layer drawn (causal, 8 positions) and for a 7B model's shape "
                    "with the same ratio h / g:")
        st.dataframe(figures.table, hide_index=True)
        here = dict(zip(view.kv_counts, view.cache_here, strict=True))[view.kv_heads]
        check = "the same" if here == view.cache_tensors else f"not the same ({human_bytes(here)})"
        st.markdown(f"Counted from the key and value tensors this layer made: **{view.cache_tensors:,} bytes** "
                    f"for g = {view.kv_heads}, {check} as the formula.")
        download_csv(f"gqa_h{view.heads}_g{view.kv_heads}.csv", "Download the weights (CSV)", frame_csv,
                     figures.frame, key="gqa_csv")


def tiled(shown) -> None:
    """5 · Tiled attention, one key block at a time."""
    view, figures = shown.view, shown.figures
    grid_col, state_col = st.columns(2, gap="large")
    plotly_chart(figures.weights, where=grid_col, key="tiled_weights")
    plotly_chart(figures.state, where=state_col, key="tiled_state")
    st.markdown(text("tiled", error=view.max_error))
    chart_col, text_col = st.columns([3, 2], gap="large")
    altair_chart(figures.bytes_chart, where=chart_col, key="tiled_bytes")
    largest = -1
    times = view.measured_plain[largest] / view.measured_tiled[largest]
    if view.held < view.full:
        held = (f"At most **{view.held:,} scores** are held at once here (one tile, {view.T} queries × "
                f"{view.block} keys), against **{view.full:,}** in the whole {view.T} × {view.T} matrix, which "
                "is never made.")
        drawn = " The heatmap above is drawn for you; the method itself never has it."
    else:  # one block of every key: the tile is the whole matrix
        held = (f"Here one tile is the whole matrix: a block of {view.block} keys for {view.T} positions holds all "
                f"**{view.full:,} scores** at once, so tiling saves nothing; choose a shorter block.")
        drawn = ""
    text_col.markdown(
        f"{held} Measured at T = {view.measured_T[largest]:,}: tiled attention's tensors peak at "
        f"**{human_bytes(view.measured_tiled[largest])}**, plain attention's at "
        f"**{human_bytes(view.measured_plain[largest])}**, {times:.0f} "
        f"times as much (the chart: one head, 64-bit values).{drawn}")
    download_csv(f"tiled_T{view.T}_block{view.block}.csv", "Download the weights so far (CSV)", frame_csv,
                 figures.frame, key="tiled_csv", where=text_col)
    download_csv(f"tiled_state_T{view.T}_block{view.block}.csv", "Download the running max and sum (CSV)",
                 frame_csv, figures.state_frame, key="tiled_state_csv", where=text_col)


def window(shown) -> None:
    """6 · Sliding-window masks beside causal, and the path length."""
    view, figures = shown.view, shown.figures
    plotly_chart(figures.masks, key="window_masks")
    st.markdown(text("window" if view.window > 1 else "window: one", before=view.window - 1, window=view.window))
    chart_col, text_col = st.columns([3, 2], gap="large")
    altair_chart(figures.paths, where=chart_col, key="window_paths")
    if view.path is None:
        path = f"a window of 1 never connects two positions: position {view.T - 1} never reads position 0"
    else:
        path = (f"with a window of {view.window}, position {view.T - 1} reads position 0 after **{view.path} "
                f"layer{'s' if view.path != 1 else ''}**; with the full causal mask after {view.causal_path}")
    text_col.markdown(f"**Path length.** {path[0].upper() + path[1:]}. After {view.layers} "
                      f"layer{'s' if view.layers != 1 else ''}, position {view.T - 1} reaches back "
                      f"{view.reach_back} position{'s' if view.reach_back != 1 else ''}.")
    download_csv(f"window_masks_T{view.T}_w{view.window}.csv", "Download the masks (CSV)", frame_csv,
                 figures.frame, key="window_csv", where=text_col)
    download_csv(f"window_paths_T{view.T}.csv", "Download the path lengths (CSV)", frame_csv, figures.paths_frame,
                 key="window_paths_csv", where=text_col)


serve_lesson(
    LENGTH,
    lead=text("lead"),
    sidebar="Lengths",
    sections=[
        Section("accuracy", accuracy),
        Section("limits", limits),
        Section("attention", attention, title="2 · One model at a length it never saw"),
        Section("memory", memory, part=LENGTH_MEMORY, title="3 · The bytes attention costs"),
        Section("gqa", gqa, part=LENGTH_GQA, title="4 · Grouped-query attention: fewer keys and values"),
        Section("tiled", tiled, part=LENGTH_TILED, title="5 · Tiled attention: never the whole T × T"),
        Section("window", window, part=LENGTH_WINDOW, title="6 · Sliding windows and the path length"),
    ],
    working=lambda s: f"Running the {len(REVERSAL_MODELS)} reversal models on inputs of 2 to {s.longest} letters…",
)
