"""The numbers the positional-encodings lesson's prose and step answers quote, read from the views they
describe (explorer.lessons.positions.view), never typed: {name: value} for the fields of
explorer/lessons/positions/prose.md, and the claims (explorer.kit.claims) its step answers name in
positions.toml: when each holds for the view shown, and the numbers it quotes."""

from __future__ import annotations

import numpy as np

from explorer.analysis.patterns import from_the_end
from explorer.kit.claims import Claim
from explorer.lessons.positions.encodings import REVERSE_TASK
from explorer.lessons.positions.view import slope_text
from explorer.model.positional import alibi_slopes, t5_relative_buckets
from explorer.training.pretrained import model_name
from explorer.training.tasks import get_task

__all__ = [
    "MODEL_CLAIMS",
    "POSITION_CLAIMS",
    "RELATIVE_CLAIMS",
    "alibi_text_facts",
    "anti_diagonal",
    "lecture_divisor",
    "matrix_step_facts",
    "model_step_facts",
    "neighbour_facts",
    "number",
    "relative_step_facts",
    "t5_shares",
    "table_facts",
    "wavelength_facts",
]


def anti_diagonal(view) -> tuple[list[str], list[str]]:
    """Of the models that reverse the input correctly, those whose cross-attention shown (the chosen layer
    and head) runs along the anti-diagonal — step k weighs the k-th letter from the end most, in most
    rows — and those whose does not.  Nothing for the other blocks."""
    if view.settings.block != "cross":
        return [], []
    along, off = [], []
    for (encoding, run), panel in zip(view.runs.items(), view.panels, strict=True):
        if not run.correct:
            continue
        keys = panel.shape[1]
        (along if from_the_end(np.asarray(panel), list(range(keys)), min(panel.shape[0], keys)) else off).append(
            encoding)
    return along, off


def t5_shares(view) -> bool:
    """Do offsets short of the maximum distance share a bucket (the logarithmic ones widen) at the T5
    settings shown?  With few of them before the maximum distance, each gets a bucket of its own."""
    s, reach = view.settings, view.t5_max_distance
    per_side = s.t5_buckets // 2 if s.t5_bidirectional else s.t5_buckets  # one direction's buckets
    buckets = t5_relative_buckets(reach, 1, bidirectional=False, num_buckets=per_side, max_distance=reach)[:, 0]
    return len(np.unique(buckets)) < reach  # offsets 0 … reach − 1, looking back


def number(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def lecture_divisor(view) -> dict:
    """What the second pair of the lecture's table divides the position by: base^(2/d)."""
    base, d = view.settings.base, view.settings.d_model
    return {"base": base, "d": d, "divisor": base ** (2 / d)}


def table_facts(view) -> dict:
    """The learned tables: how long the training inputs were (the shipped model's task), the last row,
    and where the colours stop."""
    start = {} if view.start is None else {"start_cos": view.start[0], "start_ratio": view.start[1]}
    return {"longest": get_task(REVERSE_TASK).max_input_tokens, "last_row": view.matrix.shape[0] - 1,
            "clip": view.bound or 0.0, **start}


def neighbour_facts(view) -> dict:
    """Mean cosine similarity of positions p and p + 1, and p and p + 10, over the whole table; its last row."""
    return {"last_row": view.matrix.shape[0] - 1,
            **{f"cos{k}": value for k, value in view.neighbours.items() if value is not None}}


def wavelength_facts(view) -> dict:
    waves, n_rows = view.matrix.wavelengths, view.matrix.shape[0]
    return {"first": waves[0], "last": number(waves[-1]), "beyond": int(np.sum(waves > n_rows)), "pairs": len(waves),
            "n_rows": n_rows}


def alibi_text_facts() -> dict:
    """ALiBi's slopes for 8 heads, as the lesson text lists them."""
    slopes = alibi_slopes(8)
    return {"slope_1": slope_text(slopes[0]), "slope_2": slope_text(slopes[1]), "slope_8": slope_text(slopes[-1])}


def matrix_step_facts(shown) -> dict:
    """Steps about sections 1 and 2: the lecture table's cells, the wavelengths, the similarity's diagonals."""
    m = shown.view.matrix
    values = {"n_rows": m.shape[0]}
    if m.offset_share is not None:
        values["share"] = 100 * m.offset_share
    if m.table is not None and m.table.shape[0] == 4 and m.table.shape[1] >= 4:
        t = m.table
        values.update(am_a=t[1, 0], am_b=t[1, 1], am_c=t[1, 2], am_d=t[1, 3], robot_b=t[3, 1], robot_c=t[3, 2],
                      robot_d=t[3, 3])
    if m.similarity.shape[0] == 4:
        values.update({f"sim_{k}": m.similarity[0, k] for k in range(4)})
    if m.wavelengths is not None:
        values.update(first_wave=m.wavelengths[0], last_wave=m.wavelengths[-1],
                      slow_pairs=int(np.sum(m.wavelengths > m.shape[0])), pairs=len(m.wavelengths))
    return values


def model_step_facts(shown) -> dict:
    """Steps about sections 3 and 4: the input, the largest change under the shuffle, the model without
    positions' answer."""
    view, values = shown.view, {"input": " ".join(shown.view.tokens)}
    if view.shuffle is not None:
        values["largest"] = view.shuffle.max_abs_difference
    if "none" in view.runs:
        values["none_answer"] = " ".join(view.runs["none"].answer)
    return values


def relative_step_facts(shown) -> dict:
    """Steps about section 5: RoPE's peak score and query positions, ALiBi's penalties across the sequence."""
    view, settings = shown.view, shown.settings
    if view.rope_scores is not None:
        return {"first_query": view.rope_queries[0], "second_query": view.rope_queries[1],
                "peak": float(np.max(view.rope_scores)), "pairs": settings.rope_dim // 2}
    if view.alibi_bias is not None:
        bias, slopes, back = view.alibi_bias, view.alibi_slopes, settings.alibi_length - 1
        return {"heads": len(slopes), "distance": back, "first_slope": view.alibi_labels[0],
                "last_slope": view.alibi_labels[-1], "first_loss": -bias[0, back, 0], "last_loss": -bias[-1, back, 0]}
    return {}


def _lecture(s) -> bool:
    m = s.view.matrix
    return s.view.lecture_table and m.table is not None and m.table.shape == (4, 4)


def _toeplitz(s) -> bool:
    return s.view.matrix.offset_share is not None and s.view.matrix.offset_share > 0.9995


def _index_vanishes(s) -> bool:
    """The shipped index model is pre-norm; adding the index leaves its first LayerNorm's output as it
    was (rounding), its encoder's outputs only move with their letters under the shuffle, and it
    reverses few held-out inputs (under 20 %), within a point of the model without positions."""
    f = s.view.index
    if f is None or f["index_accuracy"] is None or f["none_accuracy"] is None:
        return False
    return (f["norm"] == "pre" and f["layernorm"] < 1e-9 and f["shuffle"] < 1e-9 and f["index_accuracy"] < 0.2
            and abs(f["index_accuracy"] - f["none_accuracy"]) <= 0.01)


def _index_facts(s) -> dict:
    return {**s.view.index, "model": model_name(REVERSE_TASK, "index")}


POSITION_CLAIMS = {
    # The first pair turns faster than the second: "am" moves further in the first pair.
    "lecture_cells": Claim(lambda s: _lecture(s) and abs(s.view.matrix.table[1, 0]) > abs(s.view.matrix.table[1, 2]),
                           matrix_step_facts),
    # Most pairs turn through less than one cycle over the rows shown.
    "slow_pairs": Claim(lambda s: s.view.matrix.wavelengths is not None and 2 * matrix_step_facts(s)["slow_pairs"]
                        > len(s.view.matrix.wavelengths), matrix_step_facts),
    # Every diagonal of the similarity is constant (the offset explains it all), four positions.
    "distance_only": Claim(lambda s: _toeplitz(s) and s.view.matrix.similarity.shape == (4, 4), matrix_step_facts),
    # A learned table: the offset explains only part of its similarity.
    "learned_partly": Claim(lambda s: s.view.matrix.kind == "learned" and s.view.matrix.offset_share is not None
                            and not _toeplitz(s), matrix_step_facts),
    # The index encoding never reaches attention: LayerNorm removes it (section 1's index prose).
    "index_vanishes": Claim(_index_vanishes, _index_facts),
}


def _reverses(s, encoding: str) -> bool:
    return encoding in s.view.runs and s.view.runs[encoding].correct


MODEL_CLAIMS = {
    # No position: a shuffle only moves the outputs (rounding error), and that model does not reverse.
    "order_invisible": Claim(lambda s: s.view.shuffle is not None and s.view.shuffle.max_abs_difference < 1e-9
                             and "none" in s.view.runs and not _reverses(s, "none"), model_step_facts),
    # T5's model reverses most held-out inputs (its card) and its encoder output changes under the shuffle.
    "t5_learns": Claim(lambda s: "t5" in s.view.runs and (s.view.runs["t5"].heldout_accuracy or 0) >= 0.9
                       and s.view.differences.get("t5", 0) > 1e-3,
                       lambda s: {"t5_accuracy": s.view.runs["t5"].heldout_accuracy}),
    # With positions the outputs change, and the model shuffled ("this model") reverses while "none" does not.
    "order_visible": Claim(lambda s: s.view.shuffle is not None and s.view.shuffle.max_abs_difference > 1e-3
                           and s.settings.encoding != "none" and _reverses(s, s.settings.encoding)
                           and "none" in s.view.runs and not _reverses(s, "none"),
                           model_step_facts),
}


def _rope_lines_up(s) -> bool:
    v = s.view
    return (v.rope_scores is not None and np.allclose(v.rope_scores[0], v.rope_scores[1], atol=1e-9)
            and int(np.argmax(v.rope_scores[0])) == int(np.flatnonzero(v.rope_offsets == 0)[0]))


def _alibi_ordered(s) -> bool:
    v = s.view
    return v.alibi_bias is not None and len(v.alibi_slopes) > 1 and v.alibi_slopes[-1] < v.alibi_slopes[0]


RELATIVE_CLAIMS = {
    # The two curves coincide and peak at offset 0.
    "rope_offset_only": Claim(_rope_lines_up, relative_step_facts),
    # The last head has the smallest slope: it loses least to a distant key.
    "alibi_far": Claim(_alibi_ordered, relative_step_facts),
}
