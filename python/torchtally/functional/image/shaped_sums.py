"""Sums whose shape the first batch decides (per-pixel maps of RASE, per-channel and
per-channel-pair sums of the pansharpening indices), kept as one flat float64 tensor: a header
of ``k`` integers (the shape, exact in float64) followed by the sums. Empty until the first
batch; merged across ranks by adding the sums of those that hold any, after checking that their
headers agree (a "merge" state: a rank without a batch holds none)."""

from typing import Callable, List, Sequence, Tuple

import torch
from torch import Tensor

__all__ = ["add_shaped", "merge_shaped", "split_shaped", "check_shaped"]


def _header_of(state: Tensor, k: int) -> Tuple[int, ...]:
    return tuple(int(v) for v in state[:k].tolist())


def add_shaped(state: Tensor, header: Sequence[int], sums: Tensor, what: str) -> Tensor:
    """``state`` with ``sums`` added (a new tensor; ``state`` is not written). The first batch
    sets the header; a later batch whose header differs raises ValueError naming ``what``."""
    header = tuple(int(h) for h in header)
    flat = sums.detach().to(torch.float64).reshape(-1)
    if state.numel() == 0:
        return torch.cat((torch.tensor(header, dtype=torch.float64, device=flat.device), flat)).to(state.device)
    held = _header_of(state, len(header))
    if held != header:
        raise ValueError(f"{what}: expected {list(held)} as in the batches before, got {list(header)}")
    k = len(header)
    return torch.cat((state[:k], state[k:] + flat.to(state.device)))


def merge_shaped(values: List[Tensor], k: int, what: str) -> Tensor:
    """The states of several ranks (or metrics) combined: sums added, empty ones left out."""
    held = [v for v in values if v.numel()]
    if not held:
        return values[0].clone()
    headers = {(_header_of(v, k), v.numel()) for v in held}
    if len(headers) > 1:
        raise ValueError(f"{what}: the ranks saw images of different shapes: {sorted(h for h, _ in headers)}")
    total = torch.stack([v[k:] for v in held]).sum(0)
    return torch.cat((held[0][:k], total))


def split_shaped(state: Tensor, k: int) -> Tuple[Tuple[int, ...], Tensor]:
    """(header, flat sums) of a non-empty state."""
    return _header_of(state, k), state[k:]


def check_shaped(state: Tensor, k: int, size_of_header: Callable[[Tuple[int, ...]], int], name: str) -> None:
    """A loaded state is empty or a header of ``k`` non-negative integers followed by
    ``size_of_header(header)`` sums."""
    if state.dim() != 1:
        raise ValueError(f"'{name}': expected a 1-dim tensor, got {list(state.shape)}")
    if state.numel() == 0:
        return
    if state.numel() < k:
        raise ValueError(f"'{name}': expected a header of {k} values, got {state.numel()} values")
    header = state[:k]
    if bool((header < 0).any()) or bool((header != header.round()).any()):
        raise ValueError(f"'{name}': expected a header of non-negative integers, got {header.tolist()}")
    want = size_of_header(_header_of(state, k))
    if state.numel() - k != want:
        raise ValueError(f"'{name}': expected {want} sums after the header, got {state.numel() - k}")
