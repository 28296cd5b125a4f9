"""The Lip Vertex Error kernel, lip_errors: the C core and the torch reference against plain
float64 torch on every float dtype (mixed too), strided and sliced meshes, frames cut to the
shorter mesh, empty batches; NaN / inf at a lip vertex (and only there) raises naming the mesh;
bad input raises naming the argument, with out untouched; out accumulates."""

import math

import pytest
import torch
from support.kernel_inputs import kernels, same_bits

F64 = torch.float64
FLOATS = [torch.float16, torch.bfloat16, torch.float32, torch.float64]


def expected(pred, gt, lips):
    frames = min(pred.shape[0], gt.shape[0])
    if frames == 0 or lips.numel() == 0:
        return 0.0
    a, b = (x[:frames].to(F64)[:, lips.long()] for x in (pred, gt))
    return float((b - a).square().sum(-1).amax(1).sum())


def run(impl, pred, gt, lips, start=0.25):
    out = torch.tensor(start, dtype=F64)
    impl.lip_errors(out, pred, gt, lips)
    return float(out) - start


def meshes(seed, t, t2, v, c=3, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(t, v, c, generator=g).to(dtype), torch.randn(t2, v, c, generator=g).to(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(0, 0, 5), (1, 1, 4), (7, 5, 20), (30, 30, 50), (6, 0, 9)])
def test_matches_float64_torch(impl, dtype, shape):
    t, t2, v = shape
    pred, gt = meshes(t + v, t, t2, v, dtype=dtype)
    lips = torch.tensor([0, v - 1, 2, 2, 3])
    assert run(impl, pred, gt, lips) == pytest.approx(expected(pred, gt, lips), rel=1e-12, abs=1e-12)


def test_mixed_dtypes_and_int32_lips(impl):
    pred, _ = meshes(1, 9, 9, 12, dtype=torch.float16)
    _, gt = meshes(2, 9, 9, 12, dtype=torch.float64)
    lips = torch.tensor([11, 0, 5], dtype=torch.int32)
    assert run(impl, pred, gt, lips) == pytest.approx(expected(pred, gt, lips), rel=1e-12)


def test_strided_and_sliced_meshes(impl):
    pred, gt = meshes(3, 20, 20, 16, c=6)
    lips = torch.tensor([1, 3, 15, 8])[::2]
    for a, b in (
        (pred[::2, :, ::2], gt[1::2, :, 1::2]),
        (pred.transpose(0, 1).contiguous().transpose(0, 1), gt),
        (pred.permute(2, 1, 0).contiguous().permute(2, 1, 0), gt[:5]),
    ):
        assert run(impl, a, b, lips) == pytest.approx(expected(a, b, lips), rel=1e-12)


def test_no_coordinates_give_zero_errors(impl):
    pred, gt = torch.zeros(4, 3, 0), torch.zeros(4, 3, 0)
    assert run(impl, pred, gt, torch.tensor([0, 2])) == 0.0


def test_c_equals_the_reference_on_random_batches():
    for seed in range(20):
        g = torch.Generator().manual_seed(seed)
        t, t2, v = (int(x) for x in torch.randint(1, 40, (3,), generator=g))
        pred, gt = meshes(seed, t, t2, v, dtype=FLOATS[seed % 4])
        lips = torch.randint(0, v, (int(torch.randint(1, 12, (1,), generator=g)),), generator=g)
        assert run(kernels("c"), pred, gt, lips) == pytest.approx(
            run(kernels("reference"), pred, gt, lips), rel=1e-12, abs=1e-12
        )


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_lip_vertex_names_the_mesh_and_leaves_out_alone(impl, bad):
    lips = torch.tensor([1, 2])
    for name, index in (("vertices_pred", 0), ("vertices_gt", 1)):
        args = list(meshes(4, 5, 5, 4))
        args[index][3, 2, 1] = bad
        out = torch.tensor(7.0, dtype=F64)
        with pytest.raises(ValueError, match=f"^{name}: .*NaN or infinite"):
            impl.lip_errors(out, *args, lips)
        assert float(out) == 7.0


def test_non_finite_values_off_the_lips_or_past_the_frames_are_not_read(impl):
    pred, gt = meshes(5, 5, 3, 4)
    pred[:, 0] = math.nan  # vertex 0 is not a lip vertex
    pred[4, 1] = math.inf  # frame 4 is past gt's 3 frames
    lips = torch.tensor([1, 3])
    assert run(impl, pred, gt, lips) == pytest.approx(expected(pred[:3], gt, lips), rel=1e-12)


def test_squares_that_overflow_give_inf_not_an_error(impl):
    pred, gt = torch.full((2, 2, 3), -1e300, dtype=F64), torch.full((2, 2, 3), 1e300, dtype=F64)
    assert run(impl, pred, gt, torch.tensor([0])) == math.inf


BAD = [
    (lambda a: a.__setitem__(0, torch.zeros((), dtype=torch.float32)), TypeError, "out"),
    (lambda a: a.__setitem__(0, torch.zeros(1, dtype=F64)), ValueError, "out"),
    (lambda a: a.__setitem__(1, a[1].to(torch.int64)), TypeError, "vertices_pred"),
    (lambda a: a.__setitem__(1, a[1][0]), ValueError, "vertices_pred"),
    (lambda a: a.__setitem__(2, a[2].to(torch.int32)), TypeError, "vertices_gt"),
    (lambda a: a.__setitem__(2, a[2][:, :3]), ValueError, "vertices_gt"),
    (lambda a: a.__setitem__(2, a[2][..., :2]), ValueError, "vertices_gt"),
    (lambda a: a.__setitem__(3, a[3].float()), TypeError, "lips"),
    (lambda a: a.__setitem__(3, a[3].reshape(1, -1)), ValueError, "lips"),
    (lambda a: a.__setitem__(3, torch.tensor([0, 4])), ValueError, "lips"),
    (lambda a: a.__setitem__(3, torch.tensor([-1])), ValueError, "lips"),
]


@pytest.mark.parametrize("change,error,name", BAD)
def test_bad_input_raises_naming_the_argument_with_out_untouched(impl, change, error, name):
    args = [torch.tensor(3.5, dtype=F64), *meshes(6, 3, 3, 4), torch.tensor([1, 3])]
    change(args)
    before = args[0].clone()
    with pytest.raises(error) as info:
        impl.lip_errors(*args)
    assert str(info.value).startswith(f"{name}:"), str(info.value)
    assert same_bits(args[0], before)
