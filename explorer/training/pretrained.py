"""The shipped models: what they are, how they are scored, and how they are loaded safely.

Each model is two files in `pretrained/`: NAME.safetensors (the weights) and NAME.json (its card:
config, task, seed, steps, wall time, final loss, held-out accuracy, torch version and the
weights' SHA-256).  Loading reads the card, checks the SHA-256 of the weights *before* parsing
them, parses them with safetensors (never pickle), and checks that the tensors fit the config.
Any problem raises `PretrainedModelError` with a message that names the file and the command that
regenerates it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load as load_safetensors
from torch import nn

from ..caching import loaded
from ..model.building import with_weights
from ..model.rnn import RECURRENT_KINDS, RecurrentTagger
from ..model.transformer import Transformer, TransformerConfig
from .tasks import Batch, SequenceToSequenceTask, Task, get_task

__all__ = [
    "DEFAULT_TASK",
    "MODEL_SPECS",
    "PRETRAINED_DIR",
    "AttentionHint",
    "LoadedModel",
    "ModelSpec",
    "PretrainedModelError",
    "build_model",
    "distance_band_edges",
    "evaluate",
    "find_spec",
    "load_model",
    "model_name",
    "recall_correct",
]

PRETRAINED_DIR = Path(__file__).resolve().parents[2] / "pretrained"
DEFAULT_TASK = "reverse"


@dataclass(frozen=True)
class AttentionHint:
    """An auxiliary loss for the first `steps` training steps: −log of the attention that head `head`
    of layer `layer` (both from 0) pays from the task's query position to the position the task
    names (for the "it" task: from "it" to its referent), times `weight`.  After that the model
    trains on the task alone; the card records the hint and what the head does at the end."""

    layer: int
    head: int
    weight: float
    steps: int


@dataclass(frozen=True)
class ModelSpec:
    """How to build and train one shipped model."""

    name: str
    task: str
    kind: str = "transformer"  # or "rnn", "lstm", "gru"
    encoding: str = "sinusoidal"
    n_heads: int = 4
    n_layers: int = 2
    d_model: int = 64
    steps: int = 3000
    batch_size: int = 64
    learning_rate: float = 2e-3
    seed: int = 0
    attention_hint: AttentionHint | None = None

    def transformer_config(self, task: Task) -> TransformerConfig:
        return TransformerConfig(
            vocab_size=task.vocab_size, d_model=self.d_model, n_heads=self.n_heads, n_layers=self.n_layers,
            architecture=task.architecture, encoding=self.encoding, norm="pre", max_len=task.max_len,
        )


def model_name(task: str, encoding: str = "sinusoidal", n_heads: int = 4, n_layers: int = 2) -> str:
    """The shipped name of a transformer variant, e.g. 'reverse-sinusoidal-h4-l2'."""
    return f"{task}-{encoding}-h{n_heads}-l{n_layers}"


def _transformer(task: str, encoding: str = "sinusoidal", n_heads: int = 4, n_layers: int = 2, **kw) -> ModelSpec:
    return ModelSpec(model_name(task, encoding, n_heads, n_layers), task, encoding=encoding, n_heads=n_heads,
                     n_layers=n_layers, **kw)


MODEL_SPECS: tuple[ModelSpec, ...] = (
    # The default task, one model per encoding ...
    *(_transformer(DEFAULT_TASK, encoding)
      for encoding in ("sinusoidal", "learned", "index", "none", "rope", "alibi", "t5")),
    # ... and across heads and layers at the default encoding.
    *(_transformer(DEFAULT_TASK, n_heads=h) for h in (1, 2)),
    # One layer must learn "distance from the end" inside a single encoder layer: give it longer.
    _transformer(DEFAULT_TASK, n_layers=1, steps=6000),
    _transformer(DEFAULT_TASK, n_layers=3),
    _transformer("sort"),
    _transformer("induction", n_heads=2, steps=4000),
    # Left alone, training finds the referent through other routes in most seeds (via the adjective,
    # or by reading both nouns and picking by kind): a short hint starts the head the lesson shows.
    _transformer("coreference", steps=3000, attention_hint=AttentionHint(layer=1, head=0, weight=0.1, steps=600)),
    # Recall: one data set and one budget (600 steps) for attention and the three loops, short
    # training gaps (see RecallTask), tested on every gap 1–256.  The loops have a state of 32.
    _transformer("recall", steps=600),
    *(ModelSpec(f"recall-{kind}", "recall", kind=kind, d_model=32, steps=600) for kind in RECURRENT_KINDS),
)


def find_spec(name: str) -> ModelSpec:
    for spec in MODEL_SPECS:
        if spec.name == name:
            return spec
    raise KeyError(f"no shipped model is called {name!r}")


def build_model(kind: str, task: Task, config: dict) -> nn.Module:
    """A freshly initialised model of the given kind from the config stored in its card (its weights drawn
    as it is built: build it under `explorer.model.building.seeded`, or `with_weights`)."""
    if kind == "transformer":
        return Transformer(TransformerConfig.from_dict(config))
    if kind in RECURRENT_KINDS:
        return RecurrentTagger(kind, config["vocab_size"], config["hidden_size"])
    raise ValueError(f"unknown model kind {kind!r}")


def model_config(spec: ModelSpec, task: Task) -> dict:
    if spec.kind == "transformer":
        return spec.transformer_config(task).to_dict()
    return {"vocab_size": task.vocab_size, "hidden_size": spec.d_model}


# --- evaluation -----------------------------------------------------------------------------------


def forward(model: nn.Module, batch: Batch) -> torch.Tensor:
    """Teacher-forced logits for a batch, whatever the kind of model."""
    if isinstance(model, Transformer):
        if model.config.architecture == "encoder-decoder":
            logits, _ = model(batch.inputs, batch.decoder_inputs, valid=batch.valid,
                              target_valid=batch.decoder_valid)
        else:
            logits, _ = model(batch.inputs, valid=batch.valid)
        return logits
    logits, _ = model(batch.inputs)
    return logits


EVAL_CHUNK = 256  # examples per forward pass: a trace of 1024 × 129 tokens at once would take gigabytes


def _chunks(batch: Batch, size: int = EVAL_CHUNK):
    """Split a batch into consecutive pieces of at most `size` examples."""
    for start in range(0, len(batch.inputs), size):
        part = slice(start, start + size)
        yield Batch(*(None if value is None else value[part] for value in (
            batch.inputs, batch.targets, batch.valid, batch.decoder_inputs, batch.decoder_valid, batch.distance)))


@torch.no_grad()
def evaluate(model: nn.Module, task: Task, batch: Batch | None = None) -> dict:
    """Held-out metrics on the task's fixed evaluation set.

    Sequence-to-sequence tasks are scored by greedy decoding, an example counting only if every
    output token up to and including </s> is right.  The others are scored per predicted token.
    """
    model.eval()
    batch = task.evaluation() if batch is None else batch
    right_tokens = scored_tokens = right_sequences = 0
    for part in _chunks(batch):
        scored = part.targets != -100
        right_tokens += (forward(model, part).argmax(-1)[scored] == part.targets[scored]).sum().item()
        scored_tokens += scored.sum().item()
        if isinstance(task, SequenceToSequenceTask):
            generated, _ = model.generate(part.inputs, task.max_len, task.index["<s>"], valid=part.valid)
            right_sequences += ((generated == part.targets) | ~scored).all(dim=1).sum().item()
    token_accuracy = right_tokens / scored_tokens
    metrics = {"token_accuracy": token_accuracy}
    if isinstance(task, SequenceToSequenceTask):
        metrics["accuracy"] = right_sequences / len(batch.inputs)
        metrics["metric"] = "whole sequences right, greedy decoding"
    else:
        metrics["accuracy"] = token_accuracy
        metrics["metric"] = "predicted tokens right"
    return metrics


def distance_band_edges(longest: int) -> tuple[int, ...]:
    """Edges of the recall task's distance bands, [edge_i, edge_i+1): 1, 9, 33, 65, then doubling
    (129, 257, …), closed by longest + 1: bands 1–8, 9–32, 33–64, 65–128, 129–256, …"""
    edges = [1, 9, 33, 65]
    while edges[-1] * 2 - 1 <= longest:
        edges.append(edges[-1] * 2 - 1)
    return (*[e for e in edges if e <= longest], longest + 1)


def _call(fn, *args, **kwargs):
    return fn(*args, **kwargs)


@torch.no_grad()  # per thread: on the thread that runs the chunk
def _recall_chunk(model: nn.Module, batch: Batch, rows: torch.Tensor) -> tuple[np.ndarray, np.ndarray]:
    d = batch.distance[rows]
    length = int(d.max()) + 1
    part = Batch(batch.inputs[rows, :length], batch.targets[rows, :length], batch.valid[rows, :length], distance=d)
    logits = forward(model, part)
    index = torch.arange(len(rows))
    return d.numpy(), (logits[index, d].argmax(-1) == part.targets[index, d]).numpy()


def recall_correct(model: nn.Module, task: Task, chunk: int = 64, *, run=_call) -> tuple[np.ndarray, np.ndarray]:
    """Recall task: (distance, right) for every example of the evaluation set — the distance between
    the key and the '?', and whether the model's answer at the '?' is right.

    In bounded memory: examples are sorted by distance and run in chunks cut to the chunk's longest
    gap (the answer at '?' does not depend on the padding after it: the models are causal), instead
    of one (1024 × 129) batch whose attention traces alone take gigabytes.  Chunks of 64 waste
    little on padding and keep each attention tensor small (on this machine the transformer's
    evaluation ran about a quarter faster than with chunks of 128).  Each chunk is
    `run(fn, *args)`: a caller may run them elsewhere (on a work pool).
    """
    batch = task.evaluation()
    if batch.distance is None:
        raise ValueError("recall_correct needs the recall task")
    order = torch.argsort(batch.distance, stable=True)
    parts = [run(_recall_chunk, model, batch, order[start:start + chunk]) for start in range(0, len(order), chunk)]
    return np.concatenate([d for d, _ in parts]), np.concatenate([r for _, r in parts])


# --- loading ----------------------------------------------------------------------------------------


class PretrainedModelError(RuntimeError):
    """A shipped model is missing, damaged or does not fit its card."""


@dataclass(frozen=True)
class LoadedModel:
    """A shipped model ready for inference (eval mode, gradients off), its task and its card."""

    name: str
    model: nn.Module
    task: Task
    card: dict


# Parameters renamed since the shipped weights were saved (old → new): a layer's LayerNorms were
# the `norm` of a wrapper module per sublayer, and are now the layer's own `attn_norm`, `cross_norm`
# and `ffn_norm`.  The weight files stay as they are (their cards hold the files' SHA-256).
RENAMED_PARAMETERS = {
    ".attn_block.norm.": ".attn_norm.",
    ".self_block.norm.": ".attn_norm.",
    ".cross_block.norm.": ".cross_norm.",
    ".ffn_block.norm.": ".ffn_norm.",
}


def current_names(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A state dict saved under the old parameter names, under today's (others are kept)."""
    renamed = {}
    for name, tensor in tensors.items():
        for old, new in RENAMED_PARAMETERS.items():
            name = name.replace(old, new)
        renamed[name] = tensor
    return renamed


def _fail(name: str, path: Path, problem: str):
    raise PretrainedModelError(
        f"{path.name}: {problem}. Regenerate it with: python -m explorer.training.train {name}"
    )


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_card(name: str, directory: Path = PRETRAINED_DIR) -> dict:
    card_path = directory / f"{name}.json"
    if not card_path.exists():
        _fail(name, card_path, "the model card is missing")
    try:
        card = json.loads(card_path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as problem:
        _fail(name, card_path, f"the model card is not valid JSON ({problem})")
    missing = {"name", "task", "kind", "config", "sha256"} - set(card)
    if missing:
        _fail(name, card_path, f"the model card lacks {sorted(missing)}")
    return card


def load_model_uncached(name: str, directory: Path = PRETRAINED_DIR) -> LoadedModel:
    """Read, verify and build one shipped model (see the module docstring for the checks)."""
    card = read_card(name, directory)
    weights_path = directory / f"{name}.safetensors"
    if not weights_path.exists():
        _fail(name, weights_path, "the weights file is missing")
    data = weights_path.read_bytes()
    if hashlib.sha256(data).hexdigest() != card["sha256"]:
        _fail(name, weights_path, "the weights do not match the SHA-256 in the model card "
                                  "(the file is damaged, truncated or was changed)")
    try:
        tensors = load_safetensors(data)
        task = get_task(card["task"])
        model = with_weights(lambda: build_model(card["kind"], task, card["config"]), current_names(tensors))
    except Exception as problem:  # any parse or shape problem means the files do not fit together
        _fail(name, weights_path, f"the weights do not fit the model card ({type(problem).__name__}: "
                                  f"{str(problem).splitlines()[0][:200]})")
    model.eval().requires_grad_(False)
    return LoadedModel(name, model, task, card)


@loaded(64)
def load_model(name: str) -> LoadedModel:
    """The shipped model `name`, loaded once per process and shared; callers must not modify it."""
    return load_model_uncached(name)
