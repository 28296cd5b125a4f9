"""torchtally's CUDA kernels at run time: NVRTC found and called (nvrtc.py), compiled images
kept on disk (cache.py), the known-answer check a device passes before the kernels serve it
(known_answer.py), and the per-device decision that ties these together (loader.py). The
kernels' source and the driver calls are in torchtally._C_cuda (csrc/cuda)."""
