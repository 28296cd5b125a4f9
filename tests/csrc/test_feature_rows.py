"""The feature-rows kernel of the generative-image metrics: the C core and the torch reference
against a float32 cast on every float dtype, strided, transposed, sliced and empty inputs; NaN,
infinity and float64 values beyond float32's range refused naming x at their row and column
with out untouched; bad arguments raise naming them."""

import pytest
import torch
from support.kernel_inputs import generator

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def _layouts(dtype, n, d, seed):
    x = (torch.randn(n, d, generator=generator(seed)) * 100).to(dtype)
    wide = torch.randn(2 * n, 3 * d, generator=generator(seed + 1)).to(dtype)
    yield "contiguous", x
    yield "transposed", x.T.contiguous().T
    yield "strided", wide[::2, 1::3]
    yield "sliced rows", wide[1 : n + 1, :d]
    yield "expanded", x[:1].expand(n, d)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,d", [(1, 1), (2, 16), (7, 3), (32, 2048), (1, 5000)])
def test_equals_a_float32_cast_row_after_row(impl, dtype, n, d):
    for layout, x in _layouts(dtype, n, d, n * d):
        out = torch.full((n * d,), 7.0)
        impl.feature_rows(out, x)
        assert torch.equal(out, x.to(torch.float32).reshape(-1)), layout


def test_float64_rounds_to_nearest_float32_and_the_range_ends_where_float32_overflows(impl):
    top = float(torch.finfo(torch.float32).max)
    half_ulp = 2.0**103  # half of float32's ulp at its largest value
    x = torch.tensor([[1.0 / 3.0, -top, top + half_ulp / 2, 2.0**-149 / 3]], dtype=torch.float64)
    out = torch.empty(4)
    impl.feature_rows(out, x)
    assert torch.equal(out, x.to(torch.float32).reshape(-1))
    for beyond in (top + half_ulp, -(top + half_ulp), 1e300):
        x[0, 2] = beyond
        with pytest.raises(ValueError, match=r"^x: .*float32's range at \[0, 2\]"):
            impl.feature_rows(out, x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_a_value_not_finite_is_refused_at_its_place_with_out_untouched(impl, dtype, bad):
    for layout, x in _layouts(dtype, 5, 40, 3):
        x = x.clone() if layout != "expanded" else x.contiguous()
        x[3, 17] = bad
        out = torch.full((200,), 7.0)
        with pytest.raises(ValueError, match=r"^x: expected finite float32 values.* at \[3, 17\]"):
            impl.feature_rows(out, x)
        assert bool((out == 7.0).all()), layout


def test_empty_batches_write_nothing(impl):
    out = torch.empty(0)
    impl.feature_rows(out, torch.empty(0, 16))
    impl.feature_rows(out, torch.empty(3, 0, dtype=torch.float64))


@pytest.mark.parametrize(
    "out,x,error,name",
    [
        (torch.full((6,), 5.0, dtype=torch.float64), torch.rand(2, 3), TypeError, "out"),
        (torch.full((7,), 5.0), torch.rand(2, 3), ValueError, "out"),
        (torch.full((2, 3), 5.0), torch.rand(2, 3), ValueError, "out"),
        (torch.full((12,), 5.0)[::2], torch.rand(2, 3), ValueError, "out"),
        (torch.full((6,), 5.0), torch.arange(6).reshape(2, 3), TypeError, "x"),
        (torch.full((6,), 5.0), torch.rand(6), ValueError, "x"),
        (torch.full((6,), 5.0), torch.rand(1, 2, 3), ValueError, "x"),
    ],
)
def test_bad_arguments_raise_naming_them_with_out_untouched(impl, out, x, error, name):
    before = out.clone()
    with pytest.raises(error) as info:
        impl.feature_rows(out, x)
    assert str(info.value).startswith(f"{name}:"), str(info.value)
    assert torch.equal(out, before)


def test_the_custom_op_copies_the_rows_inside_a_compiled_graph():
    from torchtally.kernels import ops
    from torchtally.kernels.image import feature_rows as route

    if not ops.SUPPORTED:
        pytest.skip("no custom ops in this torch")

    @torch.compile(fullgraph=True, backend="eager")
    def copy(out, x):
        route.feature_rows(out, x)
        return out

    x = torch.randn(3, 4, dtype=torch.float64)
    assert torch.equal(copy(torch.empty(12), x), x.float().reshape(-1))
