"""Perplexity and perplexity against torchmetrics (float32, float64, ignore_index) and a float64
cross entropy; bad shapes, dtypes, targets and NaN logits raise with the state unchanged;
torch.compile; 3 gloo ranks with uneven shards == one process, in at most 2 collectives."""

import functools

import pytest
import torch
from support.metric_tester import MetricCase, assert_rejects, assert_same, check_metric
from support.rank_pools import run_on_ranks
from torchmetrics.functional.text import perplexity as tm_perplexity

from torchtally.functional.text import perplexity
from torchtally.functional.text.perplexity import perplexity_result
from torchtally.testing import count_collectives
from torchtally.text import Perplexity

V = 37


def _data(seed, n=6, t=9, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    logits = (torch.randn(n, t, V, generator=g) * 3).to(dtype)
    target = torch.randint(0, V, (n, t), generator=g)
    target[1, 4:] = -100
    return logits, target


def _exact(logits, target, ignore_index):
    flat, y = logits.double().reshape(-1, V), target.reshape(-1)
    keep = y != ignore_index if ignore_index is not None else torch.ones_like(y, dtype=torch.bool)
    return torch.exp(torch.nn.functional.cross_entropy(flat[keep], y[keep]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_against_torchmetrics_and_float64(dtype):
    logits, target = _data(0, dtype=dtype)
    got = perplexity(logits, target, ignore_index=-100)
    assert got.dtype == dtype
    assert_same(got, tm_perplexity(logits, target, ignore_index=-100), rtol=1e-5 if dtype == torch.float32 else 1e-12)
    assert_same(got.double(), _exact(logits, target, -100), rtol=1e-6 if dtype == torch.float32 else 1e-12)
    m = Perplexity(ignore_index=-100)
    for i in range(0, 6, 4):
        m.update(logits[i : i + 4], target[i : i + 4])
    assert m.compute().dtype == torch.float32
    assert_same(m.compute().double(), _exact(logits, target, -100), rtol=1e-6)
    valid = target.clamp(min=0)
    assert_same(perplexity(logits, valid), tm_perplexity(logits, valid), rtol=1e-5)


def test_half_and_bfloat16_logits():
    logits, target = _data(1)
    for dtype in (torch.float16, torch.bfloat16):
        low = logits.to(dtype)
        got = Perplexity(ignore_index=-100).update(low, target).compute()
        assert_same(got.double(), _exact(low, target, -100), rtol=1e-6)


@pytest.mark.parametrize(
    "total, count",
    [(0.0, 0), (5.0, 0), (float("nan"), 3), (float("inf"), 3), (123.4, 100), (0.0, 5)]
    + [(12.0, 1), (709.0, 1), (710.0, 1)],  # past float16, float32, float64
)
def test_result_equals_the_tensor_ops(total, count):
    """The result read through Python floats on the CPU is torch's exp(total / count) cast to the
    dtype: NaN over no token, inf past float64's range, the same rounding into each dtype."""
    t, c = torch.tensor(total, dtype=torch.float64), torch.tensor(count)
    for dtype in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
        got, want = perplexity_result(t, c, dtype), torch.exp(t / c).to(dtype)
        assert got.dtype == dtype and got.shape == ()
        torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True)


def test_bad_input_raises_with_the_state_unchanged():
    logits, target = _data(2)
    m = Perplexity(ignore_index=-100).update(logits, target)
    assert_rejects(m, (logits[0], target), ValueError, "preds")
    assert_rejects(m, (logits, target[0]), ValueError, "target")
    assert_rejects(m, (logits[:, :3], target), ValueError, "target")
    assert_rejects(m, (logits.long(), target), TypeError, "preds")
    assert_rejects(m, (logits, target.int()), TypeError, "target")
    assert_rejects(m, (None, target), TypeError, "^preds: expected a tensor, got NoneType")
    assert_rejects(m, (logits, target.tolist()), TypeError, "^target: expected a tensor, got list")
    bad = target.clone()
    bad[0, 0] = V
    assert_rejects(m, (logits, bad), ValueError, "target: token id 37")
    bad[0, 0] = -1  # torchmetrics reads the row's last logit
    assert_rejects(m, (logits, bad), ValueError, "target: token id -1")
    nan = logits.clone()
    nan[2, 3, 5] = float("nan")
    assert_rejects(m, (nan, target), ValueError, "preds: expected no NaN")
    with pytest.raises(TypeError, match="ignore_index"):
        Perplexity(ignore_index=1.5)


def test_update_compiles():
    logits, target = _data(3)
    m = Perplexity(ignore_index=-100)

    @torch.compile(fullgraph=True, backend="aot_eager")  # the custom op through functionalisation
    def step(x, y):
        m.update(x, y)

    step(logits, target)
    step(logits, target)
    assert_same(m.compute().double(), _exact(torch.cat((logits, logits)), torch.cat((target, target)), -100), rtol=1e-6)


def _batches(seed, count):
    return [_data(seed + i, n=2 + i % 3) for i in range(count)]


def _reference(logits, target):
    return tm_perplexity(logits, target, ignore_index=-100)


CASES = [
    MetricCase(
        "perplexity",
        functools.partial(Perplexity, ignore_index=-100),
        batches=_batches(10, 7),
        reference=_reference,
        rtol=1e-5,
        atol=1e-6,
    )
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


def _rank_worker(rank, world_size, batches):
    bounds = [0, 0, len(batches) // 3, len(batches)]
    m = Perplexity(ignore_index=-100)
    for logits, target in batches[bounds[rank] : bounds[rank + 1]]:
        m.update(logits, target)
    with count_collectives() as counter:
        result = m.compute()
    return counter.total, result


@pytest.mark.distributed
def test_distributed_uneven_shards_in_at_most_two_collectives():
    batches = list(CASES[0].batches)
    expected = functools.reduce(lambda m, b: m.update(*b), batches, Perplexity(ignore_index=-100)).compute()
    for total, result in run_on_ranks(_rank_worker, 3, batches):
        assert total <= 2, total
        assert_same(result, expected, rtol=1e-12, atol=1e-12)
