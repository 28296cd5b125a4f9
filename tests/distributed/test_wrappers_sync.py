"""The wrappers on real gloo ranks, in one 3-rank spawn: BootStrapper's interval is identical on
1, 2 and 3 ranks (sub-groups of the spawn) for the same data given with sample indices, whatever
the batch split; wrapped metrics sync in the collectives of the bare ones (their copies' states
packed into the same plan); synced wrapper results equal one process's."""

from typing import Any, Dict, List, Tuple

import pytest
import torch
import torch.distributed as tdist

from torchtally import MetricCollection
from torchtally.classification import MulticlassAccuracy
from torchtally.regression import MeanSquaredError, R2Score
from torchtally.testing import count_collectives, run_distributed
from torchtally.wrappers import BootStrapper, ClasswiseWrapper, MultioutputWrapper, MultitaskWrapper, Running

N, C, B = 41, 4, 12


def data() -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(7)
    preds = torch.randint(0, C, (N,), generator=g)
    target = torch.randint(0, C, (N,), generator=g)
    x = torch.randn(N, 2, generator=g, dtype=torch.float64)
    y = x + 0.3 * torch.randn(N, 2, generator=g, dtype=torch.float64)
    return preds, target, x.float(), y.float()


def shard(world: int, rank: int) -> torch.Tensor:
    """Rank ``rank``'s positions of the dataset in a ``world``-rank run: interleaved, as a
    DistributedSampler deals them (uneven: N is not a multiple of 2 or 3)."""
    return torch.arange(rank, N, world)


def boot(group: Any = None) -> BootStrapper:
    return BootStrapper(
        MulticlassAccuracy(C, average="macro"),
        num_bootstraps=B,
        quantile=torch.tensor([0.05, 0.95]),
        raw=True,
        process_group=group,
    )


def bare_collection() -> MetricCollection:
    return MetricCollection({"acc": MulticlassAccuracy(30), "r2": R2Score(multioutput="raw_values")})


def wrapped_collection() -> MetricCollection:
    return MetricCollection(
        {
            "acc": BootStrapper(MulticlassAccuracy(30), num_bootstraps=6),
            "cw": ClasswiseWrapper(MulticlassAccuracy(30, average=None)),
            "r2": MultioutputWrapper(R2Score(), num_outputs=2),
        }
    )


def feed_wrapped(coll: Any, idx: torch.Tensor) -> None:
    preds, target, x, y = data()
    for lo in range(0, len(idx), 5):
        i = idx[lo : lo + 5]
        p30, t30 = preds[i] * 7 % 30, target[i] * 5 % 30
        if isinstance(coll, MetricCollection) and "cw" in coll:
            coll["acc"].update(p30, t30, sample_index=i)
            coll["cw"].update(p30, t30)
            coll["r2"].update(x[i], y[i])
        else:
            coll["acc"].update(p30, t30)
            coll["r2"].update(x[i], y[i])


def worker(rank: int, world_size: int) -> Dict[str, Any]:
    preds, target, x, y = data()
    out: Dict[str, Any] = {"boot": {}}
    for world, batch in ((1, 4), (2, 7), (3, 3)):
        group = tdist.new_group(list(range(world)))  # every rank takes part in making each group
        if rank >= world:
            continue
        metric = boot(group)
        idx = shard(world, rank)
        for lo in range(0, len(idx), batch):
            i = idx[lo : lo + batch]
            metric.update(preds[i], target[i], sample_index=i)
        out["boot"][world] = metric.compute()

    idx = shard(world_size, rank)
    for name, make in (("bare", bare_collection), ("wrapped", wrapped_collection)):
        coll = make()
        feed_wrapped(coll, idx)
        with count_collectives() as counter:
            out[name] = coll.compute()
        out[f"{name}_collectives"] = dict(counter.by_name)
    singles = (("bare_metric", MulticlassAccuracy(30)), ("boot_metric", BootStrapper(MulticlassAccuracy(30))))
    for name, metric in singles:
        metric.update(preds[idx] * 7 % 30, target[idx] * 5 % 30)
        with count_collectives() as counter:
            metric.compute()
        out[f"{name}_collectives"] = dict(counter.by_name)

    tasks = MultitaskWrapper({"cls": MulticlassAccuracy(C), "reg": MeanSquaredError()})
    bare = MetricCollection({"cls": MulticlassAccuracy(C), "reg": MeanSquaredError()})
    running = Running(MeanSquaredError(), window=2)
    for lo in range(0, len(idx), 4):
        i = idx[lo : lo + 4]
        tasks.update({"cls": preds[i], "reg": x[i, 0]}, {"cls": target[i], "reg": y[i, 0]})
        bare["cls"].update(preds[i], target[i])
        bare["reg"].update(x[i, 0], y[i, 0])
        running.update(x[i, 0], y[i, 0])
    with count_collectives() as counter:
        out["tasks"] = tasks.compute()
    out["tasks_collectives"] = dict(counter.by_name)
    with count_collectives() as counter:
        bare.compute()
    out["tasks_bare_collectives"] = dict(counter.by_name)
    out["running"] = running.compute()
    return out


def single_process() -> Dict[str, Any]:
    preds, target, x, y = data()
    everything = torch.arange(N)
    coll = wrapped_collection()
    feed_wrapped(coll, everything)
    tasks = MultitaskWrapper({"cls": MulticlassAccuracy(C), "reg": MeanSquaredError()})
    tasks.update({"cls": preds, "reg": x[:, 0]}, {"cls": target, "reg": y[:, 0]})
    return {"wrapped": coll.compute(), "tasks": tasks.compute()}


# The header exchange: an all_to_all, or a ring of point-to-point messages where the machine runs more
# ranks than it has cores (chosen at a group's first sync, so it may change after it).
HEADER = ("all_to_all_single", "all_gather_into_tensor", "isend", "irecv")


def data_collectives(by_name: Dict[str, int]) -> Dict[str, int]:
    """The collectives after the header exchange (the state's data), by name."""
    return {name: n for name, n in by_name.items() if name not in HEADER}


def assert_close(actual: Any, expected: Any, what: str) -> None:
    if isinstance(expected, dict):
        assert set(actual) == set(expected), what
        for k in expected:
            assert_close(actual[k], expected[k], f"{what}[{k}]")
        return
    torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-6, msg=what)


def running_expected(world_size: int) -> torch.Tensor:
    """Running(window=2) synced: the last two updates of every rank."""
    _, _, x, y = data()
    rows: List[torch.Tensor] = []
    for rank in range(world_size):
        idx = shard(world_size, rank)
        batches = [idx[lo : lo + 4] for lo in range(0, len(idx), 4)]
        rows.extend(batches[-2:])
    i = torch.cat(rows)
    return MeanSquaredError()(x[i, 0], y[i, 0])


@pytest.mark.distributed
def test_wrappers_on_gloo_ranks():
    runs = run_distributed(worker, 3, timeout=240)
    # BootStrapper with sample indices: identical (bit for bit) on 1, 2 and 3 ranks, any batch size
    one = runs[0]["boot"][1]
    for rank, out in enumerate(runs):
        for world, result in out["boot"].items():
            for key in ("mean", "std", "quantile", "raw"):
                assert torch.equal(result[key], one[key]), (rank, world, key)
    # ... and the interval is a real one: the copies differ
    assert one["raw"].std() > 0 and one["quantile"][0] < one["quantile"][1]

    expected = single_process()
    for rank, out in enumerate(runs):
        # the wrapped metrics' copies ride in the bare metrics' collectives
        # (a header exchange each, then the same data collectives)
        for bare, wrapped, data in (
            ("bare", "wrapped", {"all_reduce": 1, "all_gather_single": 1}),  # int64 sums; R2's merged moments
            ("bare_metric", "boot_metric", {"all_reduce": 1}),  # 10 copies of a 30 x 30 confusion matrix: one buffer
            ("tasks_bare", "tasks", {}),  # a small plan: the data rides in the header
        ):
            got = data_collectives(out[f"{wrapped}_collectives"])
            assert got == data_collectives(out[f"{bare}_collectives"]) == data, out
            assert set(out[f"{wrapped}_collectives"]) & set(HEADER), out
        assert_close(out["wrapped"], expected["wrapped"], f"rank {rank} wrapped collection")
        assert_close(out["tasks"], expected["tasks"], f"rank {rank} multitask")
        assert_close(out["running"], running_expected(3), f"rank {rank} running")
