"""The calibration-bins and ranking-sums kernels: the C core against the torch reference (the
oracle) on random inputs of every dtype and layout, the ranking sums against scikit-learn, and
bad calls (both paths) that leave the outputs untouched."""

import numpy as np
import pytest
import sklearn.metrics as skm
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from support.kernel_inputs import LABEL_DTYPES, SCORE_DTYPES, dtype_id, generator, kernels

from torchtally.kernels import reference


def _bins(b):
    return torch.zeros(b, dtype=torch.int64), torch.zeros(b, 2, dtype=torch.float64)


def _boundaries(n_bins, dtype=torch.float32):
    return torch.linspace(0, 1, n_bins + 1, dtype=dtype).double()


@pytest.mark.parametrize("dtype", SCORE_DTYPES, ids=dtype_id)
def test_calibration_c_matches_reference(c_core, dtype):
    g = generator(1)
    conf = torch.rand(2500, generator=g).to(dtype)
    conf[:50] = 1.0
    conf[50:100] = 0.0
    conf[100:150] = 0.5  # an inner edge
    hit = torch.randint(0, 2, (2500,), generator=g).bool()
    for n_bins in (1, 10, 15):
        edges = _boundaries(n_bins, dtype)
        (c1, s1), (c2, s2) = _bins(n_bins + 1), _bins(n_bins + 1)
        c_core.calibration_update(c1, s1, conf[::2], hit[::2], edges)  # strided inputs
        reference.calibration_update(c2, s2, conf[::2], hit[::2], edges)
        assert torch.equal(c1, c2)
        torch.testing.assert_close(s1, s2, rtol=1e-12, atol=1e-9)
        assert int(c1[-1]) == int((conf[::2] == 1).sum())  # 1.0 has the last bin of its own


def test_calibration_search_with_repeated_and_uneven_boundaries(impl):
    """Every bin count B from 1 to 9 (the search's halving at each size), repeated boundaries
    and confidences on every boundary: bins as torch.bucketize(right=True) - 1 places them."""
    g = generator(6)
    for bins in range(1, 10):
        edges = torch.sort(torch.randint(0, 6, (bins,), generator=g).double() / 5).values
        edges[0] = 0.0
        conf = torch.cat((torch.rand(300, generator=g, dtype=torch.float64), edges, edges))
        hit = torch.randint(0, 2, conf.shape, generator=g)
        counts, sums = _bins(bins)
        impl.calibration_update(counts, sums, conf, hit, edges)
        want = torch.bincount(torch.bucketize(conf, edges, right=True) - 1, minlength=bins)
        assert counts.tolist() == want.tolist(), (bins, edges)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(0, 60),
    labels=st.integers(1, 9),
    levels=st.sampled_from([3, 5, 1000]),
    ignored=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_ranking_c_matches_reference(n, labels, levels, ignored, seed):
    g = generator(seed)
    preds = torch.randint(0, levels, (n, labels), generator=g).float() / levels  # ties when levels is small
    target = torch.randint(0, 3 if ignored else 2, (n, labels), generator=g)
    a, b = torch.zeros(3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)
    kernels("c").ranking_update(a, preds, target)
    reference.ranking_update(b, preds, target)
    torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("labels", [31, 32, 33, 70])
@pytest.mark.parametrize("levels", [4, 1000])
def test_ranking_of_wide_rows_matches_reference(labels, levels):
    """Rows sorted by insertion (up to 32 labels) and by qsort (more) score alike, ties too."""
    g = generator(labels * 7 + levels)
    preds = torch.randint(0, levels, (200, labels), generator=g).float() / levels
    target = torch.randint(0, 3, (200, labels), generator=g)
    a, b = torch.zeros(3, dtype=torch.float64), torch.zeros(3, dtype=torch.float64)
    kernels("c").ranking_update(a, preds, target)
    reference.ranking_update(b, preds, target)
    torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("impl_name", ["c", "reference"])
@pytest.mark.parametrize("pdtype,tdtype", list(zip(SCORE_DTYPES, LABEL_DTYPES[1:])))
def test_ranking_sums_match_sklearn(impl, impl_name, pdtype, tdtype):
    g = generator(3)
    preds = (torch.randint(0, 6, (300, 7), generator=g).float() / 8).to(pdtype)
    target = torch.randint(0, 2, (300, 7), generator=g)
    out = torch.zeros(3, dtype=torch.float64)
    impl.ranking_update(out, preds.t().contiguous().t(), target.to(tdtype))  # column-major preds
    y, s = target.numpy(), preds.double().numpy()
    want = np.array(
        [skm.coverage_error(y, s), skm.label_ranking_average_precision_score(y, s), skm.label_ranking_loss(y, s)]
    )
    np.testing.assert_allclose(out.numpy() / 300, want, rtol=1e-12)


def test_calibration_bad_calls_leave_outputs_untouched(impl):
    conf, hit, edges = torch.tensor([0.2, 0.7]), torch.tensor([1, 0]), _boundaries(4)
    calls = [
        ((conf.double(), hit, edges), TypeError, "counts", True),  # counts given as float64
        ((torch.tensor([0.2, float("nan")]), hit, edges), ValueError, "conf", False),
        ((torch.tensor([0.2, -0.5]), hit, edges), ValueError, "conf", False),
        ((conf.long(), hit, edges), TypeError, "conf", False),
        ((conf, torch.tensor([1, 2]), edges), ValueError, "hit", False),
        ((conf, hit[:1], edges), ValueError, "hit", False),
        ((conf, hit, edges.flip(0)), ValueError, "boundaries", False),
        ((conf, hit, edges.float()), TypeError, "boundaries", False),
        ((conf, hit, edges[:3]), ValueError, "boundaries", False),
    ]
    for args, exc, match, float_counts in calls:
        counts, sums = _bins(5)
        counts += 3
        sums += 0.5
        first = sums[:, 0].clone() if float_counts else counts
        with pytest.raises(exc, match=match):
            impl.calibration_update(first, sums, *args)
        assert bool((counts == 3).all()) and bool((sums == 0.5).all())


def test_ranking_bad_calls_leave_out_untouched(impl):
    preds, target = torch.rand(4, 3), torch.randint(0, 2, (4, 3))
    nan = preds.clone()
    nan[3, 2] = float("nan")
    bad_label = target.clone()
    bad_label[2, 0] = 3
    calls = [
        ((torch.zeros(3), preds, target), TypeError, "out"),
        ((torch.zeros(4, dtype=torch.float64), preds, target), ValueError, "out"),
        ((None, nan, target), ValueError, "preds"),
        ((None, preds, bad_label), ValueError, "target"),
        ((None, preds, target[:3]), ValueError, "target"),
        ((None, preds, target.float()), TypeError, "target"),
        ((None, target, target), TypeError, "preds"),
        ((None, preds[0], target[0]), ValueError, "preds"),
    ]
    for (out, p, t), exc, match in calls:
        mine = torch.full((3,), 2.0, dtype=torch.float64) if out is None else out
        before = mine.clone()
        with pytest.raises(exc, match=match):
            impl.ranking_update(mine, p, t)
        assert torch.equal(mine, before)
