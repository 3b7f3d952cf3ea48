"""What "Add & Norm" computes, measured on torch's own modules beside the claims the lecture notes make
about it (the depth lesson's "Claims, measured" boxes, explorer/lessons/depth/view.py).

`norm_batch_dependence` asks how much one sentence's normalised activations move when nothing about that
sentence changes: the other sentences of its batch are replaced, they are padded, or the model switches
from training to inference.  LayerNorm (Ba, Kiros & Hinton, 2016) normalises each token over its own d
features, so the answer is zero; BatchNorm (Ioffe & Szegedy, 2015) normalises each feature over the
batch, so it is not.

`notes_residual_block` runs the residual block the notes give as code (a ReLU after the add, and the
first layer's hidden output added to a tensor of the input's width) beside the transformer's Add
(x + F(x)), with the sublayers' weights set to zero so that F(x) = 0: what passes along the short cut.
Pure torch, seeded with its own generator (the global random state is not touched).
"""

from __future__ import annotations

import torch
from torch import nn

from ..model.building import seeded

__all__ = ["norm_batch_dependence", "norm_changes", "notes_residual_block"]


def _normalise(module: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """LayerNorm or BatchNorm1d applied to (B, T, d): BatchNorm1d sees every token of every sentence as
    one sample of each feature (its statistics are over B·T values per feature)."""
    if isinstance(module, nn.BatchNorm1d):
        return module(x.reshape(-1, x.shape[-1])).reshape(x.shape)
    return module(x)


def norm_batch_dependence(width: int, T: int, *, batch: int = 4, seed: int = 0) -> dict[str, dict[str, float]]:
    """For LayerNorm and BatchNorm1d (torch's modules, freshly built, γ = 1 and β = 0): the largest change
    in the first sentence's normalised values (its T tokens × width features) when

      "other sentences"   the batch's other sentences are replaced by new ones,
      "padding"           every sentence is padded with T zero vectors (the first sentence's own tokens
                          compared; nothing masks the padding, as in a plain BatchNorm layer),
      "inference"         the module is switched to eval mode after 20 training batches (BatchNorm then
                          uses the running averages it kept; LayerNorm has none) and the first sentence
                          is normalised alone.

    Activations are standard normal with a random offset and scale per feature (features of a real
    layer's output differ in mean and spread), drawn from `seed`.  Returns {norm: {case: change}}.
    """
    if width < 2 or T < 1 or batch < 2:
        raise ValueError("width must be at least 2, T at least 1, batch at least 2")
    generator = torch.Generator().manual_seed(seed)
    offset = 2 * torch.randn(width, generator=generator)
    scale = 0.5 + torch.rand(width, generator=generator)

    def sentences(n: int) -> torch.Tensor:  # (n, T, width)
        return torch.randn(n, T, width, generator=generator) * scale + offset

    x = sentences(batch)
    others = sentences(batch - 1)
    training = [sentences(batch) for _ in range(20)]
    return norm_changes(x, others, training)


def norm_changes(x: torch.Tensor, others: torch.Tensor, training) -> dict[str, dict[str, float]]:
    """`norm_batch_dependence` on given activations: x (B, T, d), the batch whose first sentence is
    followed; `others` (B − 1, T, d) replacing its other sentences; `training` the batches BatchNorm
    keeps its running averages from before it is switched to eval mode.  torch's own LayerNorm and
    BatchNorm1d, freshly built (γ = 1, β = 0).  Returns {norm: {case: largest change}}."""
    x = torch.as_tensor(x, dtype=torch.float32)
    if x.ndim != 3 or x.shape[0] < 2 or tuple(others.shape) != (x.shape[0] - 1, *x.shape[1:]):
        raise ValueError("x must be (B ≥ 2, T, d) and others (B − 1, T, d)")
    B, T, width = x.shape
    replaced_batch = torch.cat([x[:1], torch.as_tensor(others, dtype=torch.float32)])
    padded = torch.cat([x, torch.zeros(B, T, width)], dim=1)
    changes: dict[str, dict[str, float]] = {}
    for name, module in (("LayerNorm", nn.LayerNorm(width)), ("BatchNorm", nn.BatchNorm1d(width))):
        module.train()
        with torch.no_grad():
            first = _normalise(module, x)[0]
            replaced = _normalise(module, replaced_batch)[0]
            with_padding = _normalise(module, padded)[0, :T]
            for batch_x in training:
                _normalise(module, torch.as_tensor(batch_x, dtype=torch.float32))  # BatchNorm's running averages
            module.eval()
            alone = _normalise(module, x[:1])[0]
        changes[name] = {
            "other sentences": float((replaced - first).abs().max()),
            "padding": float((with_padding - first).abs().max()),
            "inference": float((alone - first).abs().max()),
        }
    return changes


class _NotesBlock(nn.Module):
    """The notes' ResidualBlock as they give it: fc1 → ReLU (kept as residual2) → fc2, then the input and
    residual2 added, then a ReLU."""

    def __init__(self, input_dim: int, hidden_dim: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(input_dim, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, input_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = torch.relu(self.fc1(x))
        out = self.fc2(hidden)
        out = out + x + hidden  # the notes' `out += residual1 + residual2`
        return torch.relu(out)


def notes_residual_block(input_dim: int, hidden_dim: int, *, n: int = 256, seed: int = 0) -> dict[str, object]:
    """The notes' block at these widths, its weights and biases set to zero (the sublayers output 0), on n
    standard normal inputs: whether it runs, and if it does, the share of the input's values it passes
    through unchanged; the same for the transformer's Add, x + F(x), with F's weights zero.  Returns
    {"runs": bool, "error": str, "passed": float | None, "add_passed": float}."""
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(n, input_dim, generator=generator)
    with seeded(seed):  # their draws are zeroed below; built on a generator of their own all the same
        block = _NotesBlock(input_dim, hidden_dim)
        sublayer = nn.Linear(input_dim, input_dim)
    with torch.no_grad():
        for module in (block, sublayer):
            for parameter in module.parameters():
                parameter.zero_()
        add_passed = float((x + sublayer(x) == x).float().mean())
        try:
            out = block(x)
        except RuntimeError as error:
            return {"runs": False, "error": str(error).split("\n")[0], "passed": None, "add_passed": add_passed}
    return {"runs": True, "error": "", "passed": float((out == x).float().mean()), "add_passed": add_passed}
