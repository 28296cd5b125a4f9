"""torchmetrics' task wrappers, every one: ``Accuracy(task="multiclass", num_classes=5)`` makes
(and returns) a ``MulticlassAccuracy(5, ...)``, as torchmetrics' ``__new__`` does; the curves'
(``AUROC(task=...)``, ...) at the end.

Same names, arguments, defaults (note ``average="micro"`` here where the task classes default
to "macro") and errors as torchmetrics: an unknown task, or a missing ``num_classes`` /
``num_labels`` / ``top_k`` for its task, is a ValueError. The wrapper classes themselves are
never instantiated; their ``update`` / ``compute`` raise, as torchmetrics'.
"""

from typing import Any, Optional

from ..base.metric import Metric
from ..functional.tasks import check_task, check_task_count
from .bases import TaskWrapper
from .confusion_matrix import (
    BinaryCohenKappa,
    BinaryConfusionMatrix,
    BinaryJaccardIndex,
    BinaryMatthewsCorrCoef,
    MulticlassCohenKappa,
    MulticlassConfusionMatrix,
    MulticlassJaccardIndex,
    MulticlassMatthewsCorrCoef,
    MultilabelConfusionMatrix,
    MultilabelJaccardIndex,
    MultilabelMatthewsCorrCoef,
)
from .curves import (
    BinaryAUROC,
    BinaryAveragePrecision,
    BinaryPrecisionRecallCurve,
    BinaryROC,
    MulticlassAUROC,
    MulticlassAveragePrecision,
    MulticlassPrecisionRecallCurve,
    MulticlassROC,
    MultilabelAUROC,
    MultilabelAveragePrecision,
    MultilabelPrecisionRecallCurve,
    MultilabelROC,
)
from .precision_recall import (
    BinaryF1Score,
    BinaryFBetaScore,
    BinaryPrecision,
    BinaryRecall,
    MulticlassF1Score,
    MulticlassFBetaScore,
    MulticlassPrecision,
    MulticlassRecall,
    MultilabelF1Score,
    MultilabelFBetaScore,
    MultilabelPrecision,
    MultilabelRecall,
)
from .stat_scores import (
    BinaryAccuracy,
    BinaryHammingDistance,
    BinarySpecificity,
    BinaryStatScores,
    MulticlassAccuracy,
    MulticlassHammingDistance,
    MulticlassSpecificity,
    MulticlassStatScores,
    MultilabelAccuracy,
    MultilabelHammingDistance,
    MultilabelSpecificity,
    MultilabelStatScores,
)

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
    "AUROC",
    "AveragePrecision",
    "ROC",
    "PrecisionRecallCurve",
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
    MultilabelAccuracy, with the arguments that task takes."""

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
    """The task's Precision (``zero_division`` through kwargs, as torchmetrics)."""

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
    """The task's Recall (``zero_division`` through kwargs, as torchmetrics)."""

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
    """The task's FBetaScore."""

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
    """The task's F1Score."""

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
    """The task's Specificity."""

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
    """The task's HammingDistance."""

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
    """The task's StatScores."""

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
    """The task's ConfusionMatrix."""

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
    """The task's JaccardIndex (``zero_division`` through kwargs, as torchmetrics)."""

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
    """The task's MatthewsCorrCoef."""

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
    """The task's CohenKappa ("binary" or "multiclass": torchmetrics has no multilabel kappa)."""

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


# -- the curves' task wrappers ------------------------------------------------------------------


class AUROC(TaskWrapper):
    """BinaryAUROC, MulticlassAUROC or MultilabelAUROC, by ``task``.

    >>> import torch
    >>> from torchtally.classification import AUROC
    >>> m = AUROC(task="multiclass", num_classes=3)
    >>> type(m).__name__
    'MulticlassAUROC'
    """

    def __new__(
        cls,
        task: str,
        thresholds: Any = None,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = "macro",
        max_fpr: Optional[float] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        kwargs.update(thresholds=thresholds, ignore_index=ignore_index, validate_args=validate_args)
        if task == "binary":
            return BinaryAUROC(max_fpr, **kwargs)
        if task == "multiclass":
            return MulticlassAUROC(check_task_count("num_classes", num_classes), average, **kwargs)
        return MultilabelAUROC(check_task_count("num_labels", num_labels), average, **kwargs)


class AveragePrecision(TaskWrapper):
    """BinaryAveragePrecision, MulticlassAveragePrecision or MultilabelAveragePrecision, by ``task``.

    >>> from torchtally.classification import AveragePrecision
    >>> type(AveragePrecision(task="binary", thresholds=10)).__name__
    'BinaryAveragePrecision'
    """

    def __new__(
        cls,
        task: str,
        thresholds: Any = None,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        average: Optional[str] = "macro",
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        kwargs.update(thresholds=thresholds, ignore_index=ignore_index, validate_args=validate_args)
        if task == "binary":
            return BinaryAveragePrecision(**kwargs)
        if task == "multiclass":
            return MulticlassAveragePrecision(check_task_count("num_classes", num_classes), average, **kwargs)
        return MultilabelAveragePrecision(check_task_count("num_labels", num_labels), average, **kwargs)


class ROC(TaskWrapper):
    """BinaryROC, MulticlassROC or MultilabelROC, by ``task`` (torchmetrics' wrapper takes no ``average``).

    >>> from torchtally.classification import ROC
    >>> type(ROC(task="multilabel", num_labels=4)).__name__
    'MultilabelROC'
    """

    def __new__(
        cls,
        task: str,
        thresholds: Any = None,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        kwargs.update(thresholds=thresholds, ignore_index=ignore_index, validate_args=validate_args)
        if task == "binary":
            return BinaryROC(**kwargs)
        if task == "multiclass":
            return MulticlassROC(check_task_count("num_classes", num_classes), **kwargs)
        return MultilabelROC(check_task_count("num_labels", num_labels), **kwargs)


class PrecisionRecallCurve(TaskWrapper):
    """BinaryPrecisionRecallCurve, MulticlassPrecisionRecallCurve or MultilabelPrecisionRecallCurve, by ``task``.

    >>> from torchtally.classification import PrecisionRecallCurve
    >>> type(PrecisionRecallCurve(task="binary")).__name__
    'BinaryPrecisionRecallCurve'
    """

    def __new__(
        cls,
        task: str,
        thresholds: Any = None,
        num_classes: Optional[int] = None,
        num_labels: Optional[int] = None,
        ignore_index: Optional[int] = None,
        validate_args: bool = True,
        **kwargs: Any,
    ) -> Any:  # the task's metric: not an instance of cls (torchmetrics' task wrappers)
        task = check_task(task)
        kwargs.update(thresholds=thresholds, ignore_index=ignore_index, validate_args=validate_args)
        if task == "binary":
            return BinaryPrecisionRecallCurve(**kwargs)
        if task == "multiclass":
            return MulticlassPrecisionRecallCurve(check_task_count("num_classes", num_classes), **kwargs)
        return MultilabelPrecisionRecallCurve(check_task_count("num_labels", num_labels), **kwargs)
