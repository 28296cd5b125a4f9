"""Aggregation metrics: sums, means, extremes, concatenation, a running mean and sum, and a loss average.

torchmetrics' classes with its constructor signatures, accepted inputs and results. Values
are Python numbers, real tensors of any shape (every element one value) or array-likes;
``nan_strategy`` is "warn" (default), "ignore", "error", "disable" or a float, with
torchmetrics' semantics (see torchtally.functional.aggregation). A rejected update leaves the
state unchanged.

Accumulators are float64 (sums, extremes, window slots) whatever the results' dtype, so long
streams lose no digits; results are in ``self.dtype`` (torch's default dtype when the metric
was made; ``set_dtype`` changes it), as torchmetrics'. Over no values: SumMetric gives 0,
RunningSum 0, MeanMetric and RunningMean NaN, MinMetric +inf, MaxMetric -inf, CatMetric an empty tensor.

Deliberate differences from torchmetrics:

* a finite total that does not fit the results' dtype (1e300 in float32) raises ValueError at
  compute, saying to call ``set_dtype(torch.float64)`` (torchmetrics returns inf);
* a weight that is negative or infinite is a ValueError (the "mean" would not be a mean);
* with ``nan_strategy="disable"`` MeanMetric keeps the weights (torchmetrics drops them);
* with a float ``nan_strategy`` and a weight broadcast to the values (a number, or a smaller
  tensor), only the NaN positions get weight 1 (torchmetrics writes the 1 into its broadcast
  view of the weight, which sets every weight to 1);
* CatMetric over no values returns an empty tensor (torchmetrics: an empty Python list);
* RunningMean's and RunningSum's ``update_count`` count their updates (torchmetrics' Running wrapper reports 0);
* AverageLoss (no torchmetrics twin, ignite's ``Loss``) raises NotComputableError over no
  samples, as ignite's Loss does.
"""

import functools
import math
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, Optional, Tuple, Union

import torch
from torch import Tensor

from .base.metric import Metric
from .base.state_dict import check_nonnegative
from .errors import NotComputableError
from .functional.aggregation import update as agg_update
from .kernels import deferred_checks

__all__ = [
    "AverageLoss",
    "BaseAggregator",
    "CatMetric",
    "MaxMetric",
    "MeanMetric",
    "MinMetric",
    "RunningMean",
    "RunningSum",
    "SumMetric",
]

_F64 = torch.float64
_INT64_MAX = 2**63 - 1
# A batch size weighs its loss as a float64, which holds every integer up to 2**53 exactly.
_MAX_BATCH_SIZE = 2**53


def _as_result(value: Tensor, metric: Metric) -> Tensor:
    """A single-element result as a 0-d tensor (torchmetrics squeezes those), in the metric's
    dtype (``Metric.in_result_dtype``: a finite total that does not fit it raises)."""
    out = metric.in_result_dtype(value)
    return out.reshape(()) if out.numel() == 1 and out.dim() else out  # (a reshape is a tensor op: skipped at 0-d)


class BaseAggregator(Metric):
    """torchmetrics' base for a user's own aggregator: one state ``state_name`` with default
    ``default_value``, combined across ranks by ``fn`` ("sum", "max", "min" or "cat"; a list
    default is a list state), and ``_cast_and_nan_check_input`` for ``update`` to call. A subclass
    writes ``update``; ``compute`` returns the state. torchtally's own aggregators (SumMetric,
    MeanMetric, ...) are instances of it too. Differences from torchmetrics: ``fn`` is one of
    those reductions by name (a callable, which no packed collective can run, raises
    ValueError), and the checked values are float64 (torchmetrics: the metric's dtype).

        >>> import torch
        >>> from torchtally.aggregation import BaseAggregator
        >>> class AbsSum(BaseAggregator):
        ...     def __init__(self, **kwargs):
        ...         super().__init__("sum", torch.tensor(0.0), nan_strategy="ignore", **kwargs)
        ...     def update(self, value):
        ...         values, _ = self._cast_and_nan_check_input(value)
        ...         self.value += values.abs().sum()
        >>> metric = AbsSum()
        >>> _ = metric.update(torch.tensor([1.0, -2.0, float("nan")]))
        >>> metric.compute()
        tensor(3.)
    """

    is_differentiable = None
    higher_is_better = None
    full_state_update: Optional[bool] = False

    def __init__(
        self,
        fn: str,
        default_value: Any,
        nan_strategy: agg_update.NanStrategy = "error",
        state_name: str = "value",
        **kwargs: Any,
    ) -> None:
        if not isinstance(fn, str) or fn not in ("sum", "max", "min", "cat"):
            raise ValueError(f"fn: expected one of 'sum', 'max', 'min', 'cat', got {fn!r}")
        super().__init__(**kwargs)
        self.nan_strategy = agg_update.check_nan_strategy(nan_strategy)
        self.state_name = state_name
        self.add_state(state_name, default=default_value, dist_reduce_fx=fn)

    refused_input_dtypes: FrozenSet[torch.dtype] = frozenset()  # float8 and uint values are read exactly

    def _cast_and_nan_check_input(self, x: Any, weight: Any = None) -> Tuple[Tensor, Tensor]:
        """``x`` and ``weight`` (ones where None) as float64 tensors of ``x``'s shape, with the
        NaN strategy applied (as torchmetrics' method of this name)."""
        values, weights = agg_update.checked_values(self.nan_strategy, "value", x, weight, self.device)
        return values, torch.ones_like(values) if weights is None else weights

    def update(self, value: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__}.update: a BaseAggregator subclass writes its own update")

    def compute(self) -> Any:
        return getattr(self, self.state_name)


class _Aggregator(BaseAggregator):
    is_differentiable = None  # torchmetrics' values
    higher_is_better = None
    full_state_update: Optional[bool] = False
    traceable_update = False  # the NaN policy reads the values: eager inside torch.compile

    def __init__(self, nan_strategy: agg_update.NanStrategy = "warn", **kwargs: Any) -> None:
        Metric.__init__(self, **kwargs)  # not BaseAggregator's: each subclass declares its own states
        self.nan_strategy = agg_update.check_nan_strategy(nan_strategy)

    def _values(
        self, value: Any, weight: Any = None, name: str = "value", fill: Optional[float] = 0.0
    ) -> Tuple[Tensor, Optional[Tensor]]:
        """Checked float64 values (and weights, broadcast to them), NaN policy applied; where
        checks are deferred (kernels.deferred_checks), a dropped NaN becomes ``fill`` with weight
        0 (None: dropped on the host)."""
        return agg_update.checked_values(self.nan_strategy, name, value, weight, self.device, fill)


class SumMetric(_Aggregator):
    """Sum of all values seen (0 before any).

    >>> import torch
    >>> from torchtally.aggregation import SumMetric
    >>> SumMetric().update(torch.tensor([1.0, 2.0])).update(3.0).compute()
    tensor(6.)
    """

    def __init__(self, nan_strategy: agg_update.NanStrategy = "warn", **kwargs: Any) -> None:
        super().__init__(nan_strategy, **kwargs)
        self.add_state("value_sum", torch.tensor(0.0, dtype=_F64), reduce="sum")

    def update(self, value: Any) -> None:
        total = agg_update.nan_free_total(value, self.device)
        if total is None:
            v, _ = self._values(value)
            total = v.sum()
        self.value_sum += total

    def compute(self) -> Tensor:
        return _as_result(self.value_sum, self)


class MeanMetric(_Aggregator):
    """Weighted mean sum(weight * value) / sum(weight); ``weight`` is None (1 per value), a
    number, or a tensor broadcastable to the value's shape, finite and >= 0. NaN before any
    value (0 / 0), as torchmetrics. Differences from torchmetrics: negative or infinite weights
    raise ValueError; "disable" and a float ``nan_strategy`` treat weights as described in this
    module's docstring.

        >>> import torch
        >>> from torchtally.aggregation import MeanMetric
        >>> MeanMetric().update(torch.tensor([1.0, 3.0]), weight=torch.tensor([3.0, 1.0])).compute()
        tensor(1.5000)
    """

    def __init__(self, nan_strategy: agg_update.NanStrategy = "warn", **kwargs: Any) -> None:
        super().__init__(nan_strategy, **kwargs)
        self.add_state("weighted_sum", torch.tensor(0.0, dtype=_F64), reduce="sum")
        self.add_state("weight_sum", torch.tensor(0.0, dtype=_F64), reduce="sum")

    def update(self, value: Any, weight: Any = None) -> None:
        total = agg_update.nan_free_total(value, self.device) if weight is None else None
        if total is None:
            total, weight_sum = agg_update.weighted_totals(*self._values(value, weight))
        else:  # every value weighs 1
            weight_sum = value.numel()
        self.weighted_sum += total
        self.weight_sum += weight_sum

    def compute(self) -> Tensor:
        return _as_result(self.weighted_sum / self.weight_sum, self)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "weight_sum")


class _Extreme(_Aggregator):
    if TYPE_CHECKING:  # a state declared with add_state (read and assigned as an attribute)
        extreme: Tensor

    full_state_update = True
    _reduce = "min"

    def __init__(self, nan_strategy: agg_update.NanStrategy = "warn", **kwargs: Any) -> None:
        super().__init__(nan_strategy, **kwargs)
        start = float("inf") if self._reduce == "min" else float("-inf")
        self.add_state("extreme", torch.tensor(start, dtype=_F64), reduce=self._reduce)

    def update(self, value: Any) -> None:
        extreme = agg_update.nan_free_extreme(value, self._reduce == "min", self.device)
        if extreme is not None:
            minimum = self._reduce == "min"
            self.extreme = torch.minimum(self.extreme, extreme) if minimum else torch.maximum(self.extreme, extreme)
            return
        v, _ = self._values(value, fill=float("inf") if self._reduce == "min" else float("-inf"))
        if v.numel():
            # torch.minimum/maximum propagate NaN (nan_strategy="disable" keeps it).
            if self._reduce == "min":
                self.extreme = torch.minimum(self.extreme, v.amin())
            else:
                self.extreme = torch.maximum(self.extreme, v.amax())

    def compute(self) -> Tensor:
        return _as_result(self.extreme, self)


class MinMetric(_Extreme):
    """Smallest value seen (+inf before any, as torchmetrics).

    >>> import torch
    >>> from torchtally.aggregation import MinMetric
    >>> MinMetric().update(torch.tensor([3.0, -1.0])).update(2.0).compute()
    tensor(-1.)
    """

    _reduce = "min"


class MaxMetric(_Extreme):
    """Largest value seen (-inf before any, as torchmetrics).

    >>> import torch
    >>> from torchtally.aggregation import MaxMetric
    >>> MaxMetric().update(torch.tensor([3.0, -1.0])).update(2.0).compute()
    tensor(3.)
    """

    _reduce = "max"


class CatMetric(_Aggregator):
    """All values seen, concatenated along dim 0 in order (a 0-d value counts as [1]); across
    ranks rank 0's values come first, then rank 1's, ... Values keep their shape after dim 0,
    which must be the same for every value (a single value comes back 0-d, as torchmetrics).
    Stored in the dtype of the results when the metric was made. Difference from torchmetrics:
    over no values the result is an empty tensor (torchmetrics returns an empty list), values
    whose shapes after dim 0 differ raise ValueError at the update (torchmetrics at compute), and
    so does a finite value too large for the storage dtype (torchmetrics stores it as inf).

        >>> import torch
        >>> from torchtally.aggregation import CatMetric
        >>> CatMetric().update(torch.tensor([1.0, 2.0])).update(3.0).compute()
        tensor([1., 2., 3.])
        >>> CatMetric().update(torch.tensor([[1.0, 2.0]])).update(torch.tensor([[3.0, 4.0]])).compute()
        tensor([[1., 2.],
                [3., 4.]])
    """

    if TYPE_CHECKING:  # a state declared with add_state (read and assigned as an attribute)
        value_shape: Tensor

    def __init__(self, nan_strategy: agg_update.NanStrategy = "warn", **kwargs: Any) -> None:
        super().__init__(nan_strategy, **kwargs)
        self._stored_dtype = self.dtype
        # Values are kept flat; "value_shape" holds (1, *shape after dim 0) once a value was
        # seen ([] before), merged by checking that every rank saw the same shape.
        self.add_state("values", torch.empty(0, dtype=self.dtype), reduce="cat")
        self.add_state("value_shape", torch.empty(0, dtype=torch.int64), reduce="merge")
        self._shape_seen: Tuple[Any, Tuple[int, ...]] = (None, ())

    def update(self, value: Any) -> None:
        v = self._stored_as_given(value)
        if v is None:
            v, _ = self._values(value, fill=None)  # a dropped value changes the number of rows: dropped on the host
        if not v.numel():
            return
        row = (1,) + tuple(v.shape[1:])
        shape_state = self.value_shape
        new_shape = None
        if not (self._shape_seen[0] is shape_state and self._shape_seen[1] == row):
            stored = tuple(shape_state.tolist())  # read only when the state was replaced
            if stored and stored != row:
                raise ValueError(
                    f"value: expected values of shape [N, {', '.join(map(str, stored[1:]))}] as before, "
                    f"got {list(v.shape)}"
                )
            new_shape = row
        if v.dtype == self._stored_dtype:  # no cast, so nothing can overflow; the caller's tensor: copied
            self.append_state("values", v.reshape(-1), copy=True)
        else:
            flat = v.reshape(-1).to(self._stored_dtype)
            if not bool(torch.isfinite(flat).all()):
                _check_storable(v, flat)
            self.append_state("values", flat)
        if new_shape is not None:
            self.value_shape = torch.tensor(new_shape, dtype=torch.int64, device=shape_state.device)
            self._shape_seen = (self.value_shape, new_shape)

    def _stored_as_given(self, value: Any) -> Optional[Tensor]:
        """``value`` itself (detached) when it is a tensor of the storage dtype on the metric's
        device holding no NaN: then the NaN policy has nothing to do, and the float64 round trip
        of ``_values`` would give the same numbers. None otherwise (``_values`` decides). A NaN
        makes the sum NaN, so one sum and one host read rule it out."""
        if not (
            isinstance(value, Tensor)
            and value.dtype == self._stored_dtype
            and not value.is_meta
            and value.device == self.device
        ):
            return None
        v = value.detach()
        return v if v.numel() and not math.isnan(v.sum().item()) else None

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        """ "value_shape" is [] (nothing seen) or [1, d1, ...], and "values" holds whole values."""
        super().check_state_invariants(states)
        shape, values = states["value_shape"].tolist(), states["values"]
        if not shape:
            if values.numel():
                raise ValueError(f"'value_shape': expected [1, ...] for {values.numel()} stored value(s), got []")
            return
        if shape[0] != 1 or min(shape) < 0:
            raise ValueError(f"'value_shape': expected [1, d1, ...] with every d >= 0, got {shape}")
        per_value = math.prod(shape[1:])
        if (values.numel() % per_value) if per_value else values.numel():
            raise ValueError(
                f"'values': expected a multiple of {per_value} elements (value_shape {shape}), got {values.numel()}"
            )

    def merge_state_values(self, name: str, values: list) -> Tensor:
        shapes = {tuple(v.tolist()) for v in values if v.numel()}
        if len(shapes) > 1:
            raise ValueError(f"CatMetric: the values to merge have different shapes after dim 0: {sorted(shapes)}")
        return values[0] if not shapes else next(v for v in values if v.numel()).clone()

    results_recomputed = True  # the result is a concatenation, as long to make again as to copy

    def compute(self) -> Tensor:
        shape = tuple(self.value_shape.tolist())[1:]
        return _as_result(self.copied_rows("values").reshape((-1,) + shape), self)


def _check_storable(values: Tensor, stored: Tensor) -> None:
    """ValueError where a finite value became infinite in CatMetric's storage dtype."""
    lost = torch.isfinite(values.reshape(-1)) & ~torch.isfinite(stored)
    if bool(lost.any()):
        flat = int(lost.nonzero()[0, 0])
        raise ValueError(
            f"value: the value {float(values.reshape(-1)[flat]):g} at flat index {flat} does not fit the "
            f"{stored.dtype} the values are stored in; make the metric while torch's default dtype is float64"
        )


class _RunningWindow(_Aggregator):
    """The window of the running aggregators: per summed quantity (``_slot_states``) ``window``
    float64 slots, one per update, and the count of updates, which picks the slot the next
    update overwrites. Every slot state is a "sum" reduce, so a sync is one all_reduce and
    ``merge_state`` adds windows slot by slot (per rank: the union of every rank's last
    ``window`` updates, as torchmetrics' Running wrapper sums each slot over ranks)."""

    full_state_update = None  # forward updates the window, then computes the batch on its own
    _slot_states: Tuple[str, ...] = ()

    def __init__(self, window: int = 5, nan_strategy: agg_update.NanStrategy = "warn", **kwargs: Any) -> None:
        super().__init__(nan_strategy, **kwargs)
        if not isinstance(window, int) or isinstance(window, bool) or window < 1:
            raise ValueError(f"window: expected a positive int, got {window!r}")
        self.window = window
        for name in self._slot_states:
            self.add_state(name, torch.zeros(window, dtype=_F64), reduce="sum")
        # Which slot the next update overwrites; after a merge, the largest count continues.
        self.add_state("num_updates", torch.tensor(0, dtype=torch.int64), reduce="max")

    def _store(self, *totals: Union[Tensor, float]) -> None:
        """Write one update's totals (one per slot state, checked already) into the next slot."""
        if deferred_checks.deferring(self.num_updates):  # the slot picked on the device: no host read
            slot = (self.num_updates % self.window).reshape(1)
            for name, total in zip(self._slot_states, totals):
                getattr(self, name).index_copy_(0, slot, torch.as_tensor(total, dtype=_F64, device=slot.device)[None])
        else:
            slot_number = int(self.num_updates) % self.window
            for name, total in zip(self._slot_states, totals):
                getattr(self, name)[slot_number] = total
        self.num_updates += 1

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "num_updates")


class RunningMean(_RunningWindow):
    """Mean of the values of the last ``window`` updates (weighted as MeanMetric); NaN before any.

    Across ranks the window is per rank: the synced result is the weighted mean over the union
    of every rank's last ``window`` updates (with one update per rank per step, as in DDP,
    that is the last ``window`` steps), as torchmetrics' Running wrapper sums each window slot
    over ranks. ``merge_state`` combines windows the same way. State: ``window`` slots of
    (weighted sum, weight sum), a "sum" reduce, so a sync is one all_reduce. Differences from
    torchmetrics: as MeanMetric's, and ``update_count`` counts the updates (torchmetrics: 0).

        >>> import torch
        >>> from torchtally.aggregation import RunningMean
        >>> m = RunningMean(window=2)
        >>> for v in (1.0, 2.0, 6.0):
        ...     _ = m.update(v)
        >>> m.compute()
        tensor(4.)
    """

    _slot_states = ("window_sums", "window_weights")

    def update(self, value: Any, weight: Any = None) -> None:
        total = agg_update.nan_free_total(value, self.device) if weight is None else None
        if total is None:
            self._store(*agg_update.weighted_totals(*self._values(value, weight)))
        else:  # every value weighs 1
            self._store(total, value.numel())

    def compute(self) -> Tensor:
        return _as_result(self.window_sums.sum() / self.window_weights.sum(), self)

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "window_weights")


class RunningSum(_RunningWindow):
    """Sum of the values of the last ``window`` updates; 0 before any (as torchmetrics).

    The window is per rank, as RunningMean's: the synced result sums the union of every rank's
    last ``window`` updates (torchmetrics' Running wrapper sums each slot over ranks). State:
    ``window`` float64 slots and an update count; a sync is one all_reduce. ``forward`` returns
    the batch's own sum and moves the window, as torchmetrics'. Differences from torchmetrics:
    float64 slots (the result is rounded once), and ``update_count`` counts the updates
    (torchmetrics' wrapper reports 0).

        >>> import torch
        >>> from torchtally.aggregation import RunningSum
        >>> m = RunningSum(window=2)
        >>> for v in (1.0, torch.tensor([2.0, 3.0]), 6.0):
        ...     _ = m.update(v)
        >>> m.compute()
        tensor(11.)
    """

    _slot_states = ("window_sums",)

    def update(self, value: Any) -> None:
        total = agg_update.nan_free_total(value, self.device)
        if total is None:
            v, _ = self._values(value)
            total = v.sum()
        self._store(total)

    def compute(self) -> Tensor:
        return _as_result(self.window_sums.sum(), self)


class AverageLoss(_Aggregator):
    """Loss averaged over samples: ``update(loss, batch_size)`` with the batch's mean loss (a
    number or 0-d tensor) and its sample count, or ``update(losses)`` with per-sample losses
    [B]. Result: sum(loss * batch_size) / sum(batch_size), so a short last batch weighs less.

    torchtally's own (ignite's ``Loss`` without the loss function): no torchmetrics twin, so
    ``nan_strategy`` defaults to "error" and, as ignite's Loss, compute over no samples raises
    NotComputableError. The result is in ``self.dtype``.

        >>> import torch
        >>> from torchtally.aggregation import AverageLoss
        >>> AverageLoss().update(torch.tensor(1.0), 30).update(4.0, 10).compute()
        tensor(1.7500)
    """

    full_state_update = False

    def __init__(self, *, nan_strategy: agg_update.NanStrategy = "error", **kwargs: Any) -> None:
        super().__init__(nan_strategy, **kwargs)
        self.add_state("loss_sum", torch.tensor(0.0, dtype=_F64), reduce="sum")
        self.add_state("num_samples", torch.tensor(0, dtype=torch.int64), reduce="sum")

    def update(self, loss: Any, batch_size: Any = None) -> None:
        values = agg_update.as_values("loss", loss, self.device)
        if values.dim() > 1:
            raise ValueError(
                f"loss: expected a number, a 0-d tensor or per-sample losses [B], got shape {list(values.shape)}"
            )
        size = _batch_size(batch_size, values)
        weight = None if values.dim() == 1 else torch.tensor(float(size), dtype=_F64, device=values.device)
        v, w = agg_update.apply_nan_strategy(self.nan_strategy, "loss", values, weight, fill=0.0)
        # Both additions are made and checked before either state changes.
        loss_sum = (v * w).sum() if w is not None else v.sum()
        count: Union[int, Tensor]
        if deferred_checks.deferring(values):
            count = w.sum().to(torch.int64) if w is not None else torch.full((), v.numel(), device=v.device)
            so_far = self.num_samples.clone()
            search = functools.partial(_check_count, count, so_far)
            deferred_checks.hold(count <= _INT64_MAX - so_far, search, "batch_size")
        else:
            count = int(w.sum()) if w is not None else v.numel()
            _check_count(count, self.num_samples)
        self.loss_sum += loss_sum
        self.num_samples += count

    def check_state_invariants(self, states: Dict[str, Tensor]) -> None:
        super().check_state_invariants(states)
        check_nonnegative(states, "num_samples")

    def compute(self) -> Tensor:
        if int(self.num_samples) == 0:
            raise NotComputableError("AverageLoss must have at least one sample before it can be computed")
        return self.in_result_dtype(self.loss_sum / self.num_samples)


def _check_count(count: Union[int, Tensor], so_far: Tensor) -> None:
    """ValueError when ``count`` more samples would overflow the int64 count ``so_far``."""
    count = int(count)
    if count and int(so_far) + count > _INT64_MAX:
        raise ValueError(
            f"batch_size: {count} more samples would overflow the int64 sample count ({int(so_far)} so far)"
        )


def _batch_size(batch_size: Any, values: Tensor) -> int:
    if isinstance(batch_size, Tensor) and batch_size.dim() == 0 and not batch_size.is_floating_point():
        batch_size = int(batch_size)
    if values.dim() == 1:
        if batch_size is not None and batch_size != values.numel():
            raise ValueError(
                f"batch_size: expected None or {values.numel()} (the number of per-sample losses), got {batch_size!r}"
            )
        return values.numel()
    if batch_size is None:
        raise ValueError("batch_size: required with a scalar loss (the number of samples it averages)")
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 0:
        raise ValueError(f"batch_size: expected an int >= 0, got {batch_size!r}")
    if batch_size > _MAX_BATCH_SIZE:
        raise ValueError(f"batch_size: expected at most 2**53 (a float64 weight holds it exactly), got {batch_size!r}")
    return batch_size
