"""confmat_threshold's logit_threshold: the kernel decides per call whether float preds are
probabilities (every element in [0, 1]: compared against threshold) or logits (one outside, or a
NaN: compared against logit_threshold), over all of preds, masked and ignored elements included.

Checked against numpy, on the C core at every SIMD level and the torch reference (run_all
compares them bit for bit), and at the metric level against torchmetrics' rule.
"""

import math

import numpy as np
import pytest
import torch
from support.kernel_inputs import SCORE_DTYPES, dtype_id, generator, labels, layout, np_values, start_counts
from support.simd_paths import run_all

from torchtally.functional.classification import update as ci

T = 0.3
LOGIT_T = math.log(T / (1 - T))  # about -0.847


def expected(preds: torch.Tensor, target: torch.Tensor, value: float) -> torch.Tensor:
    """[L, 2, 2] increment of `preds > value` (exact, in float64) against target, per column."""
    p = np_values(preds).astype(np.float64).reshape(len(preds), -1)
    t = np_values(target).astype(np.int64).reshape(len(target), -1)
    want = torch.zeros(p.shape[1], 2, 2, dtype=torch.int64)
    for col in range(p.shape[1]):
        for ti in (0, 1):
            for pi in (0, 1):
                want[col, ti, pi] = int(np.sum((t[:, col] == ti) & ((p[:, col] > value) == pi)))
    return want


def inputs(shape, dtype, kind, g):
    """probabilities (with exact 0s and 1s) or logits of `dtype`, and 0/1 uint8 targets."""
    if kind == "probs":
        p = torch.rand(shape, generator=g, dtype=torch.float64)
        p.view(-1)[::7] = 0.0
        p.view(-1)[3::11] = 1.0
    else:
        p = torch.randn(shape, generator=g, dtype=torch.float64) * 3
    return p.to(dtype), labels(shape, 2, torch.uint8, g)


@pytest.mark.parametrize("kind", ["probs", "logits"])
@pytest.mark.parametrize("shape", [(2500,), (1030, 6), (7, 3), (1, 1)], ids=["binary", "L6", "L3", "one"])
@pytest.mark.parametrize("dtype", SCORE_DTYPES, ids=dtype_id)
def test_auto_matches_numpy_at_every_level(dtype, shape, kind):
    g = generator(40)
    preds, target = inputs(shape, dtype, kind, g)
    if kind == "logits" and preds.numel() == 1:
        preds.fill_(-0.5)  # a lone value must lie outside [0, 1] to make a batch of logits
    out = start_counts((2, 2) if len(shape) == 1 else (shape[1], 2, 2), g)
    ok, got = run_all("confmat_threshold", out, preds, target, None, None, T, LOGIT_T)
    assert ok == "ok"
    want = expected(preds, target, T if kind == "probs" else LOGIT_T)
    assert torch.equal(got.view(-1, 2, 2), want)
    # with logit_threshold given explicitly as None (or left out) the threshold is used as is
    assert torch.equal(
        run_all("confmat_threshold", out, preds, target, None, None, T, None)[1].view(-1, 2, 2),
        expected(preds, target, T),
    )


@pytest.mark.parametrize("layout_kind", ["sliced", "transposed"])
def test_auto_on_strided_preds(layout_kind):
    g = generator(41)
    for kind in ("probs", "logits"):
        preds, target = inputs((300, 4), torch.float32, kind, g)
        p, t = layout(preds, layout_kind), layout(target, layout_kind)
        out = start_counts((4, 2, 2), g)
        ok, got = run_all("confmat_threshold", out, p, t, None, None, T, LOGIT_T)
        assert ok == "ok" and torch.equal(got, expected(p, t, T if kind == "probs" else LOGIT_T))


def test_exact_zero_and_one_are_probabilities():
    """0 and 1 lie in [0, 1]: the batch stays probabilities (0 > 0.3 is False; it would be True
    against the logit -0.847)."""
    preds = torch.tensor([0.0, 1.0, 0.0, 1.0, 0.0, -0.0], dtype=torch.float32)
    target = torch.tensor([0, 1, 1, 0, 0, 1])
    ok, got = run_all("confmat_threshold", torch.zeros(2, 2, dtype=torch.int64), preds, target, None, None, T, LOGIT_T)
    assert ok == "ok" and torch.equal(got, torch.tensor([[2, 1], [2, 1]]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16], ids=dtype_id)
@pytest.mark.parametrize("at", [0, 5, 1027, 2049, 4095], ids=lambda a: f"at{a}")
@pytest.mark.parametrize("side", ["above-one", "below-zero"])
def test_one_value_just_outside_flips_the_whole_batch(dtype, at, side):
    g = generator(42)
    preds, target = inputs((4096,), dtype, "probs", g)
    one, zero = torch.tensor(1.0, dtype=dtype), torch.tensor(0.0, dtype=dtype)
    preds[at] = torch.nextafter(one, one + 1) if side == "above-one" else torch.nextafter(zero, -one)
    out = start_counts((2, 2), g)
    ok, got = run_all("confmat_threshold", out, preds, target, None, None, T, LOGIT_T)
    assert ok == "ok" and torch.equal(got[None], expected(preds, target, LOGIT_T))
    # the same batch without that value is one of probabilities
    preds[at] = 0.5
    assert torch.equal(
        run_all("confmat_threshold", out, preds, target, None, None, T, LOGIT_T)[1][None], expected(preds, target, T)
    )


def test_masked_and_ignored_elements_decide_too():
    """The scan covers every element of preds, as the Python rule it replaces did
    (torch.aminmax over the whole batch), even those the count skips."""
    g = generator(43)
    preds, target = inputs((64, 3), torch.float32, "probs", g)
    target = target.long()
    mask = torch.ones(64, dtype=torch.bool)
    for where in ("masked", "ignored"):
        p, t, m = preds.clone(), target.clone(), mask.clone()
        p[10, 1] = 2.0
        if where == "masked":
            m[10] = False
        else:
            t[10, 1] = -1
        ok, got = run_all("confmat_threshold", start_counts((3, 2, 2), g), p, t, m, -1, T, LOGIT_T)
        keep = m[:, None] & (t != -1)
        want = torch.zeros(3, 2, 2, dtype=torch.int64)
        for col in range(3):
            k = keep[:, col]
            want[col] = expected(p[k, col], t[k, col], LOGIT_T)[0]
        assert ok == "ok" and torch.equal(got, want), where


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16], ids=dtype_id)
def test_nan_names_preds_and_leaves_out_unchanged(dtype):
    g = generator(44)
    for at in (0, 700, 2499):
        preds, target = inputs((2500,), dtype, "probs", g)
        preds[at] = float("nan")
        ok, message = run_all("confmat_threshold", start_counts((2, 2), g), preds, target, None, None, T, LOGIT_T)
        assert ok == "error" and message.startswith("preds: NaN at sample"), message


def test_integer_preds_ignore_logit_threshold(impl):
    g = generator(45)
    for dtype in (torch.uint8, torch.int64, torch.bool):
        preds, target = labels((500, 2), 2, dtype, g), labels((500, 2), 2, torch.int64, g)
        out = start_counts((2, 2, 2), g)
        before = out.clone()
        impl.confmat_threshold(out, preds, target, None, None, T, 100.0)
        assert torch.equal(out - before, expected(preds, target, 0.5))
        with pytest.raises(ValueError, match="^preds: (value|label) 2"):
            impl.confmat_threshold(out, preds.long() * 2, target, None, None, T, -100.0)


def test_infinite_logit_thresholds(impl):
    """threshold 0 or 1 has the logit -inf or +inf: every logit is positive, or none is."""
    g = generator(46)
    preds, target = inputs((200,), torch.float32, "logits", g)
    for threshold, logit, want in ((0.0, -math.inf, 1), (1.0, math.inf, 0)):
        out = torch.zeros(2, 2, dtype=torch.int64)
        impl.confmat_threshold(out, preds, target, None, None, threshold, logit)
        assert int(out[:, want].sum()) == 200


def test_logit_threshold_argument_errors(impl):
    g = generator(47)
    preds, target = inputs((20,), torch.float32, "probs", g)
    out = start_counts((2, 2), g)
    before = out.clone()
    with pytest.raises(TypeError, match="^logit_threshold: expected a float or None, got str"):
        impl.confmat_threshold(out, preds, target, None, None, T, "0.1")
    with pytest.raises(TypeError, match="^logit_threshold: expected a float or None, got bool"):
        impl.confmat_threshold(out, preds, target, None, None, T, True)
    with pytest.raises(ValueError, match="^logit_threshold: expected a number, got NaN"):
        impl.confmat_threshold(out, preds, target, None, None, T, float("nan"))
    assert torch.equal(out, before)


def test_logit_threshold_helper_edges():
    assert ci.logit_threshold(0.0) == -math.inf and ci.logit_threshold(1.0) == math.inf
    assert ci.logit_threshold(0.5) == 0.0
    assert ci.logit_threshold(0.3) == pytest.approx(LOGIT_T, abs=1e-15)


@pytest.mark.parametrize("kind", ["probs", "logits"])
def test_metrics_unchanged_against_torchmetrics(kind):
    """BinaryAccuracy and MultilabelF1Score, whose updates now leave the decision to the kernel,
    against torchmetrics (which decides per batch the same way) over batches of both kinds."""
    import torchmetrics.classification as tmc

    import torchtally as tt

    g = generator(48)
    for threshold in (0.5, 0.3):
        acc, tm_acc = tt.BinaryAccuracy(threshold=threshold), tmc.BinaryAccuracy(threshold=threshold)
        f1 = tt.MultilabelF1Score(num_labels=10, threshold=threshold, average="macro")
        tm_f1 = tmc.MultilabelF1Score(num_labels=10, threshold=threshold, average="macro")
        for size in (256, 3, 100):
            p, t = inputs((size,), torch.float32, kind, g)
            acc.update(p, t.long())
            tm_acc.update(p, t.long())
            p, t = inputs((size, 10), torch.float32, kind, g)
            f1.update(p, t.long())
            tm_f1.update(p, t.long())
        assert float(acc.compute()) == pytest.approx(float(tm_acc.compute()), abs=1e-7)
        assert float(f1.compute()) == pytest.approx(float(tm_f1.compute()), abs=1e-6)
