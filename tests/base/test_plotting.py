"""metric.plot() and MetricCollection.plot(): every kind of result draws (matplotlib, Agg) and
the drawing holds the values."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from torchtally import MetricCollection  # noqa: E402
from torchtally.classification import (  # noqa: E402
    BinaryPrecisionRecallCurve,
    BinaryROC,
    MulticlassAccuracy,
    MulticlassConfusionMatrix,
    MulticlassROC,
    MultilabelConfusionMatrix,
)

PREDS, TARGET = torch.tensor([0, 1, 2, 2, 1]), torch.tensor([0, 1, 1, 2, 1])


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_a_scalar_and_a_series_of_scalars():
    m = MulticlassAccuracy(3, average="micro").update(PREDS, TARGET)
    fig, ax = m.plot()
    assert ax.lines[0].get_ydata().tolist() == pytest.approx([0.8])
    values = [m(PREDS[:k], TARGET[:k]) for k in (2, 3, 5)]
    _, ax = m.plot(values)
    assert ax.lines[0].get_ydata().tolist() == pytest.approx([float(v) for v in values])
    assert ax.get_xlabel() == "step"


def test_per_class_values_and_confusion_matrices():
    _, ax = MulticlassAccuracy(3, average=None).update(PREDS, TARGET).plot()
    assert ax.lines[0].get_ydata().tolist() == pytest.approx([1.0, 2 / 3, 1.0])
    cm = MulticlassConfusionMatrix(3).update(PREDS, TARGET)
    _, ax = cm.plot()
    assert sorted(t.get_text() for t in ax.texts) == sorted(str(v) for v in cm.compute().reshape(-1).tolist())
    fig, axes = MultilabelConfusionMatrix(2).update(torch.ones(1, 2).int(), torch.ones(1, 2).int()).plot()
    assert fig is not None and len(axes) == 2


def test_curves_draw_x_against_y():
    scores, target = torch.tensor([0.1, 0.4, 0.35, 0.8]), torch.tensor([0, 0, 1, 1])
    roc = BinaryROC().update(scores, target)
    fpr, tpr, _ = roc.compute()
    _, ax = roc.plot()
    assert ax.lines[0].get_xdata().tolist() == fpr.tolist() and ax.lines[0].get_ydata().tolist() == tpr.tolist()
    _, ax = BinaryPrecisionRecallCurve().update(scores, target).plot()
    assert ax.get_xlabel() == "recall"
    _, ax = MulticlassROC(3, thresholds=5).update(torch.randn(6, 3).softmax(1), torch.tensor([0, 1, 2, 0, 1, 2])).plot()
    assert len(ax.lines) == 3


def test_a_collection_plots_each_metric_or_all_together():
    coll = MetricCollection({"macro": MulticlassAccuracy(3), "micro": MulticlassAccuracy(3, average="micro")})
    coll.add_metrics({"cm": MulticlassConfusionMatrix(3)})
    coll.update(PREDS, TARGET)
    assert len(coll.plot()) == 3
    acc_only = MetricCollection({"macro": MulticlassAccuracy(3), "micro": MulticlassAccuracy(3, average="micro")})
    _, ax = acc_only.update(PREDS, TARGET).plot(together=True)
    assert [line.get_label() for line in ax.lines] == ["macro", "micro"]
