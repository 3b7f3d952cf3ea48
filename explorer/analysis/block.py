"""Every tensor of a transformer's blocks for one text, by name, in the order the data flows.

`block_trace("coreference-sinusoidal-h4-l2", "the animal didn't cross the street because it was too
tired")` runs the shipped model once and returns what its forward pass computed (explorer/model/trace.py),
read out of the model's own trace, not computed again beside it: the token and position embeddings,
their sum, then per layer the LayerNorms, q, k, v per head, the scores and weights, the heads' outputs
concatenated and projected by W_O, the residual sums, the feed-forward network's hidden activations
and output, then the final LayerNorm, the logits and their softmax.  One text, so the batch axis is
dropped.  The README's "Use it from Python" section lists the names with their shapes.

Where the LayerNorms sit follows the model's wiring, and so does the order of `names`:

    pre-norm   attn_norm → q, k, v → … → attn_out → attn_residual → ffn_norm → … → ffn_residual
    post-norm  q, k, v → … → attn_out → attn_residual → attn_norm → … → ffn_residual → ffn_norm

(pre-norm stacks end in `final_norm`; post-norm and norm-free ones have none).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

import numpy as np
import torch
from torch import nn

from ..training.pretrained import MODEL_SPECS, load_model
from ..training.tasks import BOS, EOS, PAD, Task, get_task

__all__ = ["BlockTrace", "block_trace", "block_trace_of", "model_tokens", "traceable_models"]


@dataclass(frozen=True)
class BlockTrace:
    """One forward pass's tensors by name (numpy, read-only, float32, batch axis dropped).

    tokens: the input's token strings; ids: their vocabulary ids; names: every tensor's name, in the
    order the data flows; norm: the model's LayerNorm placement ("pre", "post" or "none").
    `trace[name]` is that tensor; `trace.layer(i)` the names of layer i, without their prefix.
    """

    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    names: tuple[str, ...]
    norm: str
    n_layers: int
    arrays: Mapping[str, np.ndarray] = field(repr=False)

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.arrays:
            raise KeyError(f"no tensor called {name!r}; the names are: {', '.join(self.names)}")
        return self.arrays[name]

    def __contains__(self, name: object) -> bool:
        return name in self.arrays

    def layer(self, i: int) -> tuple[str, ...]:
        """The names within layer i (0 … n_layers − 1), in flow order, without the "layers.i." prefix."""
        if not 0 <= i < self.n_layers:
            raise IndexError(f"layer must be in 0…{self.n_layers - 1}, got {i}")
        prefix = f"layers.{i}."
        return tuple(n[len(prefix):] for n in self.names if n.startswith(prefix))


def traceable_models() -> tuple[str, ...]:
    """The shipped transformers with one stack (encoder-only or decoder-only): the ones block_trace follows."""
    return tuple(s.name for s in MODEL_SPECS
                 if s.kind == "transformer" and get_task(s.task).architecture != "encoder-decoder")


def model_tokens(task: Task, text: str) -> tuple[str, ...]:
    """`text` as the task's tokens, read as the lessons read typed text (`Task.parse`), or a ValueError
    saying what is wrong and naming the words the model knows: unknown words and markers are not left
    out silently, nor are words beyond the model's length."""
    parsed = task.parse(text)
    allowed = [w for w in task.vocab if w not in (PAD, BOS, EOS)]
    rejected = [*parsed.unknown, *parsed.markers]
    if rejected:
        shown = ", ".join(f"'{w[:20]}'" for w in dict.fromkeys(rejected))
        raise ValueError(f"not words this model knows: {shown}.  It knows only these {len(allowed)} words: "
                         f"{' '.join(allowed)}")
    if parsed.cut:
        raise ValueError(f"this model reads at most {task.max_input_tokens} words; the text has "
                         f"{len(parsed.tokens) + parsed.cut}")
    if not parsed.tokens:
        raise ValueError(f"no words to read: give the model some of these words: {' '.join(allowed)}")
    return parsed.tokens


def block_trace(model_name: str, text: str) -> BlockTrace:
    """Every tensor of the shipped model `model_name`'s forward pass over `text`, by name (see the module).

    Raises ValueError for a model without exactly one stack (an encoder–decoder) or not shipped, and for
    text the model cannot read (the message names the words it knows)."""
    models = traceable_models()
    if model_name not in models:
        raise ValueError(f"block_trace follows one stack of a shipped transformer: one of {', '.join(models)}; "
                         f"got {model_name!r}")
    loaded = load_model(model_name)
    tokens = model_tokens(loaded.task, text)
    return block_trace_of(loaded.model, loaded.task.encode(list(tokens)), tokens)


def _array(tensor: torch.Tensor) -> np.ndarray:
    """A read-only numpy copy (the model's own buffers, e.g. the position table, stay out of reach)."""
    array = tensor.detach().numpy().copy()
    array.setflags(write=False)
    return array


@torch.no_grad()
def block_trace_of(model: nn.Module, ids: list[int], tokens: tuple[str, ...] | None = None) -> BlockTrace:
    """block_trace for any encoder-only or decoder-only `Transformer` and a list of token ids (its
    own mask: causal for a decoder).  tokens default to the ids written as strings."""
    config = model.config
    if config.architecture == "encoder-decoder":
        raise ValueError("block_trace follows one stack: an encoder-only or decoder-only model, "
                         "not an encoder–decoder")
    logits, trace = model(torch.tensor([list(ids)], dtype=torch.long))  # (1, T, vocab) and every intermediate
    embedding = trace.encoder_embedding or trace.decoder_embedding
    arrays: dict[str, np.ndarray] = {}

    def put(name: str, tensor: torch.Tensor) -> None:
        arrays[name] = _array(tensor)

    put("token_embedding", embedding.token[0])  # (T, d), × √d where the model scales it
    put("position_embedding", embedding.position)  # (T, d)
    if embedding.token_type is not None:
        put("token_type_embedding", embedding.token_type[0])
    if embedding.output is not embedding.sum:  # an embedding LayerNorm (BERT): the sum, then its norm
        put("embedding_sum", embedding.sum[0])
    put("input", embedding.output[0])  # (T, d): what layer 0 reads
    for i, layer in enumerate(trace.layers):
        p = f"layers.{i}."
        attn, ffn = layer.attention_sublayer, layer.ffn_sublayer
        heads = attn.inner
        if attn.normed_input is not None:
            put(p + "attn_norm", attn.normed_input[0])  # pre-norm: LN(x), what the projections read
        put(p + "q", heads.q[0])  # (heads, T, head_dim), after RoPE where used
        put(p + "k", heads.k[0])
        put(p + "v", heads.v[0])
        put(p + "scores", heads.masked_scores[0])  # (heads, T, T): what the softmax reads
        put(p + "weights", heads.weights[0])  # (heads, T, T)
        put(p + "heads_out", heads.output[0])  # (heads, T, head_dim)
        put(p + "concat", heads.concatenated[0])  # (T, d)
        put(p + "attn_out", heads.projected[0])  # (T, d), after W_O
        if config.residual:
            put(p + "attn_residual", attn.residual_sum[0])  # x + attention
        if attn.normed_sum is not None:
            put(p + "attn_norm", attn.normed_sum[0])  # post-norm: LN(x + attention)
        if ffn.normed_input is not None:
            put(p + "ffn_norm", ffn.normed_input[0])
        put(p + "ffn_hidden_pre", ffn.inner.hidden_pre[0])  # (T, d_ff)
        put(p + "ffn_hidden", ffn.inner.hidden[0])  # (T, d_ff)
        put(p + "ffn_out", ffn.output[0])  # (T, d)
        if config.residual:
            put(p + "ffn_residual", ffn.residual_sum[0])
        if ffn.normed_sum is not None:
            put(p + "ffn_norm", ffn.normed_sum[0])
    if config.norm == "pre":
        put("final_norm", (trace.encoder_output if trace.decoder_output is None else trace.decoder_output)[0])
    put("logits", logits[0])  # (T, vocab)
    put("probabilities", torch.softmax(logits[0], dim=-1))  # (T, vocab), each row sums to 1
    tokens = tuple(str(i) for i in ids) if tokens is None else tuple(tokens)
    return BlockTrace(tokens, tuple(int(i) for i in ids), tuple(arrays), config.norm, config.n_layers,
                      MappingProxyType(arrays))
