"""The lecture's complexity table for a stack of layers, with exact counts.  Pure torch; no Streamlit.

Per layer, every count comes from `explorer.analysis.cost` (parameters, multiplications, sequential steps,
path length).  For a stack of N layers of the same kind:

* parameters and multiplications: N times one layer's;
* sequential steps: one layer's plus N − 1 — layer l + 1 can start as soon as layer l has produced
  its first output, so a stack of loops runs as a wavefront (T + N − 1 steps), and a stack of
  attention layers or convolutions takes one step per layer (N);
* path length, counted as the steps between the last output of the top layer and the first input:
  attention N (one hop per layer); RNN T − 1 + N (back along the top layer's loop, then down);
  CNN max(N, ⌈(T − 1)/(k − 1)⌉) — a stack of N convolutions only sees 1 + N·(k − 1) positions, so
  reaching the first input takes at least ⌈(T − 1)/(k − 1)⌉ layers (the lecture's O(T/k)).

With N = 1 these are exactly `explorer.analysis.cost`'s numbers.  Parameters are also counted with
`count_parameters` on the real PyTorch modules, built on the "meta" device (shapes only, no memory),
so the table can check the formulas at any size.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from explorer.analysis.cost import Cost, attention_cost, conv1d_cost, encoder_layer_cost, recurrent_cost
from explorer.analysis.timing import Timing, measure_forward_times
from explorer.caching import bounded_cache
from explorer.model.attention import MultiHeadAttention
from explorer.model.parameters import count_parameters
from explorer.model.rnn import RecurrentNet
from explorer.model.transformer import EncoderLayer
from explorer.pieces import piece

__all__ = [
    "BIG_O",
    "COST_LAYERS",
    "COST_LAYER_DETAILS",
    "ComplexityRow",
    "build_stack",
    "complexity_rows",
    "counted_parameters",
    "forward_times",
    "layers_to_connect",
    "operations_curves",
    "operations_lengths",
    "stack_cost",
]

COST_LAYERS = {
    "cnn": "CNN",
    "rnn": "RNN (tanh)",
    "attention": "self-attention",
    "encoder": "encoder layer",
}
COST_LAYER_DETAILS = {
    "cnn": "a 1-D convolution, d channels in and out, kernel k",
    "rnn": "one tanh RNN layer (PyTorch's two bias vectors)",
    "attention": "multi-head self-attention with Q, K, V and output projections (4 heads)",
    "encoder": "self-attention + feed-forward (d → 4d → d) + two LayerNorms",
}
# The lecture's per-layer table (the encoder layer row is this app's addition), where it describes the
# layer counted: a convolution's steps are O(1), not the notes' O(T) (Vaswani et al., 2017, table 1);
# self-attention's operations include the Q, K, V and output projections counted in its row, 4·T·d²,
# where the notes (and Vaswani et al.'s table 1) give O(T²·d), the scores and the weighted sum alone.
BIG_O = {
    "cnn": ("O(k·d²)", "O(T·k·d²)", "O(1)", "O(T/k)"),
    "rnn": ("O(d²)", "O(T·d²)", "O(T)", "O(T)"),
    "attention": ("O(d²)", "O(T·d² + T²·d)", "O(1)", "O(1)"),
    "encoder": ("O(d²)", "O(T·d² + T²·d)", "O(1)", "O(1)"),
}
N_HEADS = 4


def _layer_cost(layer: str, T: int, d: int, k: int) -> Cost:
    if layer == "cnn":
        return conv1d_cost(T, d, k)
    if layer == "rnn":
        return recurrent_cost("rnn", T, d)
    if layer == "attention":
        return attention_cost(T, d)
    if layer == "encoder":
        return encoder_layer_cost(T, d)
    raise ValueError(f"unknown layer {layer!r}; expected one of {sorted(COST_LAYERS)}")


def layers_to_connect(T: int, k: int) -> int:
    """Convolutions of kernel k needed before the last of T outputs can see the first input."""
    return conv1d_cost(T, 1, k).path_length


def stack_cost(layer: str, T: int, d: int, k: int = 3, n_layers: int = 1) -> Cost:
    """Exact counts for n_layers layers of one kind (rules in the module docstring)."""
    if n_layers < 1:
        raise ValueError("n_layers must be at least 1")
    one = _layer_cost(layer, T, d, k)
    n = n_layers
    if layer in ("attention", "encoder"):
        path = n
    elif layer == "rnn":
        path = T - 1 + n
    else:
        path = max(n, layers_to_connect(T, k))
    return Cost(n * one.parameters, n * one.multiplications, one.sequential_steps + n - 1, path)


def build_stack(
    layer: str, d: int, k: int = 3, n_layers: int = 1, device: str | torch.device = "meta"
) -> nn.ModuleList:
    """The real modules behind a row: Conv1d(d, d, k), RecurrentNet("rnn", d, d),
    MultiHeadAttention(d, 4 heads) or EncoderLayer(d, 4 heads, 4·d), n_layers of them."""
    if layer not in COST_LAYERS:
        raise ValueError(f"unknown layer {layer!r}; expected one of {sorted(COST_LAYERS)}")
    heads = N_HEADS if d % N_HEADS == 0 else 1
    with torch.device(device):
        if layer == "cnn":
            modules = [nn.Conv1d(d, d, k, padding="same") for _ in range(n_layers)]
        elif layer == "rnn":
            modules = [RecurrentNet("rnn", d, d) for _ in range(n_layers)]
        elif layer == "attention":
            modules = [MultiHeadAttention(d, heads) for _ in range(n_layers)]
        else:
            modules = [EncoderLayer(d, heads, 4 * d) for _ in range(n_layers)]
    return nn.ModuleList(modules)


def counted_parameters(layer: str, d: int, k: int = 3, n_layers: int = 1) -> int:
    """count_parameters on the stack built on the meta device (no memory is allocated).  The layers
    of a stack are identical, so one is built and counted, and that count multiplied by n_layers."""
    return n_layers * _counted_layer_parameters(layer, d, k)


@bounded_cache(256, max_bytes=1_000_000)
def _counted_layer_parameters(layer: str, d: int, k: int) -> int:
    return count_parameters(build_stack(layer, d, k, 1, device="meta"))


@dataclass(frozen=True)
class ComplexityRow:
    layer: str  # key of COST_LAYERS
    label: str
    big_o: tuple[str, str, str, str]  # parameters, operations, sequential steps, path length
    cost: Cost  # exact, for the stack
    counted_parameters: int  # count_parameters on the built modules


def complexity_rows(T: int, d: int, k: int = 3, n_layers: int = 1,
                    layers: tuple[str, ...] = tuple(COST_LAYERS)) -> list[ComplexityRow]:
    """One row per layer kind for the user's T, d, k and N."""
    return [
        ComplexityRow(layer, COST_LAYERS[layer], BIG_O[layer], stack_cost(layer, T, d, k, n_layers),
                      counted_parameters(layer, d, k, n_layers))
        for layer in layers
    ]


def operations_lengths(T: int, d: int, points: int = 60) -> list[int]:
    """Sequence lengths for the crossover chart: log-spaced from 1 to max(4·T, 4·d, 64), with the
    user's T and the crossover T = d included exactly."""
    top = max(4 * T, 4 * d, 64)
    return sorted({max(1, round(top ** (i / points))) for i in range(points + 1)} | {T, d})


def operations_curves(d: int, T_values) -> dict[str, list[int]]:
    """Multiplications against T at width d: the two big-O terms and the exact counts of one layer."""
    T_values = [int(t) for t in T_values]
    return {
        "T·d² (the RNN's term)": [t * d * d for t in T_values],
        "T²·d (attention's scores and mix)": [t * t * d for t in T_values],
        "tanh RNN layer, exact": [recurrent_cost("rnn", t, d).multiplications for t in T_values],
        "self-attention layer, exact": [attention_cost(t, d).multiplications for t in T_values],
    }


# The stopwatch's longest single forward pass: each pass is one piece of work (explorer.pieces).
MAX_PASS_S = 0.25


def forward_times(T_values: tuple[int, ...], d: int, budget_s: float) -> list[Timing]:
    """`measure_forward_times` at width d with every pass a piece of work (explorer.pieces: on a server,
    the runtime's pool runs one at a time), none predicted longer than MAX_PASS_S, so the stopwatch
    never holds a server thread for long."""
    return measure_forward_times(T_values, d, budget_s=budget_s, max_pass_s=MAX_PASS_S, run=piece)
