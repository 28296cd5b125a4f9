"""torchmetrics' audio signal metrics resolve at the same paths in torchtally: every module
(audio.snr, audio.sdr, audio.pit and their functional twins) and every name each defines or
exports, read from the installed torchmetrics. (PESQ, STOI, SRMR, DNSMOS and NISQA, which need
optional packages, are not checked here.)"""

import importlib
import warnings

import pytest
from support.torchmetrics_tree import names_of

pytest.importorskip("torchmetrics")

SIGNAL_MODULES = [
    "torchmetrics.audio.snr",
    "torchmetrics.audio.sdr",
    "torchmetrics.audio.pit",
    "torchmetrics.functional.audio.snr",
    "torchmetrics.functional.audio.sdr",
    "torchmetrics.functional.audio.pit",
]
PACKAGES = {
    "torchmetrics.audio": {
        "ComplexScaleInvariantSignalNoiseRatio",
        "PermutationInvariantTraining",
        "ScaleInvariantSignalDistortionRatio",
        "ScaleInvariantSignalNoiseRatio",
        "SignalDistortionRatio",
        "SignalNoiseRatio",
        "SourceAggregatedSignalDistortionRatio",
    },
    "torchmetrics.functional.audio": {
        "complex_scale_invariant_signal_noise_ratio",
        "permutation_invariant_training",
        "pit_permutate",
        "scale_invariant_signal_distortion_ratio",
        "scale_invariant_signal_noise_ratio",
        "signal_distortion_ratio",
        "signal_noise_ratio",
        "source_aggregated_signal_distortion_ratio",
    },
}


def _expected():
    out = dict(PACKAGES)
    for module_name in SIGNAL_MODULES:
        out[module_name] = names_of(module_name)
    return out


def test_torchmetrics_signal_names_are_the_ones_listed():
    """The packages' signal names are those torchmetrics' own modules define (a rename there shows)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for package, names in PACKAGES.items():
            theirs = set(importlib.import_module(package).__all__)
            assert names <= theirs, sorted(names - theirs)
    assert {"SignalNoiseRatio", "ScaleInvariantSignalNoiseRatio"} <= names_of("torchmetrics.audio.snr")


def test_every_signal_path_resolves_in_torchtally():
    missing = []
    for module_name, names in _expected().items():
        ours = importlib.import_module(module_name.replace("torchmetrics", "torchtally", 1))
        missing += [f"{module_name}.{n}" for n in sorted(names) if not hasattr(ours, n)]
    assert missing == []


def test_classes_live_in_torchmetrics_file():
    for module_name in SIGNAL_MODULES:
        if ".functional." in module_name:
            continue
        ours = importlib.import_module(module_name.replace("torchmetrics", "torchtally", 1))
        for name in names_of(module_name):
            assert getattr(ours, name).__module__ == ours.__name__, name


def test_top_level_and_functional_names():
    import torchmetrics
    import torchmetrics.functional

    import torchtally
    import torchtally.functional

    for name in ("PermutationInvariantTraining", "ScaleInvariantSignalDistortionRatio", "SignalDistortionRatio"):
        assert name in torchmetrics.__all__ and name in torchtally.__all__
    for name in ("permutation_invariant_training", "pit_permutate", "signal_noise_ratio"):
        assert hasattr(torchmetrics.functional, name) and hasattr(torchtally.functional, name)
