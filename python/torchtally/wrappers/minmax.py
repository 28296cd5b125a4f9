"""MinMaxMetric: a scalar metric's value with the smallest and largest value it has computed."""

from typing import Any, Dict, Optional, Tuple

import torch
from torch import Tensor

from .abstract import WrapperMetric, check_wrapped, updating


class MinMaxMetric(WrapperMetric):
    """``compute()`` returns ``{"raw": value, "max": largest, "min": smallest}``: the wrapped
    metric's value and the extremes over every value it has computed so far (each ``compute()``,
    and each ``forward``'s batch value), kept across ``reset()`` (as torchmetrics does).

    Args:
        base_metric: a metric whose result is a scalar (a number or a one-element tensor;
            otherwise ``compute`` raises RuntimeError).
        kwargs: Metric's keyword arguments.

    The extremes are not synced themselves: those of ``compute()`` values are taken from synced
    values (the same on every rank); a ``forward``'s batch value is this rank's own unless
    ``dist_sync_on_step=True``, so extremes fed by ``forward`` differ between ranks (as
    torchmetrics'). Differences from torchmetrics: ``forward`` keeps the accumulated state
    (torchmetrics' forward leaves only the last batch in the wrapped metric).

    Example:

        >>> import torch
        >>> from torchtally.classification import BinaryAccuracy
        >>> from torchtally.wrappers import MinMaxMetric
        >>> metric = MinMaxMetric(BinaryAccuracy())
        >>> metric(torch.tensor([1., 1., 0., 0.]), torch.tensor([1, 1, 0, 0]))
        {'raw': tensor(1.), 'max': tensor(1.), 'min': tensor(1.)}
        >>> metric(torch.tensor([1., 0., 1., 0.]), torch.tensor([1, 1, 0, 0]))
        {'raw': tensor(0.5000), 'max': tensor(1.), 'min': tensor(0.5000)}
        >>> metric.compute()
        {'raw': tensor(0.7500), 'max': tensor(1.), 'min': tensor(0.5000)}
    """

    option_names: Optional[Tuple[str, ...]] = ()  # min_val / max_val follow the values, they configure nothing

    def __init__(self, base_metric: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        check_wrapped(
            base_metric,
            "base_metric",
            torchmetrics_says="Expected base metric to be an instance of `torchmetrics.Metric` but received",
        )
        self._base_metric = base_metric
        self.min_val = torch.tensor(float("inf"))
        self.max_val = torch.tensor(float("-inf"))
        self.add_slot("m", base_metric)

    @property
    def full_state_update(self) -> Optional[bool]:  # type: ignore[override]
        return None  # forward: the batch's value goes through compute, so it counts for min and max

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.update_slot("m", updating(*args, **kwargs))

    def compute(self) -> Dict[str, Tensor]:
        val = self.slot_value("m")
        if not self._is_suitable_val(val):
            raise RuntimeError(f"Returned value from base metric should be a float or scalar tensor, but got {val}.")
        val = torch.as_tensor(val)
        low, high = self.min_val.to(val.device), self.max_val.to(val.device)
        self.max_val = val if high < val else high
        self.min_val = val if low > val else low
        return {"raw": val, "max": self.max_val, "min": self.min_val}

    @staticmethod
    def _is_suitable_val(val: Any) -> bool:
        if isinstance(val, (int, float)):
            return True
        return isinstance(val, Tensor) and val.numel() == 1
