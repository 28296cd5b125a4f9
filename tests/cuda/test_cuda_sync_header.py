"""The sync header of an NCCL process group on a GPU: its fields reach the device without a
host synchronisation (pinned staging, an asynchronous copy); only reading the gathered table back
waits. Skips without a CUDA device."""

import pytest
import torch

from torchtally.sync.header import HEADER_SLOTS, HeaderBuffers

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")]


def test_writing_the_header_to_the_gpu_does_not_synchronise_the_host():
    buffers = HeaderBuffers(("key",), fields=12, world=2, device=torch.device("cuda"), small=None, shapes=())
    previous = torch.cuda.get_sync_debug_mode()
    torch.cuda.set_sync_debug_mode("error")
    try:
        buffers.write(list(range(12)))
        buffers.write([5] + list(range(1, 12)))  # one word changed
    finally:
        torch.cuda.set_sync_debug_mode(previous)
    assert buffers.sent[:12].tolist() == [5] + list(range(1, 12))
    assert buffers.sent.numel() == HEADER_SLOTS
