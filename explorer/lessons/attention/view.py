"""The self-attention lesson, declared: its settings (the controls: the task, its input, the mask,
the model's shape and weights, the panel to enlarge), its view (settings → the attention of every
layer and head, plain arrays) and the comparison section's own settings and view.  The runtime
(explorer/serve) caches them; explorer/lessons/attention/attention.py draws them.

A task opens on its trained model and the mask it was trained with: the mask, shape and weights
follow the task (`default_from`) and go back to its defaults when it changes (`resets_with`).  The
Weights control offers "trained" only for a shape that has shipped weights.  The input is a preset
or the user's own text, one control per task (`input_<task>`, `text_<task>`, `pad_<task>`) as the
page's links have always named them.  What the lesson text says beside the grid is chosen by
explorer.lessons.attention.notices from the view shown.
"""

from __future__ import annotations

import dataclasses
import types
from dataclasses import dataclass

import numpy as np

from explorer.kit.settings import own_text, picked_text, picker, setting
from explorer.lessons.attention.models import (
    MASKS,
    PRESETS,
    TRANSFORMER_TASKS,
    AttentionBlock,
    AttentionView,
    ModelChoice,
    PretrainedModelError,
    attention_hint,
    choose_model,
    compute_view,
    default_shape,
    referent_head,
    referent_head_note,
    shipped_variants,
)
from explorer.lessons.attention.notices import Seen, notices
from explorer.model.positional import ENCODINGS
from explorer.model.transformer import is_causal
from explorer.training.tasks import get_task

__all__ = ["BLOCKS", "COMPARISONS", "AttentionLessonView", "AttentionSettings", "CompareSettings", "CompareView",
           "attention_lesson_view", "compare_view", "natural_mask", "read_input"]

BLOCKS = ("encoder", "decoder", "cross")
WEIGHTS = ("trained", "random")
COMPARISONS = ("nothing", *(f"mask: {m}" for m in MASKS), "the other weights", *(f"encoding: {e}" for e in ENCODINGS))
MAX_CHARS = 300


def natural_mask(task: str) -> str:
    """The mask the task's model was trained with."""
    return "causal" if is_causal(get_task(task).architecture) else "none"


def shipped(s) -> bool:
    """Are trained weights shipped for the chosen task and shape?"""
    return (s.encoding, s.heads, s.layers) in shipped_variants(s.task)


def read_input(s, task: str | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The tokens of the task's input (by default the chosen task's), and what could not be read
    (fewer than two usable tokens: the first preset instead)."""
    name = task or s.task
    parsed = get_task(name).parse(picked_text(s, name))
    problems, tokens = list(parsed.problems), parsed.tokens
    if len(tokens) < 2:
        problems.append("fewer than two known tokens, so the first example is shown instead")
        tokens = get_task(name).parse(PRESETS[name][0]).tokens
    return tuple(tokens), tuple(problems)


def _pad_limit(task: str):
    """The longest padding of the task's input: its model's longest sequence (or the input's length)."""
    return lambda s: max(len(read_input(s, task)[0]), get_task(task).max_len)


def _input(task: str):
    return picker(task, PRESETS[task])


def _text(task: str):
    return own_text(task, PRESETS[task][0], MAX_CHARS, "Tokens separated by spaces, from this task's vocabulary.")


def _pad(task: str):
    limit = max(len(get_task(task).parse(PRESETS[task][0]).tokens), get_task(task).max_len)
    return setting(limit, "Pad to length", url=f"pad_{task}", bounds=lambda s: (2, _pad_limit(task)(s), 1),
                   default_from=_pad_limit(task), when=lambda s: s.task == task and s.mask == "padding")


def _shape(index: int):
    return lambda s: default_shape(s.task)[index]


def _task(s) -> str:
    return s.task


def _shipped_note(s) -> str:
    listed = ", ".join(f"{e} h{h} l{n}" for e, h, n in shipped_variants(s.task))
    return f"Trained weights are shipped for: {listed}. Other shapes run with random weights."


@dataclass(frozen=True)
class AttentionSettings:
    """The lesson's controls, in the sidebar's order."""

    task: str = setting("reverse", "Task", url="task", options=TRANSFORMER_TASKS,
                        note=lambda s: get_task(s.task).description)
    input_reverse: str = _input("reverse")
    text_reverse: str = _text("reverse")
    input_sort: str = _input("sort")
    text_sort: str = _text("sort")
    input_coreference: str = _input("coreference")
    text_coreference: str = _text("coreference")
    input_induction: str = _input("induction")
    text_induction: str = _text("induction")
    input_recall: str = _input("recall")
    text_recall: str = _text("recall")
    mask: str = setting("causal", "Mask", url="mask", options=MASKS, widget="radio", default_from=lambda s:
                        natural_mask(s.task), resets_with=_task,
                        help="For encoder–decoder tasks the mask applies to the decoder's self-attention.")
    pad_reverse: int = _pad("reverse")
    pad_sort: int = _pad("sort")
    pad_coreference: int = _pad("coreference")
    pad_induction: int = _pad("induction")
    pad_recall: int = _pad("recall")
    encoding: str = setting("sinusoidal", "Positional encoding", url="encoding", options=ENCODINGS,
                            default_from=_shape(0), resets_with=_task, heading="Model shape")
    heads: int = setting(4, "Heads", url="heads", options=(1, 2, 4, 8), widget="select_slider",
                         default_from=_shape(1), resets_with=_task, heading="Model shape")
    layers: int = setting(2, "Layers", url="layers", options=(1, 2, 3, 4), widget="select_slider",
                          default_from=_shape(2), resets_with=_task, heading="Model shape")
    weights: str = setting("trained", "Weights", url="weights", widget="radio", heading="Model shape",
                           options=lambda s: WEIGHTS if shipped(s) else WEIGHTS[1:], note=_shipped_note,
                           default_from=lambda s: WEIGHTS[0] if shipped(s) else WEIGHTS[1], resets_with=_task)
    block: str = setting("decoder", "Attention", url="block", options=BLOCKS, widget="radio", resets_with=_task,
                         when=lambda s: get_task(s.task).architecture == "encoder-decoder", heading="View",
                         help="encoder: self-attention over the input · decoder: masked self-attention over the "
                         "answer so far · cross: decoder queries, encoder keys")
    layer: int = setting(2, "Enlarge layer", url="layer", options=lambda s: tuple(range(1, s.layers + 1)),
                         widget="select_slider", default_from=lambda s: s.layers, resets_with=_task, heading="View")
    head: int = setting(1, "Enlarge head", url="head", options=lambda s: tuple(range(1, s.heads + 1)),
                        widget="select_slider", resets_with=_task, heading="View")

    @property
    def pad_to(self) -> int:
        """The padded length (the input's own length unless the mask is padding)."""
        tokens = read_input(self)[0]
        return max(len(tokens), getattr(self, f"pad_{self.task}")) if self.mask == "padding" else len(tokens)

    @property
    def choice(self) -> ModelChoice:
        return ModelChoice(self.task, self.encoding, self.heads, self.layers, self.weights == "trained")


@dataclass(frozen=True)
class Run:
    """One model run: its attention, what ran (`label`, Markdown), whether a shipped trained model
    ran (`trained`), and why the trained model could not be loaded (`failure`)."""

    attention: AttentionView
    label: str
    trained: bool
    failure: str | None = None


def _run(choice: ModelChoice, tokens: tuple[str, ...], mask: str, pad_to: int) -> Run:
    """The model of `choice` on the tokens; a broken shipped model falls back to labelled random weights."""
    failure = None
    try:
        model, task, label = choose_model(choice)
    except PretrainedModelError as problem:
        failure = str(problem)
        model, task, _ = choose_model(dataclasses.replace(choice, trained=False))
        label = "**random weights** (the trained model could not be loaded)"
    attention = compute_view(model, task, list(tokens), mask, pad_to)
    for block in attention.blocks:
        for array in (block.weights, block.raw_scores, block.scaled_scores, block.masked_scores):
            array.setflags(write=False)  # cached and shared between sessions
    return Run(attention, label, failure is None and label.startswith("trained"), failure)


def shown_block(attention: AttentionView, block: str) -> AttentionBlock:
    return attention.blocks[BLOCKS.index(block) if len(attention.blocks) > 1 else 0]


@dataclass(frozen=True)
class AttentionLessonView:
    """What the page shows at one setting: the run, the block on screen (`attention`), the input
    as read, the right answer where the task defines one (on input read whole), the lesson text
    that holds for this view (`notices`: (section, fields)) and the card's note on the head to watch."""

    settings: AttentionSettings
    run: Run
    attention: AttentionBlock
    tokens: tuple[str, ...]
    problems: tuple[str, ...]
    expected: tuple[str, ...] | None
    notices: tuple[tuple[str, types.MappingProxyType], ...]
    watch: str | None

    @property
    def focus_row(self) -> int | None:
        """The row the lesson's steps ask about: "it" in a trained coreference model read whole; else None."""
        tokens = self.attention.query_tokens
        if self.settings.task != "coreference" or self.expected is None or "it" not in tokens:
            return None
        return tokens.index("it")


def attention_lesson_view(settings: AttentionSettings) -> AttentionLessonView:
    tokens, problems = read_input(settings)
    run = _run(settings.choice, tokens, settings.mask, settings.pad_to)
    task = get_task(settings.task)
    expected = task.expected_output(list(tokens)) if not problems else None
    block = shown_block(run.attention, settings.block)
    watch = referent_head_note(settings.choice) if run.trained else None
    referent = referent_head(settings.choice) if run.trained else None
    hint = attention_hint(settings.choice) if run.trained else None
    seen = Seen(block, tuple(run.attention.output_tokens), run.trained, settings.mask, natural_mask(settings.task),
                None if expected is None else tuple(expected), referent,
                hint is not None and referent == (hint["layer"], hint["head"]))
    shown = notices(settings.task, settings.block if task.architecture == "encoder-decoder" else "encoder", seen)
    return AttentionLessonView(settings, run, block, tokens, problems, None if expected is None else tuple(expected),
                               shown, watch)


CompareSettings = dataclasses.make_dataclass(
    "CompareSettings",
    [(f.name, f.type, dataclasses.field(default=f.default)) for f in dataclasses.fields(AttentionSettings)]
    + [("compare", str, setting("nothing", "Compare with", url="compare", options=COMPARISONS))],
    frozen=True, namespace={
        "__doc__": "The comparison section's own setting; the others follow the sidebar's.",
        "__module__": __name__, "main": property(lambda self: AttentionSettings(
            **{f.name: getattr(self, f.name) for f in dataclasses.fields(AttentionSettings)}))})


@dataclass(frozen=True)
class CompareView:
    """This view's enlarged head (`this`) against the same head of another setting (`other`, a block;
    None when comparing with nothing), with what ran there and its answer."""

    settings: object
    this: np.ndarray | None
    this_block: AttentionBlock | None
    other: np.ndarray | None
    other_block: AttentionBlock | None
    other_label: str = ""
    other_mask: str = ""
    other_answer: tuple[str, ...] = ()


def compare_view(settings) -> CompareView:
    if settings.compare == "nothing":
        return CompareView(settings, None, None, None, None)
    main = settings.main
    tokens = read_input(main)[0]
    this = shown_block(_run(main.choice, tokens, main.mask, main.pad_to).attention, main.block)
    kind, _, value = settings.compare.partition(": ")
    other_mask = value if kind == "mask" else main.mask
    choice = main.choice
    if kind == "encoding":
        choice = dataclasses.replace(choice, encoding=value)
    elif kind == "the other weights":
        choice = dataclasses.replace(choice, trained=not choice.trained)
    pad_to = max(len(tokens), main.pad_to if main.mask == "padding" else get_task(main.task).max_len)
    run = _run(choice, tokens, other_mask, pad_to)
    other = shown_block(run.attention, main.block)
    layers, heads = other.weights.shape[:2]
    return CompareView(settings, this.weights[main.layer - 1, main.head - 1], this,
                       other.weights[min(main.layer, layers) - 1, min(main.head, heads) - 1], other, run.label,
                       other_mask, tuple(run.attention.output_tokens))
