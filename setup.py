"""Build torchtally._C from plain C sources (and two optional companions).

The extension needs only a C compiler and the Python headers: tensors arrive through DLPack,
so neither torch nor CUDA is needed at build time. Environment switches:

  TORCHTALLY_SANITIZE=1   build with -fsanitize=address,undefined (see `make test-sanitize`)
  TORCHTALLY_DEBUG=1      -O0 -g, assertions on
  TORCHTALLY_CUDA=0|1|auto  also build torchtally._C_cuda (csrc/cuda/) with nvcc: 0 never (the
                          default), 1 always (an error without nvcc), auto when nvcc is found
  TORCHTALLY_CUDA_ARCH    its GPU targets, e.g. "80;90" (the default) or "sm_80,sm_90,sm_100";
                          PTX of the newest one is embedded for GPUs newer than the list
  TORCHTALLY_CUDA_STRICT=1  nvcc and the host compiler treat warnings as errors (`make cuda-compile`)

torchtally._nccl (csrc/nccl/), which loads libnccl.so.2 at run time, is plain C and always
built; it links nothing but libdl. torchtally._C_cuda links the CUDA runtime statically, so it
imports (and torchtally works) on machines without a CUDA driver.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
from typing import List, Mapping, Optional, Tuple

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

DEFAULT_CUDA_ARCH = "80;90"


# The folders of csrc/ each extension is built from. core/ (the DLPack view, argument parsing,
# status -> exception) is shared by the two kernel modules; torchtally._nccl binds no kernel and
# takes only core/'s header-only module definition (tests/csrc/test_layout.py checks all this).
EXTENSION_FOLDERS = {
    "torchtally._C": ("core", "kernels", "cpu"),
    "torchtally._nccl": ("nccl",),
    "torchtally._C_cuda": ("core", "cuda"),
}


def folder_files(name: str, *patterns: str) -> List[str]:
    """The files of extension `name`'s folders matching `patterns` ("*.c", "*.h"), sorted."""
    return sorted(f for folder in EXTENSION_FOLDERS[name] for p in patterns
                  for f in glob.glob(f"csrc/{folder}/{p}"))


def c_sources():
    """torchtally._C: the C core, the CPU kernels and their binding."""
    return folder_files("torchtally._C", "*.c")


def compile_flags():
    flags = ["-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter", "-fno-strict-aliasing"]
    if os.environ.get("TORCHTALLY_DEBUG") == "1":
        flags += ["-O0", "-g"]
    else:
        flags += ["-O3", "-DNDEBUG"]
    return flags


def link_flags():
    return []


# ---- CUDA: the switch, the toolkit, the targets --------------------------------------------------


def cuda_mode(env: Mapping[str, str] = os.environ) -> str:
    """TORCHTALLY_CUDA as "0", "1" or "auto" (default "0")."""
    value = env.get("TORCHTALLY_CUDA", "0").strip().lower()
    if value not in ("0", "1", "auto"):
        raise SystemExit(f"TORCHTALLY_CUDA must be 0, 1 or auto, got {value!r}")
    return value


def find_cuda(env: Mapping[str, str] = os.environ, which=shutil.which) -> Optional[Tuple[str, str]]:
    """(nvcc, CUDA home with include/cuda_runtime_api.h), or None when there is no usable nvcc."""
    for home in (env.get("CUDA_HOME"), env.get("CUDA_PATH")):
        if home and os.path.isfile(os.path.join(home, "bin", "nvcc")):
            return os.path.join(home, "bin", "nvcc"), home
    nvcc = which("nvcc")
    if nvcc is None:
        return None
    for home in (os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), "/usr/local/cuda"):
        if os.path.isfile(os.path.join(home, "include", "cuda_runtime_api.h")):
            return nvcc, home
    return None


def cuda_wanted(env: Mapping[str, str] = os.environ, which=shutil.which) -> Optional[Tuple[str, str]]:
    """(nvcc, CUDA home) when torchtally._C_cuda is to be built, else None."""
    mode = cuda_mode(env)
    if mode == "0":
        return None
    found = find_cuda(env, which)
    if found is None and mode == "1":
        raise SystemExit(
            "TORCHTALLY_CUDA=1, but no nvcc with CUDA headers was found: set CUDA_HOME or put nvcc on PATH "
            "(or build without CUDA: TORCHTALLY_CUDA=0)"
        )
    if found is None:
        print("torchtally: TORCHTALLY_CUDA=auto and no nvcc found: building the CPU extension only", file=sys.stderr)
    return found


def cuda_arches(env: Mapping[str, str] = os.environ) -> List[str]:
    """TORCHTALLY_CUDA_ARCH as compute capabilities ("80", "90", "90a"), sorted, no repeats."""
    raw = env.get("TORCHTALLY_CUDA_ARCH", "").strip() or DEFAULT_CUDA_ARCH
    arches = []
    for token in re.split(r"[;,\s]+", raw):
        if not token:
            continue
        match = re.fullmatch(r"(?:sm_|compute_)?(\d)\.?(\d{1,2})([af]?)", token.lower())
        if match is None:
            raise SystemExit(f"TORCHTALLY_CUDA_ARCH: cannot read {token!r}; expected e.g. '80;90' or 'sm_80,sm_90'")
        arch = "".join(match.groups())
        if arch not in arches:
            arches.append(arch)
    if not arches:
        raise SystemExit("TORCHTALLY_CUDA_ARCH is empty")
    return sorted(arches, key=lambda a: (int(re.match(r"\d+", a).group()), a))


def gencode_flags(arches: List[str]) -> List[str]:
    """SASS for every target, plus PTX of the newest plain one (JIT-compiled on newer GPUs)."""
    flags = []
    for arch in arches:
        flags += ["-gencode", f"arch=compute_{arch},code=sm_{arch}"]
    plain = [a for a in arches if a.isdigit()]
    if plain:
        flags += ["-gencode", f"arch=compute_{plain[-1]},code=compute_{plain[-1]}"]
    return flags


def cudart_static_dir(home: str) -> str:
    for sub in ("lib64", "lib", os.path.join("targets", "x86_64-linux", "lib"), os.path.join("targets", "sbsa-linux", "lib")):
        if os.path.isfile(os.path.join(home, sub, "libcudart_static.a")):
            return os.path.join(home, sub)
    raise SystemExit(f"torchtally: no libcudart_static.a under {home} (lib64, lib, targets/*/lib)")


def cuda_extension(nvcc: str, home: str, env: Mapping[str, str] = os.environ) -> Extension:
    """torchtally._C_cuda: csrc/cuda (host C and .cu), plus csrc/core (argument parsing, DLPack
    reader and checks)."""
    strict = env.get("TORCHTALLY_CUDA_STRICT") == "1"
    arches = cuda_arches(env)
    host_flags = compile_flags() + (["-Werror"] if strict else [])
    ext = Extension(
        "torchtally._C_cuda",
        sources=folder_files("torchtally._C_cuda", "*.c") + folder_files("torchtally._C_cuda", "*.cu"),
        include_dirs=["csrc", os.path.join(home, "include")],
        depends=folder_files("torchtally._C_cuda", "*.h", "*.cuh", "*.cu"),
        define_macros=[("TT_CUDA_ARCH_LIST", '"' + ";".join(arches) + '"')],
        extra_compile_args=host_flags,
        library_dirs=[cudart_static_dir(home)],
        libraries=["cudart_static", "stdc++", "rt", "pthread", "dl"],
    )
    warnings = ["-Xcompiler", "-Wall,-Wextra,-Wno-unused-parameter"]
    if strict:
        warnings += ["-Werror", "all-warnings", "-Xcompiler", "-Werror"]
    ext.nvcc = nvcc
    ext.nvcc_flags = ["-O3", "-std=c++17", "-Xcompiler", "-fPIC", "-Icsrc"] + warnings + gencode_flags(arches)
    return ext


class BuildExt(build_ext):
    """build_ext that first compiles an extension's .cu sources with nvcc (flags on the extension)."""

    def build_extension(self, ext):
        cu = [s for s in ext.sources if s.endswith(".cu")]
        if cu:
            ext.sources = [s for s in ext.sources if not s.endswith(".cu")]
            ext.extra_objects = list(ext.extra_objects or []) + [self._nvcc(ext, s) for s in cu]
        super().build_extension(ext)

    def _nvcc(self, ext, source: str) -> str:
        obj = os.path.join(self.build_temp, source + ".o")
        stale = self.force or not os.path.exists(obj) or any(
            os.path.getmtime(dep) > os.path.getmtime(obj) for dep in [source] + list(ext.depends) if os.path.exists(dep)
        )
        if stale:
            os.makedirs(os.path.dirname(obj), exist_ok=True)
            command = [ext.nvcc, "-c", source, "-o", obj] + ext.nvcc_flags
            print(" ".join(command))
            subprocess.check_call(command)
        return obj


sanitize = os.environ.get("TORCHTALLY_SANITIZE") == "1"
extra_compile = compile_flags()
extra_link = link_flags()
if sanitize:
    extra_compile += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g"]
    extra_link += ["-fsanitize=address,undefined"]

def extensions(env: Mapping[str, str] = os.environ, which=shutil.which) -> List[Extension]:
    """torchtally._C and torchtally._nccl always; torchtally._C_cuda when TORCHTALLY_CUDA asks."""
    built = [
        Extension(
            "torchtally._C",
            sources=c_sources(),
            include_dirs=["csrc"],
            depends=folder_files("torchtally._C", "*.h"),
            extra_compile_args=extra_compile,
            extra_link_args=extra_link,
        ),
        Extension(
            "torchtally._nccl",
            sources=folder_files("torchtally._nccl", "*.c"),
            include_dirs=["csrc"],
            depends=folder_files("torchtally._nccl", "*.h") + ["csrc/core/module_def.h"],
            libraries=["dl"],
            extra_compile_args=extra_compile,
            extra_link_args=extra_link,
        ),
    ]
    cuda = cuda_wanted(env, which)
    if cuda is not None:
        built.append(cuda_extension(*cuda, env=env))
    return built


if __name__ == "__main__":  # also under pip: setuptools runs this file as __main__
    setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt})
