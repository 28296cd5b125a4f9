"""examples/lightning_logging.py runs and both of its idioms (self.log / log_dict of the metric
objects, and MetricCallback) log the same validation accuracy and F1; the accuracy equals the
accuracy of the trained model over the validation set computed by hand."""

import importlib.util
import os

import torch

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "lightning_logging.py")


def test_both_idioms_log_the_exact_accuracy():
    spec = importlib.util.spec_from_file_location("lightning_logging", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    logged, model, val_loader = example.main()
    assert set(logged) == {"val_acc", "val_f1", "val_callback_acc", "val_callback_f1"}
    with torch.no_grad():
        hits = [(model(x).argmax(1) == y).float() for x, y in val_loader]
        per_class = [torch.cat(hits)[torch.cat([y for _, y in val_loader]) == c].mean() for c in range(3)]
    macro = float(torch.stack(per_class).mean())  # MulticlassAccuracy's default average is macro
    assert abs(logged["val_acc"] - macro) < 1e-6
    assert abs(logged["val_callback_acc"] - macro) < 1e-6
