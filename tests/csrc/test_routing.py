"""torchtally.kernels: which path a call takes, keyword defaults, detaching."""

import pytest
import torch
from support.kernel_inputs import generator, kernels, labels, start_counts

from torchtally import kernels as routing
from torchtally.kernels import reference as _reference


@pytest.fixture
def backend_restored():
    previous = routing.backend()
    yield
    routing.set_backend(previous)


@pytest.fixture(params=["exchange-table", "capsules"])
def dlpack_path(request, c_core):
    """Run a C-path test through torch's exchange table and through __dlpack__ capsules
    (`_use_exchange_api` is the C core's test switch; torch >= 2.10 has the table)."""
    switch = getattr(c_core, "_use_exchange_api", None)
    if request.param == "capsules" and switch is None:
        pytest.fail("torchtally._C._use_exchange_api is gone: update this fixture")
    previous = switch(request.param == "exchange-table") if switch else None
    yield request.param
    if switch:
        switch(previous)


class Spy:
    """Counts the calls that reach a kernel module, then forwards them."""

    def __init__(self, module):
        self.module, self.calls = module, []

    def __getattr__(self, name):
        def call(*args):
            self.calls.append(name)
            return getattr(self.module, name)(*args)

        return call


def test_the_c_core_is_built_and_used_for_cpu():
    kernels("c")  # fails (never skips) without the extension
    assert routing.has_c()
    assert routing.backend() == "c"


def test_set_backend_routes_cpu_calls(monkeypatch, backend_restored):
    c_spy, ref_spy = Spy(kernels("c")), Spy(_reference)
    monkeypatch.setattr(routing, "_C_MODULE", c_spy)
    monkeypatch.setattr(routing, "_c", c_spy)
    monkeypatch.setattr(routing, "_reference", ref_spy)
    g = generator(80)
    out, p, t = start_counts((3, 3), g), labels((50,), 3, torch.int64, g), labels((50,), 3, torch.int64, g)
    routing.confmat_labels(out, p, t)
    assert (c_spy.calls, ref_spy.calls) == (["confmat_labels"], [])
    assert routing.set_backend("reference") == "c"
    assert routing.backend() == "reference"
    routing.confmat_labels(out, p, t)
    assert (c_spy.calls, ref_spy.calls) == (["confmat_labels"], ["confmat_labels"])
    assert routing.set_backend("c") == "reference"
    routing.moments_update(torch.zeros(1, 6, dtype=torch.float64), torch.randn(4))
    assert c_spy.calls[-1] == "moments_update" and len(ref_spy.calls) == 1
    with pytest.raises(ValueError, match="name"):
        routing.set_backend("cuda")


def test_non_cpu_out_goes_to_the_reference(monkeypatch):
    """With the C core active, an `out` on another device is the reference's job (here 'meta',
    where the reference then reports the device mismatch of preds)."""
    ref_spy = Spy(_reference)
    monkeypatch.setattr(routing, "_reference", ref_spy)
    out = torch.zeros(3, 3, dtype=torch.int64, device="meta")
    with pytest.raises(ValueError, match="^preds: .*meta"):
        routing.confmat_labels(out, torch.zeros(4, dtype=torch.int64), torch.zeros(4, dtype=torch.int64))
    assert ref_spy.calls == ["confmat_labels"]


@pytest.mark.parametrize("backend", ["c", "reference"])
def test_keyword_defaults_match_positional_calls(backend, backend_restored):
    routing.set_backend(backend)
    impl = kernels(backend)
    g = generator(81)
    s, t = torch.randn(200, 4, generator=g), labels((200,), 4, torch.int64, g)
    thr = torch.linspace(0, 1, 5, dtype=torch.float64)
    calls = [
        ("confmat_labels", (s.argmax(1), t), {}, (None, None)),
        ("confmat_scores", (s, t), {"ignore_index": 1}, (None, 1)),
        ("confmat_threshold", (s, (s > 0).long()), {"threshold": 0.3}, (None, None, 0.3)),
        ("confmat_threshold", (s, (s > 0).long()), {}, (None, None, 0.5)),
        ("confmat_threshold", (s, (s > 0).long()), {"threshold": 0.3, "logit_threshold": 0.1}, (None, None, 0.3, 0.1)),
        ("binned_update", (s, t), {"thresholds": thr, "uniform": True}, (None, None, thr, True)),
        ("topk_update", (s, t), {"k": 2}, (None, None, 2)),
        ("topk_update", (s, t), {}, (None, None, 1)),
    ]
    shapes = {
        "confmat_labels": (4, 4),
        "confmat_scores": (4, 4),
        "confmat_threshold": (4, 2, 2),
        "binned_update": (4, 6, 2),
        "topk_update": (4, 3),
    }
    for name, inputs, keywords, rest in calls:
        a = start_counts(shapes[name], g)
        b, before = a.clone(), a.clone()
        getattr(routing, name)(a, *inputs, **keywords)
        getattr(impl, name)(b, *inputs, *rest)
        assert torch.equal(a, b) and not torch.equal(a, before), name
    with pytest.raises(TypeError, match="^thresholds: "):
        routing.binned_update(start_counts(shapes["binned_update"], g), s, t)  # thresholds left out
    state_a, state_b = torch.zeros(4, 6, dtype=torch.float64), torch.zeros(4, 6, dtype=torch.float64)
    routing.comoments_update(state_a, s, 2 * s)
    impl.comoments_update(state_b, s, 2 * s)
    assert torch.equal(state_a, state_b)


@pytest.mark.parametrize("backend", ["c", "reference"])
def test_inputs_that_require_grad(backend, backend_restored, dlpack_path):
    """Model outputs often require grad; torch's __dlpack__ refuses them, so routing detaches."""
    routing.set_backend(backend)
    g = generator(82)
    s = torch.randn(100, 3, generator=g, requires_grad=True)
    t = labels((100,), 3, torch.int64, g)
    out, want = torch.zeros(3, 3, dtype=torch.int64), torch.zeros(3, 3, dtype=torch.int64)
    routing.confmat_scores(out, s, t)
    kernels("reference").confmat_scores(want, s.detach(), t, None, None)
    assert torch.equal(out, want)
    w = torch.rand(100, generator=g, requires_grad=True)
    state = torch.tensor([[0, 0, 0, 0, float("inf"), -float("inf")]] * 3, dtype=torch.float64)
    routing.moments_update(state, s, w)
    routing.comoments_update(torch.zeros(3, 6, dtype=torch.float64), s, s * 2)
    routing.binned_update(
        torch.zeros(3, 3, 2, dtype=torch.int64),
        s.sigmoid(),
        t,
        thresholds=torch.tensor([0.25, 0.75], dtype=torch.float64, requires_grad=True),
    )
    routing.topk_update(torch.zeros(3, 3, dtype=torch.int64), s, t, k=2)
    routing.confmat_threshold(torch.zeros(3, 2, 2, dtype=torch.int64), s, (t[:, None] == torch.arange(3)).long())
    assert state[:, 0].tolist() == [pytest.approx(float(w.detach().sum()))] * 3
