"""Input transformers: a metric (or collection) updated with transformed predictions / targets."""

from typing import Any, Callable, Optional, Tuple

import torch

from ..base.input_guard import UNREADABLE_DTYPES, refused_dtypes_of
from ..base.metric import Metric
from .abstract import WrapperMetric, check_wrapped, updating


class MetricInputTransformer(WrapperMetric):
    """Base of the input transformers: ``update(preds, target, *rest)`` updates the wrapped
    metric (or MetricCollection) with ``transform_pred(preds)`` and ``transform_target(target)``
    (identities here; subclasses override them). ``compute`` is the wrapped one's.

    The wrapped metric's state is this metric's (torchtally.wrappers.abstract): it syncs in
    one packed sync with everything else.

    Example:

        >>> import torch
        >>> from torchtally.regression import MeanAbsoluteError
        >>> from torchtally.wrappers import MetricInputTransformer
        >>> class Doubled(MetricInputTransformer):
        ...     def transform_pred(self, pred):
        ...         return 2 * pred
        >>> Doubled(MeanAbsoluteError())(torch.tensor([1.0, 2.0]), torch.tensor([2.0, 4.0]))
        tensor(0.)
    """

    def __init__(self, wrapped_metric: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        check_wrapped(
            wrapped_metric,
            "wrapped_metric",
            collections=True,
            error=TypeError,
            torchmetrics_says="Expected wrapped metric to be an instance of `torchmetrics.Metric` or "
            "`torchmetrics.MetricsCollection` but received",
        )
        self.wrapped_metric = wrapped_metric
        self.add_slot("m", wrapped_metric)

    def transform_pred(self, pred: torch.Tensor) -> torch.Tensor:
        """The predictions as the wrapped metric gets them (identity here)."""
        return pred

    def transform_target(self, target: torch.Tensor) -> torch.Tensor:
        """The targets as the wrapped metric gets them (identity here)."""
        return target

    def _wrap_transform(self, *args: Any) -> Tuple[Any, ...]:
        if len(args) == 1:
            return (self.transform_pred(args[0]),)
        if len(args) >= 2:
            return (self.transform_pred(args[0]), self.transform_target(args[1]), *args[2:])
        return args

    def update(self, *args: Any, **kwargs: Any) -> None:
        transformed = self._wrap_transform(*args)
        self.update_slot("m", updating(*transformed, **kwargs))

    def compute(self) -> Any:
        return self.slot_value("m")


class LambdaInputTransformer(MetricInputTransformer):
    """The wrapped metric (or MetricCollection) updated with ``transform_pred(preds)`` and
    ``transform_target(target)``, two functions of yours (None: unchanged).

    Example:

        >>> import torch
        >>> from torchtally.classification import BinaryAccuracy
        >>> from torchtally.wrappers import LambdaInputTransformer
        >>> metric = LambdaInputTransformer(BinaryAccuracy(), transform_pred=lambda p: 1 - p)
        >>> metric(torch.tensor([0.1, 0.8, 0.3, 0.6, 0.7]), torch.tensor([1, 0, 1, 1, 0]))
        tensor(0.8000)
    """

    def __init__(
        self,
        wrapped_metric: Any,
        transform_pred: Optional[Callable[[torch.Tensor], torch.Tensor]] = None,
        transform_target: Optional[Callable[[torch.Tensor], torch.Tensor]] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(wrapped_metric, **kwargs)
        if transform_pred is not None:
            if not callable(transform_pred):
                raise TypeError(f"Expected `transform_pred` to be of type `Callable` but received `{transform_pred}`")
            self.transform_pred = transform_pred  # type: ignore[method-assign,assignment]
        if transform_target is not None:
            if not callable(transform_target):
                raise TypeError(
                    f"Expected `transform_target` to be of type `Callable` but received `{transform_target}`"
                )
            self.transform_target = transform_target  # type: ignore[method-assign,assignment]

    def _wrap_transform(self, *args: Any) -> Tuple[Any, ...]:
        # your functions get tensors the wrapped metric can read, or the batch is refused first
        # (a transform of None, or arithmetic on uint16, raised whatever it raised)
        wrapped = self.wrapped_metric
        refused = refused_dtypes_of(wrapped) if isinstance(wrapped, Metric) else frozenset()
        for name, value in zip(("preds", "target"), args):
            if not isinstance(value, torch.Tensor):
                raise TypeError(f"{name}: expected a torch.Tensor to transform, got {type(value).__name__}")
            if value.dtype in refused:
                raise TypeError(f"{name}: unsupported dtype {value.dtype} for {type(wrapped).__name__}")
        return super()._wrap_transform(*args)


class BinaryTargetTransformer(MetricInputTransformer):
    """The wrapped metric (or MetricCollection) updated with binarised targets:
    ``(target > threshold)`` in the target's dtype, for continuous targets and a metric that
    wants 0/1 labels.

    Args:
        wrapped_metric: a Metric or a MetricCollection.
        threshold: an int or a float (TypeError otherwise).

    Differs from torchmetrics: a NaN target raises ValueError naming target (torchmetrics makes
    it a 0 label), a target that is not a tensor TypeError (torchmetrics: AttributeError); the
    wrapped metric's state is unchanged.

    Example:

        >>> import torch
        >>> from torchtally.classification import BinaryAccuracy
        >>> from torchtally.wrappers import BinaryTargetTransformer
        >>> metric = BinaryTargetTransformer(BinaryAccuracy(), threshold=0.5)
        >>> metric(torch.tensor([0.9, 0.2, 0.7, 0.4]), torch.tensor([0.8, 0.1, 0.3, 0.6]))
        tensor(0.5000)
    """

    def __init__(self, wrapped_metric: Any, threshold: float = 0, **kwargs: Any) -> None:
        # the threshold first: a wrong threshold is reported whatever is wrapped
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)):
            raise TypeError(f"Expected `threshold` to be of type `int` or `float` but received `{threshold}`")
        super().__init__(wrapped_metric, **kwargs)
        self.threshold = threshold

    def transform_target(self, target: torch.Tensor) -> torch.Tensor:
        """``target > threshold``, in the target's dtype. A target that is not a tensor is a
        TypeError and a NaN a ValueError, both naming target, raised before the wrapped metric
        sees the batch (``NaN > threshold`` is False: a NaN would silently become a 0 label)."""
        if not isinstance(target, torch.Tensor):
            raise TypeError(f"target: expected a tensor, got {type(target).__name__}")
        if target.dtype in UNREADABLE_DTYPES:  # torch has no ``>`` for them (NotImplementedError)
            raise TypeError(f"target: expected a real tensor torch can compare with the threshold, got {target.dtype}")
        if target.is_floating_point() and bool(torch.isnan(target).any()):
            where = [int(i) for i in torch.isnan(target).nonzero()[0]]
            raise ValueError(f"target: expected no NaN (it cannot be binarised), got NaN at {where}")
        return target.gt(self.threshold).to(target.dtype)
