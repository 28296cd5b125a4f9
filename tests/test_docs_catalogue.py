"""Every metric page of the reference site is complete: for each class of torchtally's public faces
(the site's catalogue, docs/faces.py) the facts that docs/metric_facts.py writes into its page
have a formula, a compute-result sentence that says what comes back, and a state section with a
table (introspected, per task for a task wrapper, per member for a collection, or as declared in
the source for a class whose model the docs build does not have) or the statement that the
class keeps none. Reads the generator, not a build: a class added without them fails here.
"""

import importlib
import inspect
import os
import re
import sys
from typing import List, Tuple

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "docs"))

pytest.importorskip("sphinx")
compute_results = importlib.import_module("compute_results")
faces = importlib.import_module("faces")
formulas = importlib.import_module("formulas")
metric_facts = importlib.import_module("metric_facts")
stand_ins = importlib.import_module("stand_ins")


def _catalogue() -> List[Tuple[str, str]]:
    out = []
    for face in faces.FACES:
        module = importlib.import_module(f"torchtally.{face}")
        out += [(face, n) for n in sorted(module.__all__) if inspect.isclass(getattr(module, n))]
    return out


CATALOGUE = _catalogue()


def _section(lines: List[str], head: str) -> List[str]:
    """The lines of the page's section that starts with the bold ``head``, up to the next one."""
    starts = [i for i, line in enumerate(lines) if line.startswith(f"**{head}**")]
    assert starts, f"the page has no {head} section"
    start = starts[0]
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"^\*\*[A-Za-z ]+\*\*", lines[i])), len(lines))
    return lines[start:end]


def test_the_catalogue_is_the_whole_api() -> None:
    assert len(CATALOGUE) >= 240, len(CATALOGUE)


@pytest.mark.parametrize("face,name", CATALOGUE, ids=[n for _, n in CATALOGUE])
def test_metric_page_has_formula_state_and_compute_result(face: str, name: str) -> None:
    lines = metric_facts.page_lines(f"torchtally.{face}.{name}")
    formula = _section(lines, "Formula")
    assert ".. math::" in formula and any(line.strip() for line in formula[4:]), f"{name}: no formula"

    compute = next(line for line in lines if line.startswith("**compute** returns"))
    said = compute.split(": ", 1)[1] if ": " in compute else ""
    assert len(said) >= 20, f"{name}: compute's result is not described: {compute!r}"

    state = _section(lines, "State and sync")
    tables = sum(line.startswith(".. list-table::") for line in state)
    keeps_none = any("keeps no state" in line for line in state)
    assert tables or keeps_none, f"{name}: the state section shows no state: {state}"


def test_task_wrappers_show_the_state_of_every_task_class() -> None:
    f = metric_facts.facts("torchtally.classification.Accuracy")
    assert [label.split(":")[0] for label, _ in f.parts] == ['task="binary"', 'task="multiclass"', 'task="multilabel"']
    assert all(part.states for _, part in f.parts)
    # the multiclass accuracy keeps the C x C confusion matrix (num_classes=3: 9 int64 counts)
    multiclass = dict(f.parts)['task="multiclass": MulticlassAccuracy']
    assert [(s.name, s.dtype, s.shape) for s in multiclass.states or []] == [("confmat", "int64", "[3, 3]")]


def test_a_model_bound_class_lists_its_declared_state() -> None:
    """InfoLM needs a checkpoint the docs build has not: its page lists the add_state calls."""
    f = metric_facts.facts("torchtally.text.InfoLM")
    assert f.states is None
    assert [d.name for d in f.declared] == ["pred_tokens", "target_tokens", "lengths"]
    assert all(d.reduce == "cat" for d in f.declared)


def test_a_model_bound_class_is_introspected_with_a_stand_in() -> None:
    """FID with the stand-in network: sums and co-moment sums in float64, width its features."""
    f = metric_facts.facts("torchtally.image.FrechetInceptionDistance")
    d = stand_ins.FEATURES
    rows = {s.name: (s.reduce, s.dtype, s.shape) for s in f.states or []}
    assert rows["real_features_sum"] == ("sum", "float64", f"[{d}]")
    assert rows["fake_features_cov_sum"] == ("sum", "float64", f"[{d}, {d}]")


def test_the_checks_can_fail() -> None:
    """A class without an entry gets no formula and no compute sentence (what the test above catches)."""
    assert formulas.formula("NoSuchMetric") == ""
    assert compute_results.returns("NoSuchMetric", "torchtally.nowhere") == ""
