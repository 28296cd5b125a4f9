"""The emulation's two host libraries, built with the system compilers into a folder the caller
owns (a few seconds each, nothing cached):

* the stand-in driver: fake_libcuda.c (beside this file, shipped with the package), a
  libcuda.so.1 for TORCHTALLY_LIBCUDA, compiled with the C compiler (``CC``, else cc or gcc);
* the emulation image: the kernels' device source (``_C_cuda.kernel_source()`` or a changed copy
  of it) compiled as C++17 with ``TT_EMULATION`` (``CXX``, else g++), with a table of the
  kernels the driver may launch.

The driver reads the latch's argument struct from csrc/cuda/device_abi.h; an installed package
has no csrc/, so that header is taken from the device source the extension carries, where it is
inlined (so the driver and the extension agree on the struct by construction).
"""

import os
import shutil
import subprocess
from pathlib import Path
from typing import Iterable, List

HERE = Path(__file__).resolve().parent
DRIVER_SOURCE = HERE / "fake_libcuda.c"
ABI_START = "/* ---- csrc/cuda/device_abi.h */\n"
ABI_END = "#endif /* TT_CUDA_DEVICE_ABI_H */\n"
IMAGE_FLAGS = ["-std=c++17", "-O1", "-fPIC", "-shared", "-DTT_EMULATION", "-Wall", "-Wno-unknown-pragmas"]


class CompilerMissing(RuntimeError):
    """The C or C++ compiler the emulation needs is not installed (or not on PATH)."""


def _compiler(variable: str, candidates: Iterable[str], what: str) -> str:
    chosen = os.environ.get(variable)
    names = [chosen] if chosen else list(candidates)
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    if chosen:
        raise CompilerMissing(f"the CUDA emulation needs a {what}: {variable}={chosen} was not found")
    raise CompilerMissing(
        f"the CUDA emulation needs a {what} ({' or '.join(names)} on PATH, or {variable}=<compiler>); none was found"
    )


def c_compiler() -> str:
    return _compiler("CC", ("cc", "gcc"), "C compiler")


def cxx_compiler() -> str:
    return _compiler("CXX", ("g++",), "C++ compiler")


def _compile(argv: List[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed:\n{done.stderr[-4000:]}")


def abi_header(source: str) -> str:
    """csrc/cuda/device_abi.h (core/dtype.h inlined in it) as the device source `source` holds it."""
    start = source.find(ABI_START)
    end = source.find(ABI_END, start)
    if start < 0 or end < 0:
        raise RuntimeError("the kernels' device source does not hold csrc/cuda/device_abi.h")
    return source[start : end + len(ABI_END)]


def build_driver(folder: Path, source: str, *defines: str) -> str:
    """The stand-in driver built into `folder` (libcuda.so.1), its path; `source`: the kernels'
    device source, for the ABI header; `defines`: e.g. "-DFAKE_OLD_DRIVER"."""
    compiler = c_compiler()
    include = folder / "include"
    (include / "cuda").mkdir(parents=True, exist_ok=True)
    (include / "cuda" / "device_abi.h").write_text(abi_header(source))
    out = folder / "libcuda.so.1"
    _compile([compiler, "-shared", "-fPIC", "-O1", f"-I{include}", *defines, str(DRIVER_SOURCE), "-o", str(out)])
    return str(out)


def build_image(source: str, folder: Path, names: Iterable[str]) -> str:
    """The emulation image of `source` (the kernels' device source) with a table of `names`,
    built into `folder` (emulation.so), its path."""
    compiler = cxx_compiler()
    table = "".join(f"    TT_EMU_KERNEL({name})\n" for name in names)
    unit = folder / "emulation.cpp"
    unit.write_text(source + "\nconst tt_emu_kernel tt_emu_kernels[] = {\n" + table + "    {NULL, NULL}};\n")
    out = folder / "emulation.so"
    _compile([compiler, *IMAGE_FLAGS, "-x", "c++", str(unit), "-o", str(out)])
    return str(out)
