"""Regression error sums added into a metric's states by one fused kernel pass.

``added`` runs the error-sums kernel (kernels.regression, csrc/API_REGRESSION.md "error_sums") on a CPU
batch: one read of preds and target gives the float64 sums, the count and the finiteness and
domain verdict, and the states are written only when the verdict is clean. It returns False
when the batch must take the torch path of batch_sums.py / update.py instead:

* the batch is not on the CPU: there the torch path keeps its checks on the device
  (kernels.deferred_checks) instead of reading a verdict back on every update;
* dynamo is tracing: the torch path has a traced form;
* a large batch of Minkowski with p other than 1, 2, 3 (the kernel's scalar libm pow costs
  10-20 ns an element, torch's vectorised float64 one a few) or of log-cosh (the kernel's
  four-lane expm1 and log1p, csrc/kernels/vec_math.h, still cost more per element than torch's
  vectorised sinh and log1p): above ``LIBM_LIMIT`` elements (the measured crossover, rounded
  down) the torch path is faster. MSLE and the divergences take the kernel's four-lane log /
  log1p: it stays faster at every size;
* the kernel refused the batch: the torch path then raises the error it has always raised,
  naming the caller's own argument (``targets``, ``p``...), with the states unchanged (the
  kernel wrote nothing); and if the torch path accepts it after all (a state the kernel cannot
  write into, such as one loaded with another layout), it adds the batch as before.
"""

from typing import Optional

import torch
from torch import Tensor

from ...kernels import host_module
from ...kernels import regression as kinds
from ...kernels.ops import compiling

_F64 = torch.float64
LIBM_LIMIT = 2048


def added(
    sums: Optional[Tensor],
    count: Optional[Tensor],
    rows: Optional[Tensor],
    preds: Tensor,
    target: Tensor,
    kind: int,
    param: float = 0.0,
) -> bool:
    """Whether the checked batch (real tensors of one shape, [N] or [N, D]) was added by the
    kernel of ``kind`` (kernels.regression's kinds) into ``sums`` / ``count`` / ``rows``."""
    if not preds.is_cpu or compiling():
        return False
    if preds.numel() > LIBM_LIMIT and (
        kind == kinds.LOG_COSH or (kind == kinds.MINKOWSKI and param not in (1.0, 2.0, 3.0))
    ):
        return False
    if not preds.is_floating_point():
        preds = preds.to(_F64)
    if not target.is_floating_point():
        target = target.to(_F64)
    try:
        # the route's own choice (kernels.regression.error_sums) made here: CPU, not traced
        host_module(preds).error_sums(sums, count, rows, preds, target, kind, param)
    except (TypeError, ValueError):
        return False
    return True
