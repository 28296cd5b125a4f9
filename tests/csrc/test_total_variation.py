"""The total-variation kernel of TotalVariation: the C core and the torch reference against plain
float64 torch on every float dtype, strided, sliced and channels-last images, widths around the
C core's four lanes, single rows and columns, NaN and infinity, empty batches; bad input raises
naming the argument, with out untouched."""

import pytest
import torch
from support.kernel_inputs import generator, kernels, same_bits

_F64 = torch.float64
DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def _expected(img):
    x = img.double()
    down = (x[..., 1:, :] - x[..., :-1, :]).abs().sum(dim=(1, 2, 3))
    return down + (x[..., :, 1:] - x[..., :, :-1]).abs().sum(dim=(1, 2, 3))


def _run(impl, img):
    out = torch.full((img.shape[0],), 7.0, dtype=_F64)
    impl.total_variation(out, img)
    return out


def _views(x):
    n, c, h, w = x.shape
    big = torch.zeros(n, 2 * c, h + 1, 3 * w, dtype=x.dtype)
    big[:, 1::2, 1:, ::3] = x
    return [x, big[:, 1::2, 1:, ::3], x.contiguous(memory_format=torch.channels_last), x.transpose(2, 3)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "shape", [(2, 3, 5, 7), (1, 1, 1, 1), (3, 2, 1, 9), (2, 2, 9, 1), (1, 3, 8, 4), (2, 1, 6, 5), (0, 3, 4, 4)]
)
def test_matches_float64_torch_in_every_layout(impl, dtype, shape):
    g = generator(shape[2] * 10 + shape[3])
    x = torch.randn(shape, generator=g, dtype=_F64).to(dtype)
    for view in _views(x):
        torch.testing.assert_close(_run(impl, view), _expected(view), rtol=1e-13, atol=1e-13)


def test_c_equals_the_reference_on_random_batches():
    for seed in range(10):
        g = generator(seed)
        shape = tuple(int(v) for v in torch.randint(1, 40, (4,), generator=g))
        x = torch.rand(shape, generator=g) * 100
        torch.testing.assert_close(_run(kernels("c"), x), _run(kernels("reference"), x), rtol=1e-13, atol=0)


def test_nan_and_infinity_propagate(impl):
    x = torch.rand(3, 2, 6, 6)
    x[1, 1, 3, 2] = float("nan")
    x[2, 0, 0, 0] = float("inf")
    out = _run(impl, x)
    assert out[0].isfinite() and out[1].isnan() and not out[2].isfinite()


BAD = [
    (lambda a: a.__setitem__(0, torch.zeros(2)), TypeError, "out"),
    (lambda a: a.__setitem__(0, torch.zeros(3, dtype=_F64)), ValueError, "out"),
    (lambda a: a.__setitem__(0, torch.zeros(4, dtype=_F64)[::2]), ValueError, "out"),
    (lambda a: a.__setitem__(1, a[1].long()), TypeError, "img"),
    (lambda a: a.__setitem__(1, a[1][0]), ValueError, "img"),
]


@pytest.mark.parametrize("change,error,name", BAD)
def test_bad_input_raises_naming_the_argument_with_out_untouched(impl, change, error, name):
    args = [torch.full((2,), 3.0, dtype=_F64), torch.rand(2, 3, 5, 7)]
    change(args)
    before = args[0].clone()
    with pytest.raises(error) as info:
        impl.total_variation(*args)
    assert str(info.value).startswith(f"{name}:"), str(info.value)
    assert same_bits(args[0], before)
