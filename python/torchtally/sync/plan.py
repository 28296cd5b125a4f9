"""What one sync exchanges, derived from declared states only (never from data): the state
specs, the sync plan built from them, and where each value lies in the buffers of a sync.

Every rank builds the same plan from the same declarations, so every rank makes the same
collectives in the same order; torchtally.sync.protocol runs the protocol over a plan.

The header every sync starts with is HEADER_SLOTS int64 words per rank, whatever the plan:

    [fingerprint, status, problem, options, dirty, address, vote, host] + unit flag words
    + the dim-0 length of every cat/merge state + the kind of every number state    ("fields")

and, in a *small* plan (only fixed-shape states, and they fit), the data itself after the
fields: one word per number state (its own kind's bits), then each (transport dtype, op) group
of tensor states packed in its transport dtype. A small plan's sync is then that one header
exchange; each rank reduces the W copies itself (torchtally.sync.header). The header's size is
a constant, not a function of the plan, so ranks whose plans differ still exchange well-formed
headers and find the difference there, before any data is reduced. HEADER_SLOTS (4 KiB) was chosen by
measurement: see docs/architecture.md, "The small-plan bound", and benchmarks/RESULTS.md,
"Per-step sync".
"""

import hashlib
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch

from .fingerprint import OptionTexts, describe_plan_differences, option_lines

FIXED_REDUCES = ("sum", "max", "min", "prod")
VAR_REDUCES = ("cat", "merge")
REDUCES = FIXED_REDUCES + VAR_REDUCES

HEADER_SLOTS = 512  # int64 words per rank: 4 KiB
HEADER_FIXED = 8  # fingerprint, status, problem, options, dirty, roll-call address, exchange vote, host
FLAG_BITS = 62  # unit flags per int64 header word (bit 63 left alone)
PROTOCOL = "torchtally-sync-3"

# A number state's value is a 0-dim tensor of one of these dtypes; the index is its kind, and
# ranks agree on the widest kind any of them holds.
NUMBER_KINDS = (torch.bool, torch.int64, torch.float64)

INT_LIKE = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
FLOAT_LIKE = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
COMPLEX = (torch.complex64, torch.complex128)


@dataclass(frozen=True)
class StateSpec:
    """One declared state as the plan sees it.

    label: unique, human-readable name used in errors and in the fingerprint ("acc.confmat").
    reduce: one of REDUCES.
    dtype: the state's dtype.
    shape: full shape of a fixed state; for cat/merge the shape of one row (dims after dim 0).
    unit: index of the metric/object owning the state (for the "was updated" flags).
    number: a Python number (see number_spec); dtype and shape are then float64 and ().
    """

    label: str
    reduce: str
    dtype: torch.dtype
    shape: Tuple[int, ...]
    unit: int = 0
    number: bool = False

    def describe(self) -> str:
        shape = ("N",) + self.shape if self.reduce in VAR_REDUCES else self.shape
        dtype = "number" if self.number else str(self.dtype).replace("torch.", "")
        return f"{self.label}: {self.reduce} {dtype} {tuple(shape)}"


def number_spec(label: str, reduce: str, unit: int = 0) -> StateSpec:
    """A Python number state: its value is a Python bool, int or float, or a 0-dim bool, int64 or
    float64 tensor, whichever this rank holds; the synced value has the widest kind any rank held
    (float64 > int64 > bool), in the form this rank's value had (a Python number or a tensor)."""
    if reduce not in FIXED_REDUCES:
        raise ValueError(f"state '{label}': a Python number reduces by one of {FIXED_REDUCES}, got {reduce!r}")
    return StateSpec(label, reduce, torch.float64, (), unit, number=True)


def check_declarable(label: str, dtype: torch.dtype, reduce: str) -> None:
    """Raise a clear error for a state the sync cannot carry exactly."""
    if reduce not in REDUCES:
        raise ValueError(f"state '{label}': reduce must be one of {REDUCES}, got {reduce!r}")
    if reduce in VAR_REDUCES:
        return  # travels as raw bytes: any dtype
    if dtype == torch.bool and reduce in ("sum", "prod"):
        raise ValueError(f"state '{label}': a bool state can only reduce by 'max' (any) or 'min' (all), got {reduce!r}")
    if dtype in COMPLEX and reduce != "sum":
        raise ValueError(f"state '{label}': a complex state can only reduce by 'sum', got {reduce!r}")
    if dtype not in INT_LIKE + FLOAT_LIKE + COMPLEX:
        raise ValueError(
            f"state '{label}': dtype {dtype} cannot be reduced exactly across ranks; "
            f"use one of int64, int32, int16, int8, uint8, bool, float64, float32, float16, bfloat16, complex"
        )


def transport_dtype(dtype: torch.dtype) -> torch.dtype:
    """dtype a fixed state travels in: integers and bool widen to int64 (exact), half floats to float32."""
    if dtype in INT_LIKE:
        return torch.int64
    if dtype in (torch.float16, torch.bfloat16):
        return torch.float32
    return dtype


@dataclass(frozen=True)
class FixedGroup:
    """Fixed-shape states reduced together: one buffer of their transport dtype, one op."""

    dtype: torch.dtype  # transport dtype
    reduce: str
    indices: Tuple[int, ...]
    numels: Tuple[int, ...]
    out_dtypes: Tuple[torch.dtype, ...]  # what each state comes back as


def group_fixed(
    specs: Sequence[StateSpec], number_kinds: Dict[int, int], with_numbers: bool = True
) -> Tuple[FixedGroup, ...]:
    """One group per (transport dtype, op), in first-appearance order; ``number_kinds`` maps the
    index of every number state to the kind the ranks agreed on (numbers left out when not
    ``with_numbers``)."""
    groups: Dict[Tuple[torch.dtype, str], List[int]] = {}
    dtypes: Dict[int, torch.dtype] = {}
    for i, s in enumerate(specs):
        if s.reduce in FIXED_REDUCES and (with_numbers or not s.number):
            dtypes[i] = NUMBER_KINDS[number_kinds[i]] if s.number else s.dtype
            groups.setdefault((transport_dtype(dtypes[i]), s.reduce), []).append(i)
    return tuple(
        FixedGroup(dt, red, tuple(idx), tuple(numel(specs[i].shape) for i in idx), tuple(dtypes[i] for i in idx))
        for (dt, red), idx in groups.items()
    )


@dataclass(frozen=True)
class SmallLayout:
    """Where a small plan's data lies in its header: ``numbers_at`` is the first of one word per
    number state (number_indices order); each tensor group starts at its byte offset (a word
    boundary) in ``groups``; ``fields`` words are read back as Python ints (the numbers' words
    are the last of them), the rest as tensors."""

    numbers_at: int
    fields: int
    groups: Tuple[Tuple[FixedGroup, int], ...]  # (group, first byte)
    words: int  # words used in all (<= HEADER_SLOTS)


class SyncPlan:
    """The collectives one sync makes, derived from declared states only. Immutable; cache it.

    ``options``: (metric label, {option: description}) for every metric the sync computes
    (torchtally.sync.fingerprint), also those that share another's state: they move no data but
    enter the fingerprint, so ranks configured differently stop before any data moves."""

    def __init__(
        self, specs: Sequence[StateSpec], n_units: int = 1, options: Sequence[Tuple[str, OptionTexts]] = ()
    ) -> None:
        labels = [s.label for s in specs]
        if len(set(labels)) != len(labels):
            raise ValueError(f"state labels in one sync plan must be unique, got {labels}")
        for s in specs:
            check_declarable(s.label, s.dtype, s.reduce)
            if not 0 <= s.unit < n_units:
                raise ValueError(f"state '{s.label}': unit {s.unit} out of range for {n_units} units")
            if s.number and (s.reduce not in FIXED_REDUCES or s.shape != ()):
                raise ValueError(f"state '{s.label}': a number state is 0-dim and reduces by one of {FIXED_REDUCES}")
        self.specs: Tuple[StateSpec, ...] = tuple(specs)
        self.shapes: Tuple[Tuple[int, ...], ...] = tuple(s.shape for s in self.specs)
        self.n_units = n_units
        self.options: List[Tuple[str, OptionTexts]] = [(label, dict(opts)) for label, opts in options]

        self.number_indices: Tuple[int, ...] = tuple(i for i, s in enumerate(self.specs) if s.number)
        self._groups_by_kinds: Dict[Tuple[int, ...], Tuple[FixedGroup, ...]] = {}
        # The groups of a sync in which every number is an int (all groups, without numbers).
        self.fixed_groups = self.fixed_groups_for([NUMBER_KINDS.index(torch.int64)] * len(self.number_indices))
        # A number may land in its op's int64 or float64 group: count both for the bound.
        self._max_fixed_groups = len(
            {
                (dt, s.reduce)
                for s in self.specs
                if s.reduce in FIXED_REDUCES
                for dt in ((torch.int64, torch.float64) if s.number else (transport_dtype(s.dtype),))
            }
        )
        self.var_indices: Tuple[int, ...] = tuple(i for i, s in enumerate(self.specs) if s.reduce in VAR_REDUCES)
        self.row_bytes: Tuple[int, ...] = tuple(
            numel(self.specs[i].shape) * itemsize(self.specs[i].dtype) for i in self.var_indices
        )
        # Every state's bytes start at a multiple of the largest itemsize (a power of two, so a
        # multiple of every other): each one can be viewed back as its dtype in place.
        self.var_align = max((itemsize(self.specs[i].dtype) for i in self.var_indices), default=1)
        self.n_flag_words = (n_units + FLAG_BITS - 1) // FLAG_BITS
        self.header_extra = self.n_flag_words + len(self.var_indices) + len(self.number_indices)
        self.small: Optional[SmallLayout] = self._small_layout()
        self.fingerprint = fingerprint(self.describe() + option_lines(self.options))

    def describe(self) -> List[str]:
        """The declared states, one line each (the options: ``self.options``)."""
        return [f"{self.n_units} unit(s)"] + [s.describe() for s in self.specs]

    def fixed_groups_for(self, number_kinds: Sequence[int]) -> Tuple[FixedGroup, ...]:
        """The fixed groups of a sync whose number states have the agreed ``number_kinds`` (in
        number_indices order). Every rank gets the same kinds from the header, so the same groups."""
        key = tuple(number_kinds)
        groups = self._groups_by_kinds.get(key)
        if groups is None:
            groups = self._groups_by_kinds[key] = group_fixed(self.specs, dict(zip(self.number_indices, key)))
        return groups

    def _small_layout(self) -> Optional[SmallLayout]:
        """The layout of a plan whose data fits its header (no cat/merge states), else None."""
        if self.var_indices:
            return None
        numbers_at = HEADER_FIXED + self.header_extra
        fields = numbers_at + len(self.number_indices)
        at = fields * 8
        placed = []
        for g in group_fixed(self.specs, {}, with_numbers=False):
            align = max(8, itemsize(g.dtype))  # complex128 is viewed back at a 16-byte boundary
            at = -(-at // align) * align
            placed.append((g, at))
            at += -(-sum(g.numels) * itemsize(g.dtype) // 8) * 8
        words = at // 8
        return SmallLayout(numbers_at, fields, tuple(placed), words) if words <= HEADER_SLOTS else None

    @property
    def collectives_per_sync(self) -> int:
        """Upper bound of collectives one successful sync makes (the var gather may be skipped)."""
        if self.small is not None:
            return 1
        overflow = 1 if HEADER_FIXED + self.header_extra > HEADER_SLOTS else 0
        return 1 + overflow + self._max_fixed_groups + (1 if self.var_indices else 0)


def numel(shape: Tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def itemsize(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def fingerprint(lines: List[str]) -> int:
    """63-bit digest of the protocol version and the plan's lines (fits a signed int64 word)."""
    digest = hashlib.blake2b("\n".join([PROTOCOL] + lines).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") & (2**63 - 1)


def local_problem(spec: StateSpec, value: Any) -> Tuple[int, str]:
    """(problem code, detail) when ``value`` no longer matches ``spec``; (0, "") when it does.
    Codes: 1 shape, 2 dtype, 3 type."""
    if spec.number and isinstance(value, (bool, int, float)):  # a Python number, not a subclass of one
        if type(value) is int and not -(2**63) <= value < 2**63:
            return 3, f"the int {value}, outside int64"
        return (0, "") if type(value) in (bool, int, float) else (3, f"a {type(value).__name__}")
    if not isinstance(value, torch.Tensor):
        return 3, f"a {type(value).__name__}, not a tensor"
    if spec.number:
        if value.dtype not in NUMBER_KINDS:
            return 2, f"dtype {value.dtype}"
        return (1, f"shape {tuple(value.shape)}") if value.dim() else (0, "")
    if value.dtype != spec.dtype:
        return 2, f"dtype {value.dtype}"
    if spec.reduce in VAR_REDUCES:
        if value.dim() != 1 + len(spec.shape) or tuple(value.shape[1:]) != spec.shape:
            return 1, f"shape {tuple(value.shape)}"
    elif tuple(value.shape) != spec.shape:
        return 1, f"shape {tuple(value.shape)}"
    return 0, ""


def describe_mismatch(plans: List[Dict[str, Any]]) -> str:
    """What differs between rank 0's plan and each other rank's: ``plans`` holds, per rank,
    {"plan": SyncPlan.describe(), "options": SyncPlan.options, "recipient": rank or None}."""
    reference = plans[0]
    notes = []
    for r, other in enumerate(plans[1:], start=1):
        if other == reference:
            continue
        if other["recipient"] != reference["recipient"]:
            notes.append(f"rank 0 asks for recipient_rank={reference['recipient']}, rank {r} for {other['recipient']}")
        a, b = reference["plan"], other["plan"]
        if a != b:
            k = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
            left = a[k] if k < len(a) else "<nothing>"
            right = b[k] if k < len(b) else "<nothing>"
            notes.append(
                f"rank 0 syncs {len(a) - 1} state(s), rank {r} syncs {len(b) - 1}; first difference at entry {k}: "
                f"rank 0 has [{left}], rank {r} has [{right}]"
            )
        notes += describe_plan_differences(reference["options"], other["options"], r)
    return "; ".join(notes) if notes else "plans differ"
