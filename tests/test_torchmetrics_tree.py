"""Conformance: torchmetrics' public tree resolves in torchtally at the same paths.

Read from the installed torchmetrics (tests/support/torchmetrics_tree.py): every public module
of the families torchtally covers (``torchmetrics.classification.accuracy``,
``torchmetrics.functional.segmentation.dice``, ...), every metric class and functional form
each defines or exports, every top-level name, and the base-class helpers torchmetrics
documents for writing a metric. When torchmetrics grows, this test names what torchtally lacks.
"""

import importlib
import warnings

import pytest
from support.torchmetrics_tree import tree

pytest.importorskip("torchmetrics")

# What torchtally does not have yet, each with the reason; nothing else may be missing.
MISSING_FAMILIES: set = set()
# The base-class helpers torchmetrics documents for writing a metric.
HELPERS = {
    "torchmetrics.metric": {"Metric"},
    "torchmetrics.collections": {"MetricCollection"},
    "torchmetrics.utilities": {"dim_zero_cat", "dim_zero_sum", "dim_zero_mean", "dim_zero_max", "dim_zero_min"},
    "torchmetrics.utilities.data": {"dim_zero_cat", "dim_zero_sum", "dim_zero_mean", "dim_zero_max", "dim_zero_min"},
    "torchmetrics.utilities.plot": {"_AX_TYPE", "_PLOT_OUT_TYPE"},
}
TREE = tree()


def _unresolved(paths: dict) -> list:
    missing = []
    for module_name, names in sorted(paths.items()):
        ours = module_name.replace("torchmetrics", "torchtally", 1)
        if module_name in MISSING_FAMILIES:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                module = importlib.import_module(ours)
        except ImportError:
            missing.append(module_name)
            continue
        missing += [
            f"{module_name}.{name}"
            for name in sorted(names)
            if not hasattr(module, name) and f"{module_name}.{name}" not in MISSING_FAMILIES
        ]
    return missing


def test_the_walk_sees_torchmetrics_whole_tree():
    # a walk that silently found nothing would pass below: it sees the families' hundreds of paths
    assert len(TREE) > 200
    assert "torchmetrics.classification.accuracy" in TREE
    assert {"BinaryAccuracy", "MulticlassAccuracy", "Accuracy"} <= TREE["torchmetrics.classification.accuracy"]
    assert "dice_score" in TREE["torchmetrics.functional.segmentation.dice"]
    assert "MeanAveragePrecision" in TREE["torchmetrics.detection.mean_ap"]
    assert sum(len(names) for names in TREE.values()) > 700


def test_every_public_path_of_the_covered_families_resolves():
    assert _unresolved(TREE) == []


def test_the_helpers_for_writing_a_metric_resolve():
    assert _unresolved(HELPERS) == []


def test_classes_live_in_torchmetrics_file():
    """A class is defined in the file torchmetrics defines it in (not only re-exported there)."""
    moved = []
    for module_name, names in TREE.items():
        if module_name.count(".") < 2 or ".functional." in module_name or module_name in MISSING_FAMILIES:
            continue
        ours = importlib.import_module(module_name.replace("torchmetrics", "torchtally", 1))
        for name in names:
            theirs = getattr(importlib.import_module(module_name), name)
            obj = getattr(ours, name, None)
            if obj is not None and getattr(theirs, "__module__", None) == module_name:
                if obj.__module__ != ours.__name__:
                    moved.append(f"{name}: {obj.__module__}, torchmetrics' {module_name}")
    assert moved == []


def test_the_exceptions_are_still_missing():
    """An exception that torchtally has since gained comes off the list."""
    gained = []
    for path in MISSING_FAMILIES:
        module_name, _, name = path.rpartition(".")
        ours = module_name.replace("torchmetrics", "torchtally", 1)
        try:
            if hasattr(importlib.import_module(ours), name):
                gained.append(path)
        except ImportError:
            pass
    assert gained == []
