"""Checks a build of torchtally with nvcc's prebuilt cubins (`make cuda-compile` runs it on a
temporary build folder).

    python tests/cuda/check_build.py <folder holding _C_cuda*.so and _nccl*.so> <arch>...

torchtally._C_cuda must import on this machine, GPU or not (it loads the driver itself on first
use), expose every kernel method of csrc/API.md, embed a cubin for each arch asked for holding
every kernel the host launches, and depend on no shared CUDA library (libcudart, libcuda,
libnccl), so that installing torchtally never ties it to one CUDA version. torchtally._nccl must
import and link no NCCL. Exits 1 with the reason otherwise.
"""

import glob
import importlib.machinery
import importlib.util
import os
import subprocess
import sys

KERNELS = (
    "confmat_labels",
    "confmat_scores",
    "confmat_threshold",
    "binned_update",
    "topk_update",
    "moments_update",
    "moments_merge",
    "comoments_update",
    "comoments_merge",
)
FORBIDDEN = ("libcudart", "libcuda.", "libnccl")


def load(folder: str, name: str):
    paths = glob.glob(os.path.join(folder, f"{name}.*.so"))
    if not paths:
        raise SystemExit(f"check_build: no {name}*.so in {folder}")
    loader = importlib.machinery.ExtensionFileLoader(f"torchtally.{name}", paths[0])
    spec = importlib.util.spec_from_file_location(f"torchtally.{name}", paths[0], loader=loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module, paths[0]


def needed(path: str):
    out = subprocess.run(["readelf", "-d", path], check=True, capture_output=True, text=True).stdout
    return [line.split("[", 1)[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]


def main(folder: str, arches) -> None:
    cuda, cuda_path = load(folder, "_C_cuda")
    missing = [k for k in KERNELS if not callable(getattr(cuda, k, None))]
    if missing:
        raise SystemExit(f"check_build: torchtally._C_cuda lacks {missing}")
    _, nccl_path = load(folder, "_nccl")
    for path in (cuda_path, nccl_path):
        bad = [lib for lib in needed(path) if lib.startswith(FORBIDDEN)]
        if bad:
            raise SystemExit(f"check_build: {os.path.basename(path)} links {bad}; it must load CUDA/NCCL itself")
    prebuilt = cuda.prebuilt()
    if sorted(prebuilt) != sorted(arches):
        raise SystemExit(f"check_build: prebuilt cubins for {sorted(prebuilt)}, expected {sorted(arches)}")
    for arch, image in prebuilt.items():
        absent = [k for k in cuda.kernel_names() if k.encode() + b"\0" not in image]
        if not image.startswith(b"\x7fELF") or absent:
            raise SystemExit(
                f"check_build: the {arch} cubin is not an ELF image holding every kernel (missing {absent})"
            )
    print(
        f"check_build: torchtally._C_cuda imports, embeds cubins for {sorted(prebuilt)} with all "
        f"{len(cuda.kernel_names())} kernels, links {needed(cuda_path)}; torchtally._nccl links {needed(nccl_path)}"
    )


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    main(sys.argv[1], sys.argv[2:])
