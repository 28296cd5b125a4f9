"""Kendall's counts kernel (KendallRankCorrCoef's compute): the C core against the torch reference
and a brute-force count on random pairs with many ties, float32 and float64, every memory layout;
NaN and bad calls raise naming the argument with `out` untouched."""

import importlib

import pytest
import torch
from support.kernel_inputs import LAYOUTS, generator, kernels

ref = importlib.import_module("torchtally.kernels.reference.kendall_counts")  # the module, not its function


def _brute(x, y):
    n = len(x)
    con = dis = tx = ty = 0
    for i in range(n):
        for j in range(i + 1, n):
            sx, sy = (x[i] > x[j]) - (x[i] < x[j]), (y[i] > y[j]) - (y[i] < y[j])
            con += sx * sy > 0
            dis += sx * sy < 0
            tx += sx == 0
            ty += sy == 0
    return con, dis, tx, ty


def _pairs(n, d, dtype, seed, levels):
    g = generator(seed)
    return (torch.randint(0, levels, (n, 2, d), generator=g).to(torch.float64) / 2 - 1).to(dtype)


@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("n,d,levels", [(0, 1, 2), (1, 2, 3), (2, 1, 1), (9, 3, 4), (60, 2, 1000), (2500, 2, 30)])
def test_c_matches_reference_and_brute_force(n, d, levels, dtype, kind):
    pairs = _pairs(n, d, dtype, n + d + levels, levels)
    if kind == "transposed":
        pairs = pairs.permute(2, 1, 0).contiguous().permute(2, 1, 0)
    elif kind == "sliced":
        pairs = torch.zeros(2 * n + 1, 2, 2 * d, dtype=dtype)[1::2, :, ::2].copy_(pairs)
    got, want = torch.full((d, 11), 7.0, dtype=torch.float64), torch.full((d, 11), 7.0, dtype=torch.float64)
    kernels("c").kendall_counts(got, pairs)
    kernels("reference").kendall_counts(want, pairs)
    assert torch.equal(got, want)
    if n <= 60:
        for j in range(d):
            con, dis, tx, ty = _brute(pairs[:, 0, j].tolist(), pairs[:, 1, j].tolist())
            assert got[j, :3].tolist() == [con - dis, con, dis]
            assert got[j, 5] == tx and got[j, 8] == ty


def test_reference_inversions_against_brute_force():
    g = torch.Generator().manual_seed(0)
    for n, high in [(0, 1), (1, 3), (2, 2), (17, 3), (40, 40), (33, 1000)]:
        r = torch.randint(0, high, (n,), generator=g)
        dense, distinct = ref.dense_ranks(r)
        brute = sum(int(r[i] > r[j]) for i in range(n) for j in range(i + 1, n))
        assert ref.count_inversions(dense, distinct) == brute, (n, high)


BAD = [
    (1, torch.tensor([[[1.0], [2.0]], [[float("nan")], [0.0]]]), ValueError, r"pairs: NaN at \[1, 0, 0\]"),
    (1, torch.zeros(2, 2, 1, dtype=torch.int64), TypeError, "pairs"),
    (1, torch.zeros(2, 3, 1), ValueError, "pairs"),
    (1, torch.zeros(2, 2), ValueError, "pairs"),
    (0, torch.zeros(1, 11, dtype=torch.float32), TypeError, "out"),
    (0, torch.zeros(2, 11, dtype=torch.float64), ValueError, "out"),
]


@pytest.mark.parametrize("position,value,exc,message", BAD)
def test_bad_input_leaves_out_untouched(impl, position, value, exc, message):
    args = [torch.full((1, 11), 7.0, dtype=torch.float64), torch.rand(2, 2, 1)]
    args[position] = value
    before = args[0].clone()
    with pytest.raises(exc, match=message):
        impl.kendall_counts(*args)
    assert args[0].shape != before.shape or args[0].dtype != before.dtype or torch.equal(args[0], before)
