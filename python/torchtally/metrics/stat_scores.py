"""StatScores, Accuracy and Specificity: binary, multiclass, multilabel (state: the confusion matrix)."""
from typing import Any, Optional

from torch import Tensor

from ..functional import _classification_inputs as _in
from ..functional import _classification_reduce as _r
from ._classification_state import BinaryConfmatState, MulticlassConfmatState, MultilabelConfmatState


class BinaryStatScores(BinaryConfmatState):
    """[tp, fp, tn, fn, support] (int64) of binary predictions.

        >>> import torch
        >>> from torchtally.metrics import BinaryStatScores
        >>> m = BinaryStatScores()
        >>> m.update(torch.tensor([0.8, 0.3, 0.6, 0.1]), torch.tensor([1, 1, 0, 0])).compute()
        tensor([1, 1, 1, 1, 2])
    """

    def compute(self) -> Tensor:
        return _r.stat_scores(self._stats(), "micro")


class MulticlassStatScores(MulticlassConfmatState):
    """[tp, fp, tn, fn, support] per class ([C, 5], average "none"), summed ("micro", int64),
    or their mean over classes ("macro") / support-weighted mean ("weighted"), float32.

        >>> import torch
        >>> from torchtally.metrics import MulticlassStatScores
        >>> m = MulticlassStatScores(3, average=None)
        >>> m.update(torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])).compute()
        tensor([[1, 0, 3, 0, 1],
                [1, 0, 2, 1, 2],
                [1, 1, 2, 0, 1]])
    """

    def __init__(self, num_classes: int, *, average: Optional[str] = "macro", ignore_index: Optional[int] = None,
                 **kwargs: Any) -> None:
        super().__init__(num_classes, ignore_index=ignore_index, **kwargs)
        self.average = _in.check_average(average)

    def compute(self) -> Tensor:
        return _r.stat_scores(self._stats(), self.average)


class MultilabelStatScores(MultilabelConfmatState):
    """[tp, fp, tn, fn, support] per label ([L, 5]), summed ("micro") or averaged, as MulticlassStatScores."""

    def __init__(self, num_labels: int, *, threshold: float = 0.5, average: Optional[str] = "macro",
                 ignore_index: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(num_labels, threshold=threshold, ignore_index=ignore_index, **kwargs)
        self.average = _in.check_average(average)

    def compute(self) -> Tensor:
        return _r.stat_scores(self._stats(), self.average)


class BinaryAccuracy(BinaryConfmatState):
    """(tp + tn) / all. Float preds outside [0, 1] in a batch are logits (thresholded on the logit).

        >>> import torch
        >>> from torchtally.metrics import BinaryAccuracy
        >>> BinaryAccuracy().update(torch.tensor([2.0, -1.0, 0.5]), torch.tensor([1, 0, 0])).compute()
        tensor(0.6667)
    """

    def compute(self) -> Tensor:
        return _r.accuracy(self._stats(), "micro")


class MulticlassAccuracy(MulticlassConfmatState):
    """Share of samples whose class is predicted ("micro"), or per-class recall averaged over
    the classes present in target or preds ("macro"), weighted by support ("weighted") or not
    reduced ("none"). ``top_k``: a sample counts as right when its class is among the k
    highest scores (ties: the lower class index ranks first).

        >>> import torch
        >>> from torchtally.metrics import MulticlassAccuracy
        >>> preds = torch.tensor([[0.1, 0.6, 0.3], [0.5, 0.4, 0.1], [0.2, 0.3, 0.5], [0.3, 0.4, 0.3]])
        >>> target = torch.tensor([1, 1, 2, 0])
        >>> MulticlassAccuracy(3, average="micro").update(preds, target).compute()
        tensor(0.5000)
        >>> MulticlassAccuracy(3, average="micro", top_k=2).update(preds, target).compute()
        tensor(1.)
    """

    _top_k_ok = True

    def __init__(self, num_classes: int, *, top_k: int = 1, average: Optional[str] = "macro",
                 ignore_index: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(num_classes, top_k=top_k, ignore_index=ignore_index, **kwargs)
        self.average = _in.check_average(average)

    def compute(self) -> Tensor:
        return _r.accuracy(self._stats(), self.average)


class MultilabelAccuracy(MultilabelConfmatState):
    """Share of correct elements, per label and averaged ("macro", "weighted"), pooled over
    labels ("micro") or per label ("none").

        >>> import torch
        >>> from torchtally.metrics import MultilabelAccuracy
        >>> preds = torch.tensor([[0.9, 0.2, 0.7], [0.1, 0.6, 0.4]])  # probabilities (or logits)
        >>> target = torch.tensor([[1, 0, 0], [0, 1, 1]])
        >>> MultilabelAccuracy(3, average=None).update(preds, target).compute()
        tensor([1., 1., 0.])
    """

    def __init__(self, num_labels: int, *, threshold: float = 0.5, average: Optional[str] = "macro",
                 ignore_index: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(num_labels, threshold=threshold, ignore_index=ignore_index, **kwargs)
        self.average = _in.check_average(average)

    def compute(self) -> Tensor:
        return _r.accuracy(self._stats(), self.average)


class BinarySpecificity(BinaryConfmatState):
    """tn / (tn + fp): the recall of the negative class.

        >>> import torch
        >>> from torchtally.metrics import BinarySpecificity
        >>> BinarySpecificity().update(torch.tensor([1, 1, 0, 0]), torch.tensor([1, 0, 0, 0])).compute()
        tensor(0.6667)
    """

    def compute(self) -> Tensor:
        return _r.specificity(self._stats(), "micro")


class MulticlassSpecificity(MulticlassConfmatState):
    """tn / (tn + fp) per class (one vs rest), averaged as MulticlassAccuracy."""

    def __init__(self, num_classes: int, *, average: Optional[str] = "macro", ignore_index: Optional[int] = None,
                 **kwargs: Any) -> None:
        super().__init__(num_classes, ignore_index=ignore_index, **kwargs)
        self.average = _in.check_average(average)

    def compute(self) -> Tensor:
        return _r.specificity(self._stats(), self.average)


class MultilabelSpecificity(MultilabelConfmatState):
    """tn / (tn + fp) per label, averaged over labels."""

    def __init__(self, num_labels: int, *, threshold: float = 0.5, average: Optional[str] = "macro",
                 ignore_index: Optional[int] = None, **kwargs: Any) -> None:
        super().__init__(num_labels, threshold=threshold, ignore_index=ignore_index, **kwargs)
        self.average = _in.check_average(average)

    def compute(self) -> Tensor:
        return _r.specificity(self._stats(), self.average)
