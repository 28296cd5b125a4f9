"""torchtally.detection against torchmetrics 1.9's own exports, where torchvision makes all of them
importable: every class of torchmetrics.detection and every function of
torchmetrics.functional.detection is here under the same name (the main environment sees only
the panoptic ones: tests/catalogue/test_catalogue_coverage.py)."""

import torchmetrics.detection
import torchmetrics.functional.detection

import torchtally.detection
import torchtally.functional


def test_every_torchmetrics_detection_class_is_here():
    assert len(torchmetrics.detection.__all__) == 7, torchmetrics.detection.__all__
    missing = [n for n in torchmetrics.detection.__all__ if not hasattr(torchtally.detection, n)]
    assert not missing, f"torchtally.detection lacks {missing}"


def test_every_torchmetrics_detection_function_is_here():
    names = torchmetrics.functional.detection.__all__
    assert "mean_average_precision" in names and "intersection_over_union" in names
    missing = [n for n in names if not hasattr(torchtally.functional, n)]
    assert not missing, f"torchtally.functional lacks {missing}"
