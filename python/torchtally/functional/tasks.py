"""The task argument of torchmetrics' wrappers (``Accuracy(task=...)``, ``auroc(..., task=...)``),
shared by the classification and curve families."""

from typing import Any, Optional, Tuple

TASKS = ("binary", "multiclass", "multilabel")


def check_task(task: Any, allowed: Tuple[str, ...] = TASKS) -> str:
    """'binary' | 'multiclass' | 'multilabel', in any case (as torchmetrics' task enum)."""
    if isinstance(task, str) and task.lower() in allowed:
        return task.lower()
    raise ValueError(f"task: Invalid task {task!r}, expected one of {list(allowed)}")


def check_task_count(name: str, value: Any, task: Optional[str] = None) -> int:
    """num_classes / num_labels / top_k given to a task wrapper: required, an int (torchmetrics'
    rule); the task's metric checks its range."""
    if isinstance(value, bool) or not isinstance(value, int):
        when = f" when task is '{task}'" if task else " for this task"
        raise ValueError(f"{name}: expected an int{when}, got {value!r}")
    return value
