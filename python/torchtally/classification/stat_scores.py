"""StatScores, Accuracy, HammingDistance, Specificity and NegativePredictiveValue: binary,
multiclass, multilabel (state: the confusion matrix).

The three ``_*StatBase`` classes hold torchmetrics' constructor of its stat-score family
(StatScores, Accuracy, Precision, Recall, Specificity share one signature per task); the
public classes differ only in ``compute``.

Deliberate differences from torchmetrics, for every class here and in precision_recall.py:

* bad input raises even with ``validate_args=False`` (an out-of-range or non-0/1 label, a
  float target holding another value, NaN scores): ValueError naming the argument, where
  torchmetrics raises RuntimeError or, with validation off, returns a wrong number;
* multiclass ``num_classes=None`` (torchmetrics: allowed with ``average="micro"``) raises
  ValueError: the state is an exact per-class count.
"""

from typing import Any, Optional

from torch import Tensor

from ..functional.classification import compute as clf_compute
from ..functional.classification import update as clf_update
from ..functional.classification.finish import Request
from .base import BinaryConfmatState, MulticlassConfmatState, MultilabelConfmatState, pop_zero_division

__all__ = [
    f"{task}{name}"
    for task in ("Binary", "Multiclass", "Multilabel")
    for name in ("StatScores", "Accuracy", "HammingDistance", "Specificity", "NegativePredictiveValue")
]


class BinaryStatBase(BinaryConfmatState):
    """torchmetrics' Binary stat-score signature (``zero_division`` through kwargs)."""

    def __init__(
        self,
        threshold: float = 0.5,
        multidim_average: str = "global",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        zero_division = pop_zero_division(kwargs)
        super().__init__(threshold, multidim_average, ignore_index, validate_args, **kwargs)
        self.zero_division = zero_division


class MulticlassStatBase(MulticlassConfmatState):
    """torchmetrics' Multiclass stat-score signature (``zero_division`` through kwargs)."""

    def __init__(
        self,
        num_classes: Optional[int] = None,
        top_k: int = 1,
        average: Optional[str] = "macro",
        multidim_average: str = "global",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        zero_division = pop_zero_division(kwargs)
        average = clf_update.check_average(average)
        super().__init__(num_classes, top_k, multidim_average, ignore_index, validate_args, **kwargs)
        self.average = average
        self.zero_division = zero_division


class MultilabelStatBase(MultilabelConfmatState):
    """torchmetrics' Multilabel stat-score signature (``zero_division`` through kwargs)."""

    def __init__(
        self,
        num_labels: int,
        threshold: float = 0.5,
        average: Optional[str] = "macro",
        multidim_average: str = "global",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> None:
        zero_division = pop_zero_division(kwargs)
        average = clf_update.check_average(average)
        super().__init__(num_labels, threshold, multidim_average, ignore_index, validate_args, **kwargs)
        self.average = average
        self.zero_division = zero_division


class BinaryStatScores(BinaryStatBase):
    """[tp, fp, tn, fn, support] (int64) of binary predictions; samplewise [N, 5].
    Bad labels raise even with validate_args=False (see the module docstring).

        >>> import torch
        >>> from torchtally.classification import BinaryStatScores
        >>> m = BinaryStatScores()
        >>> m.update(torch.tensor([0.8, 0.3, 0.6, 0.1]), torch.tensor([1, 1, 0, 0])).compute()
        tensor([1, 1, 1, 1, 2])
    """

    higher_is_better = None
    plot_lower_bound = None
    plot_upper_bound = None

    def compute(self) -> Tensor:
        return clf_compute.stat_scores(self._stats(), "micro")


class MulticlassStatScores(MulticlassStatBase):
    """[tp, fp, tn, fn, support] per class ([C, 5], average "none"), summed ("micro", int64),
    or their mean over classes ("macro") / support-weighted mean ("weighted"), float32;
    samplewise: one such result per sample. num_classes is required; bad labels raise even
    with validate_args=False (see the module docstring).

        >>> import torch
        >>> from torchtally.classification import MulticlassStatScores
        >>> m = MulticlassStatScores(3, average=None)
        >>> m.update(torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])).compute()
        tensor([[1, 0, 3, 0, 1],
                [1, 0, 2, 1, 2],
                [1, 1, 2, 0, 1]])
    """

    higher_is_better = None
    plot_lower_bound = None
    plot_upper_bound = None
    plot_legend_name = None

    def compute(self) -> Tensor:
        return clf_compute.stat_scores(self._stats(), self.average)


class MultilabelStatScores(MultilabelStatBase):
    """[tp, fp, tn, fn, support] per label ([L, 5]), summed ("micro") or averaged, as
    MulticlassStatScores. Bad labels raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MultilabelStatScores
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelStatScores(num_labels=3).update(preds, target).compute()
    tensor([0.6667, 0.3333, 0.6667, 0.3333, 1.0000])
    """

    higher_is_better = None
    plot_lower_bound = None
    plot_upper_bound = None
    plot_legend_name = None

    def compute(self) -> Tensor:
        return clf_compute.stat_scores(self._stats(), self.average)


class BinaryAccuracy(BinaryStatBase):
    """(tp + tn) / all. Float preds outside [0, 1] in a batch are logits (thresholded on the
    logit). Bad labels raise even with validate_args=False (see the module docstring).

        >>> import torch
        >>> from torchtally.classification import BinaryAccuracy
        >>> BinaryAccuracy().update(torch.tensor([2.0, -1.0, 0.5]), torch.tensor([1, 0, 0])).compute()
        tensor(0.6667)
    """

    def finish_request(self) -> Request:
        return Request("accuracy", "micro")


class MulticlassAccuracy(MulticlassStatBase):
    """Share of samples whose class is predicted ("micro"), or per-class recall averaged over
    the classes present in target or preds ("macro"), weighted by support ("weighted") or not
    reduced ("none"). ``top_k``: a sample counts as right when its class is among the k
    highest scores (ties: the lower class index ranks first). num_classes is required; bad
    labels raise even with validate_args=False (see the module docstring).

        >>> import torch
        >>> from torchtally.classification import MulticlassAccuracy
        >>> preds = torch.tensor([[0.1, 0.6, 0.3], [0.5, 0.4, 0.1], [0.2, 0.3, 0.5], [0.3, 0.4, 0.3]])
        >>> target = torch.tensor([1, 1, 2, 0])
        >>> MulticlassAccuracy(3, average="micro").update(preds, target).compute()
        tensor(0.5000)
        >>> MulticlassAccuracy(3, average="micro", top_k=2).update(preds, target).compute()
        tensor(1.)
    """

    def finish_request(self) -> Request:
        return Request("accuracy", self.average, top_k=self.top_k)


class MultilabelAccuracy(MultilabelStatBase):
    """Share of correct elements, per label and averaged ("macro", "weighted"), pooled over
    labels ("micro") or per label ("none"). Bad labels raise even with validate_args=False.

        >>> import torch
        >>> from torchtally.classification import MultilabelAccuracy
        >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])  # probabilities (or logits)
        >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
        >>> MultilabelAccuracy(3, average=None).update(preds, target).compute()
        tensor([1., 1., 0.])
    """

    def finish_request(self) -> Request:
        return Request("accuracy", self.average)


class BinaryHammingDistance(BinaryStatBase):
    """Share of wrong predictions, (fp + fn) / all: 1 - BinaryAccuracy.

    >>> import torch
    >>> from torchtally.classification import BinaryHammingDistance
    >>> BinaryHammingDistance().update(torch.tensor([0.9, 0.2, 0.7]), torch.tensor([1, 0, 0])).compute()
    tensor(0.3333)
    """

    higher_is_better = False

    def finish_request(self) -> Request:
        return Request("hamming_distance", "micro")


class MulticlassHammingDistance(MulticlassStatBase):
    """1 - accuracy per class, averaged as MulticlassAccuracy ("micro": the share of wrong samples).

    >>> import torch
    >>> from torchtally.classification import MulticlassHammingDistance
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> MulticlassHammingDistance(num_classes=3).update(preds, target).compute()
    tensor(0.1667)
    """

    higher_is_better = False

    def finish_request(self) -> Request:
        return Request("hamming_distance", self.average, top_k=self.top_k)


class MultilabelHammingDistance(MultilabelStatBase):
    """Share of wrong label decisions, per label and averaged as MultilabelAccuracy.

    >>> import torch
    >>> from torchtally.classification import MultilabelHammingDistance
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelHammingDistance(num_labels=3).update(preds, target).compute()
    tensor(0.3333)
    """

    higher_is_better = False

    def finish_request(self) -> Request:
        return Request("hamming_distance", self.average)


class BinarySpecificity(BinaryStatBase):
    """tn / (tn + fp): the recall of the negative class. Bad labels raise even with
    validate_args=False (see the module docstring).

        >>> import torch
        >>> from torchtally.classification import BinarySpecificity
        >>> BinarySpecificity().update(torch.tensor([1, 1, 0, 0]), torch.tensor([1, 0, 0, 0])).compute()
        tensor(0.6667)
    """

    higher_is_better = None

    def finish_request(self) -> Request:
        return Request("specificity", "micro")


class MulticlassSpecificity(MulticlassStatBase):
    """tn / (tn + fp) per class (one vs rest), averaged as MulticlassAccuracy. num_classes is
    required; bad labels raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MulticlassSpecificity
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> MulticlassSpecificity(num_classes=3).update(preds, target).compute()
    tensor(0.8889)
    """

    higher_is_better = None

    def finish_request(self) -> Request:
        return Request("specificity", self.average, top_k=self.top_k)


class MultilabelSpecificity(MultilabelStatBase):
    """tn / (tn + fp) per label, averaged over labels. Bad labels raise even with validate_args=False.

    >>> import torch
    >>> from torchtally.classification import MultilabelSpecificity
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelSpecificity(num_labels=3).update(preds, target).compute()
    tensor(0.6667)
    """

    higher_is_better = None

    def finish_request(self) -> Request:
        return Request("specificity", self.average)


class BinaryNegativePredictiveValue(BinaryStatBase):
    """tn / (tn + fn): the precision of the negative class (``zero_division`` where nothing is
    predicted negative). Shares the confusion matrix of the other stat-score metrics of the same
    options in a MetricCollection. Bad labels raise even with validate_args=False.

    Differences from torchmetrics: ``zero_division`` (through kwargs) is used, as by the
    functional form; torchmetrics' classes take it and return 0 whatever it is.

        >>> import torch
        >>> from torchtally.classification import BinaryNegativePredictiveValue
        >>> preds, target = torch.tensor([0.2, 0.7, 0.1, 0.4]), torch.tensor([0, 1, 1, 0])
        >>> BinaryNegativePredictiveValue().update(preds, target).compute()
        tensor(0.6667)
    """

    higher_is_better = None  # torchmetrics' attribute

    def finish_request(self) -> Request:
        return Request("negative_predictive_value", "micro", self.zero_division)


class MulticlassNegativePredictiveValue(MulticlassStatBase):
    """tn / (tn + fn) per class (one vs rest), averaged as MulticlassPrecision (``top_k`` > 1:
    "macro" leaves out classes without support). num_classes is required; bad labels raise even
    with validate_args=False. ``zero_division`` is used (torchmetrics' class ignores it).

    >>> import torch
    >>> from torchtally.classification import MulticlassNegativePredictiveValue
    >>> preds, target = torch.tensor([2, 1, 0, 1]), torch.tensor([2, 1, 0, 0])
    >>> MulticlassNegativePredictiveValue(num_classes=3, average=None).update(preds, target).compute()
    tensor([0.6667, 1.0000, 1.0000])
    """

    higher_is_better = None  # torchmetrics' attribute

    def finish_request(self) -> Request:
        return Request("negative_predictive_value", self.average, self.zero_division, top_k=self.top_k)


class MultilabelNegativePredictiveValue(MultilabelStatBase):
    """tn / (tn + fn) per label, averaged over labels (all labels count in "macro"). Bad labels
    raise even with validate_args=False. ``zero_division`` is used (torchmetrics' class ignores it).

    >>> import torch
    >>> from torchtally.classification import MultilabelNegativePredictiveValue
    >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])
    >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
    >>> MultilabelNegativePredictiveValue(num_labels=3).update(preds, target).compute()
    tensor(0.6667)
    """

    higher_is_better = None  # torchmetrics' attribute

    def finish_request(self) -> Request:
        return Request("negative_predictive_value", self.average, self.zero_division)
