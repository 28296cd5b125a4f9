"""The kernels as torch custom operators (``torch.ops.torchtally.<kernel>``), for ``torch.compile``.

A call into a C extension is opaque to dynamo: it breaks the graph. Registered through
``torch.library.custom_op``, each kernel is one node of the graph instead, declared as mutating
its first argument (``out`` / ``state``), with a fake implementation that does nothing (the op
returns nothing and changes no shape), so ``metric.update(preds, target)`` inside a function
compiled with ``fullgraph=True`` traces without a break. At run time the node calls the same
route as an eager update (torchtally.kernels: the C core, the CUDA kernels or the reference), so
the compiled step counts exactly what the eager one counts, and a rejected batch raises the
kernel's ValueError from the compiled function, its state untouched.

torchtally.kernels calls these ops only while dynamo traces (``torch.compiler.is_compiling()``):
eagerly, a custom op's dispatch costs ~15 us, several times a small update.
"""

from typing import Any, Callable, Optional

import torch
from torch import Tensor

_OUT = ("out",)
_STATE = ("state",)


def _register(name: str, mutated: tuple, run: Callable[..., None]) -> Callable[..., None]:
    op = torch.library.custom_op(f"torchtally::{name}", run, mutates_args=mutated)
    op.register_fake(_nothing)
    return op


def _nothing(*args: object) -> None:
    """The fake implementation: the kernels write into their first argument and return None."""
    return None


def _unset_route(out: Tensor) -> Any:
    raise RuntimeError("torchtally.kernels.ops: no route set (torchtally.kernels sets it on import)")


_route: Callable[[Tensor], Any] = _unset_route


def use_route(route: Callable[[Tensor], Any]) -> None:
    """Set what the ops call: ``route(out)`` gives the module an eager call of the kernel takes
    (torchtally.kernels passes its own choice: the C core, the CUDA kernels or the reference)."""
    global _route
    _route = route


def _confmat_labels(
    out: Tensor, preds: Tensor, target: Tensor, mask: Optional[Tensor], ignore_index: Optional[int]
) -> None:
    _route(out).confmat_labels(out, preds, target, mask, ignore_index)


def _confmat_scores(
    out: Tensor, scores: Tensor, target: Tensor, mask: Optional[Tensor], ignore_index: Optional[int]
) -> None:
    _route(out).confmat_scores(out, scores, target, mask, ignore_index)


def _confmat_threshold(
    out: Tensor,
    preds: Tensor,
    target: Tensor,
    mask: Optional[Tensor],
    ignore_index: Optional[int],
    threshold: float,
    logit_threshold: Optional[float],
) -> None:
    _route(out).confmat_threshold(out, preds, target, mask, ignore_index, threshold, logit_threshold)


def _binned_update(
    out: Tensor,
    preds: Tensor,
    target: Tensor,
    mask: Optional[Tensor],
    ignore_index: Optional[int],
    thresholds: Tensor,
    uniform: bool,
) -> None:
    _route(out).binned_update(out, preds, target, mask, ignore_index, thresholds, uniform)


def _topk_update(
    out: Tensor, preds: Tensor, target: Tensor, mask: Optional[Tensor], ignore_index: Optional[int], k: int
) -> None:
    _route(out).topk_update(out, preds, target, mask, ignore_index, k)


def _moments_update(state: Tensor, x: Tensor, weights: Optional[Tensor]) -> None:
    _route(state).moments_update(state, x, weights)


def _moments_merge(state: Tensor, other: Tensor) -> None:
    _route(state).moments_merge(state, other)


def _comoments_update(state: Tensor, x: Tensor, y: Tensor) -> None:
    _route(state).comoments_update(state, x, y)


def _comoments_merge(state: Tensor, other: Tensor) -> None:
    _route(state).comoments_merge(state, other)


confmat_labels = _register("confmat_labels", _OUT, _confmat_labels)
confmat_scores = _register("confmat_scores", _OUT, _confmat_scores)
confmat_threshold = _register("confmat_threshold", _OUT, _confmat_threshold)
binned_update = _register("binned_update", _OUT, _binned_update)
topk_update = _register("topk_update", _OUT, _topk_update)
moments_update = _register("moments_update", _STATE, _moments_update)
moments_merge = _register("moments_merge", _STATE, _moments_merge)
comoments_update = _register("comoments_update", _STATE, _comoments_update)
comoments_merge = _register("comoments_merge", _STATE, _comoments_merge)
