"""Every CUDA kernel compiles under NVRTC, without a GPU, for each architecture torchtally
supports (NVRTC from the nvidia-cuda-nvrtc wheel the test setup installs), with no warning, and
the image holds exactly the kernels the host launches (kernel_table.h). Also the documented
command `python -m torchtally.cuda compile --arch sm_90`, and the PTX the loader falls back to
for an architecture NVRTC does not know."""

import subprocess
import sys

import pytest

from torchtally import _C_cuda, cuda
from torchtally.kernels.cuda import nvrtc

ARCHES = ("sm_75", "sm_80", "sm_86", "sm_89", "sm_90", "sm_100", "sm_120")


@pytest.fixture(scope="module")
def compiler():
    return nvrtc.find()  # the test setup installs the wheel: not finding it is a failure


@pytest.mark.parametrize("arch", ARCHES)
def test_every_kernel_compiles_cleanly(compiler, arch):
    found, usage, warnings, missing, extra = cuda.compile_kernels(arch, compiler.path)
    assert (warnings, missing, extra) == ([], [], [])
    assert sorted(u.name for u in usage) == sorted(_C_cuda.kernel_names())
    assert all(0 < u.registers <= 255 for u in usage)
    # the shared-memory reductions declare their static arrays; every other kernel takes its
    # shared memory at launch (dynamic) or none
    assert {u.name for u in usage if u.shared} == {"tt_moments_partial", "tt_comoments_partial", "tt_mask_counts"}


def test_the_compile_command_lists_every_kernel_and_exits_0():
    done = subprocess.run(
        [sys.executable, "-m", "torchtally.cuda", "compile", "--arch", "sm_90"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr  # no warning, no problem reported
    lines = done.stdout.splitlines()
    assert "sm_90: 45 kernels" in lines[0]
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:]}
    assert sorted(rows) == sorted(_C_cuda.kernel_names()) and all(len(r) == 4 for r in rows.values())


def test_the_compile_command_fails_on_an_unknown_architecture():
    done = subprocess.run(
        [sys.executable, "-m", "torchtally.cuda", "compile", "--arch", "sm_10"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1 and "could not compile the kernels for sm_10" in done.stderr


def test_ptx_for_the_driver_to_finish(compiler):
    compiled = compiler.compile(_C_cuda.kernel_source(), "compute_90")
    text = compiled.image.decode()
    assert compiled.kind == "ptx" and ".target sm_90" in text
    assert all(f".entry {name}(" in text for name in _C_cuda.kernel_names())
