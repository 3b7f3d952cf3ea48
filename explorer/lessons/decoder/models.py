"""What the decoder lesson computes (its declaration, settings and views: explorer.lessons.decoder.view).

* `decoding_run`: a shipped model decoding one input step by step — free running, or teacher-forced
  with the right answer — with a wrong token put in at some step if asked (`explorer.analysis.decoding`);
  kept in a bounded cache (read-only arrays): every step, layer and head of the lesson reads the same run.
* `step_counts`: the exact multiplications of every generation step with and without the KV cache
  (`explorer.analysis.cost`).  The measured time is explorer.analysis.kv_timing's.
* `architecture_rows`: the parameters of encoder-only, decoder-only and encoder–decoder models of
  the same sizes, counted on the built modules.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explorer.analysis.cost import cache_setup_cost, generation_step_cost
from explorer.analysis.decoding import decode_steps, teacher_forced_pass
from explorer.caching import bounded_cache
from explorer.model.building import shapes_only
from explorer.model.parameters import count_parameters
from explorer.model.transformer import Transformer, TransformerConfig
from explorer.training.pretrained import PretrainedModelError, find_spec, load_model
from explorer.training.tasks import BOS, PAD, Task, get_task

__all__ = [
    "DECODER_MODELS",
    "PRESETS",
    "ArchitectureRow",
    "DecodingRun",
    "Example",
    "PretrainedModelError",
    "StepCounts",
    "architecture_rows",
    "decoding_run",
    "example",
    "induction_answer",
    "model_shape",
    "parallel_losses",
    "step_counts",
]

DECODER_MODELS = {
    "reverse": "reverse-sinusoidal-h4-l2",
    "sort": "sort-sinusoidal-h4-l2",
    "induction": "induction-sinusoidal-h2-l2",
}
PRESETS: dict[str, list[str]] = {
    "reverse": ["H E L L O", "A B C D E F G", "J A B B E D C O D E", "D E C O D E R"],
    "sort": ["P E A C H", "D A C B", "M I N G L E D", "C A B B A G E"],
    "induction": ["t3 t7 t1 t9 t4 t3", "t12 t5 t20 t8 t1 t16 t12", "t2 t4 t6 t8 t10 t12 t14 t2 t4"],
}
FREE_STEPS = 6  # tokens to generate after an induction prompt that sets no repeat to finish


def model_shape(task_name: str) -> tuple[int, int]:
    """(layers, heads) of the task's shipped model, from its spec (no file is read)."""
    spec = find_spec(DECODER_MODELS[task_name])
    return spec.n_layers, spec.n_heads


@dataclass(frozen=True)
class Example:
    """One input to decode: the model's input ids, the start token (None for decoder-only), the
    number of steps and the right answer (None if the input defines none)."""

    task: str
    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    start: int | None
    n_steps: int
    expected: tuple[str, ...] | None


def induction_answer(tokens: tuple[str, ...] | list[str]) -> list[str] | None:
    """The rest of the repeat an induction prompt has begun: the prompt is a run of distinct tokens A,
    then the start of A again; the answer is the rest of A.  None when the prompt is not of that form."""
    tokens = list(tokens)
    start = next((i for i, t in enumerate(tokens) if t in tokens[:i]), None)
    if start is None or tokens[start:] != tokens[:len(tokens) - start]:
        return None
    rest = tokens[len(tokens) - start:start]
    return rest or None


def example(task_name: str, tokens: tuple[str, ...]) -> Example:
    """What to decode for these tokens (already parsed by the task: known tokens, within its length)."""
    task = get_task(task_name)
    ids = tuple(task.encode(list(tokens)))
    if task.architecture == "encoder-decoder":
        expected = tuple(task.expected_output(list(tokens)))
        return Example(task_name, tokens, ids, task.index[BOS], len(expected), expected)
    room = task.max_len - len(tokens)
    if room < 2:
        raise ValueError(f"a prompt of {len(tokens)} tokens leaves no room to write two more in the model's "
                         f"{task.max_len} positions")
    answer = induction_answer(tokens)
    if answer is not None:
        answer = answer[:room]
    if answer is None or len(answer) < 2:  # nothing (or a single token) to finish: run on freely
        return Example(task_name, tokens, ids, None, min(FREE_STEPS, room), None)
    return Example(task_name, tokens, ids, None, len(answer), tuple(answer))


@dataclass(frozen=True)
class DecodingRun:
    """Every step of one decoding, as read-only numpy arrays (n steps).

    queries:  the decoder input at each step (its newest token)
    keys:     every decoder position by the end (what self-attention can read)
    written / greedy: the token each step wrote, and the model's own choice there
    probs (n, vocab); self_weights (n, layers, heads, keys) NaN beyond the keys a step could see;
    cross_weights (n, layers, heads, source) or None; losses (n,) −ln p(right token), or None
    """

    queries: tuple[str, ...]
    keys: tuple[str, ...]
    written: tuple[str, ...]
    greedy: tuple[str, ...]
    probs: np.ndarray
    self_weights: np.ndarray
    cross_weights: np.ndarray | None
    losses: np.ndarray | None
    vocab: tuple[str, ...]

    @property
    def n_steps(self) -> int:
        return len(self.written)


def _read_only(array: np.ndarray) -> np.ndarray:
    array.setflags(write=False)
    return array


def _wrong_token(task: Task, probs: np.ndarray, right: int) -> int:
    """The likeliest token other than the right one (never <pad> or <s>): a plausible mistake."""
    order = np.argsort(-probs, kind="stable")
    barred = {right, task.index[PAD], task.index.get(BOS, -1)}
    return int(next(i for i in order if i not in barred))


@bounded_cache(96, max_bytes=8_000_000)
def decoding_run(task_name: str, tokens: tuple[str, ...], teacher: bool = False,
                 mistake: int | None = None) -> DecodingRun:
    """A shipped model decoding `tokens`: free running, or teacher-forced with the right answer.

    mistake: a step (0-based) where the model is made to write a wrong token — the likeliest one
    other than the right answer (or other than its own choice, where no answer is known), chosen
    from the free-running distribution at that step.  Raises PretrainedModelError if the model's
    files are broken, ValueError if teacher forcing is asked for an input without a right answer.
    """
    loaded = load_model(DECODER_MODELS[task_name])
    task, model = loaded.task, loaded.model
    ex = example(task_name, tokens)
    right = None if ex.expected is None else task.encode(list(ex.expected))
    if teacher and right is None:
        raise ValueError("teacher forcing needs the right answer, and this input defines none")
    replace = {}
    if mistake is not None:
        if not 0 <= mistake < ex.n_steps:
            raise ValueError(f"mistake step {mistake} is outside 0 … {ex.n_steps - 1}")
        clean = decoding_run(task_name, tokens)
        own = task.index[clean.greedy[mistake]]
        replace[mistake] = _wrong_token(task, clean.probs[mistake], own if right is None else right[mistake])
    with torch.inference_mode():
        steps = decode_steps(model, ex.ids, ex.n_steps, ex.start, teacher=right if teacher else None, replace=replace)
    written = [task.vocab[s.written] for s in steps]
    queries = [task.vocab[s.input[-1]] for s in steps]  # the newest input of each step
    keys = [*task.decode(steps[0].input), *queries[1:]]  # <s> (or the prompt), then each later input
    n_keys = len(keys)
    self_weights = np.full((len(steps), *steps[0].self_weights.shape[:2], n_keys), np.nan)
    for k, step in enumerate(steps):
        self_weights[k, ..., :step.self_weights.shape[-1]] = step.self_weights
    probs = np.stack([s.probs for s in steps])
    cross = None if steps[0].cross_weights is None else np.stack([s.cross_weights for s in steps])
    losses = None if right is None else -np.log(np.maximum(probs[np.arange(len(steps)), right], 1e-300))
    return DecodingRun(tuple(queries), tuple(keys), tuple(written), tuple(task.vocab[s.token] for s in steps),
                       _read_only(probs), _read_only(self_weights), None if cross is None else _read_only(cross),
                       None if losses is None else _read_only(losses), tuple(task.vocab))


@bounded_cache(96, max_bytes=1_000_000)
def parallel_losses(task_name: str, tokens: tuple[str, ...]) -> np.ndarray | None:
    """The loss −ln p(right token) of every step, from one parallel forward pass over the shifted target,
    as training computes it (None when the input defines no right answer).  Raises PretrainedModelError
    if the model's files are broken."""
    loaded = load_model(DECODER_MODELS[task_name])
    task, ex = loaded.task, example(task_name, tokens)
    if ex.expected is None:
        return None
    right = task.encode(list(ex.expected))
    with torch.inference_mode():
        probs = teacher_forced_pass(loaded.model, ex.ids, ex.start, right)
    return _read_only(-np.log(np.maximum(probs[np.arange(len(right)), right], 1e-300)))


# --- the KV cache: exact counts per step ---------------------------------------------------------------


@dataclass(frozen=True)
class StepCounts:
    """Multiplications of every step (1 … n), without and with the cache, and what runs once before
    the first step: `encoder`, both ways (its output does not depend on what the decoder writes), and
    `setup`, the cache's: the encoder and the cross-attention keys and values."""

    uncached: tuple[int, ...]
    cached: tuple[int, ...]
    setup: int
    encoder: int = 0

    @property
    def uncached_total(self) -> int:
        return self.encoder + sum(self.uncached)

    @property
    def cached_total(self) -> int:
        return self.setup + sum(self.cached)


def step_counts(task_name: str, n_source: int, n_steps: int) -> StepCounts:
    """Exact counts for the shipped model of the task: an encoder–decoder decoding `n_steps` tokens
    of a source of `n_source`, or a decoder-only model continuing a prompt of `n_source` tokens.
    The encoder runs once either way; the cache saves the decoder's re-computation."""
    config = load_model(DECODER_MODELS[task_name]).model.config
    d, n, vocab = config.d_model, config.n_layers, config.output_vocab_size
    if config.architecture == "encoder-decoder":
        positions = [k + 1 for k in range(n_steps)]
        uncached = [generation_step_cost(T, d, n, vocab, T_src=n_source, d_ff=config.d_ff).total for T in positions]
        cached = [generation_step_cost(T, d, n, vocab, T_src=n_source, d_ff=config.d_ff, cache=True).total
                  for T in positions]
        setup = cache_setup_cost(d, n, n_source, config.d_ff)
        return StepCounts(tuple(uncached), tuple(cached), setup.total, setup.encoder)
    positions = [n_source + k for k in range(n_steps)]
    uncached = [generation_step_cost(T, d, n, vocab, d_ff=config.d_ff).total for T in positions]
    cached = [generation_step_cost(T, d, n, vocab, d_ff=config.d_ff, cache=True, new=n_source if k == 0 else 1).total
              for k, T in enumerate(positions)]
    return StepCounts(tuple(uncached), tuple(cached), 0)


# --- three architectures, the same sizes --------------------------------------------------------------


@dataclass(frozen=True)
class ArchitectureRow:
    """One architecture's blocks and parameters, counted on the built model."""

    name: str
    layers: str  # e.g. "2 + 2"
    blocks: str  # the attention blocks of its layers: "self" (unmasked), "masked self", "cross"; "|" between stacks
    parameters: int
    in_layers: int  # in the attention and feed-forward layers (and their LayerNorms)
    in_embeddings: int  # token embeddings and the output projection


def _built(architecture: str, d_model: int, n_layers: int, vocab: int) -> Transformer:
    config = TransformerConfig(vocab_size=vocab, d_model=d_model, n_heads=4, n_layers=n_layers,
                               architecture=architecture, encoding="sinusoidal", norm="pre", max_len=16)
    with shapes_only():  # on the meta device: no memory, no random draws
        return Transformer(config)


def _row(name: str, layers: str, blocks: str, model: Transformer) -> ArchitectureRow:
    total = count_parameters(model)
    embeddings = count_parameters(model.lm_head) + sum(
        count_parameters(stack.embed) for stack in (model.encoder, model.decoder) if stack is not None)
    return ArchitectureRow(name, layers, blocks, total, total - embeddings, embeddings)


def architecture_rows(d_model: int, n_layers: int, vocab: int) -> tuple[ArchitectureRow, ...]:
    """Encoder-only (N layers), decoder-only (N, and 2N: as many layers as both stacks of the
    encoder–decoder together) and encoder–decoder (N + N), sinusoidal positions (no parameters),
    pre-norm, feed-forward 4·d: every count is count_parameters of the built model."""
    unmasked, masked, cross = "self", "masked self", "cross"
    return (
        _row("encoder-only", f"{n_layers}", unmasked, _built("encoder", d_model, n_layers, vocab)),
        _row("decoder-only", f"{n_layers}", masked, _built("decoder", d_model, n_layers, vocab)),
        _row("decoder-only, twice as deep", f"{2 * n_layers}", masked, _built("decoder", d_model, 2 * n_layers, vocab)),
        _row("encoder–decoder", f"{n_layers} + {n_layers}", f"{unmasked} | {masked} + {cross}",
             _built("encoder-decoder", d_model, n_layers, vocab)),
    )
