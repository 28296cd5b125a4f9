"""The dispatch of a task form (``accuracy(preds, target, task="multiclass", ...)``) to its
task's function, with torchmetrics' checks: an unknown task, or a missing ``num_classes`` /
``num_labels`` / ``top_k`` for its task, is a ValueError. Each task form passes its three
per-task functions (binary, multiclass, multilabel)."""

from typing import Callable, Optional, Tuple

from torch import Tensor

from ..tasks import check_task, check_task_count

# (binary form, multiclass form, multilabel form) of one metric
TaskForms = Tuple[Callable[..., Tensor], Callable[..., Tensor], Callable[..., Tensor]]


def check_multiclass_counts(num_classes: Optional[int], top_k: Optional[int], task: str) -> None:
    check_task_count("num_classes", num_classes, task)
    check_task_count("top_k", top_k, task)


def precision_or_recall(
    forms: TaskForms,
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
        return forms[0](preds, target, threshold, multidim_average, ignore_index, validate_args, zero_division)
    if task == "multiclass":
        check_multiclass_counts(num_classes, top_k, task)
        return forms[1](
            preds, target, num_classes, average, top_k, multidim_average, ignore_index, validate_args, zero_division
        )
    check_task_count("num_labels", num_labels, task)
    return forms[2](
        preds, target, num_labels, threshold, average, multidim_average, ignore_index, validate_args, zero_division
    )


def stat_family(
    forms: TaskForms,
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
        return forms[0](preds, target, threshold, multidim_average, ignore_index, validate_args)
    if task == "multiclass":
        check_multiclass_counts(num_classes, top_k, task)
        return forms[1](preds, target, num_classes, average, top_k, multidim_average, ignore_index, validate_args)
    check_task_count("num_labels", num_labels, task)
    return forms[2](preds, target, num_labels, threshold, average, multidim_average, ignore_index, validate_args)
