"""A recurrent encoder–decoder (Sutskever et al., 2014): the baseline the transformer races.

The encoder runs over the source one step at a time and hands its last state to the decoder, which
writes the answer one token at a time from that single vector — no attention.  Both loops are
torch's own fused GRU / LSTM (the loop runs in C++, not Python), so the race against the transformer
compares architectures, not interpreters.  Shapes: B batch, T source length, T_out output length.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["SEQ2SEQ_KINDS", "RecurrentSeq2Seq"]

SEQ2SEQ_KINDS = ("gru", "lstm")
_LAYERS = {"gru": nn.GRU, "lstm": nn.LSTM}


class RecurrentSeq2Seq(nn.Module):
    """Embedding → recurrent encoder → its last state → recurrent decoder → one logit per token.

    forward(source, target) mirrors the encoder–decoder Transformer: teacher-forced logits
    (B, T_out, vocab) and, in place of a trace, the decoder's hidden states (B, T_out, hidden).
    """

    def __init__(self, kind: str, vocab_size: int, hidden_size: int, embed_size: int | None = None):
        super().__init__()
        if kind not in SEQ2SEQ_KINDS:
            raise ValueError(f"unknown recurrent kind {kind!r}; expected one of {SEQ2SEQ_KINDS}")
        if min(vocab_size, hidden_size) < 1:
            raise ValueError("sizes must be positive")
        embed_size = hidden_size if embed_size is None else embed_size
        self.kind = kind
        self.hidden_size = hidden_size
        self.source_embed = nn.Embedding(vocab_size, embed_size)
        self.target_embed = nn.Embedding(vocab_size, embed_size)
        self.encoder = _LAYERS[kind](embed_size, hidden_size, batch_first=True)
        self.decoder = _LAYERS[kind](embed_size, hidden_size, batch_first=True)
        self.head = nn.Linear(hidden_size, vocab_size)

    def encode(self, source: torch.Tensor, valid: torch.Tensor | None = None):
        """The encoder's state after each row's last real token: (1, B, hidden), or (h, c) for an LSTM.

        The rows are packed by length, so padding after a short sequence never enters the state."""
        lengths = valid.sum(1).clamp(min=1) if valid is not None else torch.full((source.shape[0],), source.shape[1])
        packed = nn.utils.rnn.pack_padded_sequence(self.source_embed(source), lengths, batch_first=True,
                                                   enforce_sorted=False)
        _, state = self.encoder(packed)
        return state

    def forward(self, source: torch.Tensor, target: torch.Tensor, *, valid: torch.Tensor | None = None,
                target_valid: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """source (B, T), target (B, T_out) decoder inputs → (logits (B, T_out, vocab), states).

        target_valid is accepted for the same call as the Transformer's; the decoder is causal by
        construction, so padding after the answer cannot change the answer's logits."""
        states, _ = self.decoder(self.target_embed(target), self.encode(source, valid))
        return self.head(states), states

    @torch.no_grad()
    def generate(self, source: torch.Tensor, n_steps: int, start_token: int, *,
                 valid: torch.Tensor | None = None) -> tuple[torch.Tensor, None]:
        """Greedy decoding: each predicted token is the next step's input.  (B, n_steps) ids."""
        state = self.encode(source, valid)
        token = torch.full((source.shape[0], 1), start_token, dtype=torch.long)
        out = []
        for _ in range(n_steps):
            step, state = self.decoder(self.target_embed(token), state)
            token = self.head(step).argmax(-1)  # (B, 1)
            out.append(token)
        return torch.cat(out, 1), None
