"""The seed's test, literally: a toy benchmark of 3 experiences, 2 epochs,
Avalanche's Naive strategy, in 1 process and under torchrun with 2 and 3 gloo processes; every
value logged at every level (training minibatch, running epoch and epoch; evaluation
experience and stream; accuracy, loss, a collection, per task) of the distributed runs equals
the single-process run's: counts exactly, floats within float32 rounding. The test sets (503,
499, 505 samples) divide by neither 2 nor 3, so Avalanche's loaders pad them. The distributed
results also equal scikit-learn over each experience's full test set.

What is compared, and why it can be equal (seed_run.py says more): the W-process run uses
batches of b per rank, the 1-process run b*W, unshuffled, so both train on the same global
batches; the model is float64, so DDP's mean of W batch means equals the 1-process mean up to
~1e-16 and the two models predict alike. Runs are scripts under torch.distributed.run,
as a user runs them; each rank writes what its EvaluationPlugin recorded.
"""

import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "seed_run.py")
TRAIN_MB, EVAL_MB = 8, 16
FLOAT32_REL = 2e-6  # a few float32 roundings: the per-batch means, their weighted sum


def _run(tmp_path, world, train_mb, eval_mb):
    out = str(tmp_path / f"w{world}_b{train_mb}")
    if world == 1:
        command = [sys.executable, SCRIPT]
    else:
        command = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={world}", SCRIPT]
    command += ["--out", out, "--train-mb", str(train_mb), "--eval-mb", str(eval_mb)]
    env = dict(os.environ, OMP_NUM_THREADS="1")
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]
    runs = []
    for rank in range(world):
        with open(f"{out}.rank{rank}") as f:
            runs.append(json.load(f))
    return runs


@pytest.fixture(scope="module", params=[2, 3])
def runs(request, tmp_path_factory):
    world = request.param
    tmp = tmp_path_factory.mktemp(f"seed{world}")
    single = _run(tmp, 1, TRAIN_MB * world, EVAL_MB * world)[0]
    return single, _run(tmp, world, TRAIN_MB, EVAL_MB)


def test_every_logged_value_equals_the_single_process_run(runs):
    single, ranks = runs
    reference = single["curves"]
    levels = {name.split("/")[0] for name in reference}
    assert {
        "Top1_Acc_MB",
        "Top1_RunningAcc_Epoch",
        "Top1_Acc_Epoch",
        "Top1_Acc_Exp",
        "Top1_Acc_Stream",
        "Loss_MB",
        "RunningLoss_Epoch",
        "Loss_Epoch",
        "Loss_Exp",
        "Loss_Stream",
        "Top1_Acc_Exp_PerTask",
        "Top1_Acc_Stream_PerTask",
        "Coll_Exp_acc",
        "Coll_Exp_f1",
        "Coll_Exp_auroc",
    } <= levels
    for run in ranks:
        assert sorted(run["curves"]) == sorted(reference)
        for name, curve in reference.items():
            got = run["curves"][name]
            assert got["x"] == curve["x"], name
            assert got["values"] == pytest.approx(curve["values"], rel=FLOAT32_REL, abs=1e-7), name


def test_counts_are_exact_and_equal_scikit_learn(runs):
    single, ranks = runs
    sizes = single["test_sizes"]
    assert all(n % len(ranks) for n in sizes)  # the loaders pad: the case that matters
    for run in ranks:
        for e, n in enumerate(sizes):
            for curve in (
                f"Top1_Acc_Exp/eval_phase/test_stream/Task{e:03d}/Exp{e:03d}",
                f"Coll_Exp_acc/eval_phase/test_stream/Task{e:03d}/Exp{e:03d}",
            ):
                accuracy = run["curves"][curve]["values"]  # one per evaluation, after each exp
                correct = [round(a * n) for a in accuracy]
                assert correct == [scores[e]["correct"] for scores in run["sklearn"]], curve
                assert accuracy == pytest.approx([s[e]["acc"] for s in run["sklearn"]], rel=FLOAT32_REL)
            f1 = run["curves"][f"Coll_Exp_f1/eval_phase/test_stream/Task{e:03d}/Exp{e:03d}"]["values"]
            assert f1 == pytest.approx([s[e]["f1"] for s in run["sklearn"]], rel=FLOAT32_REL)
        stream = run["curves"]["Top1_Acc_Stream/eval_phase/test_stream/Task002"]["values"]
        correct = [sum(s["correct"] for s in scores) for scores in run["sklearn"]]
        assert [round(a * sum(sizes)) for a in stream] == correct
        # scikit-learn ran on the distributed run's own model, and agrees with 1 process's
        assert run["sklearn"] == single["sklearn"] or all(
            a["correct"] == b["correct"] for x, y in zip(run["sklearn"], single["sklearn"]) for a, b in zip(x, y)
        )
