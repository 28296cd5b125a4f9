"""Running: a metric over its last ``window`` updates."""

from typing import TYPE_CHECKING, Any, Dict, List, Optional

import torch

from .abstract import StateRef, WrapperMetric, check_wrapped, updating


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
        check_wrapped(
            base_metric,
            "metric",
            torchmetrics_says="Expected argument `metric` to be an instance of `torchmetrics.Metric` but got",
        )
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
        # Which place the next update overwrites: a state, so that it survives a checkpoint
        # (load_state_dict); "sum" (merge_state adds the counts) keeps it in the int64 sum group
        # of the sync with the counts of most wrapped metrics, instead of a collective of its own.
        self.add_state("num_updates", torch.tensor(0, dtype=torch.int64), reduce="sum")

    if TYPE_CHECKING:  # a state declared with add_state
        num_updates: torch.Tensor

    @property
    def full_state_update(self) -> Optional[bool]:  # type: ignore[override]
        return None  # an update replaces its window place: forward updates twice, never adds a batch in

    def update(self, *args: Any, **kwargs: Any) -> None:
        slot = f"w{int(self.num_updates) % self.window}"  # the oldest place
        self.update_slot(slot, updating(*args, **kwargs), fresh=True)
        self.num_updates += 1  # after the update: a refused batch leaves it as it was

    def compute(self) -> Any:
        combined: Dict[StateRef, Any] = self.combined_slots(self._tags())
        return self.slot_value("w0", combined)

    def _tags(self) -> List[str]:
        return [f"w{i}" for i in range(self.window)]
