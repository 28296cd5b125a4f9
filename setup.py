"""Build torchtally._C, torchtally._nccl and torchtally._C_cuda from plain C sources.

The extensions need only a C compiler and the Python headers: tensors arrive through DLPack,
so neither torch nor CUDA is needed at build time. torchtally._nccl loads libnccl.so.2 and
torchtally._C_cuda loads the CUDA driver (libcuda.so.1) at run time; both link nothing but libdl.
torchtally._C_cuda carries the kernels' device source (csrc/cuda/*.cu, flattened into one
translation unit at build time), which NVRTC compiles for each GPU at first use. Switches:

  TORCHTALLY_SANITIZE=1   build with -fsanitize=address,undefined (see `make test-sanitize`)
  TORCHTALLY_DEBUG=1      -O0 -g, assertions on
  TORCHTALLY_CUDA_PREBUILT="80;90"  also embed cubins built by nvcc for these architectures
                          (used instead of an NVRTC compile on a GPU of exactly that one; needs
                          nvcc: CUDA_HOME, CUDA_PATH or PATH)
  TORCHTALLY_CUDA_STRICT=1  nvcc and the host compiler of torchtally._C_cuda treat warnings as
                          errors (`make cuda-compile`)
  TORCHTALLY_ABI3=1       name the extensions *.abi3.so and tag the wheel cp310-abi3 (`make wheel`)

Every build compiles against CPython's limited API of Python 3.10 (Py_LIMITED_API), so the code
that `make build` checks is the code of the abi3 wheel: one binary for every Python from 3.10 on
(as for every torch version). The in-place development build keeps the interpreter's own file
names (_C.cpython-311-....so): an abi3-named file beside a stale one of those would lose to it.
"""

import glob
import os
import re
import shutil
import subprocess
from typing import List, Mapping, Optional

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

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
    return sorted(f for folder in EXTENSION_FOLDERS[name] for p in patterns for f in glob.glob(f"csrc/{folder}/{p}"))


def c_sources():
    """torchtally._C: the C core, the CPU kernels and their binding."""
    return folder_files("torchtally._C", "*.c")


# The stable ABI the extensions are built against: Python 3.10's (the wheel's cp310-abi3 tag).
LIMITED_API = ("Py_LIMITED_API", "0x030A0000")
ABI3_TAG = "cp310"


def abi3_build(env: Mapping[str, str] = os.environ) -> bool:
    """Whether this build makes the abi3 wheel (TORCHTALLY_ABI3=1): abi3 file names and tag."""
    return env.get("TORCHTALLY_ABI3") == "1"


def compile_flags():
    # no FMA contraction: kernels that reproduce torch's step-by-step float arithmetic
    # (box_overlap.c) must round every product on its own; a CPython call outside the limited
    # API is an undeclared function there: an error, not an import-time failure
    flags = ["-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter", "-fno-strict-aliasing", "-ffp-contract=off"]
    flags += ["-Werror=implicit-function-declaration"]
    # vec_math.h's four-wide vectors pass between static functions of one file: gcc's note that
    # the ABI for passing them changed in gcc 4.6 concerns calls across objects only
    flags += ["-Wno-psabi"]
    if os.environ.get("TORCHTALLY_DEBUG") == "1":
        flags += ["-O0", "-g"]
    else:
        flags += ["-O3", "-DNDEBUG"]
    return flags


def link_flags():
    return []


# ---- CUDA: the embedded device source, optional prebuilt cubins ----------------------------------

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$')


def kernel_source(root: str = ".") -> str:
    """The device source of every CUDA kernel as one translation unit: csrc/cuda/*.cu in name
    order, each project header they include inlined once, where it is first included (NVRTC
    is given no include path). System includes stay; they are guarded for nvcc's use only."""
    seen, out = set(), []

    def add(relative: str) -> None:
        if relative in seen:
            return
        seen.add(relative)
        out.append(f"/* ---- csrc/{relative} */\n")
        with open(os.path.join(root, "csrc", relative)) as lines:
            for line in lines:
                match = INCLUDE.match(line)
                if match:
                    add(match.group(1))
                else:
                    out.append(line)

    for cu in sorted(glob.glob(os.path.join(root, "csrc", "cuda", "*.cu"))):
        add(os.path.relpath(cu, os.path.join(root, "csrc")))
    return "".join(out)


def c_string(text: str) -> str:
    """`text` as a C string literal, one source line per literal piece."""
    pieces = []
    for line in text.splitlines(keepends=True):
        escaped = line.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
        pieces.append(f'    "{escaped}"')
    return "\n".join(pieces) if pieces else '    ""'


def c_bytes(data: bytes) -> str:
    return ",\n".join("    " + ", ".join(str(b) for b in data[i : i + 24]) for i in range(0, len(data), 24))


def kernel_source_header(source: str, prebuilt: Mapping[str, bytes]) -> str:
    """kernel_source.h: the device source and the prebuilt cubins, for csrc/cuda/module.c."""
    lines = [
        "/* Generated by setup.py from the .cu files of csrc/cuda: do not edit. */",
        "#include <stddef.h>",
        "static const char tt_kernel_source[] =",
        c_string(source) + ";",
        "typedef struct { const char *arch; const unsigned char *data; size_t size; } tt_prebuilt_image;",
    ]
    for arch, image in sorted(prebuilt.items()):
        lines += [f"static const unsigned char tt_prebuilt_{arch}[] = {{", c_bytes(image), "};"]
    entries = [f'    {{"{arch}", tt_prebuilt_{arch}, sizeof tt_prebuilt_{arch}}},' for arch in sorted(prebuilt)]
    lines += [
        f"#define TT_PREBUILT_COUNT {len(prebuilt)}",
        "static const tt_prebuilt_image tt_prebuilt[TT_PREBUILT_COUNT + 1] = {",
        *entries,
        "    {NULL, NULL, 0},",
        "};",
        "",
    ]
    return "\n".join(lines)


def find_nvcc(env: Mapping[str, str] = os.environ, which=shutil.which) -> Optional[str]:
    for home in (env.get("CUDA_HOME"), env.get("CUDA_PATH")):
        if home and os.path.isfile(os.path.join(home, "bin", "nvcc")):
            return os.path.join(home, "bin", "nvcc")
    return which("nvcc")


def cuda_arches(raw: str) -> List[str]:
    """An arch list ("80;90", "sm_80,sm_90", "9.0") as sm_XY names, sorted, no repeats."""
    arches = []
    for token in re.split(r"[;,\s]+", raw.strip()):
        if not token:
            continue
        match = re.fullmatch(r"(?:sm_|compute_)?(\d)\.?(\d{1,2})([af]?)", token.lower())
        if match is None:
            raise SystemExit(f"TORCHTALLY_CUDA_PREBUILT: cannot read {token!r}; expected e.g. '80;90' or 'sm_80,sm_90'")
        arch = "sm_" + "".join(match.groups())
        if arch not in arches:
            arches.append(arch)
    return sorted(arches, key=lambda a: (int(re.match(r"sm_(\d+)", a).group(1)), a))


def prebuilt_cubins(source: str, temp: str, env: Mapping[str, str] = os.environ, which=shutil.which) -> dict:
    """{arch: cubin} compiled by nvcc for TORCHTALLY_CUDA_PREBUILT ({} when it is unset)."""
    arches = cuda_arches(env.get("TORCHTALLY_CUDA_PREBUILT", ""))
    if not arches:
        return {}
    nvcc = find_nvcc(env, which)
    if nvcc is None:
        raise SystemExit("TORCHTALLY_CUDA_PREBUILT is set, but no nvcc was found: set CUDA_HOME or put nvcc on PATH")
    os.makedirs(temp, exist_ok=True)
    unit = os.path.join(temp, "torchtally_kernels.cu")
    with open(unit, "w") as f:
        f.write(source)
    strict = ["-Werror", "all-warnings"] if env.get("TORCHTALLY_CUDA_STRICT") == "1" else []
    images = {}
    for arch in arches:
        cubin = os.path.join(temp, f"torchtally_kernels.{arch}.cubin")
        command = [nvcc, "-cubin", f"-arch={arch}", "-O3", "-std=c++17", *strict, unit, "-o", cubin]
        print(" ".join(command))
        subprocess.check_call(command)
        with open(cubin, "rb") as f:
            images[arch] = f.read()
    return images


def cuda_extension() -> Extension:
    """torchtally._C_cuda: csrc/cuda's host C and csrc/core; the device source is embedded by
    BuildExt (kernel_source.h in the build's temporary folder)."""
    ext = Extension(
        "torchtally._C_cuda",
        sources=folder_files("torchtally._C_cuda", "*.c"),
        include_dirs=["csrc"],
        depends=folder_files("torchtally._C_cuda", "*.h", "*.cuh", "*.cu"),
        extra_compile_args=extra_compile + (["-Werror"] if os.environ.get("TORCHTALLY_CUDA_STRICT") == "1" else []),
        extra_link_args=extra_link,
        libraries=["dl", "pthread"],
        define_macros=[LIMITED_API],
        py_limited_api=abi3_build(),
    )
    ext.embeds_kernels = True
    return ext


class BuildExt(build_ext):
    """build_ext that writes torchtally._C_cuda's kernel_source.h before compiling it."""

    def build_extension(self, ext):
        if getattr(ext, "embeds_kernels", False):
            generated = os.path.join(self.build_temp, "generated")
            os.makedirs(generated, exist_ok=True)
            source = kernel_source()
            header = kernel_source_header(source, prebuilt_cubins(source, os.path.join(self.build_temp, "cubins")))
            path = os.path.join(generated, "kernel_source.h")
            if not os.path.exists(path) or open(path).read() != header:
                with open(path, "w") as f:
                    f.write(header)
                self.force = True  # module.c includes it; distutils does not track that
            if generated not in ext.include_dirs:
                ext.include_dirs.append(generated)
        super().build_extension(ext)


sanitize = os.environ.get("TORCHTALLY_SANITIZE") == "1"
extra_compile = compile_flags()
extra_link = link_flags()
if sanitize:
    extra_compile += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g"]
    extra_link += ["-fsanitize=address,undefined"]


def extensions() -> List[Extension]:
    """torchtally._C, torchtally._nccl and torchtally._C_cuda."""
    return [
        Extension(
            "torchtally._C",
            sources=c_sources(),
            include_dirs=["csrc"],
            depends=folder_files("torchtally._C", "*.h"),
            extra_compile_args=extra_compile,
            extra_link_args=extra_link,
            define_macros=[LIMITED_API],
            py_limited_api=abi3_build(),
        ),
        Extension(
            "torchtally._nccl",
            sources=folder_files("torchtally._nccl", "*.c"),
            include_dirs=["csrc"],
            depends=folder_files("torchtally._nccl", "*.h") + ["csrc/core/module_def.h"],
            libraries=["dl"],
            extra_compile_args=extra_compile,
            extra_link_args=extra_link,
            define_macros=[LIMITED_API],
            py_limited_api=abi3_build(),
        ),
        cuda_extension(),
    ]


if __name__ == "__main__":  # also under pip: setuptools runs this file as __main__
    # the abi3 wheel builds under build/abi3: never from objects or modules of a development build
    options = {"bdist_wheel": {"py_limited_api": ABI3_TAG}, "build": {"build_base": "build/abi3"}}
    setup(ext_modules=extensions(), cmdclass={"build_ext": BuildExt}, options=options if abi3_build() else {})
