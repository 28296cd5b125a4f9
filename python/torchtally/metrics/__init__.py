"""Metric classes, one file per family (names and options follow torchmetrics; the public faces
are torchtally.classification, torchtally.regression and torchtally.aggregation).

Every class here checks a batch completely before its state changes: a refused update (a
TypeError or ValueError naming the argument) leaves the state exactly as it was, and no
class keeps a reference to an input tensor (a caller may refill one buffer for every batch).
Unsupported dtypes (float8, uint16-uint64, complex, where a class does not read them) raise
TypeError; meta tensors, which hold no values to count, raise ValueError (torchmetrics fails
on some and returns a number from nothing for others, e.g. MeanSquaredError's 0).
``load_state_dict`` checks what it loads the same way (see ``Metric.check_state_invariants``).
"""

import importlib
import warnings
from typing import Any

# Where each public class is imported from; earlier versions also exported every class from
# this package. Those imports still work, with a FutureWarning naming the path to use.
_FACES = {
    "torchtally.classification": (
        "stat_scores",
        "precision_recall",
        "confusion_matrix",
        "curves",
        "tasks",
        "curve_tasks",
        "hinge",
        "calibration",
        "ranking",
        "score_tasks",
        "curve_readouts",
        "curve_operating_points",
        "curve_readout_tasks",
        "exact_match",
        "fairness",
    ),
    "torchtally.regression": ("regression", "error_sums", "divergences", "rank_regression"),
    "torchtally.aggregation": ("aggregation",),
    "torchtally.detection": ("mean_ap", "box_overlap", "panoptic_quality"),
    "torchtally.segmentation": ("segmentation_overlap", "surface_distance"),
    "torchtally.retrieval": ("retrieval_queries", "retrieval_curves"),
    "torchtally.text": ("text_edit", "ngram", "text_ter", "rouge", "squad", "perplexity", "bertscore", "infolm"),
}


def __getattr__(name: str) -> Any:
    for face, modules in _FACES.items():
        for module_name in modules:
            module = importlib.import_module(f"{__name__}.{module_name}")
            if name in module.__all__:
                warnings.warn(
                    f"torchtally.metrics.{name}: import it from {face} (as torchmetrics' path); "
                    "torchtally.metrics no longer exports the classes",
                    FutureWarning,
                    stacklevel=2,
                )
                return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
