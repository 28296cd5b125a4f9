"""The Fleiss' kappa sums kernel, rating_sums: the C core and the torch reference against plain
int64 torch on every label dtype, strided counts, empty batches, counts past the fast path's
bounds (checked arithmetic), rows with different numbers of raters; bad input raises naming the
argument, with out untouched."""

import pytest
import torch
from support.kernel_inputs import kernels, same_bits

I64 = torch.int64
DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


def expected(counts):
    c = counts.to(I64)
    per_sample = c.sum(1)
    least = int(per_sample.min()) if c.shape[0] else 2**63 - 1
    most = int(per_sample.max()) if c.shape[0] else -(2**63)
    return torch.cat((c.sum(0), torch.tensor([int((c * c).sum()), least, most])))


def run(impl, counts):
    out = torch.full((counts.shape[1] + 3,), -5, dtype=I64)
    impl.rating_sums(out, counts)
    return out


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (7, 5), (3000, 4), (50, 0)])
def test_matches_int64_torch(impl, dtype, shape):
    g = torch.Generator().manual_seed(shape[0])
    counts = torch.randint(0, 2 if dtype == torch.bool else 60, shape, generator=g).to(dtype)
    assert torch.equal(run(impl, counts), expected(counts))


def test_strided_and_transposed_counts(impl):
    g = torch.Generator().manual_seed(2)
    wide = torch.randint(0, 9, (400, 12), generator=g)
    for view in (wide[::3, 1::2], wide.t()[:, ::5], wide.to(torch.int32)[::2]):
        assert torch.equal(run(impl, view), expected(view))


def test_large_counts_take_the_checked_path_and_agree(impl):
    counts = torch.tensor([[2**30, 3], [5, 2**25 + 7], [0, 0]])
    assert torch.equal(run(impl, counts), expected(counts))


def test_c_equals_the_reference_on_random_batches():
    for seed in range(20):
        g = torch.Generator().manual_seed(seed)
        n, c = int(torch.randint(0, 500, (1,), generator=g)), int(torch.randint(1, 9, (1,), generator=g))
        counts = torch.randint(0, 1 << int(torch.randint(1, 26, (1,), generator=g)), (n, c), generator=g)
        assert torch.equal(run(kernels("c"), counts), run(kernels("reference"), counts))


BAD = [
    (lambda a: a.__setitem__(0, torch.zeros(5, dtype=torch.int32)), TypeError, "out"),
    (lambda a: a.__setitem__(0, torch.zeros(4, dtype=I64)), ValueError, "out"),
    (lambda a: a.__setitem__(0, torch.zeros(10, dtype=I64)[::2]), ValueError, "out"),
    (lambda a: a.__setitem__(1, a[1].float()), TypeError, "ratings"),
    (lambda a: a.__setitem__(1, a[1].reshape(-1)), ValueError, "ratings"),
    (lambda a: a[1].__setitem__((2, 1), -1), ValueError, "ratings"),
    (lambda a: a[1].__setitem__((1, 0), 2**62), ValueError, "ratings"),  # its square overflows
    (lambda a: a.__setitem__(1, torch.full((4, 2), 2**62)), ValueError, "ratings"),  # sums overflow
]


@pytest.mark.parametrize("change,error,name", BAD)
def test_bad_input_raises_naming_the_argument_with_out_untouched(impl, change, error, name):
    args = [torch.full((5,), 7, dtype=I64), torch.tensor([[1, 2], [3, 0], [0, 3], [2, 1]])]
    change(args)
    before = args[0].clone()
    with pytest.raises(error) as info:
        impl.rating_sums(*args)
    assert str(info.value).startswith(f"{name}:"), str(info.value)
    assert same_bits(args[0], before)


# ---- rating_update: FleissKappa's update into its states --------------------------------------

NONE = -(2**63)


def states(c=2):
    return torch.zeros(c, dtype=I64), torch.zeros(2, dtype=I64), torch.full((4,), NONE, dtype=I64)


def test_update_accumulates_the_batches_sums_and_sets_the_bounds_once(impl):
    g = torch.Generator().manual_seed(7)
    totals, sums, bounds = states(4)
    batches = [torch.nn.functional.one_hot(torch.randint(0, 4, (n, 5), generator=g), 4).sum(1) for n in (3, 0, 40)]
    for b in batches:
        impl.rating_update(totals, sums, bounds, b)
    every = torch.cat(batches)
    assert torch.equal(totals, every.sum(0))
    assert sums.tolist() == [every.shape[0], int((every * every).sum())]
    assert bounds.tolist() == [5, -5, 4, -4]


@pytest.mark.parametrize("dtype", DTYPES)
def test_update_reads_every_label_dtype_and_strides(impl, dtype):
    g = torch.Generator().manual_seed(8)
    raters = 1 if dtype == torch.bool else 3
    view = torch.nn.functional.one_hot(torch.randint(0, 3, (30, raters), generator=g), 3).sum(1).to(dtype)
    strided = torch.zeros(30, 6, dtype=dtype)
    strided[:, ::2] = view
    totals, sums, bounds = states(3)
    impl.rating_update(totals, sums, bounds, strided[:, ::2])
    assert torch.equal(totals, view.to(I64).sum(0))
    assert bounds.tolist() == [raters, -raters, 3, -3]


def test_update_c_equals_the_reference():
    for seed in range(10):
        g = torch.Generator().manual_seed(seed)
        n, c = int(torch.randint(1, 300, (1,), generator=g)), int(torch.randint(1, 9, (1,), generator=g))
        counts = torch.nn.functional.one_hot(torch.randint(0, c, (n, 4), generator=g), c).sum(1)
        got = [states(c) for _ in range(2)]
        for impl, held in zip((kernels("c"), kernels("reference")), got):
            impl.rating_update(*held, counts)
            impl.rating_update(*held, counts[: n // 2])
        assert all(torch.equal(a, b) for a, b in zip(*got))


BAD_UPDATES = [
    (torch.tensor([[2, 0], [1, 2]]), "every sample must have the same number of ratings.*3 for sample 1"),
    (torch.tensor([[3, 0], [1, 2]]), "expected 2 categories and 2 raters per sample"),
    (torch.tensor([[1, 1, 0]]), "expected 2 categories and 2 raters per sample"),
    (torch.tensor([[1, -1]]), "expected counts >= 0"),
    (torch.tensor([[2, 0]]).float(), "integer or bool"),
]


@pytest.mark.parametrize("ratings,message", BAD_UPDATES)
def test_update_rejects_with_every_state_untouched(impl, ratings, message):
    totals, sums, bounds = states(2)
    impl.rating_update(totals, sums, bounds, torch.tensor([[1, 1], [2, 0]]))
    before = [t.clone() for t in (totals, sums, bounds)]
    with pytest.raises((ValueError, TypeError), match=f"^ratings: .*{message}"):
        impl.rating_update(totals, sums, bounds, ratings)
    assert all(same_bits(a, b) for a, b in zip((totals, sums, bounds), before))


def test_update_overflowing_the_states_is_refused(impl):
    totals, sums, bounds = states(2)
    impl.rating_update(totals, sums, bounds, torch.tensor([[2, 0]]))
    totals[0] = 2**63 - 2
    before = [t.clone() for t in (totals, sums, bounds)]
    with pytest.raises(ValueError, match="^ratings: .*fit int64"):
        impl.rating_update(totals, sums, bounds, torch.tensor([[2, 0], [1, 1]]))
    assert all(same_bits(a, b) for a, b in zip((totals, sums, bounds), before))


@pytest.mark.parametrize(
    "index,bad,name",
    [
        (0, torch.zeros(3, dtype=I64), "totals"),
        (1, torch.zeros(3, dtype=I64), "sums"),
        (2, torch.zeros(4, dtype=torch.int32), "bounds"),
    ],
)
def test_update_bad_state_names_it(impl, index, bad, name):
    held = list(states(2))
    held[index] = bad
    with pytest.raises((ValueError, TypeError), match=f"^{name}: "):
        impl.rating_update(*held, torch.tensor([[1, 1]]))


def test_update_of_no_sample_changes_nothing(impl):
    totals, sums, bounds = states(0)
    impl.rating_update(totals, sums, bounds, torch.zeros(0, 5, dtype=I64))
    assert sums.tolist() == [0, 0] and bounds.tolist() == [NONE] * 4
