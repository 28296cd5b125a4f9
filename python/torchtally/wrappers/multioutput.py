"""MultioutputWrapper: one copy of a metric per output column."""

import copy
from typing import Any, Dict, List, Tuple

import torch
from torch import Tensor
from torch.nn import ModuleList

from ..base.placement import argument_name
from .abstract import WrapperMetric, check_wrapped, updating


def _nan_rows(tensors: List[Tensor]) -> Tensor:
    """Rows (dim 0) where any of ``tensors`` holds a NaN."""
    rows = torch.zeros(len(tensors[0]), dtype=torch.bool, device=tensors[0].device)
    for t in tensors:
        if t.is_floating_point() or t.is_complex():
            rows |= torch.isnan(t.flatten(start_dim=1)).any(dim=1) if t.dim() > 1 else torch.isnan(t)
    return rows


def _holds_nan(values: List[Any]) -> bool:
    """Whether a floating or complex tensor among ``values`` holds a NaN."""
    return any(
        isinstance(t, Tensor) and (t.is_floating_point() or t.is_complex()) and bool(torch.isnan(t).any())
        for t in values
    )


class MultioutputWrapper(WrapperMetric):
    """``base_metric`` computed separately for each of ``num_outputs`` outputs: output ``i`` is
    ``index_select(output_dim, i)`` of every tensor argument; ``compute()`` stacks the copies'
    results along a new dim 0 (shape ``(num_outputs, ...)``).

    Args:
        base_metric: the metric to copy for each output (its copies: ``metrics``).
        num_outputs: the number of outputs (the length of ``output_dim``).
        output_dim: the dim of every tensor argument that holds the outputs.
        remove_nans: per output, drop the rows (dim 0) where any argument holds a NaN.
        squeeze_outputs: squeeze ``output_dim`` after selecting an output.

    Every copy's state is this metric's (torchtally.wrappers.abstract), so the copies sync
    in one packed sync with everything else; a batch one copy refuses leaves every copy unchanged.

    Example:

        >>> import torch
        >>> from torchtally.regression import MeanAbsoluteError
        >>> from torchtally.wrappers import MultioutputWrapper
        >>> metric = MultioutputWrapper(MeanAbsoluteError(), num_outputs=2)
        >>> metric(torch.tensor([[1.0, 2.0], [3.0, float("nan")]]), torch.tensor([[1.5, 2.0], [2.0, 0.0]]))
        tensor([0.7500, 0.0000])
    """

    is_differentiable = False

    def __init__(
        self,
        base_metric: Any,
        num_outputs: int,
        output_dim: int = -1,
        remove_nans: bool = True,
        squeeze_outputs: bool = True,
    ) -> None:
        super().__init__()
        check_wrapped(base_metric, "base_metric")
        if isinstance(num_outputs, bool) or not isinstance(num_outputs, int) or num_outputs < 1:
            raise ValueError(f"Expected argument `num_outputs` to be a positive int, got {num_outputs!r}")
        copies = [copy.deepcopy(base_metric) for _ in range(num_outputs)]
        self.metrics = ModuleList(copies)
        self.output_dim = output_dim
        self.remove_nans = remove_nans
        self.squeeze_outputs = squeeze_outputs
        for i, metric in enumerate(copies):
            self.add_slot(f"o{i}", metric)

    def _by_output(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> List[Tuple[List[Any], Dict[str, Any]]]:
        def name(t: Tensor) -> str:  # (inspects update's signature: only for an error message)
            return argument_name(self.named_update(type(self).update), args, kwargs, t)

        first = None
        for t in [*args, *kwargs.values()]:
            if not isinstance(t, Tensor):
                continue
            if t.dim() == 0 or t.shape[self.output_dim] != len(self.metrics):
                raise ValueError(
                    f"{name(t)}: MultioutputWrapper expected {len(self.metrics)} outputs along output_dim="
                    f"{self.output_dim}, got shape {tuple(t.shape)}"
                )
            # the outputs are split, and NaN rows dropped, along the same dims of every argument
            if first is None:
                first = t
            elif t.dim() != first.dim() or (self.remove_nans and t.shape[0] != first.shape[0]):
                raise ValueError(
                    f"{name(t)}: expected the dims of {name(first)} {tuple(first.shape)} (the same rows and "
                    f"outputs), got shape {tuple(t.shape)}"
                )
        if not (self.remove_nans and _holds_nan([*args, *kwargs.values()])):
            # nothing to drop: each output is a view of its column (the rows a NaN search and a
            # copy per output and argument would give, without either)
            return [
                ([self._output(a, i) for a in args], {k: self._output(v, i) for k, v in kwargs.items()})
                for i in range(len(self.metrics))
            ]
        out = []
        for i in range(len(self.metrics)):

            def pick(t: Any, i: int = i) -> Any:
                if not isinstance(t, Tensor):
                    return t
                return t.index_select(self.output_dim, torch.tensor([i], device=t.device))

            sel_args = [pick(a) for a in args]
            sel_kwargs = {k: pick(v) for k, v in kwargs.items()}
            if self.remove_nans:
                tensors = [t for t in [*sel_args, *sel_kwargs.values()] if isinstance(t, Tensor)]
                if tensors:
                    keep = ~_nan_rows(tensors)
                    sel_args = [a[keep] if isinstance(a, Tensor) else a for a in sel_args]
                    sel_kwargs = {k: v[keep] if isinstance(v, Tensor) else v for k, v in sel_kwargs.items()}
            if self.squeeze_outputs:
                sel_args = [a.squeeze(self.output_dim) if isinstance(a, Tensor) else a for a in sel_args]
                sel_kwargs = {
                    k: v.squeeze(self.output_dim) if isinstance(v, Tensor) else v for k, v in sel_kwargs.items()
                }
            out.append((sel_args, sel_kwargs))
        return out

    def _output(self, t: Any, i: int) -> Any:
        """Output ``i`` of argument ``t`` (a view; ``output_dim`` kept unless squeezed)."""
        if not isinstance(t, Tensor):
            return t
        return t.select(self.output_dim, i) if self.squeeze_outputs else t.narrow(self.output_dim, i, 1)

    def update(self, *args: Any, **kwargs: Any) -> None:
        per_output = self._by_output(args, kwargs)

        def steps() -> None:
            for i, (a, k) in enumerate(per_output):
                self.update_slot(f"o{i}", updating(*a, **k))

        self.atomically(steps)

    def compute(self) -> Tensor:
        return torch.stack([torch.as_tensor(self.slot_value(f"o{i}")) for i in range(len(self.metrics))], 0)
