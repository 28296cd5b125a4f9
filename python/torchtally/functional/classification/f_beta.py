"""``fbeta_score``, ``f1_score``, ``binary_fbeta_score``, ``multiclass_fbeta_score``,
``multilabel_fbeta_score``, ``binary_f1_score``, ``multiclass_f1_score``,
``multilabel_f1_score``, at torchmetrics' path torchmetrics.functional.classification.f_beta."""

from typing import Optional

from torch import Tensor

from ..tasks import check_task, check_task_count
from . import compute, update
from .stat_scores import binary_batch_stats, multiclass_batch_stats, multilabel_batch_stats
from .task_dispatch import check_multiclass_counts

__all__ = [
    "fbeta_score",
    "f1_score",
    "binary_fbeta_score",
    "multiclass_fbeta_score",
    "multilabel_fbeta_score",
    "binary_f1_score",
    "multiclass_f1_score",
    "multilabel_f1_score",
]


def fbeta_score(
    preds: Tensor,
    target: Tensor,
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
) -> Tensor:
    task = check_task(task)
    if task == "binary":
        return binary_fbeta_score(
            preds, target, beta, threshold, multidim_average, ignore_index, validate_args, zero_division
        )
    if task == "multiclass":
        check_multiclass_counts(num_classes, top_k, task)
        return multiclass_fbeta_score(
            preds,
            target,
            beta,
            num_classes,
            average,
            top_k,
            multidim_average,
            ignore_index,
            validate_args,
            zero_division,
        )
    check_task_count("num_labels", num_labels, task)
    return multilabel_fbeta_score(
        preds,
        target,
        beta,
        num_labels,
        threshold,
        average,
        multidim_average,
        ignore_index,
        validate_args,
        zero_division,
    )


def f1_score(
    preds: Tensor,
    target: Tensor,
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
) -> Tensor:
    return fbeta_score(
        preds,
        target,
        task,
        1.0,
        threshold,
        num_classes,
        num_labels,
        average,
        multidim_average,
        top_k,
        ignore_index,
        validate_args,
        zero_division,
    )


def binary_fbeta_score(
    preds: Tensor,
    target: Tensor,
    beta: float,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    beta, zero_division = update.check_beta(beta), update.check_zero_division(zero_division)
    stats = binary_batch_stats(preds, target, threshold, multidim_average, ignore_index)
    return compute.fbeta(stats, beta, "micro", zero_division)


def multiclass_fbeta_score(
    preds: Tensor,
    target: Tensor,
    beta: float,
    num_classes: int,
    average: Optional[str] = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    beta, zero_division = update.check_beta(beta), update.check_zero_division(zero_division)
    average = update.check_average(average)
    stats = multiclass_batch_stats(preds, target, num_classes, top_k, multidim_average, ignore_index)
    return compute.fbeta(stats, beta, average, zero_division)


def multilabel_fbeta_score(
    preds: Tensor,
    target: Tensor,
    beta: float,
    num_labels: int,
    threshold: float = 0.5,
    average: Optional[str] = "macro",
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    beta, zero_division = update.check_beta(beta), update.check_zero_division(zero_division)
    average = update.check_average(average)
    stats = multilabel_batch_stats(preds, target, num_labels, threshold, multidim_average, ignore_index)
    return compute.fbeta(stats, beta, average, zero_division)


def binary_f1_score(
    preds: Tensor,
    target: Tensor,
    threshold: float = 0.5,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    return binary_fbeta_score(
        preds, target, 1.0, threshold, multidim_average, ignore_index, validate_args, zero_division
    )


def multiclass_f1_score(
    preds: Tensor,
    target: Tensor,
    num_classes: int,
    average: Optional[str] = "macro",
    top_k: int = 1,
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    return multiclass_fbeta_score(
        preds, target, 1.0, num_classes, average, top_k, multidim_average, ignore_index, validate_args, zero_division
    )


def multilabel_f1_score(
    preds: Tensor,
    target: Tensor,
    num_labels: int,
    threshold: float = 0.5,
    average: Optional[str] = "macro",
    multidim_average: str = "global",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0,
) -> Tensor:
    return multilabel_fbeta_score(
        preds, target, 1.0, num_labels, threshold, average, multidim_average, ignore_index, validate_args, zero_division
    )
