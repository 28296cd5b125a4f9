"""LogAUC of the exact mode, every column at once (readouts.logauc_rows over
compute.exact_roc_rows), against the per-column rule (readouts.column_logauc over roc_from's
curves): the same bits, on random states with ties, columns without negatives or samples."""

import warnings

import pytest
import torch

from torchtally.functional.curves import readouts
from torchtally.functional.curves.compute import exact_roc_rows, roc_from
from torchtally.functional.curves.update import CurveTask

RANGES = [(0.001, 0.1), (0.0, 0.5), (0.25, 1.0), (0.1, 0.2), (1e-4, 1.0)]


def _states(task, n, k, levels, seed):
    g = torch.Generator().manual_seed(seed)
    scores = torch.rand(n, k, generator=g)
    if levels:
        scores = (scores * levels).floor() / levels  # ties
    if task == "multiclass":
        return {"scores": scores, "labels": torch.randint(0, k + 1, (n,), generator=g)}
    if task == "multilabel":
        labels = torch.randint(0, 3, (n, k), generator=g).to(torch.uint8)
        labels[:, 0] = 2  # a label without a sample
        labels[:, 1] = labels[:, 1].clamp(min=1)  # one without negatives
        return {"scores": scores, "labels": labels}
    return {"scores": scores[:, 0], "labels": torch.randint(0, 2, (n,), generator=g).to(torch.uint8)}


@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
@pytest.mark.parametrize("levels", [0, 3, 40])
@pytest.mark.parametrize("n", [1, 9, 300, 2000])
def test_rows_equal_the_per_column_logauc_bit_for_bit(task, levels, n):
    k = 1 if task == "binary" else 4
    curve_task = CurveTask(task, k)
    states = _states(task, n, k, levels, seed=n * 7 + levels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fpr, tpr, sizes = exact_roc_rows(curve_task, states)
        curves = roc_from(curve_task, states, None)
        columns = [curves] if task == "binary" else list(zip(*curves))
        for fpr_range in RANGES:
            got = readouts.logauc_rows(fpr, tpr, sizes[:, 0] + 1, fpr_range)
            want = torch.stack([readouts.column_logauc(f, t, fpr_range) for f, t, _ in columns])
            assert got.dtype == want.dtype
            assert torch.equal(got.view(torch.int32), want.view(torch.int32)), (fpr_range, got, want)
