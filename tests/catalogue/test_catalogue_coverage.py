"""The catalogue against torchmetrics 1.9's own exports (the README's claim): every metric class
of torchmetrics.classification, .regression, .aggregation, .wrappers, .segmentation, .retrieval
and .text (and .clustering) under the same path in torchtally (.image too: every class it exports with or without
torchvision and torch-fidelity), and every function of
torchmetrics.functional.classification, .regression, .retrieval and .text in torchtally.functional
(and in torchtally.functional.<family>), of .segmentation in torchtally.functional.segmentation, of .image but ARNIQA in
torchtally.functional.image."""

import importlib

import pytest
import torchmetrics

import torchtally.functional

SIZES = {
    "classification": 105,
    "regression": 22,
    "aggregation": 7,
    "wrappers": 11,
    "segmentation": 4,
    "retrieval": 11,
    "text": 16,
    "clustering": 13,
    "image": 17,  # without torchvision and torch-fidelity installed (as here); the rest below
    "shape": 1,
    "multimodal": 3,  # with transformers installed (CLIPScore, CLIPImageQualityAssessment)
}
# torchmetrics.image's classes exported only when torchvision or torch-fidelity is installed
IMAGE_WITH_OPTIONAL_PACKAGES = (
    "FrechetInceptionDistance",
    "KernelInceptionDistance",
    "InceptionScore",
    "LearnedPerceptualImagePatchSimilarity",
    "PerceptualPathLength",
)
# in torchmetrics.functional.image, not yet in torchtally (a pretrained network of its own)


@pytest.mark.parametrize("face", sorted(SIZES))
def test_every_torchmetrics_class_of_the_face_is_here(face):
    theirs = importlib.import_module(f"torchmetrics.{face}")
    ours = importlib.import_module(f"torchtally.{face}")
    if hasattr(theirs, "__all__"):
        classes = list(theirs.__all__)
    else:  # torchmetrics.aggregation: the metric classes defined there (it imports Running too)
        classes = [
            n
            for n, v in vars(theirs).items()
            if isinstance(v, type)
            and issubclass(v, torchmetrics.Metric)
            and v.__module__.startswith(theirs.__name__)
            and n != "BaseAggregator"
        ]
    assert len(classes) == SIZES[face], sorted(classes)
    missing = [n for n in classes if not hasattr(ours, n)]
    assert not missing, f"torchtally.{face} lacks {missing}"


@pytest.mark.parametrize("family", ["classification", "regression", "retrieval", "text"])
def test_every_torchmetrics_functional_form_of_the_family_is_here(family):
    theirs = importlib.import_module(f"torchmetrics.functional.{family}")
    missing = [n for n in theirs.__all__ if not hasattr(torchtally.functional, n)]
    assert not missing, f"torchtally.functional lacks {missing}"


def test_the_image_classes_torchmetrics_exports_with_its_optional_packages_are_here():
    import torchtally.image

    assert not [n for n in IMAGE_WITH_OPTIONAL_PACKAGES if hasattr(torchmetrics.image, n)], "the list is stale"
    assert all(n in torchtally.image.__all__ for n in IMAGE_WITH_OPTIONAL_PACKAGES)


def test_every_torchmetrics_image_function_is_here():
    theirs = importlib.import_module("torchmetrics.functional.image")
    ours = importlib.import_module("torchtally.functional.image")
    assert sorted(theirs.__all__) == sorted(ours.__all__)
    assert all(hasattr(torchtally.functional, n) for n in ours.__all__)


@pytest.mark.parametrize("family", ["retrieval", "text", "clustering"])
def test_the_family_package_exports_torchmetrics_functions_and_no_more(family):
    theirs = importlib.import_module(f"torchmetrics.functional.{family}")
    ours = importlib.import_module(f"torchtally.functional.{family}")
    assert sorted(theirs.__all__) == sorted(ours.__all__)


def test_every_torchmetrics_segmentation_function_is_here():
    theirs = importlib.import_module("torchmetrics.functional.segmentation")
    ours = importlib.import_module("torchtally.functional.segmentation")
    assert sorted(theirs.__all__) == sorted(ours.__all__)


# -- the bad-input sweep covers every class --------------------------------------------------------

FAMILIES = (
    "classification", "regression", "aggregation", "segmentation", "retrieval", "detection", "text", "image",
    "audio", "clustering", "nominal", "shape", "multimodal", "video", "wrappers",
)  # fmt: skip


def _public_classes(family):
    import inspect

    from torchtally.classification.base import TaskWrapper

    module = importlib.import_module(f"torchtally.{family}")
    for name in sorted(module.__all__):
        cls = getattr(module, name)
        if inspect.isclass(cls) and not issubclass(cls, TaskWrapper):
            yield name
    if family == "image":
        yield "ARNIQA"  # in torchtally.image.arniqa, out of __all__ as in torchmetrics: public all the same


@pytest.mark.parametrize("family", FAMILIES)
def test_every_public_class_is_in_the_bad_input_sweep(family):
    """A class added to a family and left out of support.metric_catalogue and
    support.sweep_catalogue fails here: tests/catalogue/test_bad_input_sweep.py never saw it."""
    from support.metric_catalogue import METRICS
    from support.sweep_catalogue import BASES, SWEPT

    swept = {e.name.split("[")[0] for e in METRICS} | {e.name.split("[")[0] for e in SWEPT}
    missing = [n for n in _public_classes(family) if n not in swept and n not in BASES]
    assert not missing, f"torchtally.{family}: {missing} not swept: add them to support/sweep_catalogue.py"
