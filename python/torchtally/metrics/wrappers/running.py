"""Running: a metric over its last ``window`` updates."""

from typing import Any, Dict, List, Optional

from .hosting import StateRef, WrapperMetric, check_wrapped, updating


class Running(WrapperMetric):
    """``compute()`` gives the wrapped metric over its last ``window`` updates (or forwards) only.
    ``forward`` returns the batch's value, as the wrapped metric's forward does.

    Each of the last ``window`` updates keeps its own copy of the wrapped metric's state (memory
    grows linearly with ``window``); ``compute`` combines them by each state's reduce. The wrapped
    metric must combine batches by its states (``full_state_update = False``; ValueError otherwise).
    Under torch.distributed the window is the last ``window`` updates of every rank, synced in one
    packed sync.

    Args:
        base_metric: the metric to run.
        window: how many of the last updates count (a positive int).

    Example:

        >>> import torch
        >>> from torchtally.aggregation import SumMetric
        >>> from torchtally.wrappers import Running
        >>> metric = Running(SumMetric(), window=3)
        >>> for i in range(5):
        ...     batch_value = metric(torch.tensor(float(i)))
        ...     print(batch_value, metric.compute())
        tensor(0.) tensor(0.)
        tensor(1.) tensor(1.)
        tensor(2.) tensor(3.)
        tensor(3.) tensor(6.)
        tensor(4.) tensor(9.)
    """

    def __init__(self, base_metric: Any, window: int = 5) -> None:
        super().__init__()
        check_wrapped(base_metric, "metric")
        if isinstance(window, bool) or not (isinstance(window, int) and window > 0):
            raise ValueError(f"Expected argument `window` to be a positive integer but got {window}")
        if base_metric.full_state_update is not False:
            raise ValueError(
                f"Expected attribute `full_state_update` set to `False` but got {base_metric.full_state_update}"
            )
        self.base_metric = base_metric
        self.window = window
        engine = None
        for i in range(window):
            engine = self.add_slot(f"w{i}", base_metric, engine)

    @property
    def full_state_update(self) -> Optional[bool]:  # type: ignore[override]
        return None  # an update replaces its window place: forward updates twice, never adds a batch in

    def update(self, *args: Any, **kwargs: Any) -> None:
        slot = f"w{self.update_count % self.window}"  # the oldest place (update_count: the caller's count)
        self.update_slot(slot, updating(*args, **kwargs), fresh=True)

    def compute(self) -> Any:
        combined: Dict[StateRef, Any] = self.combined_slots(self._tags())
        return self.slot_value("w0", combined)

    def _tags(self) -> List[str]:
        return [f"w{i}" for i in range(self.window)]
