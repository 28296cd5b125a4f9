"""torchmetrics' task wrappers, every one: ``Accuracy(task="multiclass", num_classes=5)`` makes
(and returns) a ``MulticlassAccuracy(5, ...)``, as torchmetrics' ``__new__`` does; the curves'
(``AUROC(task=...)``, ...) are in curve_tasks.py.

Same names, arguments, defaults (note ``average="micro"`` here where the task classes default
to "macro") and errors as torchmetrics: an unknown task, or a missing ``num_classes`` /
``num_labels`` / ``top_k`` for its task, is a ValueError. The wrapper classes themselves are
never instantiated; their ``update`` / ``compute`` raise, as torchmetrics'.
"""

from typing import Any, Optional

from ..base.metric import Metric
from ..functional.tasks import check_task, check_task_count
from .base import TaskWrapper
from .confusion_matrix import BinaryCohenKappa, BinaryConfusionMatrix, BinaryJaccardIndex, BinaryMatthewsCorrCoef, MulticlassCohenKappa, MulticlassConfusionMatrix, MulticlassJaccardIndex, MulticlassMatthewsCorrCoef, MultilabelConfusionMatrix, MultilabelJaccardIndex, MultilabelMatthewsCorrCoef
from .precision_recall import BinaryF1Score, BinaryFBetaScore, BinaryPrecision, BinaryRecall, MulticlassF1Score, MulticlassFBetaScore, MulticlassPrecision, MulticlassRecall, MultilabelF1Score, MultilabelFBetaScore, MultilabelPrecision, MultilabelRecall
from .stat_scores import BinaryAccuracy, BinaryHammingDistance, BinaryNegativePredictiveValue, BinarySpecificity, BinaryStatScores, MulticlassAccuracy, MulticlassHammingDistance, MulticlassNegativePredictiveValue, MulticlassSpecificity, MulticlassStatScores, MultilabelAccuracy, MultilabelHammingDistance, MultilabelNegativePredictiveValue, MultilabelSpecificity, MultilabelStatScores

__all__ = [
    "Accuracy",
    "Precision",
    "Recall",
    "F1Score",
    "FBetaScore",
    "Specificity",
    "StatScores",
    "HammingDistance",
    "ConfusionMatrix",
    "JaccardIndex",
    "MatthewsCorrCoef",
    "CohenKappa",
    "NegativePredictiveValue",
]


def _stat_family(
    task: str,
    binary: type,
    multiclass: type,
    multilabel: type,
    threshold: float,
    num_classes: Optional[int],
    num_labels: Optional[int],
    average: Optional[str],
    top_k: Optional[int],
    kwargs: dict,
    lead: tuple = (),
) -> Metric:
    """The task's metric of a stat-score family (Accuracy, Precision, ..., StatScores); ``lead``:
    arguments before the task's own (beta)."""
    task = check_task(task)
    if task == "binary":
        return binary(*lead, threshold, **kwargs)
    if task == "multiclass":
        check_task_count("num_classes", num_classes, task)
        check_task_count("top_k", top_k, task)
        return multiclass(*lead, num_classes, top_k, average, **kwargs)
    check_task_count("num_labels", num_labels, task)
    return multilabel(*lead, num_labels, threshold, average, **kwargs)


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
        return _stat_family(
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


class Precision(TaskWrapper):
    """The task's Precision (``zero_division`` through kwargs, as torchmetrics).

    >>> import torch
    >>> from torchtally.classification import Precision
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> Precision(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.7500)
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = "micro",
        multidim_average: Optional[str] = "global",
        top_k: Optional[int] = 1,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(multidim_average=multidim_average, ignore_index=ignore_index, validate_args=validate_args)
        return _stat_family(
            task,
            BinaryPrecision,
            MulticlassPrecision,
            MultilabelPrecision,
            threshold,
            num_classes,
            num_labels,
            average,
            top_k,
            kwargs,
        )


class Recall(TaskWrapper):
    """The task's Recall (``zero_division`` through kwargs, as torchmetrics).

    >>> import torch
    >>> from torchtally.classification import Recall
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> Recall(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.7500)
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = "micro",
        multidim_average: Optional[str] = "global",
        top_k: Optional[int] = 1,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(multidim_average=multidim_average, ignore_index=ignore_index, validate_args=validate_args)
        return _stat_family(
            task,
            BinaryRecall,
            MulticlassRecall,
            MultilabelRecall,
            threshold,
            num_classes,
            num_labels,
            average,
            top_k,
            kwargs,
        )


class FBetaScore(TaskWrapper):
    """The task's FBetaScore.

    >>> import torch
    >>> from torchtally.classification import FBetaScore
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> FBetaScore(task="multiclass", beta=2.0, num_classes=3).update(preds, target).compute()
    tensor(0.7500)
    """

    def __new__(
        cls,
        task: str,
        beta: float = 1.0,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = "micro",
        multidim_average: Optional[str] = "global",
        top_k: Optional[int] = 1,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            zero_division=zero_division,
        )
        return _stat_family(
            task,
            BinaryFBetaScore,
            MulticlassFBetaScore,
            MultilabelFBetaScore,
            threshold,
            num_classes,
            num_labels,
            average,
            top_k,
            kwargs,
            lead=(beta,),
        )


class F1Score(TaskWrapper):
    """The task's F1Score.

    >>> import torch
    >>> from torchtally.classification import F1Score
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> F1Score(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.7500)
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = "micro",
        multidim_average: Optional[str] = "global",
        top_k: Optional[int] = 1,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        zero_division: float = 0,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(
            multidim_average=multidim_average,
            ignore_index=ignore_index,
            validate_args=validate_args,
            zero_division=zero_division,
        )
        return _stat_family(
            task,
            BinaryF1Score,
            MulticlassF1Score,
            MultilabelF1Score,
            threshold,
            num_classes,
            num_labels,
            average,
            top_k,
            kwargs,
        )


class Specificity(TaskWrapper):
    """The task's Specificity.

    >>> import torch
    >>> from torchtally.classification import Specificity
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> Specificity(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.8750)
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = "micro",
        multidim_average: Optional[str] = "global",
        top_k: Optional[int] = 1,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(multidim_average=multidim_average, ignore_index=ignore_index, validate_args=validate_args)
        return _stat_family(
            task,
            BinarySpecificity,
            MulticlassSpecificity,
            MultilabelSpecificity,
            threshold,
            num_classes,
            num_labels,
            average,
            top_k,
            kwargs,
        )


class HammingDistance(TaskWrapper):
    """The task's HammingDistance.

    >>> import torch
    >>> from torchtally.classification import HammingDistance
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> HammingDistance(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.2500)
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
        return _stat_family(
            task,
            BinaryHammingDistance,
            MulticlassHammingDistance,
            MultilabelHammingDistance,
            threshold,
            num_classes,
            num_labels,
            average,
            top_k,
            kwargs,
        )


class StatScores(TaskWrapper):
    """The task's StatScores.

    >>> import torch
    >>> from torchtally.classification import StatScores
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> StatScores(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor([3, 1, 7, 1, 4])
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = "micro",
        multidim_average: Optional[str] = "global",
        top_k: Optional[int] = 1,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(multidim_average=multidim_average, ignore_index=ignore_index, validate_args=validate_args)
        return _stat_family(
            task,
            BinaryStatScores,
            MulticlassStatScores,
            MultilabelStatScores,
            threshold,
            num_classes,
            num_labels,
            average,
            top_k,
            kwargs,
        )


class ConfusionMatrix(TaskWrapper):
    """The task's ConfusionMatrix.

    >>> import torch
    >>> from torchtally.classification import ConfusionMatrix
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> ConfusionMatrix(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor([[1, 0, 0],
            [0, 1, 1],
            [0, 0, 1]])
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        normalize: Optional[str] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(normalize=normalize, ignore_index=ignore_index, validate_args=validate_args)
        task = check_task(task)
        if task == "binary":
            return BinaryConfusionMatrix(threshold, **kwargs)
        if task == "multiclass":
            return MulticlassConfusionMatrix(check_task_count("num_classes", num_classes, task), **kwargs)
        return MultilabelConfusionMatrix(check_task_count("num_labels", num_labels, task), threshold, **kwargs)


class JaccardIndex(TaskWrapper):
    """The task's JaccardIndex (``zero_division`` through kwargs, as torchmetrics).

    >>> import torch
    >>> from torchtally.classification import JaccardIndex
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> JaccardIndex(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.6667)
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = "macro",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(ignore_index=ignore_index, validate_args=validate_args)
        task = check_task(task)
        if task == "binary":
            return BinaryJaccardIndex(threshold, **kwargs)
        if task == "multiclass":
            return MulticlassJaccardIndex(check_task_count("num_classes", num_classes, task), average, **kwargs)
        return MultilabelJaccardIndex(check_task_count("num_labels", num_labels, task), threshold, average, **kwargs)


class MatthewsCorrCoef(TaskWrapper):
    """The task's MatthewsCorrCoef.

    >>> import torch
    >>> from torchtally.classification import MatthewsCorrCoef
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> MatthewsCorrCoef(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.7000)
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(ignore_index=ignore_index, validate_args=validate_args)
        task = check_task(task)
        if task == "binary":
            return BinaryMatthewsCorrCoef(threshold, **kwargs)
        if task == "multiclass":
            return MulticlassMatthewsCorrCoef(check_task_count("num_classes", num_classes, task), **kwargs)
        return MultilabelMatthewsCorrCoef(check_task_count("num_labels", num_labels, task), threshold, **kwargs)


class CohenKappa(TaskWrapper):
    """The task's CohenKappa ("binary" or "multiclass": torchmetrics has no multilabel kappa).

    >>> import torch
    >>> from torchtally.classification import CohenKappa
    >>> preds, target = torch.tensor([0, 2, 1, 2]), torch.tensor([0, 1, 1, 2])
    >>> CohenKappa(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.6364)
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        weights: Optional[str] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(weights=weights, ignore_index=ignore_index, validate_args=validate_args)
        task = check_task(task, ("binary", "multiclass"))
        if task == "binary":
            return BinaryCohenKappa(threshold, **kwargs)
        return MulticlassCohenKappa(check_task_count("num_classes", num_classes, task), **kwargs)


class NegativePredictiveValue(TaskWrapper):
    """The task's NegativePredictiveValue (``zero_division`` through kwargs).

    >>> import torch
    >>> from torchtally.classification import NegativePredictiveValue
    >>> preds, target = torch.tensor([2, 0, 2, 1]), torch.tensor([1, 1, 2, 0])
    >>> NegativePredictiveValue(task="multiclass", num_classes=3).update(preds, target).compute()
    tensor(0.6250)
    """

    def __new__(
        cls,
        task: str,
        threshold: float = 0.5,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = "micro",
        multidim_average: Optional[str] = "global",
        top_k: Optional[int] = 1,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        kwargs.update(multidim_average=multidim_average, ignore_index=ignore_index, validate_args=validate_args)
        return _stat_family(
            task,
            BinaryNegativePredictiveValue,
            MulticlassNegativePredictiveValue,
            MultilabelNegativePredictiveValue,
            threshold,
            num_classes,
            num_labels,
            average,
            top_k,
            kwargs,
        )
