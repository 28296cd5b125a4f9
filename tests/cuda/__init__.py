"""Tests of the CUDA side (csrc/cuda, torchtally._C_cuda, the NCCL loader and backend).

GPU tests skip, with the reason, where there is no GPU or no CUDA build; the CPU tests here
(NCCL loader error paths, the build switch, routing, the sync transport hook, host-side
validation of torchtally._C_cuda) run everywhere.
"""
