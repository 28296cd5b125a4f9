"""Every public metric class documents itself with an example: its page on the reference site
(`make docs`) shows the docstring, and the docs build runs the example as a doctest, so a
metric added without one, or with one that no longer holds, fails `make test`."""

import doctest
import importlib
import inspect

import pytest

FACES = (
    "classification",
    "regression",
    "aggregation",
    "wrappers",
    "detection",
    "segmentation",
    "retrieval",
    "text",
    "image",
    "nominal",
    "clustering",
    "shape",
    "multimodal",
    "audio",
    "video",
)


def public_classes():
    for face in FACES:
        module = importlib.import_module(f"torchtally.{face}")
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isclass(value):
                yield f"{face}.{name}", value


@pytest.mark.parametrize("name, cls", list(public_classes()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_metric_class_has_an_example_that_holds(name, cls):
    doc = inspect.getdoc(cls) or ""
    assert ">>>" in doc, f"{name}: no example in its docstring"
    examples = doctest.DocTestParser().get_examples(doc)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    test = doctest.DocTest(examples, {}, name, None, 0, doc)
    result = runner.run(test, out=lambda text: None)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} example lines fail"
