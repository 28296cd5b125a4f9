"""Arithmetic on metrics: ``(precision + recall) / 2`` is a metric too (torchmetrics' composition).

``Composition`` gives a metric class the operators; each returns a ``CompositionalMetric`` that
holds its operands (metrics or constants) and applies the operator to their results:
``update`` updates every metric operand, ``compute`` computes them (each syncs its own state)
and combines the results, ``forward`` combines the operands' batch values, ``reset`` resets them.

``==`` and ``!=`` are left alone (Python's identity comparison), unlike torchmetrics, where they
build a composition: metrics stay usable as dict keys and in ``in`` tests.

This module does not import Metric: operands are recognised by their methods, so Metric can
inherit ``Composition`` without an import circle.
"""

import operator
from typing import Any, Callable

import torch
from torch import nn


def _is_metric(x: Any) -> bool:
    return isinstance(x, nn.Module) and callable(getattr(x, "update", None)) and callable(getattr(x, "compute", None))


def _flip(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def flipped(a: Any, b: Any) -> Any:
        return op(b, a)

    flipped.__name__ = f"r{op.__name__}"
    return flipped


class Composition:
    """Mixin: the operators that build a CompositionalMetric."""

    def _compose(self, op: Callable[..., Any], other: Any = None, unary: bool = False) -> "CompositionalMetric":
        return CompositionalMetric(op, self, None if unary else other, unary=unary)

    def __add__(self, other):
        return self._compose(operator.add, other)

    def __sub__(self, other):
        return self._compose(operator.sub, other)

    def __mul__(self, other):
        return self._compose(operator.mul, other)

    def __truediv__(self, other):
        return self._compose(operator.truediv, other)

    def __floordiv__(self, other):
        return self._compose(operator.floordiv, other)

    def __mod__(self, other):
        return self._compose(operator.mod, other)

    def __pow__(self, other):
        return self._compose(operator.pow, other)

    def __matmul__(self, other):
        return self._compose(operator.matmul, other)

    def __and__(self, other):
        return self._compose(torch.bitwise_and, other)

    def __or__(self, other):
        return self._compose(torch.bitwise_or, other)

    def __xor__(self, other):
        return self._compose(torch.bitwise_xor, other)

    def __lt__(self, other):
        return self._compose(operator.lt, other)

    def __le__(self, other):
        return self._compose(operator.le, other)

    def __gt__(self, other):
        return self._compose(operator.gt, other)

    def __ge__(self, other):
        return self._compose(operator.ge, other)

    def __radd__(self, other):
        return self._compose(_flip(operator.add), other)

    def __rsub__(self, other):
        return self._compose(_flip(operator.sub), other)

    def __rmul__(self, other):
        return self._compose(_flip(operator.mul), other)

    def __rtruediv__(self, other):
        return self._compose(_flip(operator.truediv), other)

    def __rfloordiv__(self, other):
        return self._compose(_flip(operator.floordiv), other)

    def __rmod__(self, other):
        return self._compose(_flip(operator.mod), other)

    def __rpow__(self, other):
        return self._compose(_flip(operator.pow), other)

    def __rmatmul__(self, other):
        return self._compose(_flip(operator.matmul), other)

    def __rand__(self, other):
        return self._compose(_flip(torch.bitwise_and), other)

    def __ror__(self, other):
        return self._compose(_flip(torch.bitwise_or), other)

    def __rxor__(self, other):
        return self._compose(_flip(torch.bitwise_xor), other)

    def __abs__(self):
        return self._compose(torch.abs, unary=True)

    def __neg__(self):
        return self._compose(torch.neg, unary=True)

    def __pos__(self):
        return self._compose(torch.positive, unary=True)

    def __invert__(self):
        return self._compose(torch.bitwise_not, unary=True)

    def __getitem__(self, index: Any) -> "CompositionalMetric":
        return self._compose(operator.getitem, index)

    def __iter__(self):
        # Without this, __getitem__ would make every metric an endless iterable.
        raise TypeError(f"{type(self).__name__} is not iterable")


def _value(operand: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    """The operand's result (a metric's compute() or forward value), or the constant itself."""
    if _is_metric(operand):
        return operand.compute() if method == "compute" else operand(*args, **kwargs)
    return operand


class CompositionalMetric(Composition, nn.Module):
    """``op(metric_a, metric_b)`` (or ``op(metric_a)``), evaluated on the operands' results.

    >>> import torch
    >>> from torchtally import BinaryPrecision, BinaryRecall
    >>> mean_pr = (BinaryPrecision() + BinaryRecall()) / 2
    >>> mean_pr.update(torch.tensor([1, 1, 0, 1]), torch.tensor([1, 0, 1, 1]))
    >>> mean_pr.compute()
    tensor(0.6667)
    """

    is_differentiable = False
    higher_is_better = None
    full_state_update = None

    def __init__(self, op: Callable[..., Any], metric_a: Any, metric_b: Any = None, unary: bool = False) -> None:
        super().__init__()
        self.op = op
        self.unary = unary
        # Metric operands are submodules (they move with .to() and appear in state_dict);
        # constants become tensors kept as plain attributes.
        self.metric_a = metric_a if _is_metric(metric_a) else torch.as_tensor(metric_a)
        self.metric_b = metric_b if (_is_metric(metric_b) or metric_b is None) else _constant(metric_b, op)

    def _operands(self):
        return (self.metric_a,) if self.unary else (self.metric_a, self.metric_b)

    def update(self, *args: Any, **kwargs: Any) -> None:
        for operand in self._operands():
            if _is_metric(operand):
                operand.update(*args, **_accepted_kwargs(operand, kwargs))

    def compute(self) -> Any:
        values = [_value(o, "compute") for o in self._operands()]
        return self.op(*values)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        values = [_value(o, "forward", *args, **_accepted_kwargs(o, kwargs)) for o in self._operands()]
        if any(v is None for v in values):  # an operand that returns nothing on this rank
            return None
        return self.op(*values)

    def reset(self) -> None:
        for operand in self._operands():
            if _is_metric(operand):
                operand.reset()

    def persistent(self, mode: bool = False) -> None:
        for operand in self._operands():
            if _is_metric(operand):
                operand.persistent(mode)

    def __repr__(self) -> str:
        name = getattr(self.op, "__name__", repr(self.op))
        operands = ", ".join(repr(o) for o in self._operands())
        return f"CompositionalMetric<{name}>({operands})"


def _constant(value: Any, op: Callable[..., Any]) -> Any:
    """A constant operand as a tensor, except an index (``metric[i]``), which stays as given."""
    if op is operator.getitem:
        return value
    return torch.as_tensor(value)


def _accepted_kwargs(operand: Any, kwargs: dict) -> dict:
    """The keyword arguments ``operand``'s update takes (all when it takes ``**kwargs``)."""
    accepts = getattr(operand, "accepted_update_kwargs", None)
    return kwargs if accepts is None or not kwargs else accepts(kwargs)
