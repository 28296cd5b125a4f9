"""One rank of a two-node torchrun job across two network namespaces (see two_hosts.py):
``python two_host_job.py SCENARIO OUT_DIR SYNC_TIMEOUT_S``. Ranks 0-1 run on node A, 2-3 on
node B. Each rank writes OUT_DIR/rank<r>.json (written whole, then renamed into place), and
meets the test at chosen points through files: "ready<r>"/"held<r>" from the rank, "go" from
the test.

The dataset and metrics are defined here once, so the test computes the same metrics in one
process over the whole dataset and compares.
"""

import json
import os
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist

from torchtally import MetricCollection, MulticlassAccuracy, MulticlassAUROC, MulticlassConfusionMatrix
from torchtally.errors import SyncError
from torchtally.sync import rollcall

NUM_CLASSES = 5
# Contiguous shards in rank order, of unequal sizes: rank 0 has no samples.
SPLIT = (0, 0, 380, 761, 1003)
WAIT_FOR_TEST_S = 60.0  # a file from the test that never comes ends the rank instead of hanging it


def dataset():
    """(probs, target): scores rounded to multiples of 1/50, so the exact AUROC sees ties."""
    gen = torch.Generator().manual_seed(1103)
    probs = torch.softmax(torch.randn(SPLIT[-1], NUM_CLASSES, generator=gen), dim=1)
    probs = torch.round(probs * 50) / 50
    target = torch.randint(0, NUM_CLASSES, (SPLIT[-1],), generator=gen)
    return probs, target


def make_metrics(sync_timeout_s: float = 300.0) -> MetricCollection:
    """A confusion matrix and macro accuracy (counters: all_reduce) and an exact AUROC (the
    scores themselves: all_gather), so a sync has a header and data collectives after it."""
    return MetricCollection(
        {
            "confmat": MulticlassConfusionMatrix(num_classes=NUM_CLASSES),
            "accuracy": MulticlassAccuracy(num_classes=NUM_CLASSES, average="macro"),
            "auroc": MulticlassAUROC(num_classes=NUM_CLASSES, thresholds=None),
        },
        sync_timeout=sync_timeout_s,
    )


def as_lists(results) -> dict:
    return {name: value.tolist() for name, value in results.items()}


def one_process_results() -> dict:
    """What every rank's synced results must equal: the metrics over the whole dataset, in one
    process (the test's own, not a rank)."""
    coll = make_metrics()
    coll.update(*dataset())
    return as_lists(coll.compute())


def _updated(rank: int, sync_timeout_s: float) -> MetricCollection:
    probs, target = dataset()
    coll = make_metrics(sync_timeout_s)
    lo, hi = SPLIT[rank], SPLIT[rank + 1]
    if hi > lo:
        coll.update(probs[lo:hi], target[lo:hi])
    return coll


def _write(out: Path, name: str, payload) -> None:
    tmp = out / f".{name}.tmp"
    tmp.write_text(json.dumps(payload))
    os.replace(tmp, out / name)


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + WAIT_FOR_TEST_S
    while not path.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{path} never appeared")
        time.sleep(0.02)


def _failed_compute(coll: MetricCollection) -> dict:
    start = time.monotonic()
    try:
        results = coll.compute()
    except SyncError as exc:
        return {
            "error": str(exc),
            "missing": exc.missing_ranks,
            "lost_at": exc.lost_at,
            "stage": exc.stage,
            "seconds": time.monotonic() - start,
        }
    return {"error": None, "results": as_lists(results)}


def exact(rank: int, out: Path, timeout_s: float) -> None:
    coll = _updated(rank, timeout_s)
    results = as_lists(coll.compute())
    ifname = os.environ.pop("GLOO_SOCKET_IFNAME")  # without it: the route to MASTER_ADDR decides
    by_route = rollcall.local_ip()
    os.environ["GLOO_SOCKET_IFNAME"] = ifname
    _write(out, f"rank{rank}.json", {"results": results, "rollcall_ip": rollcall.local_ip(), "by_route": by_route})
    dist.destroy_process_group()
    # Skip interpreter finalization: about 1 run in 15, a C++ destructor of torch's (gloo/c10d
    # threads, after every Python frame had returned) aborted the process with "terminate called
    # without an active exception", failing the exit-code check of a job that had finished.
    os._exit(0)


def node_dies(rank: int, out: Path, timeout_s: float) -> None:
    """Node B is killed (by the test, after every rank updated) before anyone computes. Rank 1
    starts its sync half a second after rank 0, whose sync fails at once on the closed
    connections: rank 0 must wait for it rather than name it (it had registered no address)."""
    coll = _updated(rank, timeout_s)
    _write(out, f"ready{rank}", "")
    if rank >= 2:
        time.sleep(WAIT_FOR_TEST_S)  # killed before this ends
        os._exit(5)
    _wait_for(out / "go")
    if rank == 1:
        time.sleep(0.5)
    _write(out, f"rank{rank}.json", _failed_compute(coll))
    os._exit(0)


def partition(rank: int, out: Path, timeout_s: float) -> None:
    """Every rank is held inside its sync, after the header, at its data all_reduce, until the
    test has taken the link down."""
    coll = _updated(rank, timeout_s)
    original = dist.all_reduce

    def held(*args, **kwargs):
        _write(out, f"held{rank}", "")
        _wait_for(out / "go")
        return original(*args, **kwargs)

    dist.all_reduce = held
    _write(out, f"rank{rank}.json", _failed_compute(coll))
    os._exit(0)


def slow_node(rank: int, out: Path, timeout_s: float) -> None:
    """One good sync, then node B spends sync_timeout + 4 s in other code before its next."""
    coll = _updated(rank, timeout_s)
    first = as_lists(coll.compute())
    coll.update(*(t[:7] for t in dataset()))
    if rank >= 2:
        time.sleep(timeout_s + 4)
    _write(out, f"rank{rank}.json", {"first": first, **_failed_compute(coll)})
    os._exit(0)


SCENARIOS = {f.__name__: f for f in (exact, node_dies, partition, slow_node)}

if __name__ == "__main__":
    scenario, out_dir, timeout = sys.argv[1], Path(sys.argv[2]), float(sys.argv[3])
    dist.init_process_group("gloo")
    SCENARIOS[scenario](dist.get_rank(), out_dir, timeout)
