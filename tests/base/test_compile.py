"""update() inside torch.compile: the kernels as custom ops, one graph for every step, the same
state as the eager run (CPU, inductor); what cannot be traced runs eagerly at a graph break."""

import subprocess
import sys

import pytest
import torch
from torch._dynamo.utils import counters
from torch._inductor.compile_fx import compile_fx

import torchtally
from torchtally import MetricCollection
from torchtally import classification as clf
from torchtally import regression as reg
from torchtally.kernels import ops, reference


def classification() -> MetricCollection:
    return MetricCollection(
        {
            "acc": clf.MulticlassAccuracy(5, average="micro"),
            "f1": clf.MulticlassF1Score(5),
            "precision": clf.MulticlassPrecision(5, average="weighted"),
            "recall": clf.MulticlassRecall(5, average=None),
            "top2": clf.MulticlassAccuracy(5, top_k=2),
            "confmat": clf.MulticlassConfusionMatrix(5),
        }
    )


def regression() -> MetricCollection:
    return MetricCollection(
        {"mse": reg.MeanSquaredError(), "mae": reg.MeanAbsoluteError(), "mape": reg.MeanAbsolutePercentageError()}
    )


def batches(steps: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        scores = torch.randn(16, 5, generator=g)
        yield scores, torch.randint(0, 5, (16,), generator=g), torch.randn(16, generator=g)


class CountingBackend:
    """inductor, and the graphs dynamo made since this backend was (``graphs``: a recompile is
    one more). Counted by dynamo's own statistics, not by calls of this backend: dynamo may call
    a backend twice for one graph (it restarts its analysis when inductor turns a Python float
    into a tensor, on a cold compile cache)."""

    def __init__(self) -> None:
        torch._dynamo.reset()
        counters.clear()

    @property
    def graphs(self) -> int:
        return counters["stats"]["unique_graphs"]

    def __call__(self, gm, example_inputs):
        return compile_fx(gm, example_inputs)


def test_a_compiled_step_updating_collections_compiles_once_and_matches_the_eager_run():
    compiled, eager = (classification(), regression()), (classification(), regression())
    backend = CountingBackend()

    def step(scores, target, y):
        compiled[0].update(scores, target)
        compiled[1].update(scores[:, 0], y)
        return scores.softmax(-1).sum()  # the model's part of a step

    run = torch.compile(step, backend=backend, fullgraph=True)
    torch._dynamo.reset()
    for scores, target, y in batches(100):
        out = run(scores, target, y)
        assert torch.allclose(out, scores.softmax(-1).sum())
        eager[0].update(scores, target)
        eager[1].update(scores[:, 0], y)
    assert backend.graphs == 1  # compiled once: no recompile from one step to the next
    for got_coll, want_coll in zip(compiled, eager):
        for name in want_coll.keys():
            for state, value in want_coll[name].metric_state.items():
                got = got_coll[name].metric_state[state]
                if value.is_floating_point():  # a float sum fused by inductor: its own order of additions
                    torch.testing.assert_close(got, value, rtol=1e-12, atol=0)
                else:  # counts: exact
                    assert torch.equal(got, value), (name, state)
            assert got_coll[name].update_count == 100
        got, want = got_coll.compute(), want_coll.compute()
        for key in want:
            torch.testing.assert_close(got[key], want[key], rtol=1e-6, atol=0)
    compiled[0].reset()
    assert compiled[0]["acc"].update_count == 0 and not compiled[0]["acc"].has_data
    assert compiled[0]["f1"].update_count == 0  # a member sharing the state


@pytest.mark.parametrize("make", [reg.R2Score, reg.PearsonCorrCoef], ids=lambda m: m.__name__)
def test_a_state_shaped_by_the_first_batch_compiles_once_more_unless_updated_once_eagerly(make):
    # Their state's outputs (D) come from the first batch: the traced state shape changes once.
    for warm_up, graphs in ((False, 2), (True, 1)):
        compiled, eager, backend = make(), make(), CountingBackend()
        run = torch.compile(lambda p, t: compiled.update(p, t), backend=backend, fullgraph=True)
        torch._dynamo.reset()
        for i, (scores, _, y) in enumerate(batches(30)):
            (compiled.update if warm_up and i == 0 else run)(scores[:, 0], y)
            eager.update(scores[:, 0], y)
        assert backend.graphs == graphs
        assert torch.equal(compiled.compute(), eager.compute())


def test_a_batch_rejected_inside_a_compiled_step_raises_and_leaves_the_state_as_it_was():
    metric = clf.MulticlassAccuracy(5)
    run = torch.compile(lambda p, t: metric.update(p, t), backend=CountingBackend(), fullgraph=True)
    torch._dynamo.reset()
    run(torch.randn(4, 5), torch.tensor([0, 1, 2, 3]))
    before = metric.confmat.clone()
    with pytest.raises(ValueError, match=r"target: label 7 at index 2 is out of range \[0, 5\)"):
        run(torch.randn(4, 5), torch.tensor([0, 1, 7, 3]))
    assert torch.equal(metric.confmat, before)
    assert metric.update_count == 1


def test_a_non_finite_regression_input_inside_a_compiled_step_raises_naming_it():
    metric = reg.MeanSquaredError()
    run = torch.compile(lambda p, t: metric.update(p, t), backend=CountingBackend(), fullgraph=True)
    torch._dynamo.reset()
    run(torch.ones(3), torch.zeros(3))
    with pytest.raises(ValueError, match="target: expected finite values, got nan at flat index 1"):
        run(torch.ones(3), torch.tensor([0.0, float("nan"), 0.0]))
    assert metric.compute().item() == 1.0


def test_an_update_that_reads_its_values_runs_eagerly_at_a_graph_break():
    mean = torchtally.MeanMetric()
    assert mean.traceable_update is False
    with_break = torch.compile(lambda x: mean.update(x), backend=CountingBackend())
    torch._dynamo.reset()
    for x in (torch.tensor([1.0, 2.0]), torch.tensor([6.0])):
        with_break(x)
    assert mean.compute().item() == 3.0
    full = torch.compile(lambda x: mean.update(x), backend=CountingBackend(), fullgraph=True)
    with pytest.raises(torch._dynamo.exc.Unsupported, match="traceable_update is False"):
        full(torch.ones(2))


DYNAMO_AFTER_TORCHTALLY = """
import sys
import torch
import torchtally
assert "torch._dynamo" not in sys.modules, "import torchtally imported dynamo"
mean = torchtally.MeanMetric()
mean.update(torch.tensor([1.0]))  # an eager update before dynamo exists
full = torch.compile(lambda x: mean.update(x), backend="eager", fullgraph=True)
try:
    full(torch.ones(2))
except torch._dynamo.exc.Unsupported as exc:
    assert "traceable_update is False" in str(exc), str(exc)[:300]
else:
    raise AssertionError("fullgraph traced an update that reads its values")
torch._dynamo.reset()
torch.compile(lambda x: mean.update(x), backend="eager")(torch.tensor([4.0]))
assert mean.compute().item() == 2.5, mean.compute()
print("ok")
"""


def test_the_graph_break_is_marked_when_dynamo_is_imported_after_torchtally():
    """``import torchtally`` leaves dynamo unimported (seconds); the mark still reaches the
    update once torch.compile imports it, in a fresh process."""
    done = subprocess.run([sys.executable, "-c", DYNAMO_AFTER_TORCHTALLY], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_every_kernel_is_a_custom_op_with_a_fake_implementation():
    for name in reference.__all__:
        assert hasattr(torch.ops.torchtally, name), name
        assert getattr(ops, name) is not None
    # torch's own check of a custom op: schema, fake implementation, the mutation declared
    out = torch.zeros(5, 5, dtype=torch.int64)
    torch.library.opcheck(
        torch.ops.torchtally.confmat_scores.default, (out, torch.randn(6, 5), torch.arange(6) % 5, None, None)
    )
    state = torch.zeros(1, 6, dtype=torch.float64)
    state[:, 4:] = torch.tensor([float("inf"), float("-inf")])
    torch.library.opcheck(torch.ops.torchtally.moments_update.default, (state, torch.randn(7), None))
