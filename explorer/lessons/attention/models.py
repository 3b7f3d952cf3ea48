"""Everything the self-attention page shows for one input, computed in one place.

The page picks a task, an input, weights (trained or random), a mask and a model shape; this module
parses the input, finds the shipped model for that shape (or builds clearly labelled random
weights when none is shipped), runs it, and returns plain numpy arrays per attention block
(encoder self-attention, decoder self-attention, cross-attention), plus the model's predictions.
"""

from __future__ import annotations

from dataclasses import dataclass

from explorer.analysis.attention_maps import MASKS, AttentionBlock, AttentionView, compute_view
from explorer.analysis.heads import accuracy_without
from explorer.caching import bounded_cache
from explorer.model.building import seeded
from explorer.model.transformer import Transformer, TransformerConfig
from explorer.pieces import piece
from explorer.training.pretrained import (
    DEFAULT_TASK,
    MODEL_SPECS,
    PretrainedModelError,
    load_model,
    model_config,
    model_name,
)
from explorer.training.tasks import Task, get_task

__all__ = [
    "DEFAULT_TASK",
    "MASKS",
    "PRESETS",
    "TRANSFORMER_TASKS",
    "AttentionBlock",
    "AttentionView",
    "ModelChoice",
    "PretrainedModelError",
    "attention_hint",
    "choose_model",
    "compute_view",
    "default_shape",
    "referent_head",
    "referent_head_note",
    "shipped_variants",
    "silenced_accuracy",
]

TRANSFORMER_TASKS = ("reverse", "sort", "coreference", "induction", "recall")

PRESETS: dict[str, list[str]] = {
    "reverse": ["A B C D E F G", "F O L D E D", "H E L L O", "J A B B E D C O D E"],
    "sort": ["D A C B", "P E A C H", "M I N G L E D", "C A B B A G E"],
    "coreference": [
        "the animal didn't cross the street because it was too tired",
        "the animal didn't cross the street because it was too wide",
        "the dog didn't catch the cat because it was too slow",
        "the dog didn't catch the cat because it was too fast",
    ],
    "induction": ["t3 t7 t1 t9 t4 t3 t7 t1 t9 t4", "t12 t5 t20 t8 t1 t16 t12 t5 t20 t8 t1 t16"],
    "recall": ["C A F B H D E G ?", "F A B E D C H G A B H C E D A G F B C H A E D B G ?"],
}


@dataclass(frozen=True)
class ModelChoice:
    """Which weights to run: a shipped model's name, or a random model of that shape."""

    task: str
    encoding: str
    n_heads: int
    n_layers: int
    trained: bool

    @property
    def name(self) -> str:
        return model_name(self.task, self.encoding, self.n_heads, self.n_layers)


def shipped_variants(task: str) -> list[tuple[str, int, int]]:
    """(encoding, heads, layers) of every shipped transformer for the task."""
    return [(s.encoding, s.n_heads, s.n_layers) for s in MODEL_SPECS if s.task == task and s.kind == "transformer"]


def default_shape(task: str) -> tuple[str, int, int]:
    """The first shipped variant of the task: the one the page opens on."""
    return shipped_variants(task)[0]


@bounded_cache(32, max_bytes=16_000_000)
def random_model(task_name: str, encoding: str, n_heads: int, n_layers: int) -> Transformer:
    """Untrained weights of the requested shape, seeded so every user sees the same ones."""
    task = get_task(task_name)
    spec = next(s for s in MODEL_SPECS if s.task == task_name)
    config = TransformerConfig.from_dict(
        {**model_config(spec, task), "encoding": encoding, "n_heads": n_heads, "n_layers": n_layers}
    )
    with seeded(0):
        model = Transformer(config)
    return model.eval().requires_grad_(False)


def choose_model(choice: ModelChoice) -> tuple[Transformer, Task, str]:
    """The model to run and a label saying honestly what it is.

    Raises PretrainedModelError when the shipped files are broken (the page shows the message)."""
    task = get_task(choice.task)
    shipped = (choice.encoding, choice.n_heads, choice.n_layers) in shipped_variants(choice.task)
    if choice.trained and shipped:
        loaded = load_model(choice.name)
        return loaded.model, loaded.task, f"trained model `{choice.name}`"
    model = random_model(choice.task, choice.encoding, choice.n_heads, choice.n_layers)
    if not shipped:
        return model, task, (f"**random weights** — no trained model is shipped with {choice.n_heads} heads, "
                             f"{choice.n_layers} layers and {choice.encoding} encoding for this task")
    return model, task, "**random weights** (untrained, for comparison)"


def referent_head(choice: ModelChoice) -> tuple[int, int] | None:
    """(layer, head), from 0, of the head the trained "it" model's card names; None for any other model."""
    if choice.task != "coreference" or not choice.trained or \
            (choice.encoding, choice.n_heads, choice.n_layers) not in shipped_variants(choice.task):
        return None
    named = load_model(choice.name).card.get("referent_head")
    return (named["layer"], named["head"]) if named else None


def attention_hint(choice: ModelChoice) -> dict | None:
    """The card's `attention_hint` of the shipped model of this task and shape (trained or not: what
    training did to the weights the "trained" choice runs), with the card's training `steps`; None
    when no model of that shape is shipped or its training had no hint."""
    if (choice.encoding, choice.n_heads, choice.n_layers) not in shipped_variants(choice.task):
        return None
    card = load_model(choice.name).card
    hint = card.get("attention_hint")
    return {**hint, "of_steps": card["steps"]} if hint else None


def silenced_accuracy(name: str, n_layers: int, n_heads: int) -> tuple[float, dict[tuple[int, int], float]]:
    """The shipped model's held-out accuracy, and the same with each self-attention head silenced in
    turn ((layer, head) from 0): computed from the model (explorer.analysis.heads), one piece a head."""
    return (piece(accuracy_without, name),
            {(layer, head): piece(accuracy_without, name, layer, head)
             for layer in range(n_layers) for head in range(n_heads)})


def _head(layer: int, head: int) -> str:
    return f"layer {layer + 1} head {head + 1}"


def _ablation_sentence(name: str, n_layers: int, n_heads: int, watched: tuple[int, int]) -> str:
    """What silencing one head at a time does to the accuracy: the head it costs most, the watched
    head, and the least that silencing any other head leaves."""
    full, without = silenced_accuracy(name, n_layers, n_heads)
    weakest = min(without, key=without.get)
    said = f"without {_head(*weakest)} it falls to {without[weakest]:.1%}"
    if watched != weakest:
        said += f", without {_head(*watched)} (the one to watch) to {without[watched]:.1%}"
    rest = [accuracy for place, accuracy in without.items() if place not in (weakest, watched)]
    if rest:
        said += f"; without any other head it stays at {min(rest):.1%} or more"
    return (f" Silence one head at a time (its output set to zero) and measure the model's accuracy on the same "
            f"sentences, {full:.1%} with every head: {said}.")


def referent_head_note(choice: ModelChoice) -> str | None:
    """For the trained "it" model: which head to watch and how it came to be, from its card (the
    hint, and each head's score measured at training time on the held-out set), and what silencing
    each head does to the accuracy, computed from the model.  None for any other model."""
    if choice.task != "coreference" or not choice.trained or \
            (choice.encoding, choice.n_heads, choice.n_layers) not in shipped_variants(choice.task):
        return None
    card = load_model(choice.name).card
    named = card.get("referent_head")
    if not named:
        return None
    watched = (named["layer"], named["head"])
    watch = _head(*watched)
    note = (f"**Watch {watch}.** On {card['heldout']['examples']} held-out sentences its attention from "
            f"“it” weighs the right noun above the other in {named['right_noun_above_other']:.1%} of them.")
    hint = attention_hint(choice)
    if hint and (hint["layer"], hint["head"]) == watched:
        note += (f" It was helped there: for the first {hint['steps']} of {hint['of_steps']} training steps an "
                 f"extra loss nudged this head's attention from “it” towards the referent.")
        others = [name for name, score in named.get("every_head", {}).items() if name != watch and score >= 0.95]
        if others:
            which = "which no loss nudged, do" if len(others) > 1 else "which no loss nudged, does"
            scores = " and ".join(f"{named['every_head'][name]:.1%}" for name in others)
            note += f" {' and '.join(others).capitalize()}, {which} the same ({scores})."
    return note + _ablation_sentence(choice.name, choice.n_layers, choice.n_heads, watched)










