"""torchtally._C_cuda's driver layer (csrc/cuda/driver.c, kernels.c) without a GPU, through a
fake libcuda (the package's stand-in driver, torchtally.kernels.cuda.emulation, built here) named
by TORCHTALLY_LIBCUDA. The driver is loaded once per process, so each scenario runs in a fresh
interpreter. Also: the driver ABI constants
of csrc/cuda/driver.h against cuda.h, where a CUDA toolkit is installed."""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from torchtally import _C_cuda
from torchtally.kernels.cuda.emulation import build_driver

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CC = shutil.which("cc") or shutil.which("gcc")


def build(tmp_path_factory, *defines) -> str:
    return build_driver(tmp_path_factory.mktemp("fake_driver"), _C_cuda.kernel_source(), *defines)


@pytest.fixture(scope="module")
def fake_driver(tmp_path_factory):
    return build(tmp_path_factory)


@pytest.fixture(scope="module")
def old_driver(tmp_path_factory):
    return build(tmp_path_factory, "-DFAKE_OLD_DRIVER")


def run(driver: str, body: str, **env) -> dict:
    """Run `body` (which sets `result`) in a fresh interpreter on `driver`; its result."""
    script = (
        "import json\nfrom torchtally import _C_cuda\nresult = {}\n"
        + textwrap.dedent(body)
        + "\nprint(json.dumps(result))\n"
    )
    full_env = {**os.environ, "TORCHTALLY_LIBCUDA": driver, **{k: str(v) for k, v in env.items()}}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=full_env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def errors(call: str) -> str:
    return f"""
try:
    {call}
    result["error"] = None
except Exception as exc:
    result["error"] = f"{{type(exc).__name__}}: {{exc}}"
"""


def test_the_driver_and_the_device_are_read_through_it(fake_driver):
    got = run(
        fake_driver,
        'result["driver"] = _C_cuda.driver(); result["device"] = _C_cuda.device_info(0)',
        FAKE_CUDA_VERSION=12080,
        FAKE_CUDA_ARCH=86,
    )
    assert got == {"driver": {"version": 12080, "devices": 1}, "device": {"major": 8, "minor": 6, "sm_count": 132}}


def test_a_driver_that_does_not_initialise_says_so(fake_driver):
    got = run(fake_driver, errors("_C_cuda.driver()"), FAKE_CUDA_INIT=100)
    assert got["error"] == (
        f"RuntimeError: the CUDA driver {fake_driver} did not initialise: cuInit: "
        "CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"
    )


def test_a_driver_missing_a_function_is_too_old(old_driver):
    got = run(old_driver, errors("_C_cuda.driver()"))
    assert got["error"] == (
        f"RuntimeError: the CUDA driver {old_driver} has no cuStreamIsCapturing: it is older than torchtally supports"
    )


def test_a_missing_driver_library_is_named(tmp_path):
    got = run(str(tmp_path / "nowhere" / "libcuda.so.1"), errors("_C_cuda.device_info(0)"))
    assert got["error"].startswith(f'RuntimeError: no CUDA driver: dlopen("{tmp_path}/nowhere/libcuda.so.1") failed')


def test_nvrtcs_cubin_loads_with_every_kernel_found_and_only_once(fake_driver):
    got = run(
        fake_driver,
        """
from torchtally.kernels.cuda import nvrtc
image = nvrtc.find().compile(_C_cuda.kernel_source(), "sm_90").image
result["before"] = _C_cuda.kernels_loaded(0)
_C_cuda.load_kernels(0, image)
result["after"] = _C_cuda.kernels_loaded(0)
"""
        + errors("_C_cuda.load_kernels(0, image)"),
    )
    assert got == {
        "before": False,
        "after": True,
        "error": "ValueError: device: the kernels of cuda:0 are loaded already",
    }


def test_an_image_the_driver_refuses_or_missing_a_kernel_is_an_error_and_loads_nothing(fake_driver):
    got = run(
        fake_driver,
        errors("_C_cuda.load_kernels(0, b'not an image')")
        + """
result["garbage"] = result["error"]
"""
        + errors("_C_cuda.load_kernels(0, b'.version 8.0\\n.target sm_90\\n.entry tt_latch()\\0')")
        + """
result["loaded"] = _C_cuda.kernels_loaded(0)
""",
    )
    assert got["garbage"] == (
        "RuntimeError: CUDA: loading the compiled kernels (cuModuleLoadData) failed: "
        "CUDA_ERROR_INVALID_IMAGE (device kernel image is invalid)"
    )
    assert got["error"] == (
        "RuntimeError: CUDA: finding kernel tt_confmat_labels_shared in the compiled module "
        "failed: CUDA_ERROR_NOT_FOUND (named symbol not found)"
    )
    assert got["loaded"] is False


def test_the_loader_end_to_end_compiles_once_then_reads_the_cache(fake_driver, tmp_path):
    body = """
from torchtally.kernels import reference
from torchtally.kernels.cuda.loader import Loader
import os
status = Loader(_C_cuda, reference, env=dict(os.environ), check=lambda m, r, d: []).status(0)
result.update(serves=status.serves, reason=status.reason, image=status.image, arch=status.arch,
              loaded=_C_cuda.kernels_loaded(0))
"""
    first = run(fake_driver, body, TORCHTALLY_CACHE_DIR=tmp_path, FAKE_CUDA_ARCH=89)
    assert first["serves"] and first["loaded"] and first["arch"] == "sm_89", first["reason"]
    assert first["image"].startswith("cubin for sm_89 compiled by NVRTC")
    second = run(fake_driver, body, TORCHTALLY_CACHE_DIR=tmp_path, FAKE_CUDA_ARCH=89)
    assert second["serves"] and second["image"].startswith(f"cubin for sm_89 from the cache {tmp_path}")


CONSTANTS = {
    "TT_CU_SUCCESS": "CUDA_SUCCESS",
    "TT_CU_ERROR_OUT_OF_MEMORY": "CUDA_ERROR_OUT_OF_MEMORY",
    "TT_CU_ERROR_NO_DEVICE": "CUDA_ERROR_NO_DEVICE",
    "TT_CU_ERROR_NOT_FOUND": "CUDA_ERROR_NOT_FOUND",
    "TT_CU_ERROR_NOT_READY": "CUDA_ERROR_NOT_READY",
    "TT_CU_ERROR_STREAM_CAPTURE_UNSUPPORTED": "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
    "TT_CU_ATTR_MULTIPROCESSOR_COUNT": "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT",
    "TT_CU_ATTR_COMPUTE_CAPABILITY_MAJOR": "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR",
    "TT_CU_ATTR_COMPUTE_CAPABILITY_MINOR": "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR",
    "TT_CU_EVENT_DISABLE_TIMING": "CU_EVENT_DISABLE_TIMING",
    "TT_CU_MEMHOSTALLOC_PORTABLE": "CU_MEMHOSTALLOC_PORTABLE",
    "TT_CU_MEMHOSTALLOC_DEVICEMAP": "CU_MEMHOSTALLOC_DEVICEMAP",
    "TT_CU_STREAM_CAPTURE_STATUS_NONE": "CU_STREAM_CAPTURE_STATUS_NONE",
}


def cuda_header():
    for home in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if home and (Path(home) / "include" / "cuda.h").is_file():
            return Path(home) / "include"
    return None


@pytest.mark.skipif(cuda_header() is None, reason="no CUDA toolkit (cuda.h) on this machine to compare with")
def test_the_driver_constants_are_cuda_hs(tmp_path):
    checks = "\n".join(f'_Static_assert({ours} == {theirs}, "{ours}");' for ours, theirs in CONSTANTS.items())
    sizes = (
        '_Static_assert(sizeof(tt_cu_deviceptr) == sizeof(CUdeviceptr), "deviceptr");\n'
        '_Static_assert(sizeof(tt_cu_device) == sizeof(CUdevice), "device");'
    )
    source = tmp_path / "abi.c"
    source.write_text(f'#include <cuda.h>\n#include "cuda/driver.h"\n{checks}\n{sizes}\n')
    subprocess.run(
        [CC, "-std=c11", "-fsyntax-only", f"-I{cuda_header()}", f"-I{ROOT / 'csrc'}", str(source)], check=True
    )
