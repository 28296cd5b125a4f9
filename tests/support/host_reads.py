"""Counting the Tensor methods that read a value back to the host (a synchronisation on CUDA):
the tests of the paths that must not, run on CPU tensors where nothing else would tell."""

from typing import List

import pytest
import torch

HOST_READS = ("item", "tolist", "__bool__", "__int__", "__float__", "__index__")


def count_host_reads(monkeypatch: pytest.MonkeyPatch) -> List[str]:
    """Patches every method of HOST_READS to record its name in the returned list, then run."""
    calls: List[str] = []
    for name in HOST_READS:
        original = getattr(torch.Tensor, name)

        def counted(self, *args, _name=name, _original=original, **kwargs):
            calls.append(_name)
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(torch.Tensor, name, counted)
    return calls
