"""The decoder lesson, declared: its settings (the controls), its view (settings → arrays) and the
views of its two sections with settings of their own (the KV cache, the architectures).  The
runtime (explorer/serve) caches them; explorer/lessons/decoder/decoder.py draws them.  The library underneath is
explorer.lessons.decoder.models (decoding runs, counts, parameters) and explorer.analysis.kv_timing (the
stopwatch)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from explorer.analysis.kv_timing import CacheSweep, cache_sweep
from explorer.kit.settings import own_text, picked_text, picker, setting
from explorer.lessons.decoder.models import (
    DECODER_MODELS,
    PRESETS,
    ArchitectureRow,
    DecodingRun,
    Example,
    StepCounts,
    architecture_rows,
    decoding_run,
    example,
    model_shape,
    parallel_losses,
    step_counts,
)
from explorer.training.parsed_input import OWN_TEXT
from explorer.training.pretrained import PretrainedModelError, find_spec
from explorer.training.tasks import get_task

__all__ = ["OWN_TEXT", "SWEEP_LENGTHS", "WIDER", "ArchitectureSettings", "ArchitectureView", "CacheSettings",
           "CacheView", "DecoderSettings", "DecoderView", "architecture_view", "cache_view", "count_claim",
           "decoder_view", "mistake_claim", "mistake_effect", "parallel_claim", "timing_claim", "tokens_of",
           "wider_claim"]

TOP_K = 5
SWEEP_LENGTHS = (2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128)  # the stopwatch's lengths (up to ~6× the longest example)
WIDER = (256, 2, 4)  # the wider model the stopwatch also times (d_model, layers, heads): 4× wider, as deep
CLOCK = time.thread_time  # the stopwatch's clock: CPU time of the thread that runs the model (kv_timing)
MAX_CHARS = 300


def _seq2seq(task: str) -> bool:
    return get_task(task).architecture == "encoder-decoder"


def _input(task: str):
    """The preset picker of one model's input (it exists while that model is chosen)."""
    return picker(task, PRESETS[task], "Input" if _seq2seq(task) else "Prompt", widget="selectbox")


def _text(task: str):
    """The text box under the picker, when it says "your own text…"."""
    return own_text(task, PRESETS[task][0], MAX_CHARS,
                    "Letters A–P separated by spaces (or one word)." if _seq2seq(task) else
                    "Tokens t0 … t23 separated by spaces; a run of different tokens, then its start again.")


def tokens_of(settings) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The tokens the model reads, and what was dropped, cut or replaced on the way from the
    chosen or typed text (plain sentences).  Fewer than two usable tokens: the first preset."""
    task = get_task(settings.task)
    parsed = task.parse(picked_text(settings, settings.task))
    problems, tokens = list(parsed.problems), list(parsed.tokens)
    if len(tokens) < 2:
        unit = "letters from A to P" if _seq2seq(settings.task) else "known tokens (t0 … t23)"
        problems.append(f"fewer than two {unit}, so the first example is shown instead")
        tokens = list(task.parse(PRESETS[settings.task][0]).tokens)
    room = task.max_len - 4
    if not _seq2seq(settings.task) and len(tokens) > room:
        problems.append(f"the prompt was cut to its first {room} tokens, leaving room to write")
        tokens = tokens[:room]
    return tuple(tokens), tuple(problems)


def _n_steps(settings) -> int:
    return example(settings.task, tokens_of(settings)[0]).n_steps


@dataclass(frozen=True)
class DecoderSettings:
    """The decoder lesson's controls: the model, its input, the attention shown, a mistake put in,
    and the generation step (drawn above the key figure)."""

    task: str = setting("reverse", "Model", url="task", options=tuple(DECODER_MODELS), widget="selectbox",
                        help="reverse and sort: encoder–decoders that write their input backwards or in order; "
                             "induction: decoder-only, it continues a run of tokens that has begun to repeat. "
                             "Each is a shipped model (pretrained/) with 2 layers.")
    input_reverse: str = _input("reverse")
    text_reverse: str = _text("reverse")
    input_sort: str = _input("sort")
    text_sort: str = _text("sort")
    input_induction: str = _input("induction")
    text_induction: str = _text("induction")
    layer: int = setting(2, "Layer", url="layer", widget="select_slider",
                         options=lambda s: tuple(range(1, model_shape(s.task)[0] + 1)),
                         default_from=lambda s: model_shape(s.task)[0])
    head: str = setting("mean", "Head", url="head", widget="select_slider",
                        options=lambda s: ("mean", *map(str, range(1, model_shape(s.task)[1] + 1))),
                        help="One head, or the mean of the layer's heads.")
    mistake: str = setting("none", "Wrong token at step", url="mistake", widget="select_slider",
                           options=lambda s: ("none", *map(str, range(1, _n_steps(s) + 1))),
                           help="Make the model write a wrong token at this step (the likeliest wrong one) and "
                                "see where it goes.")
    t: int = setting(1, "Step", url="t", bounds=lambda s: (1, _n_steps(s), 1), main=True,
                     help="Each step reads everything written so far and writes one token.")

    @property
    def put_in(self) -> int | None:
        """The step (0-based) of the mistake, or None."""
        return None if self.mistake == "none" else int(self.mistake) - 1


@dataclass(frozen=True)
class DecoderView:
    """The lesson at one setting.  `run` is what the stepping figure shows: free running, with the
    mistake put in if one is chosen; `forced` is teacher forcing (None without a right answer);
    `error` says why the model could not be loaded (then the runs are None)."""

    settings: DecoderSettings
    example: Example
    problems: tuple[str, ...]
    error: str | None
    run: DecodingRun | None
    forced: DecodingRun | None
    top: np.ndarray | None  # the step's likeliest tokens (vocabulary indices), best first
    self_shown: np.ndarray | None  # (steps, keys): the chosen layer and head, NaN for steps not taken yet
    cross_shown: np.ndarray | None  # (steps, source), or None for decoder-only
    parallel: np.ndarray | None = None  # every step's loss from one teacher-forced parallel pass (training's)

    @property
    def step(self) -> int:
        return self.settings.t - 1


def _shown(array: np.ndarray, settings: DecoderSettings) -> np.ndarray:
    layer = array[:, settings.layer - 1]
    chosen = layer.mean(axis=1) if settings.head == "mean" else layer[:, int(settings.head) - 1]
    shown = np.array(chosen, dtype=np.float64)
    shown[settings.t:] = np.nan  # steps not taken yet
    shown.setflags(write=False)
    return shown


def decoder_view(settings: DecoderSettings) -> DecoderView:
    tokens, problems = tokens_of(settings)
    ex = example(settings.task, tokens)
    try:
        run = decoding_run(settings.task, tokens, False, settings.put_in)
        forced = None if ex.expected is None else decoding_run(settings.task, tokens, True, settings.put_in)
        parallel = parallel_losses(settings.task, tokens)
    except PretrainedModelError as problem:
        return DecoderView(settings, ex, problems, str(problem), None, None, None, None, None)
    top = np.argsort(-run.probs[settings.t - 1], kind="stable")[:TOP_K]
    top.setflags(write=False)
    cross = None if run.cross_weights is None else _shown(run.cross_weights, settings)
    return DecoderView(settings, ex, problems, None, run, forced, top, _shown(run.self_weights, settings), cross,
                       parallel)


PARALLEL_TOLERANCE = 1e-4  # the one pass's losses equal the step-by-step ones within this (float32 sums)


def parallel_claim(view: DecoderView) -> dict | None:
    """The forcing section's sentence that one parallel pass gives every step's teacher-forced loss:
    its numbers (how many positions, what the pass reads, the largest difference from the step-by-step
    losses), or None where there is no teacher or the two differ by more than PARALLEL_TOLERANCE."""
    if view.forced is None or view.parallel is None:
        return None
    diff = float(np.max(np.abs(view.parallel - view.forced.losses)))
    if not diff <= PARALLEL_TOLERANCE:
        return None
    ex = view.example
    read = ("<s>", *ex.expected[:-1]) if ex.start is not None else (*ex.tokens, *ex.expected[:-1])
    return {"n": len(view.parallel), "read": " ".join(read), "diff": _power(diff)}


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _power(x: float) -> str:
    """A small positive number as "7 × 10⁻¹¹" (one digit), 0 as "0"."""
    if x == 0:
        return "0"
    mantissa, exponent = f"{x:.0e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def mistake_claim(view: DecoderView) -> dict | None:
    """What the step line says about the token written at the shown step: None when the model
    wrote its own choice; else the token put in and the model's own choice there."""
    if view.run is None or view.settings.put_in != view.step:
        return None
    k = view.step
    return {"written": view.run.written[k], "own": view.run.greedy[k],
            "own_p": float(view.run.probs[k, view.run.vocab.index(view.run.greedy[k])])}


def mistake_effect(view: DecoderView) -> dict | None:
    """The forcing section's numbers after the put-in mistake (None without a mistake or without a
    right answer): how many later tokens each way gets wrong, and the loss summed over them."""
    k, right, free, forced = view.settings.put_in, view.example.expected, view.run, view.forced
    if k is None or right is None or free is None:
        return None
    later = slice(k + 1, None)
    return {"step": k + 1, "written": free.written[k], "right": right[k], "later": len(right[later]),
            "free_wrong": sum(w != r for w, r in zip(free.written[later], right[later], strict=True)),
            "free_loss": float(np.sum(free.losses[later])),
            "forced_wrong": sum(w != r for w, r in zip(forced.greedy[later], right[later], strict=True)),
            "forced_loss": float(np.sum(forced.losses[later]))}


# --- 3 · the KV cache ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class CacheSettings:
    """Section 3 has no controls of its own: the example and the step follow the sidebar's."""

    task: str = "reverse"
    input_reverse: str = PRESETS["reverse"][0]
    text_reverse: str = PRESETS["reverse"][0]
    input_sort: str = PRESETS["sort"][0]
    text_sort: str = PRESETS["sort"][0]
    input_induction: str = PRESETS["induction"][0]
    text_induction: str = PRESETS["induction"][0]
    t: int = 1


@dataclass(frozen=True)
class CacheView:
    """Exact multiplications per step of this example, what the step keeps, and the stopwatch:
    time per generated token with and without the cache across lengths, for a decoder-only model
    of this model's shape and for a wider one (measured on this machine, once per process)."""

    example: Example
    step: int  # 0-based
    n_layers: int
    n_source: int  # 0 for decoder-only
    position: int  # the newest decoder position (0-based)
    new: int  # positions the cached step feeds
    length: int  # positions this step reads (source and decoder input; the encoder runs once)
    counts: StepCounts | None  # None when the model could not be loaded (`error` says why)
    sweeps: tuple[CacheSweep, ...]  # this model's shape, then the wider one
    error: str | None = None


def cache_view(settings: CacheSettings) -> CacheView:
    tokens, _ = tokens_of(settings)
    ex = example(settings.task, tokens)
    k = min(settings.t, ex.n_steps) - 1
    seq2seq = ex.start is not None
    spec = find_spec(DECODER_MODELS[settings.task])
    d_model, n_layers, n_heads = spec.d_model, spec.n_layers, spec.n_heads
    n_source = len(ex.ids) if seq2seq else 0
    position = k if seq2seq else len(ex.ids) - 1 + k
    try:
        counts, error = step_counts(settings.task, len(ex.ids), ex.n_steps), None
    except PretrainedModelError as problem:
        counts, error = None, str(problem)
    sweeps = (cache_sweep(d_model, n_layers, n_heads, SWEEP_LENGTHS, clock=CLOCK),
              cache_sweep(*WIDER, SWEEP_LENGTHS, clock=CLOCK))
    return CacheView(ex, k, n_layers, n_source, position, len(ex.ids) if not seq2seq and k == 0 else 1,
                     n_source + position + 1, counts, sweeps, error)


def count_claim(view: CacheView) -> tuple[str, dict]:
    """The counts sentence (the lesson text's section name) and its numbers at this step."""
    counts, k = view.counts, view.step
    name = "cache: numbers" if view.n_source else "cache: numbers, decoder-only"
    return name, {"step": k + 1, "uncached": counts.uncached[k], "cached": counts.cached[k],
                  "ratio": counts.uncached[k] / counts.cached[k], "uncached_total": counts.uncached_total,
                  "cached_total": counts.cached_total, "setup": counts.setup, "encoder": counts.encoder,
                  "kept": counts.setup - counts.encoder,
                  # a teacher-forced pass over the whole output: the last step's decoder, and the encoder
                  "training": counts.uncached[-1] + counts.encoder}


def timing_claim(sweep: CacheSweep, length: int) -> tuple[str, dict]:
    """Which sentence the stopwatch supports at this length, and its numbers: the lesson text's
    section name ("timing: pays", "timing: not yet", "timing: mixed", "timing: never") and fields.
    The measured length it reads is the longest one up to `length` (the shortest if none is)."""
    lengths = sweep.lengths.tolist()
    i = max([j for j, n in enumerate(lengths) if n <= length], default=0)
    values = {"length": length, "measured": lengths[i], "uncached_ms": 1000 * float(sweep.uncached[i]),
              "cached_ms": 1000 * float(sweep.cached[i]), "crossover": sweep.crossover, "longest": lengths[-1]}
    if sweep.crossover is None:
        return "timing: never", values
    if lengths[i] >= sweep.crossover:
        return "timing: pays", values
    faster = sweep.cached[i] < sweep.uncached[i]
    return ("timing: mixed" if faster else "timing: not yet"), values


def wider_claim(sweep: CacheSweep) -> str:
    """The wider model's crossover, as a sentence (without its full stop)."""
    shape = f"d_model = {sweep.d_model}, {sweep.n_layers} layers"
    if sweep.crossover is None:
        return f"A wider model ({shape}) was not faster with the cache even at T = {int(sweep.lengths[-1])}"
    return f"A wider model ({shape}) is faster with the cache from T = {sweep.crossover} on"


# --- 4 · the architectures ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ArchitectureSettings:
    """Section 4's controls, beside it."""

    d_model: int = setting(64, "Width d_model", url="arch_d", options=(64, 128, 256, 512, 768, 1024))
    n_layers: int = setting(2, "Layers per stack", url="arch_layers", bounds=(1, 12, 1))
    vocab: int = setting(19, "Vocabulary", url="arch_vocab", options=(19, 100, 1000, 10000, 32000, 50000),
                         help="19 is the reverse and sort models' vocabulary; 32 000–50 000 is a real language "
                              "model's.")


@dataclass(frozen=True)
class ArchitectureView:
    settings: ArchitectureSettings
    rows: tuple[ArchitectureRow, ...]  # encoder-only, decoder-only, twice as deep, encoder–decoder

    def row(self, name: str) -> ArchitectureRow:
        return next(r for r in self.rows if r.name == name)


def architecture_view(settings: ArchitectureSettings) -> ArchitectureView:
    return ArchitectureView(settings, architecture_rows(settings.d_model, settings.n_layers, settings.vocab))
