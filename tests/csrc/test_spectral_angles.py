"""The spectral-angle kernel of SpectralAngleMapper: the C core against the torch reference (and
both against numpy's arccos where it is accurate) on every float dtype, strided, sliced and
channels-last images, widths across the C core's pixel block, one band and many, zero spectra
(NaN) and empty batches; bad input raises naming the argument, with out untouched."""

import numpy as np
import pytest
import torch
from support.kernel_inputs import generator, kernels, same_bits

_F64 = torch.float64
DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def _run(impl, x, y):
    out = torch.full((x.shape[0], x.shape[2], x.shape[3]), 7.0, dtype=_F64)
    impl.spectral_angles(out, x, y)
    return out


def _views(x):
    """x itself, a sliced copy (offset and strides > 1), channels-last, H and W swapped."""
    n, c, h, w = x.shape
    big = torch.zeros(n, 2 * c, h + 1, 3 * w, dtype=x.dtype)
    big[:, 1::2, 1:, ::3] = x
    return [x, big[:, 1::2, 1:, ::3], x.contiguous(memory_format=torch.channels_last), x.transpose(2, 3)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3, 5, 7), (1, 1, 4, 4), (3, 31, 2, 300), (2, 4, 17, 16), (0, 3, 4, 4)])
def test_c_equals_the_reference_in_every_layout(dtype, shape):
    g = generator(shape[1] * 100 + shape[3])
    x = torch.randn(shape, generator=g, dtype=_F64).to(dtype)
    y = (x.double() + 0.3 * torch.randn(shape, generator=g, dtype=_F64)).to(dtype)
    for vx, vy in zip(_views(x), _views(y)):
        got, want = _run(kernels("c"), vx, vy), _run(kernels("reference"), vx, vy)
        torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-14)


def test_both_match_the_arccosine_of_the_cosine_away_from_0_and_pi(impl):
    g = generator(3)
    x, y = torch.rand(2, 6, 9, 11, generator=g, dtype=_F64), torch.rand(2, 6, 9, 11, generator=g, dtype=_F64)
    a, b = x.numpy(), y.numpy()
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    np.testing.assert_allclose(_run(impl, x, y).numpy(), np.arccos(cos), rtol=1e-10)


def test_equal_opposite_and_zero_spectra(impl):
    x = torch.tensor([[1.0, 2.0, 0.0, 3.0], [2.0, -1.0, 0.0, 1.0]]).reshape(1, 2, 1, 4)
    y = torch.tensor([[2.0, -2.0, 1.0, 3.0], [4.0, 1.0, 1.0, 1.0]]).reshape(1, 2, 1, 4)
    out = _run(impl, x, y)[0, 0]
    assert out[0].item() == 0.0  # equal directions: exactly 0, not acos's rounding
    assert out[1].item() == pytest.approx(np.pi, rel=1e-15)  # opposite
    assert out[2].isnan()  # a zero spectrum
    assert out[3].item() == 0.0


BAD = [
    (lambda a: a.__setitem__(0, torch.zeros(2, 5, 7)), TypeError, "out"),
    (lambda a: a.__setitem__(0, torch.zeros(2, 5, 6, dtype=_F64)), ValueError, "out"),
    (lambda a: a.__setitem__(0, torch.zeros(2, 7, 5, dtype=_F64).transpose(1, 2)), ValueError, "out"),
    (lambda a: a.__setitem__(1, a[1].long()), TypeError, "x"),
    (lambda a: a.__setitem__(1, a[1][0]), ValueError, "x"),
    (lambda a: a.__setitem__(slice(1, 3), [a[1][:, :0], a[2][:, :0]]), ValueError, "x"),
    (lambda a: a.__setitem__(2, a[2].double()), ValueError, "y"),
    (lambda a: a.__setitem__(2, a[2][:, :2]), ValueError, "y"),
]


@pytest.mark.parametrize("change,error,name", BAD)
def test_bad_input_raises_naming_the_argument_with_out_untouched(impl, change, error, name):
    args = [torch.full((2, 5, 7), 3.0, dtype=_F64), torch.rand(2, 3, 5, 7), torch.rand(2, 3, 5, 7)]
    change(args)
    before = args[0].clone()
    with pytest.raises(error) as info:
        impl.spectral_angles(*args)
    assert str(info.value).startswith(f"{name}:"), str(info.value)
    assert same_bits(args[0], before)
