"""The recurrent "loop": tanh RNN, LSTM and GRU run step by step, exposing every hidden state.

The loop is written out (rather than calling cuDNN-style fused kernels) because the lesson is the
loop itself: T sequential steps, each feeding its state to the next.  The cells are PyTorch's own,
so the weights have the same layout as `torch.nn.RNN` / `LSTM` / `GRU`.  `BidirectionalNet` runs
two such loops, one forwards and one backwards, like `torch.nn.RNN(bidirectional=True)`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

__all__ = ["RECURRENT_KINDS", "BidirectionalNet", "RecurrentNet", "RecurrentTagger", "RecurrentTrace"]

RECURRENT_KINDS = ("rnn", "lstm", "gru")
_CELLS = {"rnn": nn.RNNCell, "lstm": nn.LSTMCell, "gru": nn.GRUCell}


@dataclass
class RecurrentTrace:
    """hidden: (B, T, hidden) state after every step; cell: the LSTM's cell states (else None)."""

    hidden: torch.Tensor
    cell: torch.Tensor | None


class RecurrentNet(nn.Module):
    """One recurrent layer of the chosen kind, unrolled over the sequence in Python."""

    def __init__(self, kind: str, input_size: int, hidden_size: int):
        super().__init__()
        if kind not in RECURRENT_KINDS:
            raise ValueError(f"unknown recurrent kind {kind!r}; expected one of {RECURRENT_KINDS}")
        self.kind = kind
        self.hidden_size = hidden_size
        self.cell = _CELLS[kind](input_size, hidden_size)

    def forward(self, x: torch.Tensor, bptt_window: int | None = None) -> RecurrentTrace:
        """x: (B, T, input_size).

        bptt_window: truncated back-propagation through time — the state entering step
        T − window is detached, so gradients from the last step reach at most `window` inputs.
        """
        if bptt_window is not None and bptt_window < 1:
            raise ValueError("bptt_window must be at least 1 step (or None for full back-propagation)")
        batch, T, _ = x.shape
        h = x.new_zeros(batch, self.hidden_size)
        c = x.new_zeros(batch, self.hidden_size) if self.kind == "lstm" else None
        cut = None if bptt_window is None else T - bptt_window
        hidden, cells = [], []
        for t in range(T):
            if t == cut:
                h = h.detach()
                c = c.detach() if c is not None else None
            if self.kind == "lstm":
                h, c = self.cell(x[:, t], (h, c))
                cells.append(c)
            else:
                h = self.cell(x[:, t], h)
            hidden.append(h)
        return RecurrentTrace(torch.stack(hidden, 1), torch.stack(cells, 1) if cells else None)


class BidirectionalNet(nn.Module):
    """Two recurrent layers of one kind: `forward_net` reads x_0 … x_{T−1}, `backward_net` reads
    x_{T−1} … x_0; output t is [forward state after x_t, backward state after x_t] (2 × hidden wide),
    as in torch.nn.RNN(bidirectional=True).  Built in that order, the cells draw their initial weights
    as torch's bidirectional layer does (its `_reverse` weights are backward_net's)."""

    def __init__(self, kind: str, input_size: int, hidden_size: int):
        super().__init__()
        self.kind = kind
        self.hidden_size = hidden_size
        self.forward_net = RecurrentNet(kind, input_size, hidden_size)
        self.backward_net = RecurrentNet(kind, input_size, hidden_size)

    def forward(self, x: torch.Tensor, bptt_window: int | None = None) -> RecurrentTrace:
        """x: (B, T, input_size).  bptt_window truncates each direction from its own last step."""
        ahead = self.forward_net(x, bptt_window=bptt_window)
        behind = self.backward_net(x.flip(1), bptt_window=bptt_window)
        hidden = torch.cat([ahead.hidden, behind.hidden.flip(1)], dim=-1)
        cell = None if ahead.cell is None else torch.cat([ahead.cell, behind.cell.flip(1)], dim=-1)
        return RecurrentTrace(hidden, cell)


class RecurrentTagger(nn.Module):
    """Token embedding → one recurrent layer → a read-out at every step (the RNN side of the
    long-range recall comparison).  forward returns (logits, trace) like the transformer."""

    def __init__(self, kind: str, vocab_size: int, hidden_size: int):
        super().__init__()
        self.kind = kind
        self.embed = nn.Embedding(vocab_size, hidden_size)
        self.rnn = RecurrentNet(kind, hidden_size, hidden_size)
        self.head = nn.Linear(hidden_size, vocab_size)

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, RecurrentTrace]:
        trace = self.rnn(self.embed(tokens))
        return self.head(trace.hidden), trace
