"""torchtally._C_cuda's host side without a GPU: argument parsing and validation, through
stand-in "CUDA" tensors (FakeCuda: CPU memory exported as a CUDA device).

Every bad-input case of the C-core suite (support/kernel_bad_inputs.py) is replayed on stand-ins:
a case the C core rejects while validating (type, dtype, shape, layout, argument) must get the
same exception and the same message from the CUDA module; a case it rejects for a value (NaN,
out-of-range label, weight, thresholds) passes the CUDA module's host checks (values are checked
by the kernels) and reaches its first CUDA step, asking torch for the current stream, which
fails on this CPU-only torch. Devices: CPU tensors and other GPUs are refused, naming the
argument. Runs where no GPU exists: on a GPU the stand-ins' host memory must not reach a kernel,
and tests/cuda/test_cuda_kernels.py covers the real thing.
"""

import pytest
import torch
from support.kernel_bad_inputs import CASES, TENSOR_ARGS, good_args

from torchtally import _C, _C_cuda
from torchtally.kernels.cuda.emulation import FakeCuda, on_fake_cuda

pytestmark = pytest.mark.skipif(
    torch.cuda.is_available(), reason="a GPU is present: stand-in tensors must not reach its kernels"
)

STREAM_STEP = "could not get torch's current CUDA stream on cuda:0"
VALUE_WORDS = ("NaN at", "NaN in", "out of range", "not a binary label", "non-decreasing", "finite weights")


def cpu_error(kernel: str, args: list) -> BaseException:
    with pytest.raises(Exception) as info:
        getattr(_C, kernel)(*args)
    return info.value


@pytest.mark.parametrize("case", CASES, ids=[f"{c.kernel}-{c.what}" for c in CASES])
def test_bad_input_is_refused_as_the_c_core_refuses_it(case):
    args = good_args(case.kernel)
    case.change(args)
    expected = cpu_error(case.kernel, args)
    with pytest.raises(Exception) as info:
        getattr(_C_cuda, case.kernel)(*on_fake_cuda(args))
    got = info.value
    if any(word in str(expected) for word in VALUE_WORDS):  # a value: the kernels' job
        assert isinstance(got, RuntimeError) and STREAM_STEP in str(got), (str(expected), str(got))
    else:
        assert (type(got), str(got)) == (type(expected), str(expected))


@pytest.mark.parametrize("kernel", list(TENSOR_ARGS))
def test_good_arguments_pass_validation(kernel):
    """Valid arguments get through every check to the first CUDA step."""
    with pytest.raises(RuntimeError, match=STREAM_STEP):
        getattr(_C_cuda, kernel)(*on_fake_cuda(good_args(kernel)))


@pytest.mark.parametrize("kernel", list(TENSOR_ARGS))
def test_every_tensor_must_share_the_device_of_out(kernel):
    names = TENSOR_ARGS[kernel]
    first = names[0]
    for i, name in enumerate(names):
        args = good_args(kernel)
        if name is None or not isinstance(args[i], torch.Tensor):
            continue
        if i == 0:
            with pytest.raises(ValueError, match=rf"^{first}: expected a CUDA tensor, got one on the CPU"):
                getattr(_C_cuda, kernel)(*([args[0]] + on_fake_cuda(args[1:])))
            continue
        on_cpu = on_fake_cuda(args)
        on_cpu[i] = args[i]
        with pytest.raises(
            ValueError,
            match=rf"^{name}: expected a CUDA tensor on cuda:0 \(the device of {first}\), got one on the CPU",
        ):
            getattr(_C_cuda, kernel)(*on_cpu)
        elsewhere = on_fake_cuda(args)
        elsewhere[i] = FakeCuda(args[i], device_id=1)
        with pytest.raises(
            ValueError, match=rf"^{name}: expected a tensor on cuda:0 \(the device of {first}\), got one on cuda:1"
        ):
            getattr(_C_cuda, kernel)(*elsewhere)
        pinned = on_fake_cuda(args)
        pinned[i] = FakeCuda(args[i], device_type=3)  # kDLCUDAHost: host memory, not for kernels
        with pytest.raises(ValueError, match=rf"^{name}: expected a CUDA tensor .* pinned CPU memory"):
            getattr(_C_cuda, kernel)(*pinned)


def test_wrong_argument_counts():
    with pytest.raises(TypeError, match=r"confmat_labels\(\) takes 5 positional arguments"):
        _C_cuda.confmat_labels(None)
    with pytest.raises(TypeError, match=r"^out: expected a tensor"):
        _C_cuda.confmat_labels([1], None, None, None, None)


def test_confmat_threshold_logit_threshold_argument():
    """The optional 7th argument: a float, None or left out reaches the first CUDA step; a wrong
    type or NaN is refused as the C core refuses it; an 8th argument is a count error."""
    args = good_args("confmat_threshold")
    assert len(args) == 6
    for extra in ([], [None], [0.25], [-float("inf")]):
        with pytest.raises(RuntimeError, match=STREAM_STEP):
            _C_cuda.confmat_threshold(*on_fake_cuda(args), *extra)
    for bad in ("0.1", True, float("nan")):
        expected = cpu_error("confmat_threshold", args + [bad])
        assert "logit_threshold" in str(expected)
        with pytest.raises(type(expected), match="^" + str(expected).replace("(", r"\(")):
            _C_cuda.confmat_threshold(*on_fake_cuda(args), bad)
    with pytest.raises(TypeError, match=r"^confmat_threshold\(\) takes 6 to 7 positional arguments"):
        _C_cuda.confmat_threshold(*on_fake_cuda(args), 0.1, None)


def test_the_module_imports_and_says_why_without_a_driver():
    # this machine has no libcuda.so.1: the module imports, and asking for the driver says why
    with pytest.raises(RuntimeError, match=r'^no CUDA driver: dlopen\("libcuda.so.1"\) failed'):
        _C_cuda.driver()
    with pytest.raises(RuntimeError, match="no CUDA driver"):
        _C_cuda.device_info(0)
    assert _C_cuda.kernels_loaded(0) is False
    assert len(_C_cuda.kernel_names()) == len(set(_C_cuda.kernel_names())) == 45
    assert _C_cuda.prebuilt() == {}  # the default install embeds no nvcc cubins


def test_error_checks_switch_and_arguments():
    previous = _C_cuda.set_immediate_checks(True)
    try:
        assert _C_cuda.set_immediate_checks(False) is True
        assert _C_cuda.set_immediate_checks(False) is False
    finally:
        _C_cuda.set_immediate_checks(previous)
    with pytest.raises(TypeError, match=r"^check\(\) takes 4 positional arguments, got 3"):
        _C_cuda.check(0, 0, 8)
    with pytest.raises(ValueError, match=r"^device: expected a CUDA device index, got -1"):
        _C_cuda.check(-1, 0, 8, True)
    with pytest.raises(ValueError, match=r"^nbytes: expected an int >= 0, got -8"):
        _C_cuda.check(0, 0, -8, True)
    with pytest.raises(TypeError, match=r"^discard\(\) takes 3 positional arguments, got 2"):
        _C_cuda.discard(0, 0)


def test_checking_a_device_that_never_ran_an_update_makes_no_cuda_call():
    # no update ever reached a kernel here (no GPU): nothing is pending, so check returns at once,
    # where a CUDA call (setting the device, querying an event) would raise without a driver
    assert _C_cuda.check(0, 0, 0, True) is None
    assert _C_cuda.check(3, 0x1234, 64, False) is None
    assert _C_cuda.discard(0, 0x1234, 64) is None
