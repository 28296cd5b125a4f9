"""``Accuracy``, ``BinaryAccuracy``, ``MulticlassAccuracy``, ``MultilabelAccuracy``
(torchmetrics.classification.accuracy's names). The task's metric of a stat-score family
(Accuracy, Precision, ..., StatScores)."""

from typing import Any, Optional

from ..functional.classification.finish import Request
from .base import TaskWrapper, stat_family
from .stat_scores import BinaryStatBase, MulticlassStatBase, MultilabelStatBase

__all__ = ["Accuracy", "BinaryAccuracy", "MulticlassAccuracy", "MultilabelAccuracy"]


class Accuracy(TaskWrapper):
    """``task`` "binary" -> BinaryAccuracy, "multiclass" -> MulticlassAccuracy, "multilabel" ->
    MultilabelAccuracy, with the arguments that task takes.

    >>> import torch
    >>> from torchtally.classification import Accuracy
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> Accuracy(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.7500)
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = "micro",
        multidim_average: str = "global",
        top_k: Optional[int] = 1,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(multidim_average=multidim_average, ignore_index=ignore_index, validate_args=validate_args)
        return stat_family(
            task,
            BinaryAccuracy,
            MulticlassAccuracy,
            MultilabelAccuracy,
            threshold,
            num_classes,
            num_labels,
            average,
            top_k,
            kwargs,
        )


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
