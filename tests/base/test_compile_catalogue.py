"""Every public metric class inside ``torch.compile(fullgraph=True)``: a class whose
``traceable_update`` is True traces without a graph break and counts what the eager update
counts; one whose ``traceable_update`` is False is refused with the reason (the update reads its
input values in Python), never with dynamo's own failure on a value read. A metric added to the
catalogue later is swept here without editing this file.

Dynamo's "eager" backend: what is checked is the tracing, not inductor's code (tests/base/
test_compile.py compiles real steps with inductor)."""

import pytest
import torch
from support.metric_catalogue import metric_entries
from support.metric_tester import assert_states_equal, states_of

ENTRIES = metric_entries()


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_update_traces_or_is_refused_with_the_reason(entry):
    compiled_metric, eager_metric = entry.metric(), entry.metric()
    args = entry.batch(8)
    step = torch.compile(lambda *a: compiled_metric.update(*a), fullgraph=True, backend="eager")
    if type(compiled_metric).traceable_update:
        step(*args)
        eager_metric.update(*args)
        assert_states_equal(states_of(compiled_metric), states_of(eager_metric), f"{entry.name} compiled")
    else:
        with pytest.raises(Exception, match="traceable_update is False"):
            step(*args)
