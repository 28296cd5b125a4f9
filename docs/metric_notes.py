"""What the metric pages say about arguments that many metrics share, about the inputs of
``update`` per input family, where a class's own docstring does not say it (what ``compute``
returns: docs/compute_results.py). Read by docs/metric_facts.py; plain facts about torchtally's API.
"""

from typing import Dict, List, Tuple

# Constructor arguments shared by many metrics: what each does (``argument``, or
# ``<class or stem>.<argument>`` for a class's own meaning).
ARGUMENTS: Dict[str, str] = {
    "num_classes": "number of classes C: the confusion matrix is C x C (required)",
    "num_labels": "number of labels L: one binary problem per label (required)",
    "num_groups": "number of groups in ``groups`` (labels 0 .. num_groups - 1)",
    "threshold": "probabilities (or sigmoid of logits) at or above it count as the positive class",
    "average": '"micro" pools the counts of every class, "macro" averages per-class values, '
    '"weighted" weights them by support, "none" or None keeps one value per class',
    "multidim_average": '"global" pools every extra dimension; "samplewise" gives one value per sample',
    "top_k": "a sample counts as right when its class is among the k highest scores",
    "ignore_index": "target value whose elements are left out of every count",
    "validate_args": "accepted for torchmetrics' signature; the inputs are always checked",
    "thresholds": "None: exact curve over every distinct score (cat state); an int: that many evenly "
    "spaced thresholds in [0, 1]; a list or tensor: those thresholds (non-decreasing); binned forms keep O(T) state",
    "normalize": 'None, "true", "pred" or "all": what each row or column of the matrix is divided by',
    "beta": "weight of recall against precision in the F-beta score",
    "weights": 'None, "linear" or "quadratic": the disagreement weights of the kappa',
    "max_fpr": "if given, the standardised partial AUC up to this false positive rate",
    "n_bins": "number of equal-width confidence bins",
    "norm": '"l1" (expected calibration error), "l2" or "max" over the bins',
    # "<class or stem>.<argument>": where one name means different things in different classes
    "MeanSquaredError.squared": "True: the mean squared error; False: its square root (RMSE)",
    "HingeLoss.squared": "average the squared hinge losses",
    "multiclass_mode": '"crammer-singer" (one margin per sample) or "one-vs-all" (one per class)',
    "min_recall": "smallest recall a threshold must reach",
    "min_precision": "smallest precision a threshold must reach",
    "min_sensitivity": "smallest sensitivity a threshold must reach",
    "min_specificity": "smallest specificity a threshold must reach",
    "fpr_range": "(low, high) range of false positive rates the log-AUC is taken over",
    "num_outputs": "number of regression outputs (columns of preds and target); one value per output",
    "multioutput": '"uniform_average", "raw_values" or "variance_weighted": how outputs are combined',
    "adjusted": "number of regressors k of the adjusted R2 (0: plain R2)",
    "reduction": '"mean", "sum" or "none" (or None): how per-sample values are combined',
    "nan_strategy": '"error", "warn", "ignore", "disable" or a float that replaces NaN values',
    "window": "number of most recent updates the running value covers",
    "data_range": "value range of the data (a float or (min, max)); None: taken from the target",
    "p": "order of the norm",
    "eps": "small constant guarding a division",
    "zero_mean": "subtract the mean of each signal first",
    "empty_target_action": '"neg", "pos", "skip" or "error": what a query without a relevant document scores',
    "aggregation": '"mean", "median", "min", "max" or a callable: how per-query scores are combined',
    "box_format": '"xyxy", "xywh" or "cxcywh": how the 4 numbers of a box are read',
    "iou_thresholds": "IoU thresholds a match is counted at; None: COCO's 0.5, 0.55, ..., 0.95",
    "rec_thresholds": "recall points the precision is interpolated at; None: COCO's 101 points 0, 0.01, ..., 1",
    "max_detection_thresholds": "detections per image kept, highest scores first; None: COCO's [1, 10, 100]",
    "class_metrics": "also report the values per class",
    "kwargs": "Metric keywords: ``sync_on_compute``, ``process_group``, ``sync_timeout``, "
    "``recipient_rank``, ``device`` and torchmetrics' ``compute_on_cpu``, ``dist_sync_on_step``, "
    "``dist_sync_fn``, ``distributed_available_fn``, ``compute_with_cache``",
}

# The inputs of update, per family of the class name: (argument, what it is).
_BINARY = [
    ("preds", "[N, ...] probabilities, logits (sigmoid applied when outside [0, 1]) or 0/1 labels"),
    ("target", "[N, ...] 0/1 integers (or 0./1. floats) of the same shape"),
]
_MULTICLASS = [
    ("preds", "[N, C, ...] scores (probabilities or logits; argmax or top-k taken) or [N, ...] class indices"),
    ("target", "[N, ...] class indices in [0, C) (or ``ignore_index``)"),
]
_MULTILABEL = [
    ("preds", "[N, L, ...] probabilities, logits or 0/1 labels, one column per label"),
    ("target", "[N, L, ...] 0/1 integers of the same shape"),
]
_REGRESSION = [
    ("preds", "[N] or [N, num_outputs] floating-point predictions"),
    ("target", "the targets, same shape as preds"),
]
_RETRIEVAL = [
    ("preds", "[N] relevance scores of the documents"),
    ("target", "[N] relevance of each document (0/1, or graded for NDCG)"),
    ("indexes", "[N] integer id of the query each document belongs to"),
]

_AGGREGATION = [
    ("value", "a tensor (any shape) or a Python number: the values to aggregate"),
    ("weight", "MeanMetric: a tensor or number broadcastable to value (default 1)"),
]


def update_inputs(name: str, module: str) -> List[Tuple[str, str]]:
    """(argument, description) for update's inputs, by the class's family; [] when not known."""
    if name.startswith("Binary") and "Group" not in name and "Fairness" not in name:
        return _BINARY
    if name.startswith("Multiclass"):
        return _MULTICLASS
    if name.startswith("Multilabel"):
        return _MULTILABEL
    family = module.split(".")[1] if module.count(".") else ""  # torchtally.<family>[.<file>]
    if family == "retrieval":
        return _RETRIEVAL
    if family == "aggregation" and name != "AverageLoss":
        return _AGGREGATION
    if family == "regression":
        return _REGRESSION
    return []


def argument_note(class_name: str, stem: str, argument: str) -> str:
    """What ``argument`` does in the class ``class_name`` (stem: its name without the task prefix)."""
    for key in (f"{class_name}.{argument}", f"{stem}.{argument}", argument):
        if key in ARGUMENTS:
            return ARGUMENTS[key]
    return ""
