"""What thread safety and caller-owned results cost.

One CPU thread for torch. Measured in one run, as medians:

1. the per-metric lock: one acquire and release of the re-entrant lock every update, compute,
   reset... takes, next to the update it guards (MulticlassAccuracy, C = 10, B = 32 and 4096;
   a 5-metric classification collection sharing one state, B = 32);
2. the copies compute() hands out: a cached compute (cache hit) of a scalar metric, of a curve
   (tuple of tensors), of that collection; and what the copy alone (``caller_copy``) costs in it.

Results go to the "Thread lock and result copies" section of benchmarks/RESULTS.md.
Run: `.venv/bin/python benchmarks/bench_guard.py` (or `make bench`).
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from _common import fmt_us, machine_line, markdown_table, replace_section, time_call  # noqa: E402

from torchtally import MetricCollection  # noqa: E402
from torchtally.base.guard import caller_copy, new_lock  # noqa: E402
from torchtally.classification import (  # noqa: E402
    MulticlassAccuracy,
    MulticlassConfusionMatrix,
    MulticlassF1Score,
    MulticlassPrecision,
    MulticlassRecall,
    MulticlassROC,
)

C = 10


def batch(n: int):
    g = torch.Generator().manual_seed(n)
    return torch.rand(n, C, generator=g).softmax(-1), torch.randint(0, C, (n,), generator=g)


def collection() -> MetricCollection:
    return MetricCollection(
        {
            "acc": MulticlassAccuracy(C, average="micro"),
            "prec": MulticlassPrecision(C),
            "rec": MulticlassRecall(C),
            "f1": MulticlassF1Score(C),
            "confmat": MulticlassConfusionMatrix(C),
        }
    )


def main() -> None:
    torch.set_num_threads(1)
    lock = new_lock()

    def locked() -> None:  # as the update wrapper takes it (and a Python call around it)
        lock.acquire()
        try:
            pass
        finally:
            lock.release()

    lock_s = time_call(locked)
    rows = []
    for label, target, args in (
        ("MulticlassAccuracy.update, B=32", MulticlassAccuracy(C), batch(32)),
        ("MulticlassAccuracy.update, B=4096", MulticlassAccuracy(C), batch(4096)),
        ("collection of 5 (one shared state).update, B=32", collection(), batch(32)),
    ):
        seconds = time_call(lambda: target.update(*args))
        rows.append((label, fmt_us(seconds), f"{100 * lock_s / seconds:.1f}%"))
    lock_table = markdown_table(["call", "µs per call", "lock's share"], rows)

    rows = []
    roc = MulticlassROC(C, thresholds=100).update(*batch(256))
    for label, target in (
        ("MulticlassAccuracy (a scalar)", MulticlassAccuracy(C).update(*batch(256))),
        ("MulticlassROC, T=100 (3 tensors)", roc),
        ("collection of 5 (dict of 5)", collection().update(*batch(256))),
    ):
        result = target.compute()  # fills the cache
        hit = time_call(target.compute)
        copy_s = time_call(lambda: caller_copy(result))
        rows.append((label, fmt_us(hit), fmt_us(copy_s), f"{100 * copy_s / hit:.0f}%"))
    copy_table = markdown_table(["compute() from the cache", "µs per call", "copy alone, µs", "copy's share"], rows)

    body = (
        f"{machine_line()}. Medians. One re-entrant lock acquire + release, in a Python call: "
        f"{lock_s * 1e9:,.0f} ns (an upper bound of the lock's share below).\n\n"
        f"{lock_table}\n\n{copy_table}\n"
    )
    print(body)
    replace_section("Thread lock and result copies", body)


if __name__ == "__main__":
    main()
