"""setup.py's CUDA switch: TORCHTALLY_CUDA (0 / 1 / auto), finding nvcc and the toolkit,
TORCHTALLY_CUDA_ARCH, and the extension list. The default (no variable) builds no CUDA, which
is what keeps `make test` and CI CPU-only. Nothing here runs nvcc."""
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def setup_py():
    spec = importlib.util.spec_from_file_location("torchtally_setup_under_test", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # not __main__: defines the helpers, builds nothing
    return module


@pytest.fixture
def toolkit(tmp_path):
    """A fake CUDA toolkit: bin/nvcc, include/cuda_runtime_api.h, lib64/libcudart_static.a."""
    for part in ("bin/nvcc", "include/cuda_runtime_api.h", "lib64/libcudart_static.a"):
        (tmp_path / part).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / part).write_text("")
    return tmp_path


def no_nvcc(name):
    return None


def names(exts):
    return [e.name for e in exts]


def test_mode(setup_py):
    assert setup_py.cuda_mode({}) == "0"
    assert [setup_py.cuda_mode({"TORCHTALLY_CUDA": v}) for v in ("0", "1", " Auto ")] == ["0", "1", "auto"]
    with pytest.raises(SystemExit, match="0, 1 or auto"):
        setup_py.cuda_mode({"TORCHTALLY_CUDA": "yes"})


def test_default_builds_no_cuda_even_with_nvcc(setup_py, toolkit, monkeypatch):
    monkeypatch.chdir(ROOT)
    found = lambda name: str(toolkit / "bin" / "nvcc")  # noqa: E731
    assert setup_py.cuda_wanted({}, found) is None
    assert names(setup_py.extensions({}, found)) == ["torchtally._C", "torchtally._nccl"]
    assert names(setup_py.extensions({"TORCHTALLY_CUDA": "0", "CUDA_HOME": str(toolkit)}, found)) == [
        "torchtally._C", "torchtally._nccl"]


def test_auto_without_nvcc_builds_cpu_only(setup_py, monkeypatch, capsys):
    monkeypatch.chdir(ROOT)
    assert names(setup_py.extensions({"TORCHTALLY_CUDA": "auto"}, no_nvcc)) == ["torchtally._C", "torchtally._nccl"]
    assert "no nvcc found" in capsys.readouterr().err


def test_required_without_nvcc_is_an_error(setup_py):
    with pytest.raises(SystemExit, match="TORCHTALLY_CUDA=1, but no nvcc"):
        setup_py.cuda_wanted({"TORCHTALLY_CUDA": "1"}, no_nvcc)


def test_finding_the_toolkit(setup_py, toolkit, tmp_path_factory):
    nvcc = str(toolkit / "bin" / "nvcc")
    assert setup_py.find_cuda({"CUDA_HOME": str(toolkit)}, no_nvcc) == (nvcc, str(toolkit))
    assert setup_py.find_cuda({}, lambda name: nvcc) == (nvcc, str(toolkit))  # home = nvcc's ../..
    bare = tmp_path_factory.mktemp("bare") / "nvcc"
    bare.write_text("")
    lonely = setup_py.find_cuda({}, lambda name: str(bare))  # no headers next to it: /usr/local/cuda or nothing
    system = Path("/usr/local/cuda/include/cuda_runtime_api.h").is_file()
    assert lonely == ((str(bare), "/usr/local/cuda") if system else None)


def test_cuda_extension(setup_py, toolkit, monkeypatch):
    monkeypatch.chdir(ROOT)
    env = {"TORCHTALLY_CUDA": "auto", "CUDA_HOME": str(toolkit), "TORCHTALLY_CUDA_ARCH": "sm_90,86"}
    exts = setup_py.extensions(env, no_nvcc)
    assert names(exts) == ["torchtally._C", "torchtally._nccl", "torchtally._C_cuda"]
    cuda = exts[-1]
    assert {"csrc/tensor.c", "csrc/view.c", "csrc/cuda/module_cuda.c", "csrc/cuda/confmat.cu", "csrc/cuda/binned.cu",
            "csrc/cuda/moments.cu", "csrc/cuda/topk.cu"} <= set(cuda.sources)
    assert "cudart_static" in cuda.libraries and "cudart" not in cuda.libraries  # never the shared runtime
    assert cuda.library_dirs == [str(toolkit / "lib64")]
    assert ("TT_CUDA_ARCH_LIST", '"86;90"') in cuda.define_macros
    assert "-Werror" not in cuda.nvcc_flags
    strict = setup_py.cuda_extension(str(toolkit / "bin" / "nvcc"), str(toolkit), {"TORCHTALLY_CUDA_STRICT": "1"})
    assert "-Werror" in strict.nvcc_flags and "-Werror" in strict.extra_compile_args
    cpu_sources = exts[0].sources
    assert not any("cuda" in s or "nccl" in s for s in cpu_sources)  # torchtally._C stays as it was


def test_arches(setup_py):
    assert setup_py.cuda_arches({}) == ["80", "90"]
    assert setup_py.cuda_arches({"TORCHTALLY_CUDA_ARCH": "sm_90, sm_80;80 8.6"}) == ["80", "86", "90"]
    assert setup_py.cuda_arches({"TORCHTALLY_CUDA_ARCH": "90a,100"}) == ["90a", "100"]
    for bad in ("ampere", "sm_", "9"):
        with pytest.raises(SystemExit, match="TORCHTALLY_CUDA_ARCH"):
            setup_py.cuda_arches({"TORCHTALLY_CUDA_ARCH": bad})
    flags = setup_py.gencode_flags(["80", "90"])
    assert flags == ["-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90",
                     "-gencode", "arch=compute_90,code=compute_90"]
    assert "code=compute_90a" not in " ".join(setup_py.gencode_flags(["90a"]))  # arch-specific: no PTX


def test_only_cuda_compile_switches_cuda_on():
    """No Makefile recipe but `cuda-compile`'s sets TORCHTALLY_CUDA: `make build` / `make test`
    build with the default (no CUDA), and `cuda-compile` is not a prerequisite of `test`."""
    target, seen = None, {}
    for line in (ROOT / "Makefile").read_text().splitlines():
        match = re.match(r"^([^\t#][^:=]*):(?!=)(.*)$", line)
        if match:
            target = match.group(1).strip()
            seen[target] = match.group(2)
        elif line.startswith("\t") and target != "cuda-compile":
            assert "TORCHTALLY_CUDA" not in line, (target, line)
    assert "cuda-compile" in seen and "cuda-compile" not in seen.get("test", "")
