"""The "nccl" sync backend, public face: ``torchtally.nccl.enable(group)`` on every rank sends
the data collectives of every later sync over that group through an NCCL communicator of its
own, on a CUDA stream of its own; ``disable(group)`` stops it. How, and what it needs:
torchtally.sync.nccl.
"""

from .sync.nccl import NcclCommunicator, NcclUnavailable, disable, enable, load

__all__ = ["enable", "disable", "load", "NcclCommunicator", "NcclUnavailable"]
