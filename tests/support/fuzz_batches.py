"""Hypothesis strategies for tests/catalogue/test_fuzz.py: one batch of a metric family, valid or with one fault.

A batch is drawn as a recipe (sizes, dtypes, a seed for its values, a memory layout, a fault)
and built with torch, so examples stay cheap and every one is reproducible. ``Batch.args`` are
the update's arguments; ``Batch.fault`` is None for a batch the metric must accept, else what
is wrong, with ``Batch.blamed`` the argument the error must name.

Layouts: contiguous, transposed (2 dims or more), strided (every other element of a wider
tensor), at a storage offset, or expanded (stride 0 along dim 0: every sample a copy of the
last). Values: probabilities, logits with +-inf, labels of every integer dtype and bool, float
0/1 targets, quarter-integers for regression (exact in float16 and in float64 sums, so that the
references' arithmetic and torchtally's agree on what is constant), NaN/inf where they are
valid (aggregation's nan_strategy, logits) and where they are not.
"""

import dataclasses
from typing import Any, Optional, Tuple

import torch
from hypothesis import strategies as st

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
INTS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64)
UNSUPPORTED = (torch.float8_e4m3fn, torch.float8_e5m2, torch.uint16, torch.uint32, torch.uint64, torch.complex64)
LAYOUTS = ("contiguous", "contiguous", "transposed", "strided", "offset", "expanded")
IGNORE = -1  # the ignore_index the classification families draw (or None)


@dataclasses.dataclass
class Batch:
    args: Tuple[Any, ...]
    fault: Optional[str] = None
    blamed: Optional[str] = None  # the argument a refusal must name


def relayout(t: torch.Tensor, how: str) -> torch.Tensor:
    """``t``'s values (``expanded``: its first sample's, repeated) in another memory layout."""
    if t.numel() == 0 or t.dim() == 0 or how == "contiguous":
        return t
    if how == "expanded":  # the last sample: where a fault is poked (see _poke), so it stays in
        return t[-1:].expand(t.shape)
    if how == "transposed" and t.dim() >= 2:
        return t.mT.contiguous().mT
    if how == "offset":
        base = torch.zeros(t.numel() + 3, dtype=t.dtype)
        base[3:] = t.reshape(-1)
        return base[3:].view(t.shape)
    wide = torch.zeros(t.shape + (2,), dtype=t.dtype)
    wide[..., 1] = t
    return wide[..., 1]


def _generator(draw) -> torch.Generator:
    return torch.Generator().manual_seed(draw(st.integers(0, 2**31 - 1)))


def _fault(draw, faults):
    """None most of the time, else one of ``faults``."""
    return draw(st.one_of(st.none(), st.none(), st.sampled_from(faults)))


def _break(args, names, fault, draw):
    """Apply a generic fault (unsupported dtype, meta, not a tensor) to one argument; returns
    (args, blamed) or None when ``fault`` is not generic."""
    kind, _, which = fault.partition(":")
    if kind not in ("dtype", "meta", "list"):
        return None
    i = names.index(which)
    args = list(args)
    if kind == "dtype":
        args[i] = args[i].to(draw(st.sampled_from(UNSUPPORTED)))
    elif kind == "meta":
        args[i] = args[i].to("meta")
    else:
        args[i] = args[i].tolist()
    return tuple(args), which


def _finish(draw, args, names, fault, blamed=None):
    generic = _break(args, names, fault, draw) if fault else None
    if generic is not None:
        args, blamed = generic
    layouts = [draw(st.sampled_from(LAYOUTS)) for _ in args]
    args = tuple(
        relayout(a, how) if isinstance(a, torch.Tensor) and not a.is_meta else a for a, how in zip(args, layouts)
    )
    return Batch(args, fault, blamed)


_GENERIC = ("dtype:preds", "dtype:target", "meta:preds", "meta:target", "list:preds")


def _scores(draw, g, shape) -> torch.Tensor:
    """Float scores: probabilities, or logits (some +-inf), in a drawn float dtype."""
    dtype = draw(st.sampled_from(FLOATS))
    if draw(st.booleans()):
        return torch.rand(shape, generator=g, dtype=torch.float64).to(dtype)
    logits = torch.randn(shape, generator=g, dtype=torch.float64) * 3
    if logits.numel() and draw(st.booleans()):
        logits.view(-1)[0] = draw(st.sampled_from([float("inf"), float("-inf")]))
    return logits.to(dtype)


def _labels(draw, g, shape, high, ignore_index) -> torch.Tensor:
    """Labels in [0, high) of a drawn dtype (bool for 2 classes too), some set to ignore_index."""
    dtypes = INTS + ((torch.bool, torch.float32) if high == 2 else ())
    if ignore_index is not None:
        dtypes = tuple(d for d in dtypes if d not in (torch.bool, torch.uint8))
    dtype = draw(st.sampled_from(dtypes))
    labels = torch.randint(0, high, shape, generator=g)
    if ignore_index is not None and labels.numel():
        labels = torch.where(torch.rand(shape, generator=g) < 0.2, ignore_index, labels)
    return labels.to(dtype)


def _poke(t: torch.Tensor, value) -> torch.Tensor:
    """``t`` with its last element set to ``value`` (one bad value in the batch)."""
    t = t.clone()
    t.view(-1)[-1] = value
    return t


@st.composite
def classification_batch(draw, task: str, num: int, ignore_index: Optional[int], scores_only: bool = False):
    """binary: preds, target [N] or [N, 3]; multiclass: scores [N, C] or labels [N], target [N];
    multilabel: preds, target [N, L]. ``scores_only``: float preds only (the curves)."""
    g = _generator(draw)
    n = draw(st.integers(0, 10))
    faults = _GENERIC + ("nan", "label", "shape") + (("half",) if task != "multiclass" else ())
    fault = _fault(draw, faults)
    if task == "binary":
        shape = (n,) + draw(st.sampled_from([(), (3,)]))
        label_shape = shape
    elif task == "multilabel":
        shape = label_shape = (n, num)
    else:
        label_shape = (n,)
        shape = (n, num) if scores_only or draw(st.booleans()) else label_shape
    if scores_only:
        preds = _scores(draw, g, shape)
    elif shape == label_shape and task != "multilabel" and (task == "multiclass" or draw(st.booleans())):
        preds = _labels(draw, g, shape, 2 if task == "binary" else num, None)  # label preds
    elif task == "multilabel" and draw(st.booleans()):
        preds = _labels(draw, g, shape, 2, None)
    else:
        preds = _scores(draw, g, shape)
    target = _labels(draw, g, label_shape, 2 if task != "multiclass" else num, ignore_index)
    blamed = None
    if fault == "nan" and preds.is_floating_point() and preds.numel():
        preds, blamed = _poke(preds, float("nan")), "preds"
    elif fault == "label" and target.numel() and target.dtype != torch.bool:
        bad = draw(st.sampled_from([2 if task != "multiclass" else num, -3]))
        if target.dtype == torch.uint8 and bad < 0:
            bad = 200
        target, blamed = _poke(target, bad), "target"
    elif fault == "half" and target.numel():
        target, blamed = _poke(target.to(torch.float32), 0.5), "target"
    elif fault == "shape":
        one_more = target[:1] if target.numel() else target.new_zeros((1,) + target.shape[1:])
        target, blamed = torch.cat([target, one_more]), "target"
    elif fault in ("nan", "label", "half"):
        fault = None  # nothing to break in this batch: it is valid
    return _finish(draw, (preds, target), ("preds", "target"), fault, blamed)


@st.composite
def regression_batch(draw, columns: Optional[int]):
    """preds, target of one shape: [N] (columns None) or [N, columns]; quarter-integer values."""
    g = _generator(draw)
    n = draw(st.integers(0, 10))
    shape = (n,) if columns is None else (n, columns)
    fault = _fault(draw, _GENERIC + ("nan", "inf", "shape"))

    def values():
        dtype = draw(st.sampled_from(FLOATS + INTS[1:]))
        return (torch.randint(-40, 41, shape, generator=g).double() / (4 if dtype.is_floating_point else 1)).to(dtype)

    preds, target = values(), values()
    blamed = None
    if fault in ("nan", "inf") and n and preds.is_floating_point():
        preds, blamed = _poke(preds, float("nan") if fault == "nan" else float("inf")), "preds"
    elif fault == "shape" and n:
        target, blamed = target[:-1], "target"
    elif fault in ("nan", "inf", "shape"):
        fault = None
    return _finish(draw, (preds, target), ("preds", "target"), fault, blamed)


@st.composite
def aggregation_batch(draw, weighted: bool, nan_ok: bool, one_dim: bool = False):
    """value (and weight) tensors, 1-D (``one_dim``) or of any shape; NaN is a fault unless the
    metric drops it (nan_ok)."""
    g = _generator(draw)
    shape = draw(st.sampled_from([(0,), (1,), (5,)] + ([] if one_dim else [(3, 2), ()])))
    dtype = draw(st.sampled_from(FLOATS + INTS[1:]))
    value = (torch.randint(-40, 41, shape, generator=g).double() / 4).to(dtype)
    if value.is_floating_point() and value.numel() and draw(st.booleans()):
        value = _poke(value, draw(st.sampled_from([float("nan"), float("inf")])))
    has_nan = bool(torch.isnan(value.double()).any())
    args, names = (value,), ("value",)
    fault = "nan" if has_nan and not nan_ok else None
    if weighted:
        weight = torch.randint(0, 5, shape, generator=g).double()
        if fault is None and not has_nan and weight.numel() and draw(st.booleans()):
            weight, fault = _poke(weight, -1.0), "negative weight"
        args, names = (value, weight), ("value", "weight")
    if fault is None and draw(st.integers(0, 4)) == 0:
        fault = draw(st.sampled_from(["dtype:value", "meta:value"]))
        if fault == "dtype:value":  # float8 and uint are read exactly: only complex is refused
            return Batch((value.to(torch.complex64),) + args[1:], fault, "value")
    blamed = "weight" if fault == "negative weight" else "value"
    return _finish(draw, args, names, fault, blamed if fault else None)
