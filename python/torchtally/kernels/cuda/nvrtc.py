"""NVRTC, CUDA's runtime compiler, found and called through ctypes: no CUDA toolkit is needed.

`find()` looks, in this order, and takes the first library that loads:

1. ``TORCHTALLY_NVRTC=/path/to/libnvrtc.so...`` when set (then only there);
2. a copy this process has loaded already (CUDA builds of torch load one for their own JIT);
3. the ``nvidia-cuda-nvrtc`` wheels in site-packages (``nvidia/cu13/lib``, ``nvidia/cuda_nvrtc/lib``),
   which torch's CUDA wheels depend on;
4. ``$CUDA_HOME`` (or ``$CUDA_PATH``) ``/lib64`` and ``/lib``, then ``/usr/local/cuda``.

Two facts about NVRTC the loader relies on: its builtins library (``libnvrtc-builtins.so.*``)
sits beside it and must be loaded first, by full path, because libnvrtc has no RUNPATH to find
it; and a cubin from an NVRTC of a newer CUDA major version than the driver's does not load
(within one major version, CUDA's minor-version compatibility lets it), so find() passes such
an NVRTC over. PTX, asked for where NVRTC does not know the device's architecture, needs a
driver at least as new as the NVRTC that wrote it; a load that fails says so.
"""

import ctypes
import glob
import os
import sys
from dataclasses import dataclass, field
from typing import List, Optional, Sequence, Tuple


class NvrtcError(RuntimeError):
    """NVRTC could not be found, loaded or could not compile; the message says what and where."""


@dataclass
class Compiled:
    """One compile: the image (a cubin, or PTX text for the driver to finish) and NVRTC's log."""

    image: bytes
    kind: str  # "cubin" or "ptx"
    arch: str  # "sm_90", or "compute_90" for PTX
    log: str


@dataclass
class Nvrtc:
    """A loaded NVRTC library."""

    path: str
    lib: ctypes.CDLL = field(repr=False)

    @property
    def version(self) -> Tuple[int, int]:
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._check(self.lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor)), "nvrtcVersion")
        return major.value, minor.value

    def supported_arches(self) -> List[int]:
        """The compute capabilities this NVRTC compiles for, e.g. [75, 80, ..., 120]."""
        count = ctypes.c_int()
        self._check(self.lib.nvrtcGetNumSupportedArchs(ctypes.byref(count)), "nvrtcGetNumSupportedArchs")
        arches = (ctypes.c_int * count.value)()
        self._check(self.lib.nvrtcGetSupportedArchs(arches), "nvrtcGetSupportedArchs")
        return list(arches)

    def compile(self, source: str, arch: str, options: Sequence[str] = (), name: str = "torchtally.cu") -> Compiled:
        """Compile `source` for `arch` ("sm_90": a cubin; "compute_90": PTX). Raises NvrtcError
        with NVRTC's log when the compile fails."""
        program = ctypes.c_void_p()
        self._check(
            self.lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), name.encode(), 0, None, None),
            "nvrtcCreateProgram",
        )
        try:
            flags = [f"--gpu-architecture={arch}", "--std=c++17", *options]
            argv = (ctypes.c_char_p * len(flags))(*[f.encode() for f in flags])
            status = self.lib.nvrtcCompileProgram(program, len(flags), argv)
            log = self._log(program)
            if status != 0:
                raise NvrtcError(
                    f"NVRTC ({self.path}) could not compile the kernels for {arch}: {self._error(status)}\n{log}"
                )
            kind = "cubin" if arch.startswith("sm_") else "ptx"
            image = self._output(program, kind)
            return Compiled(image=image, kind=kind, arch=arch, log=log)
        finally:
            self.lib.nvrtcDestroyProgram(ctypes.byref(program))

    def _log(self, program) -> str:
        size = ctypes.c_size_t()
        self._check(self.lib.nvrtcGetProgramLogSize(program, ctypes.byref(size)), "nvrtcGetProgramLogSize")
        buffer = ctypes.create_string_buffer(size.value)
        self._check(self.lib.nvrtcGetProgramLog(program, buffer), "nvrtcGetProgramLog")
        return buffer.value.decode(errors="replace").strip()

    def _output(self, program, kind: str) -> bytes:
        get_size, get = (
            ("nvrtcGetCUBINSize", "nvrtcGetCUBIN") if kind == "cubin" else ("nvrtcGetPTXSize", "nvrtcGetPTX")
        )
        size = ctypes.c_size_t()
        self._check(getattr(self.lib, get_size)(program, ctypes.byref(size)), get_size)
        buffer = ctypes.create_string_buffer(size.value)
        self._check(getattr(self.lib, get)(program, buffer), get)
        return buffer.raw[: size.value]

    def _error(self, status: int) -> str:
        return self.lib.nvrtcGetErrorString(status).decode()

    def _check(self, status: int, what: str) -> None:
        if status != 0:
            raise NvrtcError(f"{what} failed in {self.path}: {self._error(status)}")


def _prepare(lib: ctypes.CDLL) -> ctypes.CDLL:
    lib.nvrtcGetErrorString.restype = ctypes.c_char_p
    lib.nvrtcGetErrorString.argtypes = [ctypes.c_int]
    lib.nvrtcCreateProgram.argtypes = [
        ctypes.POINTER(ctypes.c_void_p),
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    lib.nvrtcCompileProgram.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    lib.nvrtcDestroyProgram.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
    for name in ("nvrtcGetProgramLogSize", "nvrtcGetCUBINSize", "nvrtcGetPTXSize"):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
    for name in ("nvrtcGetProgramLog", "nvrtcGetCUBIN", "nvrtcGetPTX"):
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    return lib


def load(path: str) -> Nvrtc:
    """Load the NVRTC library at `path`, its builtins library first. Raises NvrtcError."""
    folder = os.path.dirname(os.path.abspath(path))
    for builtins in sorted(glob.glob(os.path.join(folder, "libnvrtc-builtins.so*"))):
        if ".alt." in builtins:
            continue
        try:
            ctypes.CDLL(builtins, mode=ctypes.RTLD_GLOBAL)
            break
        except OSError:
            continue
    try:
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        return Nvrtc(path=path, lib=_prepare(lib))
    except (OSError, AttributeError) as exc:
        raise NvrtcError(f"could not load NVRTC from {path}: {exc}") from None


def loaded_paths(maps: str = "/proc/self/maps") -> List[str]:
    """Paths of libnvrtc copies this process has mapped already (none where /proc is absent)."""
    found: List[str] = []
    try:
        with open(maps) as lines:
            for line in lines:
                path = line.rsplit(" ", 1)[-1].strip()
                base = os.path.basename(path)
                if base.startswith("libnvrtc.so") and path not in found:
                    found.append(path)
    except OSError:
        pass
    return found


def wheel_paths(folders: Optional[Sequence[str]] = None) -> List[str]:
    """libnvrtc in the nvidia wheels under each site-packages folder, newest CUDA first."""
    found: List[str] = []
    for folder in folders if folders is not None else sys.path:
        for pattern in ("nvidia/cu1[3-9]/lib/libnvrtc.so.*", "nvidia/cuda_nvrtc/lib/libnvrtc.so.*"):
            for path in sorted(glob.glob(os.path.join(folder, pattern)), reverse=True):
                if ".alt." not in path and path not in found:
                    found.append(path)
    return found


def toolkit_paths(env=os.environ) -> List[str]:
    found: List[str] = []
    for home in (env.get("CUDA_HOME"), env.get("CUDA_PATH"), "/usr/local/cuda"):
        if not home:
            continue
        for sub in ("lib64", "lib", "targets/x86_64-linux/lib", "targets/sbsa-linux/lib"):
            for path in sorted(glob.glob(os.path.join(home, sub, "libnvrtc.so*")), reverse=True):
                if path not in found:
                    found.append(path)
    return found


def candidates(env=os.environ) -> List[str]:
    """Where find() looks, in order (only TORCHTALLY_NVRTC when that is set)."""
    explicit = env.get("TORCHTALLY_NVRTC", "").strip()
    if explicit:
        return [explicit]
    ordered: List[str] = []
    for path in loaded_paths() + wheel_paths() + toolkit_paths(env):
        if path not in ordered:
            ordered.append(path)
    return ordered


def find(env=os.environ, driver_version: int = 0) -> Nvrtc:
    """The first NVRTC of candidates() that loads and whose CUDA major version is no newer than the
    driver's (a cubin of a newer major version does not load; within one major version CUDA's
    minor-version compatibility lets it); NvrtcError saying where it looked otherwise.
    driver_version 0: any version."""
    tried: List[str] = []
    too_new: List[Nvrtc] = []
    for path in candidates(env):
        try:
            found = load(path)
        except NvrtcError as exc:
            tried.append(str(exc))
            continue
        if driver_version and found.version[0] > driver_version // 1000:
            too_new.append(found)
            continue
        return found
    if too_new:
        newest = too_new[0]
        raise NvrtcError(
            f"the NVRTC found ({newest.path}, CUDA {newest.version[0]}.{newest.version[1]}) is newer than the driver "
            f"(CUDA {driver_version // 1000}.{driver_version % 1000 // 10}), which cannot load what it compiles: "
            "install an NVRTC of the driver's CUDA major version "
            f"(e.g. `pip install nvidia-cuda-nvrtc-cu{driver_version // 1000}`) "
            "or update the driver"
        )
    if env.get("TORCHTALLY_NVRTC", "").strip():
        raise NvrtcError(f"TORCHTALLY_NVRTC: {tried[0]}")
    where = "; ".join(tried) if tried else "no libnvrtc.so found"
    raise NvrtcError(
        "NVRTC, which compiles torchtally's CUDA kernels, was not found (looked in this process's loaded "
        "libraries, the nvidia wheels in site-packages and $CUDA_HOME: " + where + "). "
        "Install it with `pip install nvidia-cuda-nvrtc` (CUDA 13 drivers) or `pip install nvidia-cuda-nvrtc-cu12`, "
        "or point TORCHTALLY_NVRTC at a libnvrtc.so"
    )


USAGE_OPTIONS = ("--ptxas-options=-v",)  # compile options that make the log list each kernel's resources


@dataclass
class KernelUsage:
    """One kernel's resources, as ptxas reports them."""

    name: str
    registers: int = 0
    shared: int = 0  # static shared memory, bytes (the launches add dynamic shared memory)
    stack: int = 0
    spills: int = 0  # spill stores + loads, bytes


def resource_usage(log: str) -> Tuple[List[KernelUsage], List[str]]:
    """The kernels of a log compiled with USAGE_OPTIONS, in the log's order, and its lines that are
    not resource reports (warnings)."""
    import re

    kernels: List[KernelUsage] = []
    others: List[str] = []
    current: Optional[KernelUsage] = None
    for line in log.splitlines():
        entry = re.search(r"Compiling entry function '([^']+)'", line)
        frame = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        used = re.search(r"Used (\d+) registers", line)
        if entry:
            current = KernelUsage(entry.group(1))
            kernels.append(current)
        elif frame and current is not None:
            current.stack = int(frame.group(1))
            current.spills = int(frame.group(2)) + int(frame.group(3))
        elif used and current is not None:
            current.registers = int(used.group(1))
            smem = re.search(r"(\d+) bytes smem", line)
            current.shared = int(smem.group(1)) if smem else 0
        elif re.match(r"ptxas\s+(info|\.)", line) or not line.strip():
            continue  # gmem totals, compile times, the properties header
        else:
            others.append(line)
    return kernels, others
