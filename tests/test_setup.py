"""setup.py: the three extensions built with a C compiler only, the kernels' device source
flattened into one translation unit and embedded in torchtally._C_cuda (kernel_source.h), and
the optional nvcc cubins (TORCHTALLY_CUDA_PREBUILT). Nothing here runs nvcc; the compile of the
embedded source is tests/kernels/test_nvrtc_compile.py's."""

import importlib.util
import re
import subprocess
from pathlib import Path

import pytest

from torchtally import _C_cuda

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def setup_py():
    spec = importlib.util.spec_from_file_location("torchtally_setup_under_test", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not __main__: defines the helpers, builds nothing
    return module


def test_every_extension_is_plain_c_and_links_no_cuda_library(setup_py, monkeypatch):
    monkeypatch.chdir(ROOT)
    exts = setup_py.extensions()
    assert [e.name for e in exts] == ["torchtally._C", "torchtally._nccl", "torchtally._C_cuda"]
    for ext in exts:
        assert all(s.endswith(".c") for s in ext.sources), ext.name
        assert set(ext.libraries) <= {"dl", "pthread"}, ext.name
    cuda = exts[-1]
    assert {"csrc/cuda/driver.c", "csrc/cuda/kernels.c", "csrc/cuda/module.c", "csrc/core/tensor.c"} <= set(
        cuda.sources
    )
    assert not any("cuda" in s or "nccl" in s for s in exts[0].sources)  # torchtally._C stays as it was


def test_every_extension_is_built_on_the_limited_api_and_named_abi3_only_for_the_wheel(setup_py, monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("TORCHTALLY_ABI3", raising=False)
    for ext in setup_py.extensions():  # `make build`: the limited API, the interpreter's file names
        assert ("Py_LIMITED_API", "0x030A0000") in ext.define_macros, ext.name
        assert not ext.py_limited_api, ext.name
    monkeypatch.setenv("TORCHTALLY_ABI3", "1")  # `make wheel`
    assert all(ext.py_limited_api for ext in setup_py.extensions())


def test_the_built_module_links_no_cuda_library():
    libraries = subprocess.run(["ldd", _C_cuda.__file__], capture_output=True, text=True).stdout
    assert "libcuda" not in libraries and "libcudart" not in libraries and "libnvrtc" not in libraries


def test_the_embedded_source_is_every_cu_file_with_its_headers_inlined_once(setup_py):
    source = setup_py.kernel_source(str(ROOT))
    assert source == _C_cuda.kernel_source()  # what was embedded is what the tree gives
    cu_files = sorted(p.name for p in (ROOT / "csrc" / "cuda").glob("*.cu"))
    order = [m.group(1) for m in re.finditer(r"/\* ---- csrc/(\S+) \*/", source)]
    assert [Path(p).name for p in order if p.endswith(".cu")] == cu_files
    assert len(order) == len(set(order))  # each header once
    assert "core/dtype.h" in order and "cuda/device_abi.h" in order
    assert not re.search(r'^\s*#\s*include\s+"', source, re.M)  # NVRTC gets no include path
    assert all(line.strip().startswith("#include <") for line in source.splitlines() if "#include" in line)


def test_the_generated_header_round_trips_text_and_bytes(setup_py, tmp_path):
    text = 'a "quoted" \\ back\tslash\nline two\n'
    header = setup_py.kernel_source_header(text, {"sm_90": bytes(range(60)), "sm_80": b"\x00\xff"})
    program = tmp_path / "check.c"
    program.write_text(
        header
        + r"""
#include <stdio.h>
int main(void) {
    fputs(tt_kernel_source, stdout);
    for (size_t i = 0; tt_prebuilt[i].arch != NULL; i++) {
        printf("%s %zu", tt_prebuilt[i].arch, tt_prebuilt[i].size);
        for (size_t j = 0; j < tt_prebuilt[i].size; j++) printf(" %d", tt_prebuilt[i].data[j]);
        printf("\n");
    }
    return TT_PREBUILT_COUNT;
}
"""
    )
    subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", str(program), "-o", str(tmp_path / "check")], check=True)
    done = subprocess.run([str(tmp_path / "check")], capture_output=True)
    assert done.returncode == 2
    out = done.stdout.decode()
    assert out.startswith(text)
    assert out[len(text) :].splitlines() == ["sm_80 2 0 255", "sm_90 60 " + " ".join(str(b) for b in range(60))]


def test_prebuilt_arches(setup_py):
    assert setup_py.cuda_arches("") == []
    assert setup_py.cuda_arches("sm_90, sm_80;80 8.6") == ["sm_80", "sm_86", "sm_90"]
    assert setup_py.cuda_arches("90a,100") == ["sm_90a", "sm_100"]
    for bad in ("ampere", "sm_", "9"):
        with pytest.raises(SystemExit, match="TORCHTALLY_CUDA_PREBUILT"):
            setup_py.cuda_arches(bad)


def test_no_prebuilt_cubins_by_default_and_an_error_without_nvcc(setup_py, tmp_path):
    assert setup_py.prebuilt_cubins("src", str(tmp_path), {}, lambda name: None) == {}
    with pytest.raises(SystemExit, match="TORCHTALLY_CUDA_PREBUILT is set, but no nvcc"):
        setup_py.prebuilt_cubins("src", str(tmp_path), {"TORCHTALLY_CUDA_PREBUILT": "90"}, lambda name: None)


def test_only_cuda_compile_asks_for_nvcc():
    """No Makefile recipe but `cuda-compile`'s sets TORCHTALLY_CUDA_PREBUILT: `make build` /
    `make test` need no CUDA toolkit, and `cuda-compile` is not a prerequisite of `test`."""
    target, seen = None, {}
    for line in (ROOT / "Makefile").read_text().splitlines():
        match = re.match(r"^([^\t#][^:=]*):(?!=)(.*)$", line)
        if match:
            target = match.group(1).strip()
            seen[target] = match.group(2)
        elif line.startswith("\t") and target != "cuda-compile":
            assert "TORCHTALLY_CUDA_PREBUILT" not in line, (target, line)
    assert "cuda-compile" in seen and "cuda-compile" not in seen.get("test", "")
