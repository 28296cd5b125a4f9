"""torchtally's Metric seen as a ``torchmetrics.Metric``, for the code that checks for one.

Lightning's ``self.log("val_acc", self.val_acc)`` accepts a metric object only when
``isinstance(value, torchmetrics.Metric)``; so do ``log_dict`` for each value and Lightning's
search of the module's metric attributes. ``torchmetrics.Metric`` derives from ``abc.ABC``, so
torchtally's Metric class is registered with it as a virtual subclass: ``isinstance`` and
``issubclass`` then say yes, while nothing of torchmetrics is inherited or imported.

When: only once torchmetrics has been imported by someone else (torchtally never imports it),
checked where that costs nothing that matters: when a metric is made or moved (``.to()``, which
Lightning applies to the whole model before it runs any step) and when the Lightning adapter is
imported. Lightning imports torchmetrics itself, so any metric made after ``import lightning``,
or made before it and then given to a Trainer, is registered before the first ``self.log``.

What Lightning reads of a logged metric, and why torchtally's has it with torchmetrics' meaning:
``_forward_cache`` (the value of the last ``forward``: the batch's value, logged with
``on_step=True``; None after ``reset()``; a MetricCollection's forward sets it on each of its
metrics), ``device``, ``to()`` (returns the metric), ``compute()`` (synced over the ranks:
``on_epoch=True`` logs the value over every rank's data, on every rank, and Lightning's
``sync_dist`` is not used for a metric object, as for torchmetrics') and ``reset()`` (called by
Lightning at the end of each epoch). Most of torchmetrics' own containers (its MetricCollection,
Running, ClasswiseWrapper, arithmetic) read torchmetrics' private attributes, which torchtally's
metrics do not have: reading one raises AttributeError saying to use torchtally's
MetricCollection instead (``missing_attribute_error``). Its BootStrapper, MinMaxMetric and
MultioutputWrapper read none and run on torchtally metrics, each copy syncing on its own;
torchtally.wrappers holds the ones that sync as one.
"""

import sys
from abc import ABCMeta
from typing import Any, Optional

# torchmetrics' private attributes that its containers and wrappers read on their members.
TORCHMETRICS_INTERNALS = frozenset(
    {
        "_filter_kwargs",
        "_defaults",
        "_reductions",
        "_reduce_states",
        "_computed",
        "_enable_grad",
        "_is_synced",
        "_should_unsync",
        "_to_sync",
        "_dtype_convert",
        "_update_signature",
        "_fused_update",
    }
)

_metric_class: Optional[type] = None  # torchtally's Metric (declared by base/metric.py when it is defined)
_registered_with: Optional[ABCMeta] = None  # the torchmetrics.Metric class it was registered with


def torchmetrics_metric_class() -> Optional[ABCMeta]:
    """``torchmetrics.Metric`` if torchmetrics is imported (its module defines the class by now),
    else None. Never imports torchmetrics."""
    module = sys.modules.get("torchmetrics.metric")
    cls = getattr(module, "Metric", None) if module is not None else None
    return cls if isinstance(cls, ABCMeta) else None


def declare_metric_class(cls: type) -> None:
    """The class to register: torchtally's Metric (its subclasses follow it)."""
    global _metric_class
    _metric_class = cls


def register_with_torchmetrics() -> bool:
    """Register torchtally's Metric as a virtual subclass of ``torchmetrics.Metric`` if
    torchmetrics is imported; True when it is registered (now or before). Cheap when nothing
    changed: one dict lookup, one attribute read and one comparison."""
    global _registered_with
    tm_metric = torchmetrics_metric_class()
    if tm_metric is None or _metric_class is None:
        return False
    if tm_metric is not _registered_with:  # the first time, or a reloaded torchmetrics
        tm_metric.register(_metric_class)
        _registered_with = tm_metric
    return True


def missing_attribute_error(obj: Any, name: str, error: AttributeError) -> AttributeError:
    """``error`` (an attribute ``name`` that ``obj`` lacks), or, for one of torchmetrics' private
    attributes, an AttributeError that says where it came from and what to use instead."""
    if name not in TORCHMETRICS_INTERNALS:
        return error
    return AttributeError(
        f"'{type(obj).__name__}' object has no attribute '{name}', one of torchmetrics' private attributes, "
        "which torchtally's metrics do not have. Code that reads it is torchmetrics' own (its MetricCollection, "
        "ClasswiseWrapper, Running, arithmetic with a torchmetrics metric ...) or written against its internals: "
        "put torchtally metrics in torchtally.MetricCollection and torchtally's wrappers instead"
    )
