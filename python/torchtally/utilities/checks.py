"""``check_forward_full_state_property``, as torchmetrics.utilities.checks gives it: whether a
metric class may set ``full_state_update = False``.

Same procedure as torchmetrics': forward with the flag True and False on the same inputs must
give the same batch values and the same final result; if so, the two are timed and the faster
setting is recommended. Prints its recommendation, returns None.
"""

import time
from typing import Any, Dict, Optional, Sequence

import torch


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and torch.allclose(a.float(), b.float(), equal_nan=True)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def check_forward_full_state_property(
    metric_class: Any,
    init_args: Optional[Dict[str, Any]] = None,
    input_args: Optional[Dict[str, Any]] = None,
    num_update_to_compare: Sequence[int] = (10, 100, 1000),
    reps: int = 5,
) -> None:
    """Print whether ``metric_class`` gives the same values with ``full_state_update`` True and
    False (forward with ``input_args`` as keywords, ``num_update_to_compare[0]`` times), and, when
    it does, the timings of both over ``num_update_to_compare`` steps and the faster setting."""
    init_args, input_args = init_args or {}, input_args or {}
    full = type("FullState", (metric_class,), {"full_state_update": True})(**init_args)
    part = type("PartState", (metric_class,), {"full_state_update": False})(**init_args)
    equal = True
    try:  # an update that needs the accumulated state may fail on a batch's fresh one
        for _ in range(num_update_to_compare[0]):
            equal = _same(full(**input_args), part(**input_args)) and equal
        equal = _same(full.compute(), part.compute()) and equal
    except RuntimeError:
        equal = False
    if not equal:
        print("Recommended setting `full_state_update=True`")
        return
    means = []
    for metric in (full, part):
        per_steps = []
        for steps in num_update_to_compare:
            times = []
            for _ in range(reps):
                start = time.perf_counter()
                for _ in range(steps):
                    metric(**input_args)
                times.append(time.perf_counter() - start)
                metric.reset()
            per_steps.append(torch.tensor(times))
        means.append(per_steps)
    for k, steps in enumerate(num_update_to_compare):
        for label, per_steps in (("Full", means[0]), ("Partial", means[1])):
            t = per_steps[k]
            print(f"{label} state for {steps} steps took: {t.mean():0.3f}+-{t.std():0.3f}")
    faster = means[1][-1].mean() < means[0][-1].mean()
    print(f"Recommended setting `full_state_update={not faster}`")
