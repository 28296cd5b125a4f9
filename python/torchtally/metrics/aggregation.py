"""Aggregation metrics: sums, means, extremes, concatenation, a running mean and a loss average.

Values are Python numbers or real tensors of any shape (every element one value), read as
float64; results are float64 (CatMetric: its ``dtype``). ``nan_strategy`` is "error" (default),
"warn", "ignore", "disable" or a float (see torchtally.functional.aggregation). An epoch with
no update raises NotComputableError; so do a mean, min or max over no values (SumMetric gives
0 and CatMetric an empty tensor). A rejected update leaves the state unchanged.
"""
from typing import Any, Optional

import torch
from torch import Tensor

from ..errors import NotComputableError
from ..functional import aggregation as A
from ..metric import Metric

__all__ = [
    "AverageLoss",
    "CatMetric",
    "MaxMetric",
    "MeanMetric",
    "MinMetric",
    "RunningMean",
    "SumMetric",
]

_F64 = torch.float64


class _Aggregator(Metric):
    def __init__(self, *, nan_strategy: A.NanStrategy = "error", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.nan_strategy = A.check_nan_strategy(nan_strategy)

    def _values(self, value: Any, weight: Any = None, name: str = "value"):
        """Checked, flattened float64 values (and weights), NaN policy applied."""
        v = A.as_values(name, value, self.device)
        return A.apply_nan_strategy(self.nan_strategy, name, v, A.as_weights(weight, v, self.device))

    def _nothing(self, what: str) -> NotComputableError:
        return NotComputableError(f"{type(self).__name__}: {what}, the result is undefined")


class SumMetric(_Aggregator):
    """Sum of all values seen.

        >>> import torch
        >>> from torchtally import SumMetric
        >>> SumMetric().update(torch.tensor([1.0, 2.0])).update(3.0).compute()
        tensor(6., dtype=torch.float64)
    """

    def __init__(self, *, nan_strategy: A.NanStrategy = "error", **kwargs: Any) -> None:
        super().__init__(nan_strategy=nan_strategy, **kwargs)
        self.add_state("value_sum", torch.tensor(0.0, dtype=_F64), reduce="sum")

    def update(self, value: Any) -> None:
        v, _ = self._values(value)
        self.value_sum += v.sum()

    def compute(self) -> Tensor:
        return self.value_sum.clone()


class MeanMetric(_Aggregator):
    """Weighted mean sum(weight * value) / sum(weight); ``weight`` is None (1 per value), a
    number, or a tensor broadcastable to the value's shape, finite and >= 0.

        >>> import torch
        >>> from torchtally import MeanMetric
        >>> MeanMetric().update(torch.tensor([1.0, 3.0]), weight=torch.tensor([3.0, 1.0])).compute()
        tensor(1.5000, dtype=torch.float64)
    """

    def __init__(self, *, nan_strategy: A.NanStrategy = "error", **kwargs: Any) -> None:
        super().__init__(nan_strategy=nan_strategy, **kwargs)
        self.add_state("weighted_sum", torch.tensor(0.0, dtype=_F64), reduce="sum")
        self.add_state("weight_sum", torch.tensor(0.0, dtype=_F64), reduce="sum")

    def update(self, value: Any, weight: Any = None) -> None:
        v, w = self._values(value, weight)
        self.weighted_sum += (v * w).sum() if w is not None else v.sum()
        self.weight_sum += w.sum() if w is not None else v.numel()

    def compute(self) -> Tensor:
        if float(self.weight_sum) == 0:
            raise self._nothing("no values (or only zero weights) were seen")
        return self.weighted_sum / self.weight_sum


class _Extreme(_Aggregator):
    _reduce = "min"

    def __init__(self, *, nan_strategy: A.NanStrategy = "error", **kwargs: Any) -> None:
        super().__init__(nan_strategy=nan_strategy, **kwargs)
        start = float("inf") if self._reduce == "min" else float("-inf")
        self.add_state("extreme", torch.tensor(start, dtype=_F64), reduce=self._reduce)
        self.add_state("num_values", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, value: Any) -> None:
        v, _ = self._values(value)
        if v.numel():
            # torch.minimum/maximum propagate NaN (nan_strategy="disable" keeps it).
            pick = torch.minimum if self._reduce == "min" else torch.maximum
            self.extreme = pick(self.extreme, v.amin() if self._reduce == "min" else v.amax())
            self.num_values += v.numel()

    def compute(self) -> Tensor:
        if int(self.num_values) == 0:
            raise self._nothing("no values were seen")
        return self.extreme.clone()


class MinMetric(_Extreme):
    """Smallest value seen.

        >>> import torch
        >>> from torchtally import MinMetric
        >>> MinMetric().update(torch.tensor([3.0, -1.0])).update(2.0).compute()
        tensor(-1., dtype=torch.float64)
    """

    _reduce = "min"


class MaxMetric(_Extreme):
    """Largest value seen.

        >>> import torch
        >>> from torchtally import MaxMetric
        >>> MaxMetric().update(torch.tensor([3.0, -1.0])).update(2.0).compute()
        tensor(3., dtype=torch.float64)
    """

    _reduce = "max"


class CatMetric(_Aggregator):
    """All values seen, flattened into one 1-D tensor of ``dtype`` (default: torch's default
    float dtype), in order; across ranks rank 0's values come first, then rank 1's, ...

        >>> import torch
        >>> from torchtally import CatMetric
        >>> CatMetric().update(torch.tensor([[1.0, 2.0]])).update(3.0).compute()
        tensor([1., 2., 3.])
    """

    def __init__(self, *, nan_strategy: A.NanStrategy = "error", dtype: Optional[torch.dtype] = None,
                 **kwargs: Any) -> None:
        super().__init__(nan_strategy=nan_strategy, **kwargs)
        dtype = dtype if dtype is not None else torch.get_default_dtype()
        if not isinstance(dtype, torch.dtype):
            raise TypeError(f"dtype: expected a torch.dtype, got {type(dtype).__name__}")
        self.__dict__["_dtype"] = dtype  # Metric.dtype: the dtype of the results
        self.add_state("values", torch.empty(0, dtype=self.dtype), reduce="cat")

    def update(self, value: Any) -> None:
        v, _ = self._values(value)
        self.append_state("values", v.to(self.dtype))

    def compute(self) -> Tensor:
        return self.values.clone()


class RunningMean(_Aggregator):
    """Mean of the values of the last ``window`` updates (weighted as MeanMetric).

    Across ranks the window is per rank: the synced result is the weighted mean over the union
    of every rank's last ``window`` updates (with one update per rank per step, as in DDP,
    that is the last ``window`` steps). ``merge_state`` combines windows the same way. State:
    ``window`` slots of (weighted sum, weight sum), a "sum" reduce, so a sync is one all_reduce.

        >>> import torch
        >>> from torchtally import RunningMean
        >>> m = RunningMean(window=2)
        >>> for v in (1.0, 2.0, 6.0):
        ...     _ = m.update(v)
        >>> m.compute()
        tensor(4., dtype=torch.float64)
    """

    def __init__(self, window: int = 5, *, nan_strategy: A.NanStrategy = "error", **kwargs: Any) -> None:
        super().__init__(nan_strategy=nan_strategy, **kwargs)
        if not isinstance(window, int) or isinstance(window, bool) or window < 1:
            raise ValueError(f"window: expected an int >= 1, got {window!r}")
        self.window = window
        self.add_state("window_sums", torch.zeros(window, dtype=_F64), reduce="sum")
        self.add_state("window_weights", torch.zeros(window, dtype=_F64), reduce="sum")
        # Which slot the next update overwrites; after a merge, the largest count continues.
        self.add_state("num_updates", torch.tensor(0, dtype=torch.int64), reduce="max")

    def update(self, value: Any, weight: Any = None) -> None:
        v, w = self._values(value, weight)
        slot = int(self.num_updates) % self.window
        self.window_sums[slot] = (v * w).sum() if w is not None else v.sum()
        self.window_weights[slot] = w.sum() if w is not None else v.numel()
        self.num_updates += 1

    def compute(self) -> Tensor:
        weight = self.window_weights.sum()
        if float(weight) == 0:
            raise self._nothing("the window holds no values (or only zero weights)")
        return self.window_sums.sum() / weight


class AverageLoss(_Aggregator):
    """Loss averaged over samples: ``update(loss, batch_size)`` with the batch's mean loss (a
    number or 0-d tensor) and its sample count, or ``update(losses)`` with per-sample losses
    [B]. Result: sum(loss * batch_size) / sum(batch_size), so a short last batch weighs less.

        >>> import torch
        >>> from torchtally import AverageLoss
        >>> AverageLoss().update(torch.tensor(1.0), 30).update(4.0, 10).compute()
        tensor(1.7500, dtype=torch.float64)
    """

    def __init__(self, *, nan_strategy: A.NanStrategy = "error", **kwargs: Any) -> None:
        super().__init__(nan_strategy=nan_strategy, **kwargs)
        self.add_state("loss_sum", torch.tensor(0.0, dtype=_F64), reduce="sum")
        self.add_state("num_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, loss: Any, batch_size: Any = None) -> None:
        values = A.as_values("loss", loss, self.device)
        if values.dim() > 1:
            raise ValueError(f"loss: expected a number, a 0-d tensor or per-sample losses [B], got shape {list(values.shape)}")
        size = _batch_size(batch_size, values)
        weight = None if values.dim() == 1 else torch.tensor(float(size), dtype=_F64, device=values.device)
        v, w = A.apply_nan_strategy(self.nan_strategy, "loss", values, weight)
        self.loss_sum += (v * w).sum() if w is not None else v.sum()
        self.num_samples += int(w.sum()) if w is not None else v.numel()

    def compute(self) -> Tensor:
        if int(self.num_samples) == 0:
            raise self._nothing("no samples were seen")
        return self.loss_sum / self.num_samples


def _batch_size(batch_size: Any, values: Tensor) -> int:
    if isinstance(batch_size, Tensor) and batch_size.dim() == 0 and not batch_size.is_floating_point():
        batch_size = int(batch_size)
    if values.dim() == 1:
        if batch_size is not None and batch_size != values.numel():
            raise ValueError(f"batch_size: expected None or {values.numel()} (the number of per-sample losses), got {batch_size!r}")
        return values.numel()
    if batch_size is None:
        raise ValueError("batch_size: required with a scalar loss (the number of samples it averages)")
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 0:
        raise ValueError(f"batch_size: expected an int >= 0, got {batch_size!r}")
    return batch_size
