"""torchmetrics' task forms of the functional classification metrics: ``accuracy(preds, target,
task="multiclass", num_classes=5)`` calls ``multiclass_accuracy(preds, target, 5, ...)``.

Same names, arguments, defaults (note ``average="micro"`` here, "macro" in the task functions)
and errors as torchmetrics.functional.classification: an unknown task, or a missing
``num_classes`` / ``num_labels`` / ``top_k`` for its task, is a ValueError.
"""

from typing import Optional

from torch import Tensor

from ..tasks import check_task, check_task_count
from . import stat_scores as forms

__all__ = [
    "accuracy",
    "precision",
    "recall",
    "f1_score",
    "fbeta_score",
    "specificity",
    "stat_scores",
    "hamming_distance",
    "confusion_matrix",
    "jaccard_index",
    "matthews_corrcoef",
    "cohen_kappa",
]


def _num_classes(num_classes: Optional[int], top_k: Optional[int], task: str) -> None:
    check_task_count("num_classes", num_classes, task)
    check_task_count("top_k", top_k, task)


def accuracy(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    average: Optional[str] = "micro",
    multidim_average: str = "global",
    top_k: Optional[int] = 1,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    task = check_task(task)
    if task == "binary":
        return forms.binary_accuracy(preds, target, threshold, multidim_average, ignore_index, validate_args)
    if task == "multiclass":
        _num_classes(num_classes, top_k, task)
        return forms.multiclass_accuracy(
            preds, target, num_classes, average, top_k, multidim_average, ignore_index, validate_args
        )
    check_task_count("num_labels", num_labels, task)
    return forms.multilabel_accuracy(
        preds, target, num_labels, threshold, average, multidim_average, ignore_index, validate_args
    )


def _precision_or_recall(
    kind: str,
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float,
    num_classes: Optional[int],
    num_labels: Optional[int],
    average: Optional[str],
    multidim_average: str,
    top_k: Optional[int],
    ignore_index: Optional[int],
    validate_args: bool,
    zero_division: float,
) -> Tensor:
    task = check_task(task)
    if task == "binary":
        fn = getattr(forms, f"binary_{kind}")
        return fn(preds, target, threshold, multidim_average, ignore_index, validate_args, zero_division)
    if task == "multiclass":
        _num_classes(num_classes, top_k, task)
        fn = getattr(forms, f"multiclass_{kind}")
        return fn(
            preds, target, num_classes, average, top_k, multidim_average, ignore_index, validate_args, zero_division
        )
    check_task_count("num_labels", num_labels, task)
    fn = getattr(forms, f"multilabel_{kind}")
    return fn(
        preds, target, num_labels, threshold, average, multidim_average, ignore_index, validate_args, zero_division
    )


def precision(
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
    return _precision_or_recall(
        "precision",
        preds,
        target,
        task,
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


def recall(
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
    return _precision_or_recall(
        "recall",
        preds,
        target,
        task,
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
        return forms.binary_fbeta_score(
            preds, target, beta, threshold, multidim_average, ignore_index, validate_args, zero_division
        )
    if task == "multiclass":
        _num_classes(num_classes, top_k, task)
        return forms.multiclass_fbeta_score(
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
    return forms.multilabel_fbeta_score(
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


def _stat_family(
    kind: str,
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float,
    num_classes: Optional[int],
    num_labels: Optional[int],
    average: Optional[str],
    multidim_average: str,
    top_k: Optional[int],
    ignore_index: Optional[int],
    validate_args: bool,
) -> Tensor:
    task = check_task(task)
    if task == "binary":
        return getattr(forms, f"binary_{kind}")(preds, target, threshold, multidim_average, ignore_index, validate_args)
    if task == "multiclass":
        _num_classes(num_classes, top_k, task)
        return getattr(forms, f"multiclass_{kind}")(
            preds, target, num_classes, average, top_k, multidim_average, ignore_index, validate_args
        )
    check_task_count("num_labels", num_labels, task)
    return getattr(forms, f"multilabel_{kind}")(
        preds, target, num_labels, threshold, average, multidim_average, ignore_index, validate_args
    )


def specificity(
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
) -> Tensor:
    return _stat_family(
        "specificity",
        preds,
        target,
        task,
        threshold,
        num_classes,
        num_labels,
        average,
        multidim_average,
        top_k,
        ignore_index,
        validate_args,
    )


def hamming_distance(
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
) -> Tensor:
    return _stat_family(
        "hamming_distance",
        preds,
        target,
        task,
        threshold,
        num_classes,
        num_labels,
        average,
        multidim_average,
        top_k,
        ignore_index,
        validate_args,
    )


def stat_scores(
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
) -> Tensor:
    return _stat_family(
        "stat_scores",
        preds,
        target,
        task,
        threshold,
        num_classes,
        num_labels,
        average,
        multidim_average,
        top_k,
        ignore_index,
        validate_args,
    )


def confusion_matrix(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    normalize: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    task = check_task(task)
    if task == "binary":
        return forms.binary_confusion_matrix(preds, target, threshold, normalize, ignore_index, validate_args)
    if task == "multiclass":
        check_task_count("num_classes", num_classes, task)
        return forms.multiclass_confusion_matrix(preds, target, num_classes, normalize, ignore_index, validate_args)
    check_task_count("num_labels", num_labels, task)
    return forms.multilabel_confusion_matrix(
        preds, target, num_labels, threshold, normalize, ignore_index, validate_args
    )


def jaccard_index(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    average: Optional[str] = "macro",
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
    zero_division: float = 0.0,
) -> Tensor:
    task = check_task(task)
    if task == "binary":
        return forms.binary_jaccard_index(preds, target, threshold, ignore_index, validate_args, zero_division)
    if task == "multiclass":
        check_task_count("num_classes", num_classes, task)
        return forms.multiclass_jaccard_index(
            preds, target, num_classes, average, ignore_index, validate_args, zero_division
        )
    check_task_count("num_labels", num_labels, task)
    return forms.multilabel_jaccard_index(
        preds, target, num_labels, threshold, average, ignore_index, validate_args, zero_division
    )


def matthews_corrcoef(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: Optional[int] = None,
    num_labels: Optional[int] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    task = check_task(task)
    if task == "binary":
        return forms.binary_matthews_corrcoef(preds, target, threshold, ignore_index, validate_args)
    if task == "multiclass":
        check_task_count("num_classes", num_classes, task)
        return forms.multiclass_matthews_corrcoef(preds, target, num_classes, ignore_index, validate_args)
    check_task_count("num_labels", num_labels, task)
    return forms.multilabel_matthews_corrcoef(preds, target, num_labels, threshold, ignore_index, validate_args)


def cohen_kappa(
    preds: Tensor,
    target: Tensor,
    task: str,
    threshold: float = 0.5,
    num_classes: Optional[int] = None,
    weights: Optional[str] = None,
    ignore_index: Optional[int] = None,
    validate_args: bool = True,
) -> Tensor:
    task = check_task(task, ("binary", "multiclass"))
    if task == "binary":
        return forms.binary_cohen_kappa(preds, target, threshold, weights, ignore_index, validate_args)
    check_task_count("num_classes", num_classes, task)
    return forms.multiclass_cohen_kappa(preds, target, num_classes, weights, ignore_index, validate_args)
