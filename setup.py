"""Build torchtally._C from plain C sources.

The extension needs only a C compiler and the Python headers: tensors arrive through DLPack,
so neither torch nor CUDA is needed at build time. Environment switches:

  TORCHTALLY_SANITIZE=1   build with -fsanitize=address,undefined (see `make test-sanitize`)
  TORCHTALLY_DEBUG=1      -O0 -g, assertions on
"""
import glob
import os

from setuptools import Extension, setup


def c_sources():
    return sorted(glob.glob("csrc/*.c") + glob.glob("csrc/kernels/*.c"))


def compile_flags():
    flags = ["-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter", "-fno-strict-aliasing"]
    if os.environ.get("TORCHTALLY_DEBUG") == "1":
        flags += ["-O0", "-g"]
    else:
        flags += ["-O3", "-DNDEBUG"]
    return flags


def link_flags():
    return []


sanitize = os.environ.get("TORCHTALLY_SANITIZE") == "1"
extra_compile = compile_flags()
extra_link = link_flags()
if sanitize:
    extra_compile += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer", "-g"]
    extra_link += ["-fsanitize=address,undefined"]

setup(
    ext_modules=[
        Extension(
            "torchtally._C",
            sources=c_sources(),
            include_dirs=["csrc"],
            depends=sorted(glob.glob("csrc/**/*.h", recursive=True)),
            extra_compile_args=extra_compile,
            extra_link_args=extra_link,
        )
    ],
)
