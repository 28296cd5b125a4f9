"""benchmarks/bench_catalogue_sweep.py covers the whole shared catalogue: every class that both
torchtally and torchmetrics export is either swept or listed with the reason it is not, and
every swept class updates and computes in torchtally on its batches at every size (a spec that
raised would be a row of errors instead of timings)."""

import importlib
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
specs_module = importlib.import_module("_sweep_specs")
sweep = importlib.import_module("bench_catalogue_sweep")

SPECS, NOT_SWEPT = specs_module.all_specs()


def test_every_shared_class_is_swept_or_says_why_not():
    tm = importlib.import_module("torchmetrics")
    swept = {s.name for s in SPECS}
    for family in specs_module.FAMILIES:
        theirs = importlib.import_module(f"torchmetrics.{family}")
        ours = importlib.import_module(f"torchtally.{family}")
        for name in dir(theirs):
            cls = getattr(theirs, name)
            if not (isinstance(cls, type) and issubclass(cls, tm.Metric) and hasattr(ours, name)):
                continue
            if name in ("Metric", "BaseAggregator", "WrapperMetric"):
                continue
            assert name in swept or name in NOT_SWEPT, f"{family}.{name} is neither swept nor listed as not swept"
    assert len(swept) == len(SPECS), "a class is swept twice"


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_each_swept_class_runs_in_torchtally(spec):
    for size in ("small", "large") if spec.family in ("aggregation", "regression", "nominal") else ("small",):
        metric = spec.make("torchtally")
        for seed in range(2):
            metric.update(*spec.batch(size, seed))
        assert sweep.agree(metric.compute(), metric.compute()) in ("=", "?")
    assert sweep.state_bytes(metric) > 0 or spec.family == "wrappers"


def test_agreement_and_state_bytes_are_measured():
    assert sweep.agree(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-6])) == "="
    assert sweep.agree(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.5])) == "differs"
    assert sweep.agree({"a": torch.tensor(1.0)}, {"a": torch.tensor([1.0, 2.0])}) == "shape"
    mean = importlib.import_module("torchtally.aggregation").MeanMetric()
    mean.update(torch.ones(3))
    assert sweep.state_bytes(mean) == 16  # float64 mean_value and weight


def test_the_feature_extractor_is_the_same_in_both_libraries_whatever_the_global_seed():
    # each library's metric gets its own extractor; one that drew anything from the global
    # generator would make the two libraries' values differ for that reason alone
    torch.manual_seed(1)
    first = specs_module.TinyFeatures()
    torch.manual_seed(2)
    second = specs_module.TinyFeatures()
    images = torch.rand(2, 3, 8, 8)
    assert torch.equal(first(images), second(images))
