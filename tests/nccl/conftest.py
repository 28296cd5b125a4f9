"""Tests of the run-time NCCL loader (csrc/nccl, torchtally._nccl) and the nccl backend's setup
and error paths, on the CPU, through a fake libnccl compiled by the tests (fake_nccl.py). The
same backend on a GPU is tests/cuda/test_nccl_backend.py. Not a package, as tests/cuda."""
