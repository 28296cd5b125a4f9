"""Base of torchmetrics' task wrappers (``Accuracy``, ``AUROC``, ...): their ``__new__`` returns the
task's metric (``Accuracy(task="binary")`` is a BinaryAccuracy), so a wrapper itself is never made."""
from typing import Any

from ..metric import Metric


class TaskWrapper(Metric):
    def update(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"{type(self).__name__} has no update(): use the metric its task names")

    def compute(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} has no compute(): use the metric its task names")
