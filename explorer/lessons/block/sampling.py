"""The block lesson's section on the output side of a decoder: from the last position's scores to a drawn
token — temperature, top-k, top-p and a seeded draw (explorer.analysis.sampling) — on the shipped
induction decoder, whose next token is predictable only once its prompt has begun to repeat."""

from __future__ import annotations

import types
from dataclasses import dataclass

import numpy as np
import torch

from explorer.analysis.sampling import SampledRun, SamplingStages, generate_sampled, greedy, sampling_stages
from explorer.figures.common import FONT_SIZE, OKABE_ITO, PLAIN_NUMBERS, PRESENT_HEIGHT
from explorer.figures.margins import TOOLBAR_PX
from explorer.kit.claims import Claim
from explorer.kit.settings import setting
from explorer.training.pretrained import load_model

from .figures import OneChart, one_chart

__all__ = ["DECODER", "PROMPTS", "SAMPLE_CLAIMS", "SampleSettings", "SampleView", "sample_figures", "sample_view"]

DECODER = "induction-sinusoidal-h2-l2"
PROMPTS = {  # a run of tokens; then the same run begun again, where the next token is predictable
    "not repeating yet": "t3 t7 t1 t9 t4",
    "repeating": "t3 t7 t1 t9 t4 t3 t7",
}
CONTINUE = 6  # tokens drawn after the prompt
NONE = "off"


@dataclass(frozen=True)
class SampleSettings:
    prompt: str = setting("not repeating yet", "Prompt", url="prompt", options=tuple(PROMPTS), widget="radio",
                          captions=tuple(PROMPTS.values()))
    temperature: float = setting(2.0, "Temperature", url="temperature", options=(0.25, 0.5, 1.0, 1.5, 2.0, 4.0),
                                 widget="select_slider", help="The scores are divided by it before the softmax.")
    top_k: str = setting(NONE, "Top-k", url="top_k", options=(NONE, "1", "3", "5", "10"), widget="select_slider",
                         help="Keep only the k likeliest tokens.")
    top_p: str = setting(NONE, "Top-p", url="top_p", options=(NONE, "0.9", "0.75", "0.5"), widget="select_slider",
                         help="Keep the fewest likeliest tokens whose probabilities add up to p.")
    seed: int = setting(0, "Seed", url="seed", bounds=(0, 999, 1), advance="Draw again",
                        help="The random generator's seed: the same seed draws the same tokens.")


@dataclass(frozen=True)
class SampleView:
    settings: SampleSettings
    prompt: tuple[str, ...]
    vocab: tuple[str, ...]
    stages: SamplingStages  # at the prompt's last position
    run: SampledRun  # CONTINUE tokens drawn with the settings and seed
    greedy_run: tuple[int, ...]  # the same number of tokens, greedy


def sample_view(settings: SampleSettings) -> SampleView:
    loaded = load_model(DECODER)
    model, task = loaded.model, loaded.task
    prompt = tuple(PROMPTS[settings.prompt].split())
    ids = task.encode(list(prompt))
    top_k = None if settings.top_k == NONE else int(settings.top_k)
    top_p = None if settings.top_p == NONE else float(settings.top_p)
    with torch.no_grad():
        logits, _ = model(torch.tensor([ids]))
    stages = sampling_stages(logits[0, -1], settings.temperature, top_k, top_p)
    run = generate_sampled(model, ids, CONTINUE, settings.temperature, top_k, top_p, seed=settings.seed)
    with torch.no_grad():
        cold, _ = model.generate(torch.tensor([ids]), CONTINUE, None, cache=True)  # greedy: the model's own
    return SampleView(settings, prompt, tuple(task.vocab), stages, run, tuple(cold[0].tolist()))


def sample_figure(view: SampleView) -> dict:
    """The next-token distribution at the prompt's end: after temperature (grey), what top-k and top-p keep
    renormalised (blue), the token drawn with the seed outlined."""
    s, vocab = view.stages, view.vocab
    shown = [i for i, word in enumerate(vocab) if not word.startswith("<")]
    labels = [vocab[i] for i in shown]
    drawn = view.run.tokens[0]
    data = [
        {"type": "bar", "x": labels, "y": s.probs[shown].tolist(), "name": "after temperature",
         "marker": {"color": "#bbbbbb"}, "hovertemplate": "%{x}: %{y:.3f}<extra>after temperature</extra>"},
        {"type": "bar", "x": labels, "y": s.distribution[shown].tolist(), "name": "kept, renormalised: drawn from",
         "marker": {"color": OKABE_ITO["blue"],
                    "line": {"color": ["#000000" if i == drawn else OKABE_ITO["blue"] for i in shown],
                             "width": [4 if i == drawn else 0 for i in shown]}},
         "hovertemplate": "%{x}: %{y:.3f}<extra>drawn from</extra>"},
    ]
    layout = {"height": 330, "meta": {PRESENT_HEIGHT: 300}, "barmode": "group", "bargap": 0.25,
              "margin": {"l": 10, "r": 10, "t": TOOLBAR_PX + 6, "b": 10}, "font": {"size": FONT_SIZE},
              "xaxis": {"title": {"text": "next token"}, "tickangle": -45, "type": "category"},
              "yaxis": {"title": {"text": "probability"}, "range": [0, 1.05], **PLAIN_NUMBERS},
              "legend": {"orientation": "h", "x": 0, "y": 1.0, "yanchor": "bottom"},
              "plot_bgcolor": "rgba(0,0,0,0)"}
    return {"data": data, "layout": layout}


def sample_figures(view: SampleView) -> OneChart:
    return one_chart(sample_figure(view))


def sample_facts(shown) -> dict:
    view = shown.view
    s, vocab = view.stages, view.vocab
    best = greedy(s.logits)
    words = np.array([not w.startswith("<") for w in vocab])
    return {"kept": int((s.kept & words).sum()), "vocab": int(words.sum()), "prompt": " ".join(view.prompt),
            "top": vocab[best], "top_p": float(s.probs[best]), "drawn": vocab[view.run.tokens[0]],
            "drawn_p": float(s.distribution[view.run.tokens[0]]),
            "continuation": " ".join(vocab[i] for i in view.run.tokens),
            "greedy": " ".join(vocab[i] for i in view.greedy_run), "seed": view.settings.seed,
            "temperature": view.settings.temperature, "n": len(view.run.tokens),
            "model_p": float(sampling_stages(s.logits).probs[best]),  # at temperature 1: the model's own
            "entropy_bits": float(-(s.probs[s.probs > 0] * np.log2(s.probs[s.probs > 0])).sum())}


SAMPLE_CLAIMS = types.MappingProxyType({
    # what the figure shows, read from it: the likeliest token, the tokens a draw can give, the draw
    "draw": Claim(lambda shown: 0 < sample_facts(shown)["kept"] <= sample_facts(shown)["vocab"], sample_facts),
    # before the run repeats the training loss never scored a prediction (explorer/training/tasks.py, the
    # induction task's targets): a confident distribution there is not knowledge
    "unscored": Claim(lambda shown: shown.settings.prompt == "not repeating yet"
                      and sample_facts(shown)["model_p"] > 0.5, sample_facts),
})
