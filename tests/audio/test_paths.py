"""Each torchmetrics path of the package- and model-based audio metrics, VMAF and ARNIQA
resolves in torchtally (audio is not in the conformance test's families while its signal
metrics are built beside these)."""

import importlib

import pytest

PATHS = {
    "audio.pesq": ["PerceptualEvaluationSpeechQuality"],
    "audio.stoi": ["ShortTimeObjectiveIntelligibility"],
    "audio.dnsmos": ["DeepNoiseSuppressionMeanOpinionScore"],
    "audio.nisqa": ["NonIntrusiveSpeechQualityAssessment"],
    "audio": ["PerceptualEvaluationSpeechQuality", "ShortTimeObjectiveIntelligibility",
              "DeepNoiseSuppressionMeanOpinionScore", "NonIntrusiveSpeechQualityAssessment"],
    "functional.audio.pesq": ["perceptual_evaluation_speech_quality"],
    "functional.audio.stoi": ["short_time_objective_intelligibility"],
    "functional.audio.dnsmos": ["deep_noise_suppression_mean_opinion_score"],
    "functional.audio.nisqa": ["non_intrusive_speech_quality_assessment"],
    "functional.audio": ["perceptual_evaluation_speech_quality", "short_time_objective_intelligibility",
                         "deep_noise_suppression_mean_opinion_score", "non_intrusive_speech_quality_assessment"],
    "video.vmaf": ["VideoMultiMethodAssessmentFusion"],
    "video": ["VideoMultiMethodAssessmentFusion"],
    "functional.video.vmaf": ["video_multi_method_assessment_fusion", "calculate_luma"],
    "functional.video": ["video_multi_method_assessment_fusion"],
    "image.arniqa": ["ARNIQA"],
    "functional.image.arniqa": ["arniqa"],
    "functional.image": ["arniqa"],
}  # fmt: skip


@pytest.mark.parametrize("path", sorted(PATHS))
def test_torchmetrics_path_resolves(path):
    theirs = importlib.import_module(f"torchmetrics.{path}")
    ours = importlib.import_module(f"torchtally.{path}")
    for name in PATHS[path]:
        assert hasattr(ours, name), f"torchtally.{path}.{name}"
        if hasattr(theirs, name):  # torchmetrics exports some only when their packages are installed
            assert getattr(ours, name).__name__ == getattr(theirs, name).__name__
