"""Binned score histograms (C core and torch reference) against numpy.

Oracle: np.histogram with edges [-inf, t_0, ..., t_{T-1}, +inf] puts s in bin b iff
t_{b-1} <= s < t_b, i.e. b = #{i : t_i <= s}, the kernel's bin; np.searchsorted(side="right")
gives the same and is checked in one test as a second oracle.
"""

import numpy as np
import pytest
import torch
from support.kernel_inputs import (
    LABEL_DTYPES,
    LAYOUTS,
    SCORE_DTYPES,
    N,
    dtype_id,
    generator,
    labels,
    layout,
    np_values,
    start_counts,
)

MODES = ("binary", "multiclass", "multilabel")
K = 4


def thresholds_of(kind: str, g: torch.Generator) -> torch.Tensor:
    if kind == "uniform":
        return torch.linspace(0, 1, 11, dtype=torch.float64)
    if kind == "sorted-with-duplicates":
        t = torch.rand(30, generator=g, dtype=torch.float64)
        return torch.cat([t, t[:5]]).sort().values
    if kind == "empty":
        return torch.zeros(0, dtype=torch.float64)
    if kind == "single":
        return torch.tensor([0.5], dtype=torch.float64)
    raise AssertionError(kind)


def binned_inputs(mode: str, rows: int, dtype, thresholds, g, target_dtype=torch.int64):
    """Scores in [-0.1, 1.1], some exactly on a threshold, a few +-inf; targets per mode."""
    shape = (rows,) if mode == "binary" else (rows, K)
    s = torch.rand(shape, generator=g, dtype=torch.float64) * 1.2 - 0.1
    if len(thresholds):
        on = torch.rand(shape, generator=g) < 0.2
        s[on] = thresholds[torch.randint(0, len(thresholds), shape, generator=g)][on]
    s[torch.rand(shape, generator=g) < 0.01] = float("inf")
    s[torch.rand(shape, generator=g) < 0.01] = -float("inf")
    if mode == "multiclass":
        target = labels((rows,), K, target_dtype, g)
    else:
        target = labels(shape, 2, target_dtype, g)
    return s.to(dtype), target


def np_binned(s: np.ndarray, target: np.ndarray, thresholds: np.ndarray, mode: str, keep=None) -> torch.Tensor:
    """[K, T + 1, 2] counts from np.histogram; keep: bool [N] or [N, K] of counted elements."""
    s = s.reshape(len(s), -1).astype(np.float64)
    if mode == "multiclass":
        positive = target[:, None] == np.arange(s.shape[1])[None, :]
    else:
        positive = target.reshape(len(target), -1) == 1
    keep = np.ones(s.shape, bool) if keep is None else np.broadcast_to(keep.reshape(len(s), -1), s.shape)
    edges = np.concatenate([[-np.inf], thresholds, [np.inf]])
    out = np.zeros((s.shape[1], len(thresholds) + 1, 2), np.int64)
    for k in range(s.shape[1]):
        for is_pos in (0, 1):
            sel = keep[:, k] & (positive[:, k] == is_pos)
            out[k, :, is_pos] = np.histogram(s[sel, k], bins=edges)[0]
    return torch.from_numpy(out)


def run(kernel, mode, s, target, mask, ignore_index, thresholds, uniform, g):
    k = 1 if mode == "binary" else K
    out = start_counts((k, len(thresholds) + 1, 2), g)
    before = out.clone()
    kernel(out, s, target, mask, ignore_index, thresholds, uniform)
    return out - before


@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("dtype", SCORE_DTYPES, ids=dtype_id)
@pytest.mark.parametrize("mode", MODES)
def test_binned_matches_numpy(impl, mode, dtype, kind):
    g = generator(20)
    thr = thresholds_of("sorted-with-duplicates", g)
    target_dtype = LABEL_DTYPES[SCORE_DTYPES.index(dtype) + 1]
    s, target = binned_inputs(mode, N, dtype, thr, g, target_dtype)
    got = run(impl.binned_update, mode, layout(s, kind), layout(target, kind), None, None, thr, False, g)
    assert torch.equal(got, np_binned(np_values(s), np_values(target), thr.numpy(), mode))


@pytest.mark.parametrize("thr_kind", ["uniform", "sorted-with-duplicates", "empty", "single"])
@pytest.mark.parametrize("mode", MODES)
def test_binned_threshold_sets(impl, mode, thr_kind):
    g = generator(21)
    thr = thresholds_of(thr_kind, g)
    s, target = binned_inputs(mode, N, torch.float32, thr, g)
    got = run(impl.binned_update, mode, s, target, None, None, thr, thr_kind == "uniform", g)
    assert torch.equal(got, np_binned(np_values(s), np_values(target), thr.numpy(), mode))


def test_binned_bins_are_searchsorted_right(impl):
    """Second oracle: out[0, b] counts the scores with np.searchsorted(t, s, 'right') == b."""
    g = generator(22)
    thr = thresholds_of("sorted-with-duplicates", g)
    s, target = binned_inputs("binary", N, torch.float64, thr, g)
    got = run(impl.binned_update, "binary", s, target, None, None, thr, False, g)
    b = np.searchsorted(thr.numpy(), s.numpy(), side="right")
    want = np.zeros((len(thr) + 1, 2), np.int64)
    np.add.at(want, (b, target.numpy()), 1)
    assert torch.equal(got[0], torch.from_numpy(want))


def test_binned_suffix_sums_are_tp_and_fp(impl):
    """TP(i) = #{positive, s >= t_i} is the sum of bins b > i (the contract's promise)."""
    g = generator(23)
    thr = thresholds_of("uniform", g)
    s, target = binned_inputs("binary", 500, torch.float64, thr, g)
    got = run(impl.binned_update, "binary", s, target, None, None, thr, True, g)[0]
    for i, t in enumerate(thr.tolist()):
        above = s >= t
        assert int(got[i + 1 :, 1].sum()) == int((above & (target == 1)).sum())
        assert int(got[i + 1 :, 0].sum()) == int((above & (target == 0)).sum())


THRESHOLD_GRIDS = {
    "linspace-11": lambda: torch.linspace(0, 1, 11, dtype=torch.float64),
    "linspace-1001-offset": lambda: torch.linspace(-3.7, 12.1, 1001, dtype=torch.float64),
    "tenths-by-division": lambda: torch.arange(0, 11, dtype=torch.float64) / 10,
    "two": lambda: torch.tensor([0.25, 0.75], dtype=torch.float64),
    "constant": lambda: torch.full((5,), 0.5, dtype=torch.float64),
    "not-even": lambda: torch.tensor([0.0, 0.01, 0.5, 0.51, 1.0], dtype=torch.float64),
    "infinite-ends": lambda: torch.tensor([-float("inf"), 0.0, 0.5, float("inf")], dtype=torch.float64),
    "denormal-range": lambda: torch.tensor([0.0, 5e-324], dtype=torch.float64),
}


@pytest.mark.parametrize("grid", list(THRESHOLD_GRIDS))
def test_binned_uniform_flag_gives_identical_bins(impl, grid):
    """The uniform hint may change the method, never the result, even on boundary scores,
    their float64 neighbours, infinities, or thresholds that are not really evenly spaced."""
    g = generator(24)
    thr = THRESHOLD_GRIDS[grid]()
    finite = thr[torch.isfinite(thr)]
    edge = torch.cat(
        [
            finite,
            torch.from_numpy(np.nextafter(finite.numpy(), np.inf)),
            torch.from_numpy(np.nextafter(finite.numpy(), -np.inf)),
            torch.tensor([float("inf"), -float("inf"), 0.0, -0.0, 1e300, -1e300], dtype=torch.float64),
        ]
    )
    s = torch.cat([edge, torch.rand(2000, generator=g, dtype=torch.float64) * 20 - 5])
    target = labels(s.shape, 2, torch.bool, g)
    searched = run(impl.binned_update, "binary", s, target, None, None, thr, False, g)
    direct = run(impl.binned_update, "binary", s, target, None, None, thr, True, g)
    assert torch.equal(direct, searched)
    assert torch.equal(direct, np_binned(s.numpy(), target.numpy(), thr.numpy(), "binary"))


@pytest.mark.parametrize("mode", MODES)
def test_binned_mask_and_ignore_index(impl, mode):
    """mask per sample; ignore_index per sample (binary, multiclass) or per element (multilabel)."""
    g = generator(25)
    thr = thresholds_of("uniform", g)
    s, target = binned_inputs(mode, N, torch.float32, thr, g)
    target[torch.rand(target.shape, generator=g) < 0.15] = 255
    mask = torch.rand(N, generator=g) < 0.75
    target[~mask] = 77  # out of range but masked
    got = run(impl.binned_update, mode, s, target.to(torch.uint8), mask, 255, thr, True, g)
    keep = (target != 255) & (mask if target.dim() == 1 else mask[:, None])
    assert torch.equal(got, np_binned(s.numpy(), target.numpy(), thr.numpy(), mode, keep.numpy()))


def test_binned_many_classes_and_thresholds(impl):
    g = generator(26)
    classes, thr = 1100, torch.linspace(0, 1, 201, dtype=torch.float64)
    s = torch.rand(300, classes, generator=g).to(torch.bfloat16)
    target = labels((300,), classes, torch.int16, g)
    out = start_counts((classes, 202, 2), g)
    before = out.clone()
    impl.binned_update(out, s, target, None, None, thr, True)
    assert torch.equal(out - before, np_binned(np_values(s), target.numpy(), thr.numpy(), "multiclass"))


def test_binned_expanded_and_zero_size(impl):
    g = generator(27)
    thr = thresholds_of("uniform", g)
    s = torch.tensor([[0.3, 0.35, 0.9, 0.0]]).expand(N, K)
    target = torch.tensor(2).expand(N)
    got = run(impl.binned_update, "multiclass", s, target, None, None, thr, True, g)
    assert torch.equal(got, np_binned(s.numpy(), target.numpy(), thr.numpy(), "multiclass"))
    empty = run(
        impl.binned_update,
        "multilabel",
        torch.zeros(0, K),
        torch.zeros(0, K, dtype=torch.int64),
        None,
        None,
        thr,
        False,
        g,
    )
    assert not empty.any()
