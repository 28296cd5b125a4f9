"""The clustering kernels, contingency_rows and cluster_moments: the C core against the torch
reference (and both against a plain Python count / float64 torch) on random labels of small and
huge range (the dense and the hashed layout), negative labels, strided inputs, every label dtype,
every float dtype, empty batches, rows folded into rows held before; bad input raises naming the
argument, with out and size untouched."""

import collections

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from support.kernel_inputs import kernels, same_bits

I64, F64 = torch.int64, torch.float64
LABEL_DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
FLOAT_DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
HALF = 1 << 32


def run_contingency(impl, table, preds, target):
    rows = (0 if table is None else table.shape[0]) + preds.shape[0]
    out = torch.full((rows + 2, 3), -7, dtype=I64)
    size = torch.full((1,), -1, dtype=I64)
    impl.contingency_rows(out, size, table, preds, target)
    assert same_bits(out[int(size) :], torch.full_like(out[int(size) :], -7))  # nothing past size
    return out[: int(size)]


def counted(table, preds, target):
    """The expected rows, by a plain Python count."""
    c = collections.Counter()
    for p, t, n in [] if table is None else table.tolist():
        c[(p, t)] += n
    for p, t in zip(preds.long().tolist(), target.long().tolist()):
        c[(p, t)] += 1
    return torch.tensor([[p, t, n] for (p, t), n in sorted(c.items())], dtype=I64).reshape(-1, 3)


def random_labels(g, n, spread, offset=0):
    return torch.randint(0, spread, (n,), generator=g) * (1 if spread < 1000 else 7919) + offset


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(0, 3000),
    spread=st.sampled_from([1, 3, 10, 200, 10**6, 2**40]),
    offset=st.sampled_from([0, -5, -(2**62), 2**62]),
    held=st.integers(0, 40),
    seed=st.integers(0, 2**16),
)
def test_contingency_c_equals_the_reference_and_a_plain_count(n, spread, offset, held, seed):
    g = torch.Generator().manual_seed(seed)
    preds, target = random_labels(g, n, spread, offset), random_labels(g, n, spread)
    table = None
    if held:
        table = counted(None, random_labels(g, held, spread, offset), random_labels(g, held, spread))
        table[:, 2] = torch.randint(1, 1000, (table.shape[0],), generator=g)
        table = table[torch.randperm(table.shape[0], generator=g)]  # any order is accepted
    want = counted(table, preds, target)
    for name in ("c", "reference"):
        got = run_contingency(kernels(name), table, preds, target)
        assert torch.equal(got, want), name


def test_contingency_extreme_labels_take_the_hashed_layout():
    extremes = torch.tensor([-(2**63), 2**63 - 1, 0, -1, 2**63 - 1, -(2**63)])
    for name in ("c", "reference"):
        got = run_contingency(kernels(name), None, extremes, extremes.flip(0))
        assert torch.equal(got, counted(None, extremes, extremes.flip(0))), name


@pytest.mark.parametrize("dtype", LABEL_DTYPES)
def test_contingency_every_label_dtype_and_strided_inputs(impl, dtype):
    g = torch.Generator().manual_seed(3)
    wide = torch.randint(0, 2 if dtype == torch.bool else 100, (2, 5000), generator=g).to(dtype)
    preds, target = wide[0, ::2], wide[1, 1::2]  # strided views
    table = counted(None, preds[:50], target[:50])
    table_strided = torch.zeros(table.shape[0], 6, dtype=I64)
    table_strided[:, ::2] = table
    got = run_contingency(impl, table_strided[:, ::2], preds, target)
    assert torch.equal(got, counted(table, preds, target))


def test_contingency_mixed_label_dtypes(impl):
    preds, target = torch.tensor([1, 2, 2], dtype=torch.uint8), torch.tensor([-1, 5, 5], dtype=torch.int16)
    assert run_contingency(impl, None, preds, target).tolist() == [[1, -1, 1], [2, 5, 2]]


def test_contingency_empty(impl):
    empty = torch.zeros(0, dtype=I64)
    assert run_contingency(impl, None, empty, empty).shape == (0, 3)
    assert run_contingency(impl, torch.zeros(0, 3, dtype=I64), empty, empty).shape == (0, 3)
    table = torch.tensor([[5, 1, 2], [-3, 1, 4], [5, 1, 1]])
    assert run_contingency(impl, table, empty, empty).tolist() == [[-3, 1, 4], [5, 1, 3]]


CONTINGENCY_BAD = [
    (lambda a: a.__setitem__(0, torch.zeros(6, 3, dtype=torch.int32)), TypeError, "out"),
    (lambda a: a.__setitem__(0, torch.zeros(3, 3, dtype=I64)), ValueError, "out"),  # M < K + N
    (lambda a: a.__setitem__(0, torch.zeros(6, 4, dtype=I64)), ValueError, "out"),
    (lambda a: a.__setitem__(0, torch.zeros(3, 6, dtype=I64).t()), ValueError, "out"),
    (lambda a: a.__setitem__(1, torch.zeros(1, dtype=torch.int32)), TypeError, "size"),
    (lambda a: a.__setitem__(1, torch.zeros(2, dtype=I64)), ValueError, "size"),
    (lambda a: a.__setitem__(2, a[2].int()), TypeError, "table"),
    (lambda a: a.__setitem__(2, a[2][:, :2]), ValueError, "table"),
    (lambda a: a.__setitem__(2, torch.tensor([[1, 1, 0]])), ValueError, "table"),
    (lambda a: a.__setitem__(2, torch.tensor([[1, 1, 2**62], [1, 1, 2**62], [1, 1, 2**62]])), ValueError, "table"),
    (lambda a: a.__setitem__(3, a[3].float()), TypeError, "preds"),
    (lambda a: a.__setitem__(3, a[3].reshape(1, -1)), ValueError, "preds"),
    (lambda a: a.__setitem__(4, a[4][:-1]), ValueError, "target"),
    (lambda a: a.__setitem__(4, a[4].double()), TypeError, "target"),
]


@pytest.mark.parametrize("change,error,name", CONTINGENCY_BAD)
def test_contingency_bad_input_raises_naming_the_argument_with_out_untouched(impl, change, error, name):
    args = [torch.full((6, 3), 9, dtype=I64), torch.full((1,), 9, dtype=I64), torch.tensor([[0, 1, 2]])]
    args += [torch.tensor([0, 1, 1]), torch.tensor([1, 1, 0])]
    change(args)
    before = [args[0].clone(), args[1].clone()]
    with pytest.raises(error) as info:
        impl.contingency_rows(*args)
    assert str(info.value).startswith(f"{name}:"), str(info.value)
    assert same_bits(args[0], before[0]) and same_bits(args[1], before[1])


# -- cluster_moments -------------------------------------------------------------------------


def run_moments(impl, block, data, labels):
    d = data.shape[1] if block.numel() == 0 else int(block[0])
    k = (block.numel() - 1) // (4 + d) if block.numel() else 0
    out = torch.full((1 + (k + data.shape[0]) * (4 + d) + 3,), -7.0, dtype=F64)
    size = torch.full((1,), -1, dtype=I64)
    impl.cluster_moments(out, size, block, data, labels)
    assert same_bits(out[int(size) :], torch.full_like(out[int(size) :], -7.0))
    return out[: int(size)]


def rows_of(block):
    d = int(block[0])
    rows = block[1:].reshape(-1, 4 + d)
    return (rows[:, 0].long() * HALF + rows[:, 1].long()), rows[:, 2], rows[:, 3], rows[:, 4:]


def expected_moments(parts_data, parts_labels):
    """(labels, counts, M2, means) of every sample given, in float64 torch, two-pass."""
    x = torch.cat([p.double() for p in parts_data])
    lab = torch.cat([p.long() for p in parts_labels])
    keys = torch.unique(lab)
    counts = torch.stack([(lab == k).sum().double() for k in keys])
    means = torch.stack([x[lab == k].mean(0) for k in keys])
    m2 = torch.stack([(x[lab == k] - x[lab == k].mean(0)).pow(2).sum() for k in keys])
    return keys, counts, m2, means


def assert_moments(block, want):
    labels, counts, m2, means = rows_of(block)
    assert torch.equal(labels, want[0]) and torch.equal(counts, want[1])
    torch.testing.assert_close(means, want[3], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(m2, want[2], rtol=1e-10, atol=1e-10)


@settings(max_examples=50, deadline=None)
@given(
    n=st.integers(0, 600),
    held=st.integers(0, 300),
    d=st.integers(1, 5),
    spread=st.sampled_from([1, 4, 50, 2**40]),
    offset=st.sampled_from([0, -3, -(2**62)]),
    seed=st.integers(0, 2**16),
)
def test_moments_c_equals_the_reference_and_float64_torch(n, held, d, spread, offset, seed):
    g = torch.Generator().manual_seed(seed)
    first_x = torch.randn(held, d, generator=g) * 5 + 100
    first_l = random_labels(g, held, spread, offset)
    x = torch.randn(n, d, generator=g)
    lab = random_labels(g, n, spread, offset)
    empty = torch.zeros(0, dtype=F64)
    results = {}
    for name in ("c", "reference"):
        impl = kernels(name)
        block = run_moments(impl, empty, first_x, first_l)
        results[name] = run_moments(impl, block, x, lab)
    if n + held == 0:
        assert results["c"].numel() == 0 == results["reference"].numel()
        return
    torch.testing.assert_close(results["c"], results["reference"], rtol=1e-12, atol=1e-12)
    assert_moments(results["c"], expected_moments([first_x, x], [first_l, lab]))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("label_dtype", [torch.uint8, torch.int32, torch.int64])
def test_moments_every_dtype_and_strided_data(impl, dtype, label_dtype):
    g = torch.Generator().manual_seed(4)
    wide = torch.randn(3000, 8, generator=g).to(dtype)
    data = wide[::3, 1::2]  # strided rows and columns
    labels = torch.randint(0, 5, (2 * data.shape[0],), generator=g).to(label_dtype)[::2]
    got = run_moments(impl, torch.zeros(0, dtype=F64), data, labels)
    assert_moments(got, expected_moments([data], [labels]))


def test_moments_merge_of_blocks_with_repeated_labels(impl):
    g = torch.Generator().manual_seed(5)
    x1, x2 = torch.randn(50, 3, generator=g) + 10, torch.randn(70, 3, generator=g) - 4
    l1, l2 = torch.randint(0, 4, (50,), generator=g), torch.randint(2, 6, (70,), generator=g)
    empty = torch.zeros(0, dtype=F64)
    b1, b2 = run_moments(impl, empty, x1, l1), run_moments(impl, empty, x2, l2)
    joined = torch.cat((b1, b2[1:]))  # one block whose labels repeat
    merged = run_moments(impl, joined, torch.zeros(0, 3), torch.zeros(0, dtype=I64))
    assert_moments(merged, expected_moments([x1, x2], [l1, l2]))


def test_moments_empty(impl):
    empty = torch.zeros(0, dtype=F64)
    assert run_moments(impl, empty, torch.zeros(0, 4), torch.zeros(0, dtype=I64)).numel() == 0


def _block():
    return torch.tensor([2.0, 0.0, 3.0, 2.0, 1.0, 0.5, -0.5], dtype=F64)  # D = 2, label 3, count 2, M2 1


MOMENTS_BAD = [
    (lambda a: a.__setitem__(0, torch.zeros(40)), TypeError, "out"),
    (lambda a: a.__setitem__(0, torch.zeros(12, dtype=F64)), ValueError, "out"),
    (lambda a: a.__setitem__(1, torch.zeros(1)), TypeError, "size"),
    (lambda a: a.__setitem__(2, _block().float()), TypeError, "block"),
    (lambda a: a.__setitem__(2, _block()[:-1]), ValueError, "block"),
    (lambda a: a.__setitem__(2, torch.cat((torch.tensor([2.5]), _block()[1:]))), ValueError, "block"),
    (lambda a: a[2].__setitem__(3, 0.0), ValueError, "block"),  # count 0
    (lambda a: a[2].__setitem__(4, -1.0), ValueError, "block"),  # M2 < 0
    (lambda a: a[2].__setitem__(2, 0.5), ValueError, "block"),  # label lo not an integer
    (lambda a: a[2].__setitem__(5, float("nan")), ValueError, "block"),
    (lambda a: a.__setitem__(3, a[3].long()), TypeError, "data"),
    (lambda a: a.__setitem__(3, a[3][:, :1]), ValueError, "data"),  # D other than the block's
    (lambda a: a.__setitem__(3, a[3].reshape(-1)), ValueError, "data"),
    (lambda a: a[3].__setitem__((2, 1), float("inf")), ValueError, "data"),
    (lambda a: a[3].__setitem__((4, 0), float("nan")), ValueError, "data"),
    (lambda a: a.__setitem__(4, a[4].float()), TypeError, "labels"),
    (lambda a: a.__setitem__(4, a[4][:-1]), ValueError, "labels"),
]


@pytest.mark.parametrize("change,error,name", MOMENTS_BAD)
def test_moments_bad_input_raises_naming_the_argument_with_out_untouched(impl, change, error, name):
    args = [torch.full((40,), 9.0, dtype=F64), torch.full((1,), 9, dtype=I64), _block()]
    args += [torch.randn(5, 2), torch.tensor([0, 3, 3, 1, 0])]
    change(args)
    before = [args[0].clone(), args[1].clone()]
    with pytest.raises(error) as info:
        impl.cluster_moments(*args)
    assert str(info.value).startswith(f"{name}:"), str(info.value)
    assert same_bits(args[0], before[0]) and same_bits(args[1], before[1])


# -- cluster_distances -------------------------------------------------------------------------


def expected_distances(data, labels, keys, centroids, p):
    index = torch.searchsorted(keys, labels.long())
    dist = torch.linalg.vector_norm(data.double() - centroids[index], ord=p, dim=1)
    sums = torch.zeros(keys.numel(), dtype=F64).index_add_(0, index, dist)
    most = torch.zeros(keys.numel(), dtype=F64).scatter_reduce_(0, index, dist, "amax")
    return torch.stack((sums, most), 1)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(0, 2500),
    d=st.integers(1, 9),
    k=st.integers(1, 12),
    p=st.sampled_from([2.0, 1.0, 0.0, 3.0, 0.5, float("inf")]),
    offset=st.sampled_from([0, -7, 2**50]),
    seed=st.integers(0, 2**16),
)
def test_distances_c_equals_the_reference_and_vector_norm(n, d, k, p, offset, seed):
    g = torch.Generator().manual_seed(seed)
    keys = torch.sort(torch.randperm(50, generator=g)[:k]).values + offset
    labels = keys[torch.randint(0, k, (n,), generator=g)]
    data = torch.randn(n, d, generator=g)
    data[::7, 0] = 0.0  # some coordinates equal to the centroid's (p = 0 counts them out)
    centroids = torch.randn(k, d, generator=g, dtype=F64)
    centroids[0, 0] = 0.0
    want = expected_distances(data, labels, keys, centroids, p)
    for name in ("c", "reference"):
        out = torch.zeros(k, 2, dtype=F64)
        kernels(name).cluster_distances(out, data, labels, keys, centroids, p)
        torch.testing.assert_close(out, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_distances_every_dtype_strided_and_accumulated(impl, dtype):
    g = torch.Generator().manual_seed(6)
    data = torch.randn(3000, 6, generator=g).to(dtype)[::2, ::2]
    labels = torch.randint(0, 4, (3000,), generator=g)[::2].to(torch.int32)
    keys = torch.arange(4)
    centroids = torch.randn(4, 6, generator=g, dtype=F64)[:, 1::2]
    out = torch.zeros(4, 2, dtype=F64)
    impl.cluster_distances(out, data, labels, keys, centroids, 2.0)
    impl.cluster_distances(out, data[:10], labels[:10], keys, centroids, 2.0)  # sums add, maxima stay
    want = expected_distances(data, labels, keys, centroids, 2.0)
    want[:, 0] += expected_distances(data[:10], labels[:10], keys, centroids, 2.0)[:, 0]
    torch.testing.assert_close(out, want, rtol=1e-12, atol=1e-12)
    empty = torch.zeros(4, 2, dtype=F64)
    impl.cluster_distances(empty, data[:0], labels[:0], keys, centroids, 2.0)
    assert not empty.any()


DISTANCES_BAD = [
    (lambda a: a.__setitem__(0, torch.zeros(2, 2)), TypeError, "out"),
    (lambda a: a.__setitem__(0, torch.zeros(3, 2, dtype=F64)), ValueError, "out"),
    (lambda a: a.__setitem__(1, a[1].long()), TypeError, "data"),
    (lambda a: a[1].__setitem__((1, 1), float("nan")), ValueError, "data"),
    (lambda a: a[1].__setitem__((3, 0), float("-inf")), ValueError, "data"),
    (lambda a: a.__setitem__(2, a[2].float()), TypeError, "labels"),
    (lambda a: a.__setitem__(2, torch.tensor([0, 5, 5, 0])), ValueError, "labels"),  # 0 is no key
    (lambda a: a.__setitem__(2, a[2][:-1]), ValueError, "labels"),
    (lambda a: a.__setitem__(3, torch.tensor([7, 5])), ValueError, "keys"),
    (lambda a: a.__setitem__(3, torch.tensor([5, 7], dtype=torch.int32)), TypeError, "keys"),
    (lambda a: a.__setitem__(4, a[4].float()), TypeError, "centroids"),
    (lambda a: a.__setitem__(4, a[4][:, :1]), ValueError, "centroids"),
    (lambda a: a.__setitem__(5, -1.0), ValueError, "p"),
    (lambda a: a.__setitem__(5, float("nan")), ValueError, "p"),
]


@pytest.mark.parametrize("change,error,name", DISTANCES_BAD)
def test_distances_bad_input_raises_naming_the_argument_with_out_untouched(impl, change, error, name):
    args = [torch.full((2, 2), 9.0, dtype=F64), torch.randn(4, 2), torch.tensor([5, 7, 7, 5]), torch.tensor([5, 7])]
    args += [torch.randn(2, 2, dtype=F64), 2.0]
    change(args)
    before = args[0].clone()
    with pytest.raises(error) as info:
        impl.cluster_distances(*args)
    assert str(info.value).startswith(f"{name}:"), str(info.value)
    assert same_bits(args[0], before)
