"""torchtally demo: exact validation metrics in a 2-process DDP run (`make demo`).

    python -m torch.distributed.run --nproc_per_node=2 --standalone examples/demo.py

Two gloo processes train a small classifier with DistributedDataParallel on a synthetic
dataset, then evaluate it each epoch through a DistributedSampler. The validation set has an
odd number of samples, so the sampler pads rank 1's shard with a duplicate. torchtally drops
that duplicate and syncs the metric state once per epoch; the printed values are compared
with scikit-learn run in one process over the whole validation set.
"""

import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from torchtally import MeanMetric, MetricHook, MulticlassAccuracy, MulticlassAUROC, MulticlassF1Score

NUM_CLASSES = 4
FEATURES = 16
TRAIN_SIZE = 4000
VAL_SIZE = 1001  # odd: DistributedSampler pads it to 1002 for 2 ranks
EPOCHS = 3
TOLERANCE = 1e-6  # for floats; counts must be equal exactly


def synthetic_data(n: int, seed: int) -> TensorDataset:
    """Overlapping Gaussian blobs, so the metrics are far from 0 and 1."""
    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(NUM_CLASSES, FEATURES, generator=torch.Generator().manual_seed(0)) * 0.45
    target = torch.randint(0, NUM_CLASSES, (n,), generator=g)
    x = centres[target] + torch.randn(n, FEATURES, generator=g)
    return TensorDataset(x, target)


def make_model() -> nn.Module:
    torch.manual_seed(0)  # the same initial weights on every rank
    return nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, NUM_CLASSES))


def train_one_epoch(model, loader, optimizer) -> None:
    model.train()
    for x, y in loader:
        optimizer.zero_grad()
        F.cross_entropy(model(x), y).backward()
        optimizer.step()


@torch.no_grad()
def evaluate(model, loader, metrics: MetricHook, loss: MetricHook) -> None:
    """The evaluation loop a user writes: one update per batch, in loader order."""
    model.eval()
    with metrics.epoch(loader), loss.epoch(loader):
        for x, y in loader:
            logits = model(x)
            metrics.update(logits.softmax(dim=1), y)
            loss.update(F.cross_entropy(logits, y, reduction="none"))


@torch.no_grad()
def single_process_reference(model, dataset: TensorDataset) -> dict:
    """scikit-learn over the whole validation set, in this one process."""
    from sklearn.metrics import accuracy_score, f1_score, roc_auc_score

    model.eval()
    x, y = dataset.tensors
    logits = model(x)
    probs = logits.softmax(dim=1)
    y_np, pred_np = y.numpy(), probs.argmax(dim=1).numpy()
    return {
        "accuracy": accuracy_score(y_np, pred_np),
        "f1": f1_score(y_np, pred_np, average="macro"),
        "auroc": roc_auc_score(y_np, probs.double().numpy(), multi_class="ovr", average="macro"),
        "loss": F.cross_entropy(logits, y, reduction="none").double().mean().item(),
        "correct": int((pred_np == y_np).sum()),
    }


def main() -> int:
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.set_num_threads(1)
    start = time.perf_counter()

    train_set = synthetic_data(TRAIN_SIZE, seed=1)
    val_set = synthetic_data(VAL_SIZE, seed=2)
    train_sampler = DistributedSampler(train_set, shuffle=True, seed=0)
    train_loader = DataLoader(train_set, batch_size=64, sampler=train_sampler)
    val_loader = DataLoader(val_set, batch_size=100, sampler=DistributedSampler(val_set, shuffle=False))

    model = DistributedDataParallel(make_model())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)

    metrics = MetricHook(
        {
            "accuracy": MulticlassAccuracy(num_classes=NUM_CLASSES, average="micro"),
            "f1": MulticlassF1Score(num_classes=NUM_CLASSES, average="macro"),
            "auroc": MulticlassAUROC(num_classes=NUM_CLASSES, thresholds=None),
        }
    )
    loss = MetricHook(MeanMetric())
    # What a loop that ignores the padding would report, for contrast.
    naive = MetricHook(MulticlassAccuracy(num_classes=NUM_CLASSES, average="micro"), drop_padding=False)

    shards = [len(range(r, VAL_SIZE, world)) for r in range(world)]
    if rank == 0:
        print(f"torchtally demo: {world} gloo processes, validation set of {VAL_SIZE} samples")
        print(
            f"  DistributedSampler gives each rank {val_loader.sampler.num_samples} positions "
            f"({val_loader.sampler.total_size} in all); real samples per rank: {shards}\n"
        )

    all_match = True
    for epoch in range(1, EPOCHS + 1):
        train_sampler.set_epoch(epoch)
        train_one_epoch(model, train_loader, optimizer)
        evaluate(model, val_loader, metrics, loss)
        with torch.no_grad(), naive.epoch(val_loader):
            for x, y in val_loader:
                naive.update(model(x).softmax(dim=1), y)

        ours = {name: float(value) for name, value in metrics.result.items()}
        ours["loss"] = float(loss.result)
        # every rank holds the synced values; check that they are the same everywhere
        gathered = [None] * world
        dist.all_gather_object(gathered, ours)
        if rank != 0:
            continue
        ref = single_process_reference(model.module, val_set)
        same_on_ranks = all(g == ours for g in gathered)
        correct_ours = round(ours["accuracy"] * VAL_SIZE)
        print(f"epoch {epoch}")
        print(f"  {'metric':<10}{'torchtally, synced':>20}{'one process (sklearn)':>24}   diff")
        epoch_match = correct_ours == ref["correct"] and same_on_ranks
        for name in ("accuracy", "f1", "auroc", "loss"):
            diff = abs(ours[name] - ref[name])
            epoch_match &= diff <= TOLERANCE
            print(f"  {name:<10}{ours[name]:>20.6f}{ref[name]:>24.6f}   {diff:.1e}")
        print(
            f"  correct predictions: {correct_ours} of {VAL_SIZE} (sklearn: {ref['correct']}); "
            f"identical on all {world} ranks: {'yes' if same_on_ranks else 'NO'}"
        )
        print(
            f"  without dropping padding the accuracy would be {float(naive.result):.6f} "
            f"over {val_loader.sampler.total_size} samples"
        )
        print(f"  match: {'yes' if epoch_match else 'NO'} (counts exact, floats within {TOLERANCE:g})\n")
        all_match &= epoch_match

    verdict = torch.tensor([int(all_match)])
    dist.broadcast(verdict, src=0)
    if rank == 0:
        print(
            f"{'ALL MATCH' if verdict.item() else 'MISMATCH'}: torchtally's synced metrics "
            f"{'equal' if verdict.item() else 'differ from'} the single-process values "
            f"({time.perf_counter() - start:.1f} s)"
        )
    # Tear down only once every rank is past its last collective: a rank that closes its gloo
    # sockets while a peer still sends makes that peer abort at exit (seen under load).
    dist.barrier()
    dist.destroy_process_group()
    return 0 if verdict.item() else 1


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown, as torchtally.testing's workers do: under load, gloo's worker
    # threads can still be releasing tensors while the interpreter shuts down, and the process
    # then aborts ("terminate called without an active exception") after a successful run.
    os._exit(code)
