"""ClasswiseWrapper: a per-class result as a dict keyed by class label."""

from typing import Any, Dict, List, Optional

from torch import Tensor

from .abstract import WrapperMetric, check_wrapped, updating


class ClasswiseWrapper(WrapperMetric):
    """The wrapped metric's per-class result (a tensor split along dim 0) as a dict
    ``{"<prefix><label><postfix>": value}``; the labels default to the class indices and the prefix
    to ``"<class name in lower case>_"`` when neither prefix nor postfix is given.

    Args:
        metric: the metric to wrap, e.g. ``MulticlassAccuracy(num_classes, average=None)``.
        labels: one name per class (a list of str), or None for 0, 1, ...
        prefix / postfix: put before / after each label.

    The wrapped metric's state is this metric's (torchtally.wrappers.abstract): it syncs in
    the same packed sync as the rest of a collection, and two ClasswiseWrappers around metrics that
    share a state (accuracy and recall of one task) share it in a MetricCollection too. Attributes
    of the wrapped metric (``num_classes``, ...) read through the wrapper.

    Example:

        >>> import torch
        >>> from torchtally.classification import MulticlassAccuracy
        >>> from torchtally.wrappers import ClasswiseWrapper
        >>> metric = ClasswiseWrapper(MulticlassAccuracy(num_classes=3, average=None), labels=["cat", "dog", "fish"])
        >>> metric(torch.tensor([0, 1, 2, 2]), torch.tensor([0, 1, 1, 2]))  # doctest: +NORMALIZE_WHITESPACE
        {'multiclassaccuracy_cat': tensor(1.),
         'multiclassaccuracy_dog': tensor(0.5000),
         'multiclassaccuracy_fish': tensor(1.)}
    """

    def __init__(
        self,
        metric: Any,
        labels: Optional[List[str]] = None,
        prefix: Optional[str] = None,
        postfix: Optional[str] = None,
    ) -> None:
        super().__init__()
        check_wrapped(
            metric,
            "metric",
            torchmetrics_says="Expected argument `metric` to be an instance of `torchmetrics.Metric` but got",
        )
        if labels is not None and not (isinstance(labels, list) and all(isinstance(lab, str) for lab in labels)):
            raise ValueError(f"Expected argument `labels` to either be `None` or a list of strings but got {labels}")
        if prefix is not None and not isinstance(prefix, str):
            raise ValueError(f"Expected argument `prefix` to either be `None` or a string but got {prefix}")
        if postfix is not None and not isinstance(postfix, str):
            raise ValueError(f"Expected argument `postfix` to either be `None` or a string but got {postfix}")
        self.metric = metric
        self.labels = labels
        self._prefix = prefix
        self._postfix = postfix
        self.add_slot("m", metric)
        if metric.state_key is not None:
            self.state_key = ("classwise", metric.state_key)

    @property
    def higher_is_better(self) -> Optional[bool]:  # type: ignore[override]
        return self.metric.higher_is_better

    def _convert_output(self, x: Tensor) -> Dict[str, Any]:
        if not self._prefix and not self._postfix:
            prefix, postfix = f"{type(self.metric).__name__.lower()}_", ""
        else:
            prefix, postfix = self._prefix or "", self._postfix or ""
        names = self.labels if self.labels is not None else range(len(x))
        return {f"{prefix}{name}{postfix}": value for name, value in zip(names, x)}

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.update_slot("m", updating(*args, **kwargs))

    def compute(self) -> Dict[str, Any]:
        return self._convert_output(self.slot_value("m"))

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            metric = self.__dict__.get("_modules", {}).get("metric")
            if metric is None or name.startswith("_"):
                raise
            return getattr(metric, name)
