"""torchtally.metrics, the package of the metric classes: the public paths are the faces
(torchtally.classification, .regression, .aggregation); a class imported from the package itself,
as earlier versions allowed, still resolves to the same class, with a FutureWarning naming the
face to import it from."""

import pytest

import torchtally
import torchtally.metrics


@pytest.mark.parametrize(
    "name, face",
    [
        ("MulticlassAccuracy", "torchtally.classification"),
        ("AUROC", "torchtally.classification"),
        ("BinaryROC", "torchtally.classification"),
        ("MeanSquaredError", "torchtally.regression"),
        ("MeanMetric", "torchtally.aggregation"),
    ],
)
def test_an_old_import_path_warns_and_gives_the_same_class(name, face):
    with pytest.warns(FutureWarning, match=f"torchtally.metrics.{name}: import it from {face}"):
        cls = getattr(torchtally.metrics, name)
    assert cls is getattr(torchtally, name)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'Nope'"):
        torchtally.metrics.Nope  # noqa: B018
