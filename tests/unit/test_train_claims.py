"""The live-training lesson's claims about step 0, checked against the view they stand beside
(issue 28 item 5): the untrained model's held-out loss set against ln V — the number read from the
view, the direction (above, below, at) chosen by it — and the spread of its attention; over a
sample of settings, and a planted false claim caught by the same check."""

from __future__ import annotations

import dataclasses
import itertools
import math
import re

import numpy as np
import pytest
import torch

from explorer.kit.prose import lesson_text
from explorer.lessons.train.view import RACE_TASKS, LossAtStart, TrainSettings, train_view
from explorer.training.live import HELD_OUT, LIVE_TASKS, live_task, run_settings
from harness.apptest import run_page

# 32 settings: every task, encoding, head count and layer count, with several seeds and both modes.
SAMPLE = [TrainSettings(task=task, encoding=encoding, n_heads=heads, n_layers=layers, seed=seed,
                        mode="race" if race and task in RACE_TASKS else "train")
          for (task, encoding), (heads, layers), (seed, race) in itertools.islice(zip(
              itertools.cycle(itertools.product(LIVE_TASKS, ("sinusoidal", "none", "rope", "learned"))),
              itertools.cycle(itertools.product((1, 2, 4), (1, 2, 3))),
              itertools.cycle(itertools.product((0, 7, 20), (False, True))), strict=False), 32)]
SENTENCE = re.compile(r"loss, (\d+\.\d{3}), is (above|below|ln \d+ = \d+\.\d{3} to within 0\.005)"
                      r"(?: ln (\d+) = (\d+\.\d{3}))?")


def claim_errors(sentence: str, loss: float, vocab: int) -> list[str]:
    """What is false in a step-0 loss sentence about a model of `vocab` output tokens whose loss is `loss`."""
    found = SENTENCE.search(sentence)
    if not found:
        return [f"no loss sentence in {sentence!r}"]
    stated, relation = float(found[1]), found[2]
    errors = [] if found[1] == f"{loss:.3f}" else [f"loss {stated} is not the view's {loss:.3f}"]
    if relation.startswith("ln"):
        _, v, _, even, *_ = relation.split()
        v, even, word = int(v), float(even), "at"
    else:
        v, even, word = int(found[3]), float(found[4]), relation
    if v != vocab or f"{math.log(v):.3f}" != f"{even:.3f}":
        errors.append(f"ln {v} = {even} is not ln {vocab} = {math.log(vocab):.3f}")
    truth = LossAtStart(loss, vocab, vocab).direction
    if word != truth:
        errors.append(f"says {word}, the loss is {truth} ln {vocab}")
    return errors


def sentence_of(start: LossAtStart) -> str:
    return lesson_text("train", f"start loss: {start.direction}", loss=start.loss, vocab=start.vocab, even=start.even,
                       answers=start.answers, even_answers=math.log(start.answers))


@pytest.mark.parametrize("settings", SAMPLE, ids=lambda s: f"{s.task}-{s.encoding}-h{s.n_heads}-l{s.n_layers}-"
                                                           f"s{s.seed}-{s.mode}")
def test_the_step_zero_loss_sentence_is_true_for_its_view(settings):
    view = train_view(settings)
    first = next(run_settings(settings.job.runners[0]))
    assert view.snapshot.loss == first.loss == view.start.loss
    task = live_task(settings.task)
    assert view.start.vocab == task.vocab_size
    targets = task.batch(HELD_OUT, torch.Generator().manual_seed(task.eval_seed)).targets
    assert view.start.answers == len({t for t in targets.flatten().tolist() if t != -100})
    assert claim_errors(sentence_of(view.start), first.loss, task.vocab_size) == []


def test_a_planted_false_claim_is_caught():
    start = LossAtStart(3.0615, 19, 17)  # the lesson's old sentence: "3.06 is what guessing among 19 tokens costs"
    assert start.direction == "above"
    assert claim_errors(sentence_of(start), start.loss, 19) == []
    at = lesson_text("train", "start loss: at", loss=3.0615, vocab=19, even=math.log(19))
    assert any("says at" in e for e in claim_errors(at, 3.0615, 19))
    below = lesson_text("train", "start loss: below", loss=3.0615, vocab=19, even=math.log(19), answers=17,
                        even_answers=math.log(17))
    assert any("says below" in e for e in claim_errors(below, 3.0615, 19))
    assert claim_errors(sentence_of(start).replace("3.062", "3.060"), 3.0615, 19)
    assert claim_errors(sentence_of(start).replace("2.944", "2.940"), 3.0615, 19)


@pytest.mark.parametrize("link", [{}, {"seed": "1"}, {"task": "sort", "seed": "5", "heads": "1"},
                                  {"task": "induction", "layers": "1"}, {"mode": "race", "seed": "3"}])
def test_the_page_shows_the_sentences_of_its_own_view(link):
    at = run_page("explorer/lessons/train/train.py", link)
    shown = "\n".join(m.value for m in at.markdown)
    settings = TrainSettings(**{name: type(getattr(TrainSettings(), name))(link[url])
                                for name, url in (("task", "task"), ("seed", "seed"), ("n_heads", "heads"),
                                                  ("n_layers", "layers"), ("mode", "mode")) if url in link})
    view = train_view(settings)
    assert claim_errors(shown, view.start.loss, view.start.vocab) == []
    weights = view.snapshot.attention
    spread = f"between {np.min(weights):.2f} and {np.max(weights):.2f}"
    assert (spread in shown) == (settings.task in RACE_TASKS)
    layer, head, sharp = view.sharpness()
    rows = weights.max(-1).mean(-1)
    assert sharp == rows.max() and rows[layer - 1, head - 1] == sharp
    sharpest = f"Sharpest head: layer {layer} · head {head}, each row's largest weight **{sharp:.2f}**"
    assert (sharpest in shown) == (settings.task in RACE_TASKS)


def test_the_first_steps_reveal_holds_for_its_settings():
    """Step 1's answer: no weight near 0 or 1, an even spread of 1/6, 19 output tokens — read from the
    untrained model's view (the claim `even_at_start`), and not said of a model that is not so."""
    from explorer.kit.claims import say
    from explorer.kit.steps import load_steps
    from explorer.lessons.train.spec import TRAIN
    from explorer.serve.runtime import Shown

    step = load_steps("train")[0]
    names = {"heads": "n_heads", "layers": "n_layers"}
    settings = TrainSettings(**{names.get(k, k): v for k, v in step.settings.items()})
    view = train_view(settings)
    weights = view.snapshot.attention
    assert np.min(weights) > 0.05 and np.max(weights) < 0.5 and len(view.keys) == 6 and view.start.vocab == 19
    said = say(TRAIN.claims, step.claim, step.reveal, Shown(settings, view, None))
    assert said is not None and "1/6" in said and "ln 19" in said and "19 output tokens" in said
    # Attention resting on one cell per row is not "no weight near 0 or 1".
    sharp = np.zeros_like(weights)
    sharp[..., 0] = 1
    first = view.snapshots[0][0]
    sharpened = dataclasses.replace(view, snapshots=((dataclasses.replace(first, attention=sharp),),))
    assert say(TRAIN.claims, step.claim, step.reveal, Shown(settings, sharpened, None)) is None
