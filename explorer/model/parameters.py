"""Counting a model's parameters (any torch module: transformers, recurrent networks, the cost page's stacks),
also of models too large to allocate (`shapes_only`)."""

from __future__ import annotations

import contextlib

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

__all__ = ["count_parameters", "shapes_only"]


def count_parameters(module: nn.Module) -> int:
    """Number of scalars in the module's parameters (trainable or not)."""
    return sum(p.numel() for p in module.parameters())


class _SkipMetaNormal(TorchFunctionMode):
    """nn.init.normal_ on a meta tensor returns it as it is.  PyTorch runs that initialiser (nn.Embedding's)
    in Python on the meta device, and its first call imports the compiler, torch._dynamo: seconds of
    CPU and tens of MB per process, to fill in values a meta tensor does not have."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is nn.init.normal_:
            tensor = args[0] if args else kwargs["tensor"]
            if tensor.is_meta:
                return tensor
        return func(*args, **kwargs)


@contextlib.contextmanager
def shapes_only():
    """Modules built inside are on the meta device: shapes only, no memory, no random draws — enough to
    count the parameters of a model of any size.  Thread-local, like torch.device()."""
    with torch.device("meta"), _SkipMetaNormal():
        yield
