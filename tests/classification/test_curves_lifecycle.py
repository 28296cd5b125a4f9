"""Every curve metric, exact and binned, through the shared tester: update / compute / merge_state /
state_dict / pickle / reset in one process, and one 3-rank gloo run for all of them."""

import functools

import numpy as np
import pytest
import torch
import torchmetrics.functional.classification as tmf
from sklearn import metrics as skm
from support.metric_tester import MetricCase, check_metric, run_distributed_cases

from torchtally import (
    BinaryAUROC,
    BinaryAveragePrecision,
    BinaryPrecisionRecallCurve,
    BinaryROC,
    MetricCollection,
    MulticlassAUROC,
    MulticlassAveragePrecision,
    MulticlassPrecisionRecallCurve,
    MulticlassROC,
    MultilabelAUROC,
    MultilabelAveragePrecision,
    MultilabelPrecisionRecallCurve,
    MultilabelROC,
)

TOL = dict(rtol=1e-5, atol=1e-6)
SIZES = [37, 64, 5, 80, 23, 51, 40]  # uneven batches, 300 samples


def _batches(preds, target):
    out, lo = [], 0
    for n in SIZES:
        out.append((preds[lo : lo + n], target[lo : lo + n]))
        lo += n
    return out


g = torch.Generator().manual_seed(11)
_bt = torch.randint(0, 2, (300,), generator=g)
_bp = ((torch.rand(300, generator=g) * 0.7 + 0.3 * _bt) * 25).round() / 25  # ties
_bt_ign = torch.where(torch.rand(300, generator=g) < 0.1, -1, _bt)
_ct = torch.randint(0, 4, (300,), generator=g)
_cp = (torch.rand(300, 4, generator=g) * 10).round() / 10 + 0.0
_cp = (_cp + torch.nn.functional.one_hot(_ct, 4)) / 2
_lt = torch.randint(0, 2, (300, 3), generator=g)
_lp = ((torch.rand(300, 3, generator=g) + 0.4 * _lt) * 12).round() / 17
_lt_ign = torch.where(torch.rand(300, 3, generator=g) < 0.1, -1, _lt)

BINARY = _batches(_bp, _bt)
BINARY_IGN = _batches(_bp, _bt_ign)
MULTICLASS = _batches(_cp, _ct)
MULTILABEL = _batches(_lp, _lt)
MULTILABEL_IGN = _batches(_lp, _lt_ign)


def _np(p, t):
    return p.double().numpy(), t.numpy()


def _sk_binary(fn, **kw):
    def ref(p, t):
        keep = t != -1
        p, t = _np(p[keep], t[keep])
        return fn(t, p, **kw)

    return ref


def _sk_multiclass(fn, average):
    def ref(p, t):
        onehot = torch.nn.functional.one_hot(t, 4).numpy()
        values = [fn(onehot[:, k], p[:, k].double().numpy()) for k in range(4)]
        if average == "none":
            return values
        return np.average(values, weights=onehot.sum(0) if average == "weighted" else None)

    return ref


def _sk_multilabel(fn, average):
    return lambda p, t: fn(t.numpy(), p.double().numpy(), average=average)


def _tm(fn, **kw):
    return lambda p, t: fn(p, t, **kw)


def binary_collection(thresholds):
    """Module level, so the spawned ranks can build it: four metrics on one shared state."""
    return MetricCollection(
        {
            "auroc": BinaryAUROC(thresholds=thresholds),
            "ap": BinaryAveragePrecision(thresholds=thresholds),
            "roc": BinaryROC(thresholds=thresholds),
            "pr": BinaryPrecisionRecallCurve(thresholds=thresholds),
        }
    )


def _collection_reference(thresholds):
    def ref(p, t):
        return {
            "auroc": tmf.binary_auroc(p, t, thresholds=thresholds),
            "ap": tmf.binary_average_precision(p, t, thresholds=thresholds),
            "roc": tmf.binary_roc(p, t, thresholds=thresholds),
            "pr": tmf.binary_precision_recall_curve(p, t, thresholds=thresholds),
        }

    return ref


P = functools.partial
CASES = [
    # binary
    MetricCase("BinaryAUROC-exact", BinaryAUROC, BINARY, _sk_binary(skm.roc_auc_score), **TOL),
    MetricCase(
        "BinaryAUROC-exact-maxfpr",
        P(BinaryAUROC, max_fpr=0.4),
        BINARY,
        _sk_binary(skm.roc_auc_score, max_fpr=0.4),
        **TOL,
    ),
    MetricCase(
        "BinaryAUROC-binned", P(BinaryAUROC, thresholds=25), BINARY, _tm(tmf.binary_auroc, thresholds=25), **TOL
    ),
    MetricCase(
        "BinaryAUROC-exact-ignore", P(BinaryAUROC, ignore_index=-1), BINARY_IGN, _sk_binary(skm.roc_auc_score), **TOL
    ),
    MetricCase("BinaryAP-exact", BinaryAveragePrecision, BINARY, _sk_binary(skm.average_precision_score), **TOL),
    MetricCase(
        "BinaryAP-binned-list",
        P(BinaryAveragePrecision, thresholds=[0.1, 0.3, 0.5, 0.9]),
        BINARY,
        _tm(tmf.binary_average_precision, thresholds=[0.1, 0.3, 0.5, 0.9]),
        **TOL,
    ),
    MetricCase("BinaryROC-exact", BinaryROC, BINARY, _tm(tmf.binary_roc), **TOL),
    MetricCase(
        "BinaryROC-binned-ignore",
        P(BinaryROC, thresholds=17, ignore_index=-1),
        BINARY_IGN,
        _tm(tmf.binary_roc, thresholds=17, ignore_index=-1),
        **TOL,
    ),
    MetricCase("BinaryPR-exact", BinaryPrecisionRecallCurve, BINARY, _tm(tmf.binary_precision_recall_curve), **TOL),
    MetricCase(
        "BinaryPR-binned",
        P(BinaryPrecisionRecallCurve, thresholds=9),
        BINARY,
        _tm(tmf.binary_precision_recall_curve, thresholds=9),
        **TOL,
    ),
    # multiclass
    MetricCase(
        "MulticlassAUROC-exact-macro",
        P(MulticlassAUROC, 4),
        MULTICLASS,
        _sk_multiclass(skm.roc_auc_score, "macro"),
        **TOL,
    ),
    MetricCase(
        "MulticlassAUROC-binned-weighted",
        P(MulticlassAUROC, 4, average="weighted", thresholds=30),
        MULTICLASS,
        _tm(tmf.multiclass_auroc, num_classes=4, average="weighted", thresholds=30),
        **TOL,
    ),
    MetricCase(
        "MulticlassAP-exact-none",
        P(MulticlassAveragePrecision, 4, average="none"),
        MULTICLASS,
        _sk_multiclass(skm.average_precision_score, "none"),
        **TOL,
    ),
    MetricCase(
        "MulticlassAP-binned-macro",
        P(MulticlassAveragePrecision, 4, thresholds=30),
        MULTICLASS,
        _tm(tmf.multiclass_average_precision, num_classes=4, thresholds=30),
        **TOL,
    ),
    MetricCase("MulticlassROC-exact", P(MulticlassROC, 4), MULTICLASS, _tm(tmf.multiclass_roc, num_classes=4), **TOL),
    MetricCase(
        "MulticlassROC-binned-macro",
        P(MulticlassROC, 4, thresholds=12, average="macro"),
        MULTICLASS,
        _tm(tmf.multiclass_roc, num_classes=4, thresholds=12, average="macro"),
        **TOL,
    ),
    MetricCase(
        "MulticlassPR-exact-micro",
        P(MulticlassPrecisionRecallCurve, 4, average="micro"),
        MULTICLASS,
        _tm(tmf.multiclass_precision_recall_curve, num_classes=4, average="micro"),
        **TOL,
    ),
    MetricCase(
        "MulticlassPR-binned",
        P(MulticlassPrecisionRecallCurve, 4, thresholds=12),
        MULTICLASS,
        _tm(tmf.multiclass_precision_recall_curve, num_classes=4, thresholds=12),
        **TOL,
    ),
    # multilabel
    MetricCase(
        "MultilabelAUROC-exact-micro",
        P(MultilabelAUROC, 3, average="micro"),
        MULTILABEL,
        _sk_multilabel(skm.roc_auc_score, "micro"),
        **TOL,
    ),
    MetricCase(
        "MultilabelAUROC-binned-none-ignore",
        P(MultilabelAUROC, 3, average="none", thresholds=20, ignore_index=-1),
        MULTILABEL_IGN,
        _tm(tmf.multilabel_auroc, num_labels=3, average="none", thresholds=20, ignore_index=-1),
        **TOL,
    ),
    MetricCase(
        "MultilabelAP-exact-weighted",
        P(MultilabelAveragePrecision, 3, average="weighted"),
        MULTILABEL,
        _sk_multilabel(skm.average_precision_score, "weighted"),
        **TOL,
    ),
    MetricCase(
        "MultilabelAP-binned-macro",
        P(MultilabelAveragePrecision, 3, thresholds=20),
        MULTILABEL,
        _tm(tmf.multilabel_average_precision, num_labels=3, thresholds=20),
        **TOL,
    ),
    MetricCase(
        "MultilabelROC-exact-ignore",
        P(MultilabelROC, 3, ignore_index=-1),
        MULTILABEL_IGN,
        _tm(tmf.multilabel_roc, num_labels=3, ignore_index=-1),
        **TOL,
    ),
    MetricCase(
        "MultilabelROC-binned",
        P(MultilabelROC, 3, thresholds=8),
        MULTILABEL,
        _tm(tmf.multilabel_roc, num_labels=3, thresholds=8),
        **TOL,
    ),
    MetricCase(
        "MultilabelPR-exact",
        P(MultilabelPrecisionRecallCurve, 3),
        MULTILABEL,
        _tm(tmf.multilabel_precision_recall_curve, num_labels=3),
        **TOL,
    ),
    MetricCase(
        "MultilabelPR-binned",
        P(MultilabelPrecisionRecallCurve, 3, thresholds=8),
        MULTILABEL,
        _tm(tmf.multilabel_precision_recall_curve, num_labels=3, thresholds=8),
        **TOL,
    ),
    # a collection sharing one state
    MetricCase("collection-binned", P(binary_collection, 40), BINARY, _collection_reference(40), **TOL),
    MetricCase("collection-exact", P(binary_collection, None), BINARY, _collection_reference(None), **TOL),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed_three_ranks():
    run_distributed_cases(CASES)
