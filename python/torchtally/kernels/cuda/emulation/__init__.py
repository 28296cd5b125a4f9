"""The CUDA kernels run on the host, without a GPU (csrc/cuda/emulation/README.md): their own
device source built as C++ under an emulation of the CUDA execution model (the emulation image,
build.py), a stand-in libcuda (fake_libcuda.c) that runs every launch through that image, and
stand-in CUDA tensors on host memory (fake_tensor.py), so that torchtally._C_cuda's real host
path runs end to end; runner.py compares every kernel of kernel_table.h with the C core on the
cases of cases.py, counting host synchronisations per update and checking every launch against
each architecture's limits (limits.py). ``python -m torchtally.cuda emulate`` is the command."""

from .build import CompilerMissing, build_driver, build_image
from .fake_tensor import FakeCuda, on_fake_cuda
from .limits import ARCHES, ArchLimits, Launch, Usage
from .runner import Comparison, compare, emulate
