"""Exact parameter and multiplication counts behind the lecture's big-O table.

Multiplications are those of the matrix products (the dominant cost, and what the big-O table
counts); element-wise work such as softmax, activations and normalisation is left out.  Parameter
counts include biases and LayerNorm scales, and match `explorer.model.parameters.count_parameters` on the built modules.

Big-O per layer for sequence length T, width d, kernel k:

    layer           parameters   operations       sequential steps   path length
    CNN             O(k·d²)      O(T·k·d²)        O(1)*              O(T/k)
    RNN             O(d²)        O(T·d²)          O(T)               O(T)
    self-attention  O(d²)        O(T·d² + T²·d)** O(1)               O(1)

(*) the lecture notes list O(T), as if overlapping kernels had to wait for each other; they do not:
every position of one convolution is computed at once (Vaswani et al., 2017, table 1, counts O(1)), but
a stack of them still needs O(T/k) layers to connect distant positions.
(**) the notes, and Vaswani et al. (2017, table 1), give O(T²·d): the scores and the weighted sum alone.
`attention_cost` also counts the Q, K, V and output projections, 4·T·d², most of the work while T < 2·d.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "Cost",
    "PassCost",
    "attention_cost",
    "cache_setup_cost",
    "conv1d_cost",
    "decoder_layer_cost",
    "encoder_layer_cost",
    "ffn_cost",
    "generation_step_cost",
    "recurrent_cost",
    "teacher_forced_cost",
]

_GATES = {"rnn": 1, "gru": 3, "lstm": 4}


@dataclass(frozen=True)
class Cost:
    """Exact counts for one layer on one sequence."""

    parameters: int
    multiplications: int
    sequential_steps: int
    path_length: int

    def __add__(self, other: Cost) -> Cost:
        return Cost(
            self.parameters + other.parameters,
            self.multiplications + other.multiplications,
            self.sequential_steps + other.sequential_steps,
            self.path_length + other.path_length,
        )


def attention_cost(T_q: int, d: int, T_k: int | None = None) -> Cost:
    """Multi-head attention with Q, K, V and output projections (d×d + bias each).

    Projections cost (2·T_q + 2·T_k)·d² multiplications; QKᵀ and the weighted sum of values cost
    T_q·T_k·d each, whatever the number of heads (the heads split d between them).
    """
    T_k = T_q if T_k is None else T_k
    params = 4 * (d * d + d)
    mults = (2 * T_q + 2 * T_k) * d * d + 2 * T_q * T_k * d
    return Cost(params, mults, sequential_steps=1, path_length=1)


def ffn_cost(T: int, d: int, d_ff: int | None = None) -> Cost:
    """Two position-wise dense layers d → d_ff → d (d_ff = 4·d by default)."""
    d_ff = 4 * d if d_ff is None else d_ff
    return Cost(2 * d * d_ff + d_ff + d, 2 * T * d * d_ff, sequential_steps=1, path_length=1)


def _layer_norms(n: int, d: int) -> Cost:
    return Cost(2 * d * n, 0, 0, 0)


def encoder_layer_cost(T: int, d: int, d_ff: int | None = None) -> Cost:
    """Self-attention + FFN + two LayerNorms.  Steps and path length stay 1: a layer is one
    parallel step and connects any two positions directly."""
    c = attention_cost(T, d) + ffn_cost(T, d, d_ff) + _layer_norms(2, d)
    return Cost(c.parameters, c.multiplications, 1, 1)


def decoder_layer_cost(T: int, d: int, T_src: int | None = None, d_ff: int | None = None) -> Cost:
    """Masked self-attention + cross-attention to T_src encoder states + FFN + three LayerNorms.

    Counted for a full (teacher-forced) pass; the causal mask does not change the multiply count
    of a dense implementation.
    """
    T_src = T if T_src is None else T_src
    c = attention_cost(T, d) + attention_cost(T, d, T_src) + ffn_cost(T, d, d_ff) + _layer_norms(3, d)
    return Cost(c.parameters, c.multiplications, 1, 1)


def recurrent_cost(kind: str, T: int, d_in: int, d_hidden: int | None = None) -> Cost:
    """tanh RNN (1 gate block), GRU (3) or LSTM (4), with PyTorch's two bias vectors per block.

    Each step multiplies the input and the previous state by every gate's matrices:
    gates·(d_in + d_hidden)·d_hidden per step, T steps one after another.
    """
    if kind not in _GATES:
        raise ValueError(f"unknown recurrent kind {kind!r}")
    h = d_in if d_hidden is None else d_hidden
    g = _GATES[kind]
    params = g * (d_in * h + h * h + 2 * h)
    mults = T * g * (d_in + h) * h
    return Cost(params, mults, sequential_steps=T, path_length=T)


def conv1d_cost(T: int, d: int, k: int) -> Cost:
    """A 1-D convolution, d channels in and out, kernel k, 'same' padding (T outputs).

    Path length: a stack of such layers needs ⌈(T−1)/(k−1)⌉ layers before the last output can
    see the first input (the lecture's O(T/k)).  Sequential steps: one, every output at once (the
    lecture's O(T) is wrong; see the module).
    """
    if k < 2:
        raise ValueError("kernel size must be >= 2: a width-1 convolution never connects two positions")
    path = max(1, -(-(T - 1) // (k - 1)))
    return Cost(k * d * d + d, T * k * d * d, sequential_steps=1, path_length=path)


# --- a whole model: training pass and generation, with and without the KV cache -----------------------


@dataclass(frozen=True)
class PassCost:
    """Multiplications of one run of a transformer, by part: the encoder, the decoder (cross-attention
    included) and the output projection to the vocabulary."""

    encoder: int
    decoder: int
    output: int

    @property
    def total(self) -> int:
        return self.encoder + self.decoder + self.output


def teacher_forced_cost(T: int, d: int, n_layers: int, vocab: int, *, T_src: int | None = None,
                        d_ff: int | None = None) -> PassCost:
    """One parallel (teacher-forced) pass: every decoder position at once, the causal mask hiding the
    future.  T: decoder positions (the shifted target, or a decoder-only model's whole sequence);
    T_src: source length of an encoder–decoder (None: decoder-only, no encoder, no cross-attention).
    Output: logits for all T positions (T·d·vocab)."""
    if T_src is None:
        return PassCost(0, n_layers * encoder_layer_cost(T, d, d_ff).multiplications, T * d * vocab)
    return PassCost(n_layers * encoder_layer_cost(T_src, d, d_ff).multiplications,
                    n_layers * decoder_layer_cost(T, d, T_src, d_ff).multiplications, T * d * vocab)


def generation_step_cost(T: int, d: int, n_layers: int, vocab: int, *, T_src: int | None = None,
                         d_ff: int | None = None, cache: bool = False, new: int = 1) -> PassCost:
    """The step of greedy generation whose decoder input has T positions (the newest included).

    The encoder is not part of any step: its output depends on the source alone, not on what the
    decoder writes, so it runs once before the first step with or without the cache (`cache_setup_cost(…).encoder`;
    Hugging Face transformers' generate runs it once whether or not it caches; explorer.model's uncached
    `generate` calls the whole model each step only to stay short).  What the cache saves is the
    decoder's re-computation.  Without the cache every decoder layer runs again on all T positions, its
    cross-attention projecting the encoder output's keys and values again: the decoder and output of a
    teacher-forced pass over the T positions, of which only the last row's logits are used.
    With the cache only the `new` positions (1, or a decoder-only model's prompt at its first step)
    are computed, per layer: their Q, K, V and output projections (4·new·d²), their scores against
    and mix of the T keys so far (2·new·T·d), cross-attention's Q and output projections (2·new·d²)
    and its scores and mix over the T_src cached encoder keys (2·new·T_src·d), and the feed-forward;
    then the logits of the new positions.  The cross-attention keys and values are computed once
    (`cache_setup_cost` counts them with the encoder).
    """
    if not cache:
        full = teacher_forced_cost(T, d, n_layers, vocab, T_src=T_src, d_ff=d_ff)
        return PassCost(0, full.decoder, full.output)
    if not 1 <= new <= T:
        raise ValueError("new positions must be between 1 and T")
    per_layer = 4 * new * d * d + 2 * new * T * d + ffn_cost(new, d, d_ff).multiplications
    if T_src is not None:
        per_layer += 2 * new * d * d + 2 * new * T_src * d
    return PassCost(0, n_layers * per_layer, new * d * vocab)


def cache_setup_cost(d: int, n_layers: int, T_src: int, d_ff: int | None = None) -> PassCost:
    """What an encoder–decoder computes once before cached decoding: the encoder (`.encoder`, run once
    without the cache too), and every decoder layer's cross-attention keys and values of the encoder
    output (`.decoder`: 2·T_src·d² per layer)."""
    return PassCost(n_layers * encoder_layer_cost(T_src, d, d_ff).multiplications,
                    n_layers * 2 * T_src * d * d, 0)
