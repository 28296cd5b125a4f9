"""The Toeplitz-solve kernel of SignalDistortionRatio: the C core (Levinson's recursion) and the
torch reference (Cholesky) against numpy's LU solve of the full matrices, for autocorrelations
of random, smooth and periodic signals, orders 1 to 600, strided inputs; matrices that are not
positive definite give NaN rows (the others in the batch still solved); bad input raises naming
the argument, with out untouched."""

import numpy as np
import pytest
import torch
from support.kernel_inputs import generator, kernels, same_bits

_F64 = torch.float64


def _autocorrelations(kind, rows, length, g):
    """The first columns of positive definite Toeplitz matrices: autocorrelations of signals."""
    if kind == "noise":
        s = torch.randn(rows, 4 * length, generator=g, dtype=_F64)
    elif kind == "smooth":  # a doubly integrated walk: an ill-conditioned matrix
        s = torch.randn(rows, 4 * length, generator=g, dtype=_F64).cumsum(-1).cumsum(-1)
    else:  # sines plus a little noise
        t = torch.arange(4 * length, dtype=_F64)
        s = torch.sin(t[None] * torch.rand(rows, 1, generator=g, dtype=_F64)) + 1e-3 * torch.randn(
            rows, 4 * length, generator=g, dtype=_F64
        )
    s = s / s.norm(dim=-1, keepdim=True)
    n_fft = 8 * length
    spec = torch.fft.rfft(s, n=n_fft)
    return torch.fft.irfft(spec.real.square() + spec.imag.square(), n=n_fft)[:, :length].contiguous()


def _solved(r, b):
    """numpy's LU solve of the full matrices (not torch's: a batched torch.linalg.solve can fail
    with "Pivots given to lu_solve ..." after another test changed torch's thread count)."""
    lags = torch.arange(r.shape[1])
    matrices = r[:, (lags[:, None] - lags[None, :]).abs()].numpy()
    return torch.from_numpy(np.linalg.solve(matrices, b.numpy()[..., None])[..., 0])


def _run(impl, r, b):
    out = torch.full(r.shape, 7.0, dtype=_F64)
    impl.toeplitz_solve(out, r, b)
    return out


@pytest.mark.parametrize("kind", ["noise", "smooth", "periodic"])
@pytest.mark.parametrize("length", [1, 2, 3, 17, 128, 600])
def test_matches_an_lu_solve_of_the_full_matrix(impl, kind, length):
    g = generator(length)
    r = _autocorrelations(kind, 3, length, g)
    b = torch.randn(3, length, generator=g, dtype=_F64) * r[:, :1]
    want = _solved(r, b)
    got = _run(impl, r, b)
    # the residual is what any exact solver guarantees; the solutions agree as the conditioning allows
    lags = torch.arange(length)
    matrix = r[:, (lags[:, None] - lags[None, :]).abs()]
    residual = (matrix @ got.unsqueeze(-1)).squeeze(-1) - b
    assert residual.abs().max() <= 1e-9 * b.abs().max()
    if kind == "noise":
        torch.testing.assert_close(got, want, rtol=1e-9, atol=1e-12)


def test_c_equals_the_reference_on_strided_inputs():
    g = generator(5)
    r = _autocorrelations("noise", 8, 64, g)
    wide = torch.zeros(16, 200, dtype=_F64)
    wide[::2, 3::3][:, :64] = r
    rs = wide[::2, 3::3][:, :64]
    b = torch.randn(64, 8, generator=g, dtype=_F64).t()  # transposed
    assert not rs.is_contiguous() and not b.is_contiguous()
    torch.testing.assert_close(
        _run(kernels("c"), rs, b), _run(kernels("reference"), r, b.contiguous()), rtol=1e-10, atol=0
    )


def test_matrices_that_are_not_positive_definite_give_nan_rows(impl):
    g = generator(9)
    r = _autocorrelations("noise", 4, 32, g)
    r[1] = 0.0  # a silent signal: singular
    r[2, 5] = 10.0  # an off-diagonal entry beyond the diagonal: indefinite
    r[3, 0] = float("nan")
    b = torch.randn(4, 32, generator=g, dtype=_F64)
    out = _run(impl, r, b)
    assert out[1:].isnan().all()
    torch.testing.assert_close(out[0], _solved(r[:1], b[:1])[0], rtol=1e-9, atol=1e-12)
    empty = torch.empty(0, 5, dtype=_F64)
    impl.toeplitz_solve(empty, empty, empty)


BAD = [
    (lambda a: a.__setitem__(0, torch.zeros(2, 6)), TypeError, "out"),
    (lambda a: a.__setitem__(0, torch.zeros(2, 5, dtype=_F64)), ValueError, "out"),
    (lambda a: a.__setitem__(0, torch.zeros(6, 2, dtype=_F64).t()), ValueError, "out"),
    (lambda a: a.__setitem__(1, a[1].float()), TypeError, "r"),
    (lambda a: a.__setitem__(1, a[1][0]), ValueError, "r"),
    (lambda a: a.__setitem__(slice(1, 3), [a[1][:, :0], a[2][:, :0]]), ValueError, "r"),
    (lambda a: a.__setitem__(2, a[2].float()), TypeError, "b"),
    (lambda a: a.__setitem__(2, a[2][:1]), ValueError, "b"),
]


@pytest.mark.parametrize("change,error,name", BAD)
def test_bad_input_raises_naming_the_argument_with_out_untouched(impl, change, error, name):
    r = _autocorrelations("noise", 2, 6, generator(1))
    args = [torch.full((2, 6), 3.0, dtype=_F64), r, torch.ones(2, 6, dtype=_F64)]
    change(args)
    before = args[0].clone()
    with pytest.raises(error) as info:
        impl.toeplitz_solve(*args)
    assert str(info.value).startswith(f"{name}:"), str(info.value)
    assert same_bits(args[0], before)
