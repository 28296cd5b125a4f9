"""List states: torchmetrics' ``add_state(name, default=[], dist_reduce_fx=...)``.

The attribute is a plain Python list: ``update`` appends tensors to it, ``compute`` reads it
(``dim_zero_cat(self.preds)``). ``reset`` gives a new empty list (torchmetrics empties the old
one in place: a list the caller kept keeps its items here). What a sync gives ``compute``, as
torchmetrics' sync gives it:

  "cat"          one tensor: every rank's items concatenated, rank by rank, in rank order (a
                 0-dim item counts as one row). No rank with items: a 0-row tensor (the first
                 rank's empty item, else an empty 1-D tensor of the metric's dtype);
  None           a list of every rank's items, round by round: item 0 of rank 0, 1, ..., then
                 item 1 of each ... (torchmetrics' order; it needs the same number of items on
                 every rank, torchtally does not: a rank with fewer items drops out of the later
                 rounds). No items anywhere: [];
  a function     that function applied to the None list ("sum", "mean", "max", "min" name
                 torchtally.utilities' dim_zero_*; as in torchmetrics they expect a tensor and
                 fail on a list, the failure raised as a SyncError on every rank).

How it travels: in the packed sync a list state is one "merge" state of int64 words (one
*blob* per rank: the items' dtypes and shapes, then their bytes), so it moves in the one padded
all_gather every cat state shares, and a metric of list states costs the collectives of one
with cat states. For "cat" a rank sends its items already concatenated (ragged rows raise on
that rank, announced to the others, before any data moves). Every rank decodes every blob the
same way, so ranks whose "cat" rows differ in dtype or row shape raise the same SyncError on
every rank, naming both; a rank without items sends no rows and is not compared.
"""

from typing import Any, Callable, List, Optional, Sequence, Union

import torch

from ..utilities.data import dim_zero_cat, dim_zero_max, dim_zero_mean, dim_zero_min, dim_zero_sum

LIST = "list"  # what state_reduce says of a list state
Reduction = Union[str, None, Callable[[Any], Any]]  # "cat", None, or a function of the gathered list

_BY_NAME = {"sum": dim_zero_sum, "mean": dim_zero_mean, "max": dim_zero_max, "min": dim_zero_min}
# The dtypes an item may have, by their code in a blob.
DTYPES = (
    torch.float32,
    torch.float64,
    torch.float16,
    torch.bfloat16,
    torch.int64,
    torch.int32,
    torch.int16,
    torch.int8,
    torch.uint8,
    torch.bool,
    torch.complex64,
    torch.complex128,
)


_TENSOR_NAMES = {dim_zero_sum: "sum", dim_zero_max: "max", dim_zero_min: "min", dim_zero_cat: "cat"}


def tensor_reduction(reduce: Any) -> Any:
    """A tensor state's reduce: the dim_zero_* functions as the names of what they do."""
    return _TENSOR_NAMES.get(reduce, reduce) if callable(reduce) else reduce


def list_reduction(name: str, reduce: Any) -> Reduction:
    """The reduction of list state ``name`` given ``dist_reduce_fx`` ``reduce`` (torchmetrics'
    choices: "cat", "sum", "mean", "max", "min", None or a function)."""
    if reduce == "cat" or reduce is dim_zero_cat:
        return "cat"
    if reduce is None or callable(reduce):
        return reduce
    if reduce in _BY_NAME:
        return _BY_NAME[reduce]
    raise ValueError(
        f"add_state('{name}'): `dist_reduce_fx` must be callable or one of ['mean', 'sum', 'cat', 'min', 'max', "
        f"None], got {reduce!r}"
    )


def describe_reduction(reduce: Reduction) -> str:
    """A list state's reduction in words (its sync label and the plan's fingerprint)."""
    if reduce is None or isinstance(reduce, str):
        return str(reduce)
    return getattr(reduce, "__qualname__", None) or type(reduce).__name__


def concatenated(name: str, items: Sequence[Any]) -> torch.Tensor:
    """dim_zero_cat of ``items`` (non-empty), with an error naming the state when it fails."""
    try:
        return dim_zero_cat(list(items))
    except (RuntimeError, TypeError) as exc:
        shapes = [tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__ for t in items]
        raise ValueError(
            f"list state '{name}' (dist_reduce_fx='cat'): its items cannot be concatenated along dim 0 to be "
            f"synced (shapes {shapes}): {exc}"
        ) from exc


def pack(name: str, value: Any, reduce: Reduction, device: torch.device) -> torch.Tensor:
    """This rank's blob of list state ``name`` (see the module docstring): int64 words
    ``[n_words_of_meta, n_items, (dtype code, ndim, *shape) per item]`` then each item's bytes,
    padded to whole words. ``value`` is the list (or, after ``sync()``, what it synced to)."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    for t in items:
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"list state '{name}': only tensors can be synced, it holds a {type(t).__name__}")
        if t.dtype not in DTYPES:
            raise TypeError(f"list state '{name}': an item of dtype {t.dtype} cannot be synced")
    if reduce == "cat" and items:
        items = [concatenated(name, items)]
    meta = [0, len(items)]
    parts = []
    for t in items:
        meta += [DTYPES.index(t.dtype), t.dim(), *t.shape]
        raw = t.detach().to(device).contiguous().reshape(-1).view(torch.uint8)
        pad = -raw.numel() % 8
        if pad:
            raw = torch.cat([raw, raw.new_zeros(pad)])
        parts.append(raw.view(torch.int64))
    meta[0] = len(meta)
    return torch.cat([torch.tensor(meta, dtype=torch.int64, device=device)] + parts)


def unpack(blob: torch.Tensor) -> List[torch.Tensor]:
    """The items of one rank's blob (views of it where the alignment allows)."""
    if blob.numel() == 0:
        return []
    n_meta = int(blob[0].item())
    meta = blob[:n_meta].tolist()
    items, at, word = [], 2, n_meta
    for _ in range(meta[1]):
        dtype, ndim = DTYPES[meta[at]], meta[at + 1]
        shape = tuple(meta[at + 2 : at + 2 + ndim])
        at += 2 + ndim
        nbytes = torch.Size(shape).numel() * dtype.itemsize
        words = -(-nbytes // 8)
        raw = blob[word : word + words].view(torch.uint8)[:nbytes]
        try:
            items.append(raw.view(dtype).view(shape))
        except RuntimeError:  # a wider dtype than the words' alignment allows: copy
            items.append(raw.clone().view(dtype).view(shape))
        word += words
    return items


def round_robin(per_rank: Sequence[Sequence[torch.Tensor]]) -> List[torch.Tensor]:
    """Item 0 of each rank in rank order, then item 1 of each, ... (torchmetrics' order)."""
    rounds = max((len(items) for items in per_rank), default=0)
    return [items[i] for i in range(rounds) for items in per_rank if i < len(items)]


def reduce_gathered(
    name: str, reduce: Reduction, per_rank: Sequence[Sequence[torch.Tensor]], dtype: torch.dtype, device: torch.device
) -> Any:
    """What ``compute`` sees of list state ``name`` after a sync (module docstring), from each
    rank's items (for "cat": at most one, already concatenated)."""
    if reduce != "cat":
        gathered = round_robin(per_rank)
        if not gathered:
            return []
        return gathered if reduce is None else reduce(gathered)  # type: ignore[operator]
    rows = [(r, items[0]) for r, items in enumerate(per_rank) if items and items[0].shape[0] > 0]
    if not rows:
        empty = next((items[0] for items in per_rank if items), None)
        return empty if empty is not None else torch.empty(0, dtype=dtype, device=device)
    first_rank, first = rows[0]
    for r, t in rows[1:]:
        if t.dtype != first.dtype or t.shape[1:] != first.shape[1:]:
            raise ValueError(
                f"list state '{name}' (dist_reduce_fx='cat'): rank {first_rank} holds {first.dtype} rows of shape "
                f"{('N', *first.shape[1:])}, rank {r} {t.dtype} rows of shape {('N', *t.shape[1:])}; every rank "
                "must append rows of one dtype and row shape"
            )
    return torch.cat([t for _, t in rows])


def gathered_with(
    gather: Callable[..., Any], name: str, value: Any, reduce: Reduction, group: Any, dtype: torch.dtype
) -> Any:
    """List state ``name`` synced by a user's ``dist_sync_fn`` ``gather`` (torchmetrics' way: one
    gather per item, after "cat" items are concatenated; an empty "cat" list gathers an empty
    1-D tensor of the metric's ``dtype``)."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if reduce == "cat":
        items = [concatenated(name, items)] if items else [torch.empty(0, dtype=dtype)]
    gathered = [t for item in items for t in gather(item, group=group)]
    if not gathered:
        return []
    if reduce == "cat":
        return dim_zero_cat(gathered)
    return gathered if reduce is None else reduce(gathered)  # type: ignore[operator]


def moved(value: Any, device: Optional[torch.device]) -> Any:
    """A list state's items on ``device`` (a new list); a tensor (a synced value) moved."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    return [t.to(device) if isinstance(t, torch.Tensor) else t for t in value]


def copied(value: Any, keep_vars: bool = False) -> Any:
    """A new list of the items, each detached (unless ``keep_vars``) and cloned; what
    torchmetrics' state_dict saves of a list state."""
    if isinstance(value, torch.Tensor):
        return (value if keep_vars else value.detach()).clone()
    return [(t if keep_vars else t.detach()).clone() if isinstance(t, torch.Tensor) else t for t in value]
