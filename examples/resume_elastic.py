"""A validation epoch preempted on one number of processes and finished on another.

    python -m torch.distributed.run --nproc_per_node=3 --standalone examples/resume_elastic.py \\
        --checkpoint /tmp/val_ckpt --preempt-after 6
    python -m torch.distributed.run --nproc_per_node=2 --standalone examples/resume_elastic.py \\
        --checkpoint /tmp/val_ckpt

The first job evaluates ``--preempt-after`` batches per rank, saves the metric hook and the
sampler with torch.distributed.checkpoint and dies (``os._exit``, as a preempted job would: no
clean-up, no epoch end). The second job, with another number of processes, loads them into fresh
objects, evaluates only the samples the first job had not, and prints the epoch's values next to
those of one process over the whole validation set: they must match (counts exactly).
"""

import argparse
import os
import sys

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
from torch.utils.data import DataLoader, TensorDataset

from torchtally import (
    MetricCollection,
    MetricHook,
    MulticlassAccuracy,
    MulticlassAUROC,
    MulticlassF1Score,
    UnpaddedDistributedSampler,
)

NUM_CLASSES = 4
VAL_SIZE = 1001  # divides evenly by neither 2 nor 3 ranks
BATCH_SIZE = 32
TOLERANCE = 1e-6  # for the exact AUROC, whose sums run in another order; counts must be equal


def validation_set() -> TensorDataset:
    """Model outputs and labels, fixed by a seed: the same on every rank and in both jobs."""
    g = torch.Generator().manual_seed(0)
    target = torch.randint(0, NUM_CLASSES, (VAL_SIZE,), generator=g)
    logits = torch.randn(VAL_SIZE, NUM_CLASSES, generator=g) + 1.5 * torch.nn.functional.one_hot(target, NUM_CLASSES)
    return TensorDataset(logits.softmax(-1), target)


def metrics() -> dict:
    return {
        "acc": MulticlassAccuracy(num_classes=NUM_CLASSES),
        "f1": MulticlassF1Score(num_classes=NUM_CLASSES, average="macro"),
        "auroc": MulticlassAUROC(num_classes=NUM_CLASSES, thresholds=None),  # exact: keeps every score
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--checkpoint", required=True, help="folder of the mid-epoch checkpoint")
    parser.add_argument("--preempt-after", type=int, default=None, help="batches per rank before dying")
    args = parser.parse_args()
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()

    dataset = validation_set()
    sampler = UnpaddedDistributedSampler(dataset, shuffle=True, seed=42)
    hook = MetricHook(metrics())
    state = {"hook": hook, "sampler": sampler}
    if os.path.exists(os.path.join(args.checkpoint, ".metadata")):
        dcp.load(state, checkpoint_id=args.checkpoint)
        if rank == 0:
            print(f"resumed on {world} ranks: {sampler.total_size} of {VAL_SIZE} samples left", flush=True)
    sampler.set_epoch(0)  # the resumed epoch: it keeps serving only what is left
    loader = DataLoader(dataset, batch_size=BATCH_SIZE, sampler=sampler)

    with hook.epoch(loader):
        for i, (probs, target) in enumerate(loader):
            hook.update(probs, target)
            if args.preempt_after is not None and i + 1 == args.preempt_after:
                dcp.save(state, checkpoint_id=args.checkpoint)  # at a batch boundary, on every rank
                if rank == 0:
                    print(f"checkpoint saved on {world} ranks after {i + 1} batches each; preempted", flush=True)
                dist.barrier()
                os._exit(3)  # killed: no epoch end, no clean-up

    # one process over the whole validation set, for comparison (computed here, not synced)
    expected = MetricCollection(metrics(), sync_on_compute=False).update(*dataset.tensors).compute()
    match = all(
        torch.allclose(hook.result[name], value, rtol=0, atol=TOLERANCE if name == "auroc" else 0)
        for name, value in expected.items()
    )
    if rank == 0:
        values = ", ".join(
            f"{k}={float(v):.6f} (one process: {float(expected[k]):.6f})" for k, v in hook.result.items()
        )
        print(f"epoch on {world} ranks: {values}; match: {'yes' if match else 'NO'}", flush=True)
    dist.destroy_process_group()
    return 0 if match else 1


if __name__ == "__main__":
    sys.exit(main())
