"""The numbers the positional-encodings lesson's prose and step answers quote, read from the views they
describe (explorer.views.position_lesson), never typed: {name: value} for the fields of
app_pages/lessons/positions.md and positions.toml.  A value that a view does not have at its settings is
left out, and a text that needs it is not shown."""

from __future__ import annotations

import numpy as np

from ..model.positional import alibi_slopes
from ..training.tasks import get_task
from .position_lesson import slope_text
from .positions import REVERSE_TASK

__all__ = ["alibi_text_facts", "lecture_divisor", "matrix_step_facts", "model_step_facts", "neighbour_facts",
           "number", "relative_step_facts", "table_facts", "wavelength_facts"]


def number(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 1000 else f"{x:.3g}"


def lecture_divisor(view) -> dict:
    """What the second pair of the lecture's table divides the position by: base^(2/d)."""
    base, d = view.settings.base, view.settings.d_model
    return {"base": base, "d": d, "divisor": base ** (2 / d)}


def table_facts(view) -> dict:
    """The learned tables: how long the training inputs were (the shipped model's task), the last row,
    and where the colours stop."""
    return {"longest": get_task(REVERSE_TASK).max_input_tokens, "last_row": view.matrix.shape[0] - 1,
            "clip": view.bound or 0.0}


def neighbour_facts(view) -> dict:
    """Mean cosine similarity of positions p and p + 1, and p and p + 10, over the whole table."""
    return {f"cos{k}": value for k, value in view.neighbours.items() if value is not None}


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
    """Steps about sections 3 and 4: the largest change under the shuffle, the model without positions' answer."""
    view, values = shown.view, {}
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
