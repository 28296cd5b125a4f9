"""torchmetrics' public tree, read from the installed package: every public module of the
families torchtally covers, the metric classes and functional forms each defines or exports,
and the top level's names. The conformance test (tests/test_torchmetrics_tree.py) checks that
each resolves at the same path in torchtally."""

import importlib
import inspect
import pkgutil
import warnings
from types import ModuleType
from typing import Dict, List, Set

# torchmetrics' subpackages torchtally covers (its functional/<family> too, where one exists).
FAMILIES = ("classification", "regression", "aggregation", "detection", "segmentation", "retrieval")
FAMILIES += ("text", "image", "wrappers", "nominal", "clustering", "shape", "multimodal", "audio", "video")


def _import(name: str) -> ModuleType:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return importlib.import_module(name)


def public_modules() -> List[str]:
    """Every public module (no underscore in its path) of the covered families, torchmetrics'
    dotted names."""
    found: List[str] = []

    def walk(name: str) -> None:
        try:
            module = _import(name)
        except ImportError:  # torchmetrics.functional.aggregation / .wrappers do not exist
            return
        found.append(name)
        for info in pkgutil.iter_modules(getattr(module, "__path__", [])):
            if not info.name.startswith("_"):
                walk(f"{name}.{info.name}")

    for family in FAMILIES:
        walk(f"torchmetrics.{family}")
        walk(f"torchmetrics.functional.{family}")
    return found


def _is_metric_or_form(module_name: str, obj: object) -> bool:
    from torchmetrics import Metric

    if inspect.isclass(obj):
        return issubclass(obj, Metric)
    # a functional form: a public function of torchmetrics.functional that its family exports
    if not inspect.isfunction(obj) or ".functional." not in module_name:
        return False
    family = module_name.split(".")[2]
    return getattr(_import(f"torchmetrics.functional.{family}"), obj.__name__, None) is obj


def names_of(module_name: str) -> Set[str]:
    """The metric classes and functional forms `module_name` defines, and every name in its
    ``__all__``."""
    module = _import(module_name)
    names = set(getattr(module, "__all__", ()))
    for name, obj in vars(module).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module_name:
            continue
        if _is_metric_or_form(module_name, obj):
            names.add(name)
    return names


def tree() -> Dict[str, Set[str]]:
    """torchmetrics module path -> the names that must resolve there."""
    out = {name: names_of(name) for name in public_modules()}
    out["torchmetrics"] = set(_import("torchmetrics").__all__)
    return out
