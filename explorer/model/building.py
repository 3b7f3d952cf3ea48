"""Building models without torch's global random generator.

`torch.nn` modules draw their initial weights from torch's one global generator, which every
thread of a server process shares: a model seeded with `torch.manual_seed(s)` gets other weights
whenever another thread draws at the same moment (a visitor's page, the warm-up loading a model).
So no model here is built on it:

* `seeded(seed)`: inside, every random draw of *this thread* (the initialisers of `torch.nn`,
  `torch.randn`, `Tensor.uniform_`, …) takes a private `torch.Generator` seeded with `seed`.  The
  draws happen in the same order as under `torch.manual_seed(seed)`, so the weights are the same,
  bit for bit; other threads, and the global generator, are not touched.
* `with_weights(build, tensors)`: a model whose weights are loaded draws no random numbers at
  all.  It is built as a skeleton on the meta device (shapes only), then the tensors become its
  parameters and buffers.
* `shapes_only()`: the skeleton alone, to count the parameters of a model of any size.

All three are torch function modes, which are per thread, like `with torch.device(...)`.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import TypeVar

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

__all__ = ["seeded", "shapes_only", "with_weights"]

M = TypeVar("M", bound=nn.Module)

_T = torch.Tensor
# Every function that draws random numbers takes `generator=`; None means the global generator.
_DRAWS = frozenset({
    _T.uniform_, _T.normal_, _T.random_, _T.bernoulli_, _T.exponential_, _T.geometric_, _T.log_normal_,
    _T.cauchy_, torch.rand, torch.randn, torch.randint, torch.randperm, torch.normal, torch.bernoulli,
    torch.multinomial, torch.poisson, torch.rand_like, torch.randn_like, torch.randint_like,
    # The initialisers of torch.nn: some hand themselves to the mode whole (kaiming_uniform_, …),
    # the others reach it through the Tensor methods above.
    *(f for f in vars(nn.init).values()
      if inspect.isfunction(f) and "generator" in inspect.signature(f).parameters),
})


class _OwnGenerator(TorchFunctionMode):
    """Gives every random draw that names no generator this one."""

    def __init__(self, generator: torch.Generator):
        super().__init__()
        self.generator = generator

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in _DRAWS and kwargs.get("generator") is None:
            kwargs = {**kwargs, "generator": self.generator}
        return func(*args, **kwargs)


@contextlib.contextmanager
def seeded(seed: int) -> Iterator[torch.Generator]:
    """Run the body with every random draw of this thread taken from a new generator seeded with
    `seed` (yielded).  Models built inside have the weights `torch.manual_seed(seed)` would give."""
    generator = torch.Generator().manual_seed(seed)
    with _OwnGenerator(generator):
        yield generator


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
def shapes_only() -> Iterator[None]:
    """Modules built inside are on the meta device: shapes only, no memory, no random draws — enough to
    count the parameters of a model of any size."""
    with torch.device("meta"), _SkipMetaNormal():
        yield


def with_weights(build: Callable[[], M], tensors: Mapping[str, torch.Tensor]) -> M:
    """`build()` with `tensors` (a state dict, matched strictly by name and shape) as its parameters and
    persistent buffers — the tensors themselves, not copies.  Nothing is initialised first, so nothing
    is drawn.  Raises ValueError if a tensor the model needs is not given, or does not fit."""
    with shapes_only():
        module = build()
    try:
        module.load_state_dict(tensors, strict=True, assign=True)
    except RuntimeError as problem:
        raise ValueError(" ".join(str(problem).split())) from None  # torch's message names every tensor
    empty = [name for name, t in (*module.named_parameters(), *module.named_buffers()) if t.is_meta]
    if empty:  # a buffer made by a factory function in __init__ and not saved: nothing to assign
        raise ValueError(f"{len(empty)} tensors of the model have no values, e.g. {empty[0]}")
    return module
