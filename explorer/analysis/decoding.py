"""The decoder at work, one step at a time: what it reads, what it weighs, what it writes.

`decode_steps` runs a model's decoder step by step (with the KV cache, so each step computes only
its new position) and returns, for every step, the next-token distribution, the greedy choice and
the new position's row of attention — self-attention over the keys so far, cross-attention over the
source.  Two ways to choose the next input:

* free running (inference): each step's input is what the model wrote at the step before;
* teacher forcing (training): each step's input is the right token, whatever the model wrote.

In training all the teacher-forced steps are one parallel pass over the shifted target, the causal
mask hiding each position's future; the steps here compute exactly those rows one at a time.
`replace` puts a wrong token in the model's mouth at some step, to see where it goes: under free
running it is the next input, under teacher forcing it is not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..model.generation import IncrementalDecoder
from ..model.transformer import Transformer

__all__ = ["DecodeStep", "decode_steps", "teacher_forced_pass"]


@dataclass(frozen=True)
class DecodeStep:
    """One step of decoding, batch of one.

    input:         the decoder input at this step (a decoder-only model's first step: the whole prompt)
    token:         the model's greedy choice, the likeliest next token
    written:       what the step wrote: `token`, or the replacement put in its place
    probs:         (vocab,) the next-token distribution
    self_weights:  (layers, heads, keys so far) the new position's row of decoder self-attention
    cross_weights: (layers, heads, source length) its row of cross-attention; None for decoder-only
    """

    input: tuple[int, ...]
    token: int
    written: int
    probs: np.ndarray
    self_weights: np.ndarray
    cross_weights: np.ndarray | None


def _ids(tokens, name: str) -> torch.Tensor:
    ids = torch.as_tensor(tokens, dtype=torch.long)
    if ids.dim() == 2 and ids.shape[0] == 1:
        ids = ids[0]
    if ids.dim() != 1:
        raise ValueError(f"{name}: one sequence of ids (a batch of one), got shape {tuple(ids.shape)}")
    return ids


def _rows(layer_traces, which: str) -> np.ndarray:
    """(layers, heads, keys) of the last query row of each layer's attention."""
    return torch.stack([getattr(t, which).weights[0, :, -1] for t in layer_traces]).double().numpy()


@torch.no_grad()
def decode_steps(
    model: Transformer, tokens: Sequence[int] | torch.Tensor, n_steps: int, start_token: int | None, *,
    teacher: Sequence[int] | torch.Tensor | None = None, valid: Sequence[bool] | torch.Tensor | None = None,
    replace: Mapping[int, int] | None = None,
) -> list[DecodeStep]:
    """Decode `n_steps` steps greedily and return what each step computed.

    tokens: the source ids (encoder–decoder, decoding starts from `start_token`) or the prompt
    (decoder-only, `start_token` None).  teacher: the target ids without the start token; with it,
    step k's input is the teacher's prefix (teacher forcing) and its `.probs` are row k of one
    parallel forward pass over the shifted target (the start token + teacher[:-1]; decoder-only:
    the prompt + teacher[:-1]).  valid: False on padding of the source or prompt.  replace:
    {step (0-based): token} — that step writes the given token instead of its greedy choice; under
    free running it is the next input, under teacher forcing the teacher's token is.
    """
    arch = model.config.architecture
    if arch == "encoder":
        raise ValueError("an encoder-only model does not decode")
    if (arch == "encoder-decoder") == (start_token is None):
        raise ValueError("an encoder–decoder needs a start token; a decoder-only model takes none")
    source = _ids(tokens, "tokens")
    mask = None if valid is None else torch.as_tensor(valid, dtype=torch.bool).reshape(1, -1)
    forced = None if teacher is None else _ids(teacher, "teacher").tolist()
    if forced is not None and len(forced) < n_steps:
        raise ValueError(f"teacher forcing needs a teacher token for every step ({n_steps}), got {len(forced)}")
    replace = dict(replace or {})
    if arch == "encoder-decoder":
        decoder = IncrementalDecoder(model, source[None], valid=mask)
        fed, fed_valid = [int(start_token)], None
    else:
        decoder = IncrementalDecoder(model)
        fed, fed_valid = source.tolist(), mask
    steps = []
    for k in range(n_steps):
        logits, trace = decoder.step(torch.tensor([fed]), valid=fed_valid)
        probs = torch.softmax(logits[0, -1].double(), dim=-1)
        token = int(probs.argmax())
        written = int(replace.get(k, token))
        layers = trace.decoder_layers
        steps.append(DecodeStep(tuple(fed), token, written, probs.numpy(), _rows(layers, "self_attention"),
                                _rows(layers, "cross_attention") if arch == "encoder-decoder" else None))
        fed, fed_valid = [written if forced is None else forced[k]], None
    return steps


@torch.no_grad()
def teacher_forced_pass(model: Transformer, tokens: Sequence[int] | torch.Tensor, start_token: int | None,
                        teacher: Sequence[int] | torch.Tensor) -> np.ndarray:
    """What training computes: one forward pass over the shifted target, the causal mask hiding each
    position's future.  Returns the next-token distributions of the teacher's n positions, (n, vocab).

    tokens: the source (encoder–decoder, the decoder input is the start token + teacher[:-1]) or the
    prompt (decoder-only, start_token None: the input is the prompt + teacher[:-1], and the rows read
    are the last n).  The same rows `decode_steps(…, teacher=teacher)` computes one step at a time.
    """
    arch = model.config.architecture
    if (arch == "encoder-decoder") == (start_token is None):
        raise ValueError("an encoder–decoder needs a start token; a decoder-only model takes none")
    source, right = _ids(tokens, "tokens"), _ids(teacher, "teacher").tolist()
    if arch == "encoder-decoder":
        logits, _ = model(source[None], torch.tensor([[int(start_token), *right[:-1]]]))
    else:
        logits, _ = model(torch.tensor([[*source.tolist(), *right[:-1]]]))
    return torch.softmax(logits[0, -len(right):].double(), dim=-1).numpy()
