"""Wrappers check the whole batch before any state changes: BootStrapper also the rows its
resampling gives no copy, BinaryTargetTransformer the targets it binarises (NaN, not a tensor)."""

import pytest
import torch
from support.metric_tester import assert_rejects, assert_states_equal

from torchtally import MetricCollection
from torchtally.classification import BinaryAccuracy
from torchtally.regression import MeanSquaredError
from torchtally.wrappers import BinaryTargetTransformer, BootStrapper
from torchtally.wrappers.poisson import poisson_weights

B = 3  # few copies: rows that no copy is given are common


def _left_out_row(n: int = 200) -> int:
    """A position whose Poisson weight is 0 in all B copies (seed 0, sample_index stream)."""
    weights = poisson_weights(0, 0, torch.arange(n), B)
    return int((weights == 0).all(0).nonzero()[0])


def _batch(n: int = 200):
    g = torch.Generator().manual_seed(0)
    return torch.randn(n, generator=g), torch.randn(n, generator=g)


def test_bootstrapper_refuses_a_nan_row_that_no_copy_resamples():
    row = _left_out_row()
    preds, target = _batch()
    preds[row] = float("nan")
    boot = BootStrapper(MeanSquaredError(), num_bootstraps=B)
    boot.update(torch.randn(5), torch.randn(5), sample_index=torch.arange(1000, 1005))
    counts = [m.update_count for m in boot.metrics]
    before = {k: v.clone() for k, v in boot.metric_state.items()}
    # the message gives the row's position in the batch, as the wrapped metric on the whole batch
    with pytest.raises(ValueError, match=f"^preds: .*nan at flat index {row}$"):
        boot.update(preds, target, sample_index=torch.arange(200))
    assert_states_equal(boot.metric_state, before, "BootStrapper after a refused batch")
    assert [m.update_count for m in boot.metrics] == counts
    for strategy in ("poisson", "multinomial"):  # a NaN row whatever the resampling
        with pytest.warns(UserWarning) if strategy == "multinomial" else _no_warning():
            other = BootStrapper(MeanSquaredError(), num_bootstraps=1, sampling_strategy=strategy)
        for seed in range(5):
            torch.manual_seed(seed)
            assert_rejects(other, (preds, target), ValueError, "^preds: ")


def test_bootstrapper_checking_left_out_rows_changes_no_value_and_no_count():
    """A clean batch with rows no copy is given: the same copies' values as without the check
    (the check's update is dropped), and one update counted per copy."""
    preds, target = _batch()
    boot = BootStrapper(MeanSquaredError(), num_bootstraps=B, raw=True)
    boot.update(preds, target, sample_index=torch.arange(200))
    weights = poisson_weights(0, 0, torch.arange(200), B)
    want = torch.stack([(w * (preds - target) ** 2).sum() / w.sum() for w in weights.to(torch.float64)])
    torch.testing.assert_close(boot.compute()["raw"].double(), want, rtol=1e-6, atol=0)
    assert [m.update_count for m in boot.metrics] == [1] * B


def test_bootstrapper_in_a_collection_refuses_the_batch_whole():
    row = _left_out_row()
    preds, target = _batch()
    preds[row] = float("nan")
    collection = MetricCollection({"boot": BootStrapper(MeanSquaredError(), num_bootstraps=B)})
    with pytest.raises(ValueError, match="preds"):
        collection.update(preds, target, sample_index=torch.arange(200))
    assert not collection["boot"].update_called


def test_binary_target_transformer_refuses_nan_and_non_tensor_targets():
    metric = BinaryTargetTransformer(BinaryAccuracy(), threshold=0.5)
    metric.update(torch.tensor([0.9, 0.2]), torch.tensor([0.8, 0.1]))
    nan = torch.tensor([0.8, float("nan"), 0.1])
    assert_rejects(metric, (torch.tensor([0.9, 0.2, 0.7]), nan), ValueError, r"^target: .*NaN at \[1\]")
    assert_rejects(metric, (torch.tensor([0.9]), None), TypeError, "^target: expected a tensor, got NoneType")
    assert_rejects(metric, (torch.tensor([0.9]), [0.8]), TypeError, "^target: expected a tensor, got list")
    with pytest.raises(ValueError, match="^target: "):
        metric(torch.tensor([0.9, 0.2, 0.7]), nan)
    assert float(metric.compute()) == 1.0  # only the first batch counted
    wrapped = BinaryTargetTransformer(MetricCollection([BinaryAccuracy(), MeanSquaredError()]), threshold=0)
    assert_rejects(wrapped, (torch.tensor([0.9, 0.2, 0.7]), nan), ValueError, "^target: ")


class _no_warning:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
