"""The block lesson's section on why every sublayer has a residual connection: a shallow and a deep stack,
plain and residual, trained (the shipped curves of `python -m explorer.training.stacks`, read by
explorer.analysis.stacks).  Its settings, view, figure and claims."""

from __future__ import annotations

import types
from dataclasses import dataclass

import numpy as np

from explorer.analysis.stacks import StackCurves, StackFacts, stack_curves, stack_facts
from explorer.figures.common import FONT_SIZE, OKABE_ITO, PLAIN_NUMBERS, PRESENT_HEIGHT
from explorer.figures.margins import TOOLBAR_PX
from explorer.kit.claims import Claim

from .figures import OneChart, one_chart

__all__ = ["STACK_CLAIMS", "StackSettings", "StackView", "stack_figures", "stack_view"]

COLOURS = {"shallow": OKABE_ITO["blue"], "deep": OKABE_ITO["vermillion"]}
DASH = {"plain": "dash", "residual": "solid"}


@dataclass(frozen=True)
class StackSettings:
    """No controls: the section shows the shipped curves' training loss."""


@dataclass(frozen=True)
class StackView:
    settings: StackSettings
    curves: StackCurves
    facts: StackFacts


def stack_view(settings: StackSettings) -> StackView:
    curves = stack_curves()
    return StackView(settings, curves, stack_facts(curves))


def _label(curves: StackCurves, depth: str, wiring: str) -> str:
    return f"{curves.depths[depth]} layers, {wiring}"


def stack_figure(view: StackView, curve: str = "loss") -> dict:
    """Each cell's curve (the mean over the seeds, a band from the lowest to the highest seed), colour = depth,
    dash = wiring; the loss of a uniform guess as a grey line."""
    curves, loss = view.curves, curve == "loss"  # or "accuracy" (from Python)
    values = curves.loss if loss else curves.accuracy
    steps = curves.steps.tolist()
    data = []
    for (depth, wiring), rows in values.items():
        colour, name = COLOURS[depth], _label(curves, depth, wiring)
        low, high = rows.min(axis=0), rows.max(axis=0)
        data.append({"type": "scatter", "x": steps + steps[::-1], "y": np.concatenate([high, low[::-1]]).tolist(),
                     "fill": "toself", "fillcolor": colour, "opacity": 0.15, "line": {"width": 0},
                     "hoverinfo": "skip", "showlegend": False})
        data.append({"type": "scatter", "x": steps, "y": rows.mean(axis=0).tolist(), "mode": "lines", "name": name,
                     "line": {"color": colour, "width": 3.5, "dash": DASH[wiring]},
                     "hovertemplate": f"{name}<br>step %{{x}}: %{{y:.2f}}<extra></extra>"})
    notes = []
    if loss:
        guess = curves.uniform_guess_loss
        data.append({"type": "scatter", "x": [steps[0], steps[-1]], "y": [guess, guess], "mode": "lines",
                     "line": {"color": "#555555", "width": 2, "dash": "dot"}, "hoverinfo": "skip", "showlegend": False})
        notes.append({"x": steps[-1], "y": guess, "xref": "x", "yref": "y", "xanchor": "right", "yanchor": "bottom",
                      "showarrow": False,
                      "text": f"a uniform guess over the {round(np.exp(guess))} symbols",
                      "font": {"size": FONT_SIZE - 1, "color": "#333333"}})
    layout = {"height": 340, "meta": {PRESENT_HEIGHT: 320}, "margin": {"l": 10, "r": 10, "t": TOOLBAR_PX + 6, "b": 10},
              "font": {"size": FONT_SIZE},
              "xaxis": {"title": {"text": "training step"}, "showgrid": False},
              "yaxis": {"title": {"text": "training loss" if loss else "accuracy (predictable tokens)"},
                        **PLAIN_NUMBERS, **({} if loss else {"range": [0, 1.02]})},
              "legend": {"orientation": "v", "x": 1.02, "y": 1, "xanchor": "left"}, "annotations": notes,
              "plot_bgcolor": "rgba(0,0,0,0)"}
    return {"data": data, "layout": layout}


def stack_figures(view: StackView) -> OneChart:
    return one_chart(stack_figure(view))


def _values(shown) -> dict:
    facts, curves = shown.view.facts, shown.view.curves
    return {**facts.values(), "shallow": curves.depths["shallow"], "deep": curves.depths["deep"],
            "steps": int(curves.steps[-1]), "guess": curves.uniform_guess_loss}


def _holds(test):
    return Claim(lambda shown: bool(test(shown.view.facts)), _values)


STACK_CLAIMS = types.MappingProxyType({
    # He et al.'s degradation, trained: the deeper plain stack ends worse in every seed, near a uniform guess,
    # and the deep residual stack ends below it in every seed
    "degradation": _holds(lambda f: f.deep_plain_above_shallow_plain and f.deep_plain_above_deep_residual
                          and f.deep_plain_from_uniform_guess < 0.005),
    # ... and with residual connections depth helps: the deep residual stack ends lower than the shallow one
    "residual_helps": _holds(lambda f: not f.deep_residual_above_shallow_residual),
})
