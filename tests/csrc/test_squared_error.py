"""The squared-error kernel of PeakSignalNoiseRatio: the C core and the torch reference against
plain float64 torch on every float dtype, strided inputs, lengths across the chunk size, clamping
bounds, NaN and empty inputs; bad input raises naming the argument, with out untouched."""

import pytest
import torch
from support.kernel_inputs import generator, same_bits

_F64 = torch.float64
DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def _expected(x, y, bounds=None):
    xd, yd = x.double(), y.double()
    if bounds is not None:
        xd, yd = xd.clamp(*bounds.tolist()), yd.clamp(*bounds.tolist())
    return torch.stack(((xd - yd).square().sum(), yd.min(), yd.max()))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 3, 1024, 1029, 5000])
def test_matches_float64_torch(impl, dtype, n):
    g = generator(n)
    x = (torch.rand(n, generator=g) * 4 - 2).to(dtype)
    wide = torch.zeros(2 * n, dtype=dtype)
    wide[1::2] = (torch.rand(n, generator=g) * 4 - 2).to(dtype)
    y = wide[1::2]  # strided
    for bounds in (None, torch.tensor([-1.0, 0.5], dtype=_F64)):
        out = torch.full((3,), 7.0, dtype=_F64)
        impl.squared_error(out, x, y, bounds)
        torch.testing.assert_close(out, _expected(x, y, bounds), rtol=1e-13, atol=0)


def test_nan_propagates_and_empty_gives_an_empty_range(impl):
    x, y = torch.rand(3000), torch.rand(3000)
    y[2500] = float("nan")
    out = torch.zeros(3, dtype=_F64)
    impl.squared_error(out, x, y, None)
    assert out.isnan().all()
    y[2500], x[7] = 0.5, float("nan")  # a NaN in x alone: the sum is NaN, the range of y is not
    impl.squared_error(out, x, y, None)
    assert out[0].isnan() and out[1:].tolist() == [y.min().item(), y.max().item()]
    impl.squared_error(out, torch.empty(0), torch.empty(0), torch.tensor([0.0, 1.0], dtype=_F64))
    assert out.tolist() == [0.0, float("inf"), float("-inf")]


@pytest.mark.parametrize(
    "change,error,name",
    [
        (lambda a: a.__setitem__(0, torch.zeros(3)), TypeError, "out"),
        (lambda a: a.__setitem__(0, torch.zeros(4, dtype=_F64)), ValueError, "out"),
        (lambda a: a.__setitem__(1, a[1].long()), TypeError, "x"),
        (lambda a: a.__setitem__(1, a[1].reshape(2, -1)), ValueError, "x"),
        (lambda a: a.__setitem__(2, a[2][:-1]), ValueError, "y"),
        (lambda a: a.__setitem__(2, a[2].double()), ValueError, "y"),
        (lambda a: a.__setitem__(3, torch.tensor([0.0, 1.0])), TypeError, "bounds"),
        (lambda a: a.__setitem__(3, torch.tensor([0.0, 1.0, 2.0], dtype=_F64)), ValueError, "bounds"),
        (lambda a: a.__setitem__(3, torch.tensor([1.0, 0.0], dtype=_F64)), ValueError, "bounds"),
        (lambda a: a.__setitem__(3, torch.tensor([0.0, float("nan")], dtype=_F64)), ValueError, "bounds"),
    ],
)
def test_bad_input_raises_naming_the_argument_with_out_untouched(impl, change, error, name):
    args = [torch.full((3,), 5.0, dtype=_F64), torch.rand(2048), torch.rand(2048), torch.tensor([0.0, 1.0], dtype=_F64)]
    change(args)
    before = args[0].clone()
    with pytest.raises(error) as info:
        impl.squared_error(*args)
    assert str(info.value).startswith(f"{name}:"), str(info.value)
    assert same_bits(args[0], before)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.float16])
def test_every_simd_level_gives_the_same_bits(c_core, dtype):
    from support.simd_paths import levels, simd_level

    g = generator(5)
    x, y = torch.randn(3001, generator=g).to(dtype), torch.randn(3001, generator=g).to(dtype)
    y[100] = float("inf")
    results = []
    for level in levels():
        with simd_level(level) as c:
            for bounds in (None, torch.tensor([-0.5, 0.75], dtype=_F64)):
                out = torch.empty(3, dtype=_F64)
                c.squared_error(out, x, y, bounds)
                results.append((level, bounds is None, out))
    for level, no_bounds, out in results:
        first = next(o for lv, nb, o in results if nb == no_bounds)
        assert same_bits(out, first), (level, no_bounds, out, first)
