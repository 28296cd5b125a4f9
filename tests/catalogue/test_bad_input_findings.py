"""The findings of the bad-input sweep (tests/catalogue/test_bad_input_sweep.py), each on its
own: what escaped before as NotImplementedError, RuntimeError, IndexError or OverflowError now
raises TypeError / ValueError naming the argument, the state unchanged; an empty batch is
taken and changes nothing."""

import pytest
import torch
from support.generative_image import Net
from support.state_checks import assert_same_states
from support.sweep_inputs import make_batch

import torchtally as M
from torchtally.detection import MeanAveragePrecision
from torchtally.image import (
    FrechetInceptionDistance,
    InceptionScore,
    KernelInceptionDistance,
    MultiScaleStructuralSimilarityIndexMeasure,
    StructuralSimilarityIndexMeasure,
)
from torchtally.segmentation import DiceScore, MeanIoU
from torchtally.text import Perplexity
from torchtally.wrappers import BootStrapper, MultioutputWrapper, Running


def _meta(batch, path):
    """``batch`` with the tensor at ``path`` (argument index, then a key) on the meta device."""
    args = list(batch)
    if len(path) == 1:
        args[path[0]] = args[path[0]].to("meta")
    else:
        first = dict(args[path[0]][0])
        first[path[1]] = first[path[1]].to("meta")
        args[path[0]] = [first, *args[path[0]][1:]]
    return tuple(args)


def _refused(metric, batch, error, name):
    before = {k: v.clone() for k, v in metric.metric_state.items()}
    with pytest.raises(error, match=name):
        metric.update(*batch)
    assert_same_states(before, {k: v.clone() for k, v in metric.metric_state.items()}, f"after {name}")
    assert metric.device == torch.device("cpu")


@pytest.mark.parametrize(
    "make, kind, path, name",
    [
        (MeanAveragePrecision, "boxes", (0, "boxes"), r"preds\[0\]\['boxes'\]"),
        (MeanAveragePrecision, "boxes", (1, "labels"), r"target\[0\]\['labels'\]"),
        (Perplexity, "token_logits", (1,), "target"),
        (lambda: MultioutputWrapper(M.MeanSquaredError(), 2), "rows", (1,), "target"),
        (lambda: FrechetInceptionDistance(Net()), "images_real", (0,), "imgs"),
        (lambda: KernelInceptionDistance(Net(), subsets=2, subset_size=2), "images_real", (0,), "imgs"),
        (lambda: InceptionScore(Net(), splits=2), "images", (0,), "imgs"),
        (lambda: BootStrapper(M.BinaryAccuracy(), num_bootstraps=3), "binary", (0,), "preds"),
        (lambda: Running(M.SumMetric(), window=2), "aggregation", (0,), "value"),
    ],
    ids=["map-boxes", "map-labels", "perplexity", "multioutput", "fid", "kid", "is", "bootstrapper", "running"],
)
@pytest.mark.parametrize("holding", [False, True], ids=["fresh", "holding"])
def test_a_meta_tensor_is_refused_naming_the_argument(make, kind, path, name, holding):
    metric = make()
    if holding:
        metric.update(*make_batch(kind, 4, 1))
    _refused(metric, _meta(make_batch(kind, 3, 2), path), ValueError, name)
    metric.update(*make_batch(kind, 3, 2))  # and it still works


def test_bootstrapper_hands_uint16_to_the_wrapped_metric():
    metric = BootStrapper(M.BinaryAccuracy(), num_bootstraps=3).update(*make_batch("binary", 4, 1))
    preds, target = make_batch("binary", 3, 2)
    _refused(metric, (preds, target.to(torch.uint16)), TypeError, "target")
    summing = BootStrapper(M.SumMetric(), num_bootstraps=2, mean=False, std=False, raw=True, seed=3)
    twin = BootStrapper(M.SumMetric(), num_bootstraps=2, mean=False, std=False, raw=True, seed=3)
    twin._stream = summing._stream  # the same resampling stream
    values = torch.tensor([1, 2, 60000, 7])
    summing.update(values.to(torch.uint16))  # SumMetric reads uint16 exactly: resampled bit for bit
    twin.update(values)
    assert torch.equal(summing.compute()["raw"], twin.compute()["raw"])


@pytest.mark.parametrize(
    "make, size",
    [
        (lambda: StructuralSimilarityIndexMeasure(kernel_size=5), 16),
        (lambda: MultiScaleStructuralSimilarityIndexMeasure(betas=(0.5, 0.5), kernel_size=5, sigma=0.7), 32),
    ],
    ids=["ssim", "ms-ssim"],
)
def test_ssim_takes_an_empty_batch_and_refuses_squares_beyond_float64(make, size):
    g = torch.Generator().manual_seed(0)
    preds, target = torch.rand(2, 3, size, size, generator=g), torch.rand(2, 3, size, size, generator=g)
    metric, twin = make().update(preds, target), make().update(preds, target)
    metric.update(preds[:0], target[:0])
    assert torch.equal(metric.compute(), twin.compute())
    huge = preds.double().clone()
    huge[0, 0, 0, 0] = 1e300
    before = {k: v.clone() for k, v in metric.metric_state.items()}
    with pytest.raises(ValueError, match="preds, target: expected values whose squares fit float64"):
        metric.update(huge, target.double())
    assert_same_states(before, metric.metric_state, "after 1e300")


@pytest.mark.parametrize("cls", [MeanIoU, DiceScore])
def test_one_hot_segmentation_takes_an_empty_batch(cls):
    g = torch.Generator().manual_seed(0)
    preds, target = (torch.randint(0, 2, (2, 3, 5, 5), generator=g) for _ in range(2))
    metric, twin = cls(3).update(preds, target), cls(3).update(preds, target)
    metric.update(preds[:0], target[:0])
    assert torch.equal(metric.compute(), twin.compute())
