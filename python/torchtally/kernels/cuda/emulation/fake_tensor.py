"""Stand-ins for CUDA tensors on a machine without a GPU: a CPU tensor whose DLPack export claims
a CUDA device, so that torchtally._C_cuda's host path (validation, enqueue, launch) runs for
real on host memory.

The extension reads the capsule's DLTensor (shape, strides, dtype, device) and validates it on
the host before any CUDA call. The memory stays host memory: such a tensor may reach a kernel
only on the stand-in driver with an emulation image loaded (runner.py), which runs the kernels on
the host; elsewhere it serves where no GPU exists (the first CUDA call then fails) or where
validation must fail.
"""

import ctypes

import torch

from torchtally import _C

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_DEVICE_OFFSET = _C.dlpack_layout()["DLTensor.device"]  # within DLManagedTensor (dl_tensor first)
KDL_CUDA = 2


class FakeCuda:
    """`tensor`'s values and layout, exported through DLPack as if on cuda:`device_id`."""

    is_cpu = False
    is_cuda = True

    def __init__(self, tensor: torch.Tensor, device_id: int = 0, device_type: int = KDL_CUDA) -> None:
        self.tensor, self.device_id, self.device_type = tensor, device_id, device_type

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        capsule = self.tensor.__dlpack__()  # a legacy "dltensor" capsule; the reader accepts it
        address = _get_pointer(capsule, b"dltensor")
        ctypes.c_int32.from_address(address + _DEVICE_OFFSET).value = self.device_type
        ctypes.c_int32.from_address(address + _DEVICE_OFFSET + 4).value = self.device_id
        return capsule

    def __dlpack_device__(self):
        return (self.device_type, self.device_id)


def on_fake_cuda(args, device_id: int = 0):
    """Every CPU tensor of `args` wrapped as a FakeCuda on `device_id`; everything else as is."""
    return [FakeCuda(a, device_id) if isinstance(a, torch.Tensor) and a.device.type == "cpu" else a for a in args]
