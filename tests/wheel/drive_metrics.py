"""Run by test_wheel.py with the test environment's Python (and its torch, torchmetrics), with
only the installed wheel's folder in front of sys.path: a few metrics of the installed package,
not of the source tree, each equal to torchmetrics' on the same data. Prints "ok" at the end;
any failure is an exception (exit status 1)."""

import sys
from pathlib import Path

import torch
import torchmetrics

import torchtally
from torchtally import _C, _C_cuda, _nccl


def main(site: Path) -> None:
    for module in (torchtally, _C, _C_cuda, _nccl):
        assert Path(module.__file__).resolve().is_relative_to(site.resolve()), module.__file__
    for module in (_C, _C_cuda, _nccl):
        assert module.__file__.endswith(".abi3.so"), module.__file__

    torch.manual_seed(0)
    scores = torch.randn(500, 5).softmax(dim=1)
    labels = torch.randint(0, 5, (500,))
    probs = torch.rand(500)
    binary = torch.randint(0, 2, (500,))
    x, y = torch.randn(500, dtype=torch.float64), torch.randn(500, dtype=torch.float64)
    pairs = [
        (
            torchtally.classification.MulticlassAccuracy(num_classes=5),
            torchmetrics.classification.MulticlassAccuracy(num_classes=5),
            (scores, labels),
        ),
        (
            torchtally.classification.BinaryAUROC(thresholds=100),
            torchmetrics.classification.BinaryAUROC(thresholds=100),
            (probs, binary),
        ),
        (torchtally.regression.MeanSquaredError(), torchmetrics.regression.MeanSquaredError(), (x, y)),
        (torchtally.regression.PearsonCorrCoef(), torchmetrics.regression.PearsonCorrCoef(), (x, y)),
    ]
    for ours, theirs, args in pairs:
        for chunk in range(0, 500, 200):  # three updates
            ours.update(*(a[chunk : chunk + 200] for a in args))
            theirs.update(*(a[chunk : chunk + 200] for a in args))
        got, want = ours.compute(), theirs.compute()
        assert torch.allclose(got.double(), want.double(), rtol=1e-6, atol=1e-9), (type(ours).__name__, got, want)
    print("ok", [type(ours).__name__ for ours, _, _ in pairs])


if __name__ == "__main__":
    main(Path(sys.argv[1]))
