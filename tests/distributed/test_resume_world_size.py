"""A validation epoch checkpointed with torch.distributed.checkpoint at a mid-epoch batch
boundary on W gloo ranks, resumed by fresh objects on W' ranks (3 -> 2 and 2 -> 3), ends with
what one process computes over the whole dataset: the metrics' cat states (exact AUROC)
included, no sample counted twice or lost, shards uneven (103 samples). Driven by hand (the
sampler counts what it yields) and through MetricHook (the hook tells the sampler); a checkpoint
of another metric configuration or dataset length raises on load, leaving the objects as they
were."""

import os
from typing import Any, Dict, List

import pytest
import torch
import torch.distributed.checkpoint as dcp
from support.rank_pools import run_on_ranks
from torch.utils.data import DataLoader

from torchtally import MetricCollection
from torchtally.adapters.hook import MetricHook
from torchtally.adapters.sampler import UnpaddedDistributedSampler, positions_left
from torchtally.classification import MulticlassAccuracy, MulticlassAUROC, MulticlassF1Score

pytestmark = pytest.mark.distributed

N, CLASSES, BATCH = 103, 3, 4


def _data():
    g = torch.Generator().manual_seed(7)
    return torch.rand(N, CLASSES, generator=g).softmax(-1), torch.randint(0, CLASSES, (N,), generator=g)


def _metrics(classes: int = CLASSES) -> MetricCollection:
    return MetricCollection(
        {
            "acc": MulticlassAccuracy(num_classes=classes),
            "f1": MulticlassF1Score(num_classes=classes, average="macro"),
            "auroc": MulticlassAUROC(num_classes=classes, thresholds=None),  # exact: cat states
        }
    )


def _loader(sampler: UnpaddedDistributedSampler) -> DataLoader:
    return DataLoader(list(range(N)), batch_size=BATCH, sampler=sampler)


def _run(
    rank: int,
    world_size: int,
    ckpt: str,
    batches: int,
    dataset_len: int = N,
    classes: int = CLASSES,
    hooked: bool = False,
) -> Any:
    """Load ``ckpt`` if it exists (else start the epoch fresh), evaluate ``batches`` batches
    (None: to the end), then save to ``ckpt`` + "-next" or return the epoch's result."""
    preds, target = _data()
    sampler = UnpaddedDistributedSampler(list(range(dataset_len)), shuffle=True, seed=3)
    sampler.set_epoch(1)
    metrics = _metrics(classes)
    hook = MetricHook(metrics) if hooked else None
    state = {"hook": hook, "sampler": sampler} if hooked else {"metrics": metrics, "sampler": sampler}
    if os.path.exists(ckpt):
        try:
            dcp.load(state, checkpoint_id=ckpt)
        except Exception as exc:  # report what raised, and that nothing was loaded
            cause = exc.__cause__ if exc.__cause__ is not None else exc
            return ("raised", type(cause).__name__, str(cause), len(sampler), metrics.hold_states()[0].updated)
    sampler.set_epoch(1)  # as a training script does every epoch: keeps the resumed epoch
    loader = _loader(sampler)
    if hook is not None:
        hook.start_epoch(loader)
    for i, idx in enumerate(loader):
        (hook or metrics).update(preds[idx], target[idx])
        if i + 1 == batches:  # a batch boundary: this batch counted, the next not yet fetched
            dcp.save(state, checkpoint_id=ckpt + "-next")
            return "saved"
    return hook.end_epoch() if hook is not None else metrics.compute()


def _expected() -> Dict[str, torch.Tensor]:
    preds, target = _data()
    return _metrics().update(preds, target).compute()


def _check(results: List[Any]) -> None:
    expected = _expected()
    for result in results:
        assert result.keys() == expected.keys()
        for name, value in expected.items():
            torch.testing.assert_close(result[name], value, rtol=0, atol=1e-6 if name == "auroc" else 0)


@pytest.mark.parametrize("hooked", [False, True], ids=["by-hand", "hook"])
def test_three_ranks_to_two_and_two_to_three(tmp_path, hooked):
    first = str(tmp_path / "ckpt")
    # 3 ranks: 5 batches each (60 of 103 samples), then preempted
    assert run_on_ranks(_run, 3, first, 5, hooked=hooked) == ["saved"] * 3
    # 2 ranks load, evaluate 3 more batches each, are preempted again
    assert run_on_ranks(_run, 2, first + "-next", 3, hooked=hooked) == ["saved"] * 2
    # 3 ranks load the 2-rank checkpoint and finish the epoch
    _check(run_on_ranks(_run, 3, first + "-next-next", None, hooked=hooked))


def test_mismatched_configuration_or_dataset_raises_on_load(tmp_path):
    ckpt = str(tmp_path / "ckpt")
    assert run_on_ranks(_run, 3, ckpt, 2) == ["saved"] * 3
    other_classes = run_on_ranks(_run, 2, ckpt + "-next", None, classes=4)
    for outcome in other_classes:
        assert outcome[:2] == ("raised", "ValueError") and "num_classes" in outcome[2], outcome
        assert outcome[4] is False  # the fresh metrics were not touched
    other_length = run_on_ranks(_run, 2, ckpt + "-next", None, dataset_len=N - 1)
    for outcome in other_length:
        assert outcome[:2] == ("raised", "ValueError") and "dataset length is 102 here, 103" in outcome[2], outcome
        assert outcome[3] == len(range(0, N - 1, 2)) or outcome[3] == len(range(1, N - 1, 2))  # unchanged


def test_positions_left_serves_each_position_once():
    stages = [[3, [2, 1, 0]], [2, [4, 5]]]
    left = positions_left(N, stages)
    first_left = [p for p in range(N) if p not in {0, 3, 1}]
    second_taken = set(first_left[0:8:2]) | set(first_left[1:11:2])
    assert left == [p for p in first_left if p not in second_taken]
    with pytest.raises(ValueError, match="rank 1 of 2 consumed 60"):
        positions_left(N, [[2, [0, 60]]])
