"""The retrieval update's rows kernel (retrieval_rows): the C core against the torch reference on
random batches of every accepted dtype and memory layout, binary and graded relevance; bad values
and bad calls raise the same error on both paths, naming the argument, with the outputs untouched."""

import pytest
import torch
from support.kernel_inputs import LABEL_DTYPES, LAYOUTS, SCORE_DTYPES, dtype_id, generator, kernels, layout

INDEX_DTYPES = [d for d in LABEL_DTYPES if d != torch.bool]
TARGET_DTYPES = list(LABEL_DTYPES) + list(SCORE_DTYPES)


def _outs(n, graded, fill=7):
    rel = torch.float32 if graded else torch.bool
    return (
        torch.full((n,), fill, dtype=torch.int64),
        torch.full((n,), float(fill)),
        torch.full((n,), fill, dtype=rel) if graded else torch.ones(n, dtype=rel),
    )


def _batch(n, seed, preds_dtype, target_dtype, index_dtype, graded):
    g = generator(seed)
    preds = torch.randn(n, generator=g, dtype=torch.float64).to(preds_dtype)
    high = 2 if (target_dtype == torch.bool or not graded) else 5
    target = torch.randint(0, high, (n,), generator=g).to(target_dtype)
    if graded and target_dtype.is_floating_point:
        target = target + torch.rand(n, generator=g, dtype=torch.float64).to(target_dtype)
    low = 0 if index_dtype == torch.uint8 else -3
    indexes = torch.randint(low, 100, (n,), generator=g).to(index_dtype)
    return indexes, preds, target


@pytest.mark.parametrize("graded", [False, True], ids=["binary", "graded"])
@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("preds_dtype", SCORE_DTYPES, ids=dtype_id)
def test_c_matches_reference(preds_dtype, kind, graded):
    c, ref = kernels("c"), kernels("reference")
    for seed, target_dtype in enumerate(TARGET_DTYPES):
        index_dtype = INDEX_DTYPES[seed % len(INDEX_DTYPES)]
        for n in (0, 1, 40, 2500):
            indexes, preds, target = _batch(n, seed, preds_dtype, target_dtype, index_dtype, graded)
            inputs = [layout(t, kind) for t in (indexes, preds, target)]
            got, want = _outs(n, graded), _outs(n, graded)
            c.retrieval_rows(*got, *inputs)
            ref.retrieval_rows(*want, *inputs)
            for a, b in zip(got, want):
                assert torch.equal(a, b), (target_dtype, index_dtype, n)
            assert torch.equal(got[0], indexes.long())
            assert torch.equal(got[1], preds.float())
            assert torch.equal(got[2], target.float() if graded else target != 0)


BAD_VALUES = [
    (1, torch.tensor([0.5, 0.1, float("nan"), float("nan")]), False, r"preds: NaN at document 2 \(a NaN score"),
    (2, torch.tensor([0, 1, 2, 1]), False, r"target: expected 0 or 1 .*got 2 at document 2"),
    (2, torch.tensor([0, 1, -1, 1], dtype=torch.int8), True, "target: expected a finite relevance >= 0, got -1 at"),
    (2, torch.tensor([0, 1, 255, 1], dtype=torch.uint8), False, "got 255 at document 2"),
    (2, torch.tensor([0.0, 1.0, 0.5, 1.0]), False, "got 0.5 at document 2"),
    (2, torch.tensor([0.0, 1.0, 0.1, 1.0]), False, "got 0.10000000149011612 at document 2"),
    (2, torch.tensor([0.0, 1.0, 2.0, 1.0], dtype=torch.float64), False, r"got 2\.0 at document 2"),
    (2, torch.tensor([0.0, 1.0, 1e20, 1.0], dtype=torch.float64), False, r"got 1e\+20 at document 2"),
    (2, torch.tensor([0.0, 1.0, 123456.75, 1.0], dtype=torch.float64), False, r"got 123456\.75 at document 2"),
    (2, torch.tensor([0.0, 1.0, -2.5e-7, 1.0], dtype=torch.float64), True, r"got -2\.5e-07 at document 2"),
    (2, torch.tensor([0.0, 1.0, float("inf"), 1.0]), True, "got inf at document 2"),
    (2, torch.tensor([0.0, 1.0, float("nan"), 1.0]), True, "got nan at document 2"),
    (2, torch.tensor([0.0, 1.0, -0.5, 1.0], dtype=torch.bfloat16), True, r"got -0\.5 at document 2"),
]


def _good():
    return [torch.tensor([3, 3, 4, 4]), torch.tensor([0.5, 0.1, 0.7, 0.2]), torch.tensor([1.0, 0.0, 2.0, 1.0])]


@pytest.mark.parametrize("position,value,graded,message", BAD_VALUES)
def test_bad_values_raise_the_same_error_and_write_nothing(position, value, graded, message):
    messages = []
    for impl in (kernels("c"), kernels("reference")):
        args = _good()
        if not graded:
            args[2] = torch.tensor([1, 0, 0, 1])
        args[position] = value
        outs = _outs(4, graded)
        before = [o.clone() for o in outs]
        with pytest.raises(ValueError, match=message) as info:
            impl.retrieval_rows(*outs, *args)
        messages.append(str(info.value))
        for a, b in zip(outs, before):
            assert torch.equal(a, b)
    assert messages[0] == messages[1]


BAD_CALLS = [
    (3, torch.tensor([3, 3, 4, 4]).bool(), TypeError, "indexes"),
    (3, torch.tensor([3.0, 3.0, 4.0, 4.0]), TypeError, "indexes"),
    (3, torch.tensor([[3, 3, 4, 4]]), ValueError, "indexes"),
    (4, torch.tensor([5, 1, 7, 2]), TypeError, "preds"),
    (4, torch.tensor([0.5, 0.1, 0.7]), ValueError, "preds"),
    (5, torch.tensor([1.0, 0.0, 2.0]), ValueError, "target"),
    (5, torch.tensor([[1.0, 0.0, 2.0, 1.0]]), ValueError, "target"),
    (0, torch.zeros(4, dtype=torch.int32), TypeError, "query_out"),
    (0, torch.zeros(3, dtype=torch.int64), ValueError, "query_out"),
    (1, torch.zeros(4, dtype=torch.float64), TypeError, "score_out"),
    (1, torch.zeros(8)[::2], ValueError, "score_out"),
    (2, torch.zeros(4, dtype=torch.uint8), TypeError, "relevance_out"),
    (2, torch.zeros(5), ValueError, "relevance_out"),
]


@pytest.mark.parametrize("position,value,exc,arg", BAD_CALLS)
def test_bad_calls(impl, position, value, exc, arg):
    args = list(_outs(4, True)) + _good()
    args[position] = value
    before = [a.clone() for a in args[:3]]
    with pytest.raises(exc, match=arg):
        impl.retrieval_rows(*args)
    for a, b in zip(args[:3], before):
        assert a.dtype != b.dtype or a.shape != b.shape or torch.equal(a, b)
