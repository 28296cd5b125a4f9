"""The families that support.metric_catalogue does not draw (text, detection's box metrics,
image, audio, clustering, nominal, shape, multimodal, video) and the wrappers, for the bad-input
sweep (tests/catalogue/test_bad_input_sweep.py): per class a factory of a small instance (tiny
local models, no download) and the kind of input it takes (support.sweep_inputs).

``ACCEPTS`` lists, per class, the faults the class legitimately takes, with the reason; a
fault key is "<fault>:<argument>" or "<fault>" (any argument). ``OWNED_ELSEWHERE`` lists the
findings another change fixes (the lead drops those entries after merging it).
"""

import dataclasses
import functools
import inspect
import os
import tempfile
from typing import Any, Callable, Dict, List, Mapping, Tuple

import torch
from torch import nn

import torchtally as M
import torchtally.audio as A
import torchtally.clustering as C
import torchtally.detection as D
import torchtally.image as I
import torchtally.multimodal as MM
import torchtally.nominal as N
import torchtally.shape as SH
import torchtally.text as T
import torchtally.video as V
import torchtally.wrappers as W
from support.audio_models import arniqa_metric, dnsmos_metric, nisqa_metric, vmaf_metric
from support.generative_image import Net
from support.tiny_clip import save_tiny_clip
from support.tiny_language_models import save_tiny_bert
from torchtally.functional.audio import scale_invariant_signal_noise_ratio

SWEPT_FACES = {
    "text": T,
    "detection": D,
    "image": I,
    "audio": A,
    "clustering": C,
    "nominal": N,
    "shape": SH,
    "multimodal": MM,
    "video": V,
    "wrappers": W,
}


@dataclasses.dataclass(frozen=True)
class Swept:
    name: str
    make: Callable[[], Any]
    kind: str  # support.sweep_inputs kind
    arg_names: Tuple[str, ...] = ()  # the update's positional arguments (read from update when empty)
    tracker: bool = False  # MetricTracker: increment() before updates

    def metric(self) -> Any:
        m = self.make()
        if self.tracker:
            m.increment()
        return m

    def names(self) -> Tuple[str, ...]:
        if self.arg_names:
            return self.arg_names
        params = inspect.signature(type(self.make()).update).parameters.values()
        return tuple(p.name for p in params if p.name != "self" and p.kind == p.POSITIONAL_OR_KEYWORD)


@functools.cache
def _folder(what: str) -> str:
    base = tempfile.mkdtemp(prefix=f"torchtally-sweep-{what}-")
    return save_tiny_bert(base, masked_lm=what == "mlm") if what != "clip" else save_tiny_clip(base)


def _alex_like() -> nn.Module:
    """AlexNet's ``features`` layout (LPIPS taps after layers 1, 4, 7, 9, 11), tiny kernels."""
    torch.manual_seed(0)
    c = functools.partial(nn.Conv2d, kernel_size=1)
    return nn.Sequential(
        c(3, 64, stride=2), nn.ReLU(), nn.MaxPool2d(2), c(64, 192), nn.ReLU(), nn.Identity(),
        c(192, 384), nn.ReLU(), c(384, 256), nn.ReLU(), c(256, 256), nn.ReLU(),
    ).requires_grad_(False)  # fmt: skip


def _vgg_like() -> nn.Module:
    """VGG16's ``features`` layout (30 layers; DISTS taps after 3, 8, 15, 22, 29)."""
    torch.manual_seed(2)
    layers: List[nn.Module] = [nn.Identity() for _ in range(30)]
    for at, (cin, cout) in zip((2, 7, 14, 21, 28), ((3, 64), (64, 128), (128, 256), (256, 512), (512, 512))):
        layers[at] = nn.Conv2d(cin, cout, 1)
    return nn.Sequential(*layers).requires_grad_(False)


def _torchmetrics_weights(*parts: str) -> str:
    import torchmetrics.functional.image.lpips as tm_lpips

    return os.path.join(os.path.dirname(tm_lpips.__file__), *parts)


class _MeanSquare(nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return ((a - b) ** 2).mean((1, 2, 3))


class _FeatureSum(M.Metric):
    """A feature metric FeatureShare can share (FID, KID and IS name no ``feature_network``)."""

    feature_network = "net"
    _guards_inputs = True  # torchtally's input guard, as its own metrics have

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net
        self.add_state("total", torch.zeros((), dtype=torch.float64), reduce="sum")

    def update(self, x: torch.Tensor) -> None:
        if not isinstance(x, torch.Tensor) or x.dim() != 4 or not x.is_floating_point():
            raise TypeError(f"x: expected float images [N, C, H, W], got {x!r:.60}")
        if not bool(torch.isfinite(x).all()):
            raise ValueError("x: expected finite values")
        self.total = self.total + self.net(x).double().sum()

    def compute(self) -> torch.Tensor:
        return self.total


_NET = Net()


def _wrapper_entries() -> List[Swept]:
    binary, regression = ("preds", "target"), ("preds", "target")
    return [
        Swept("BootStrapper", lambda: W.BootStrapper(M.BinaryAccuracy(), num_bootstraps=3), "binary", binary),
        Swept(
            "BootStrapper[regression]",
            lambda: W.BootStrapper(M.MeanSquaredError(), num_bootstraps=3),
            "regression",
            regression,
        ),  # fmt: skip
        Swept(
            "ClasswiseWrapper", lambda: W.ClasswiseWrapper(M.MulticlassRecall(3, average=None)), "multiclass", binary
        ),
        Swept("MinMaxMetric", lambda: W.MinMaxMetric(M.BinaryAccuracy()), "binary", binary),
        Swept("MinMaxMetric[regression]", lambda: W.MinMaxMetric(M.MeanAbsoluteError()), "regression", regression),
        Swept(
            "MultioutputWrapper", lambda: W.MultioutputWrapper(M.MeanSquaredError(), 2), "rows", regression
        ),  # [N, 2] outputs
        Swept(
            "MultitaskWrapper",
            lambda: W.MultitaskWrapper({"cls": M.BinaryAccuracy(), "reg": M.MeanSquaredError()}),
            "multitask",
            ("task_preds", "task_targets"),
        ),
        Swept("Running", lambda: W.Running(M.SumMetric(), window=2), "aggregation", ("value",)),
        Swept("Running[binary]", lambda: W.Running(M.BinaryAccuracy(), window=2), "binary", binary),
        Swept(
            "LambdaInputTransformer",
            lambda: W.LambdaInputTransformer(M.BinaryAccuracy(), transform_pred=lambda p: 1 - p),
            "binary",
            binary,
        ),
        Swept(
            "LambdaInputTransformer[regression]",
            lambda: W.LambdaInputTransformer(M.MeanSquaredError(), transform_target=lambda t: t * 2),
            "regression",
            regression,
        ),
        Swept("BinaryTargetTransformer", lambda: W.BinaryTargetTransformer(M.BinaryAccuracy()), "binary", binary),
        Swept(
            "FeatureShare", lambda: W.FeatureShare({"a": _FeatureSum(_NET), "b": _FeatureSum(_NET)}), "images", ("x",)
        ),
        Swept("MetricTracker", lambda: W.MetricTracker(M.BinaryAccuracy()), "binary", binary, tracker=True),
        Swept(
            "MetricTracker[collection]",
            lambda: W.MetricTracker(M.MetricCollection([M.MeanSquaredError(), M.MeanAbsoluteError()])),
            "regression",
            regression,
            tracker=True,
        ),
    ]


def swept() -> List[Swept]:
    """Every class of the families above, some twice (an option that changes the state)."""
    bert, mlm, clip = (functools.partial(_folder, what) for what in ("bert", "mlm", "clip"))
    alex = functools.partial(_torchmetrics_weights, "lpips_models", "alex.pth")
    dists = functools.partial(_torchmetrics_weights, "dists_models", "weights.pt")
    infolm = dict(max_length=12, verbose=False, temperature=0.5)
    small_ssim = dict(betas=(0.5, 0.5), kernel_size=5, sigma=0.7)
    entries = [
        # text
        *(Swept(n, getattr(T, n), "text_pair") for n in ("CharErrorRate", "MatchErrorRate", "WordErrorRate")),
        *(Swept(n, getattr(T, n), "text_pair") for n in ("WordInfoLost", "WordInfoPreserved", "EditDistance")),
        *(Swept(n, getattr(T, n), "translation") for n in ("BLEUScore", "SacreBLEUScore", "CHRFScore")),
        *(Swept(n, getattr(T, n), "translation") for n in ("TranslationEditRate", "ExtendedEditDistance")),
        # rougeLsum splits sentences with nltk's punkt data, which CI does not download
        Swept("ROUGEScore", lambda: T.ROUGEScore(rouge_keys=("rouge1", "rougeL")), "translation"),
        Swept("SQuAD", T.SQuAD, "squad"),
        Swept("Perplexity", T.Perplexity, "token_logits"),
        Swept("BERTScore", lambda: T.BERTScore(model_name_or_path=bert()), "text_pair"),
        Swept("InfoLM", lambda: T.InfoLM(mlm(), idf=False, **infolm), "text_pair"),
        # detection: the box metrics (the panoptic ones are in support.metric_catalogue)
        *(
            Swept(n, getattr(D, n), "boxes")
            for n in (
                "IntersectionOverUnion",
                "GeneralizedIntersectionOverUnion",
                "DistanceIntersectionOverUnion",
                "CompleteIntersectionOverUnion",
                "MeanAveragePrecision",
            )
        ),
        # image: the ones support.metric_catalogue does not draw
        Swept(
            "MultiScaleStructuralSimilarityIndexMeasure",
            lambda: I.MultiScaleStructuralSimilarityIndexMeasure(**small_ssim),
            "image_pair_large",
        ),  # fmt: skip
        Swept(
            "PeakSignalNoiseRatioWithBlockedEffect", lambda: I.PeakSignalNoiseRatioWithBlockedEffect(1.0), "gray_pair"
        ),
        Swept("SpectralDistortionIndex", I.SpectralDistortionIndex, "image_pair"),
        Swept("VisualInformationFidelity", I.VisualInformationFidelity, "image_pair_48"),
        Swept("TotalVariation", I.TotalVariation, "images"),
        Swept("SpatialDistortionIndex", I.SpatialDistortionIndex, "pansharpening"),
        Swept("QualityWithNoReference", I.QualityWithNoReference, "pansharpening"),
        Swept(
            "LearnedPerceptualImagePatchSimilarity",
            lambda: I.LearnedPerceptualImagePatchSimilarity(net=_alex_like(), weights=alex(), normalize=True),
            "image_pair",
        ),  # fmt: skip
        Swept(
            "DeepImageStructureAndTextureSimilarity",
            lambda: I.DeepImageStructureAndTextureSimilarity(net=_vgg_like(), weights=dists()),
            "image_pair",
        ),  # fmt: skip
        Swept("ARNIQA", arniqa_metric, "images"),
        Swept("FrechetInceptionDistance", lambda: I.FrechetInceptionDistance(Net()), "images_real"),
        Swept(
            "KernelInceptionDistance", lambda: I.KernelInceptionDistance(Net(), subsets=2, subset_size=2), "images_real"
        ),  # fmt: skip
        Swept(
            "MemorizationInformedFrechetInceptionDistance",
            lambda: I.MemorizationInformedFrechetInceptionDistance(Net()),
            "images_real",
        ),  # fmt: skip
        Swept("InceptionScore", lambda: I.InceptionScore(Net(), splits=2), "images"),
        Swept(
            "PerceptualPathLength",
            lambda: I.PerceptualPathLength(num_samples=4, batch_size=2, sim_net=_MeanSquare(), resize=None),
            "generator",
        ),  # fmt: skip
        # audio
        *(
            Swept(n, getattr(A, n), "waves")
            for n in ("SignalNoiseRatio", "ScaleInvariantSignalNoiseRatio", "ScaleInvariantSignalDistortionRatio")
        ),
        Swept("SignalDistortionRatio", lambda: A.SignalDistortionRatio(filter_length=8), "waves"),
        Swept("SourceAggregatedSignalDistortionRatio", A.SourceAggregatedSignalDistortionRatio, "sources"),
        Swept("ComplexScaleInvariantSignalNoiseRatio", A.ComplexScaleInvariantSignalNoiseRatio, "spectra"),
        Swept(
            "PermutationInvariantTraining",
            lambda: A.PermutationInvariantTraining(scale_invariant_signal_noise_ratio),
            "sources",
        ),  # fmt: skip
        Swept(
            "PerceptualEvaluationSpeechQuality", lambda: A.PerceptualEvaluationSpeechQuality(8000, "nb"), "speech_pair"
        ),  # fmt: skip
        Swept("ShortTimeObjectiveIntelligibility", lambda: A.ShortTimeObjectiveIntelligibility(8000), "speech_pair"),
        Swept(
            "SpeechReverberationModulationEnergyRatio",
            lambda: A.SpeechReverberationModulationEnergyRatio(8000),
            "speech",
        ),  # fmt: skip
        Swept("DeepNoiseSuppressionMeanOpinionScore", dnsmos_metric, "speech16k"),
        Swept("NonIntrusiveSpeechQualityAssessment", nisqa_metric, "speech16k"),
        # clustering
        *(
            Swept(n, getattr(C, n), "cluster_labels")
            for n in C.__all__
            if n not in ("CalinskiHarabaszScore", "DaviesBouldinScore", "DunnIndex", "ClusterAccuracy")
        ),
        Swept("ClusterAccuracy", lambda: C.ClusterAccuracy(3), "cluster_labels"),
        *(
            Swept(n, getattr(C, n), "cluster_data")
            for n in ("CalinskiHarabaszScore", "DaviesBouldinScore", "DunnIndex")
        ),
        # nominal
        *(Swept(n, functools.partial(getattr(N, n), 3), "nominal") for n in N.__all__ if n != "FleissKappa"),
        Swept("FleissKappa", N.FleissKappa, "ratings"),
        # shape, multimodal, video
        Swept("ProcrustesDisparity", SH.ProcrustesDisparity, "point_clouds"),
        Swept("LipVertexError", lambda: MM.LipVertexError([0, 3, 4, 7, 11]), "meshes"),
        Swept("CLIPScore", lambda: MM.CLIPScore(clip()), "clip_score"),
        Swept(
            "CLIPImageQualityAssessment", lambda: MM.CLIPImageQualityAssessment(clip(), data_range=255.0), "clip_images"
        ),  # fmt: skip
        Swept("VideoMultiMethodAssessmentFusion", vmaf_metric, "videos"),
    ]
    return entries + _wrapper_entries()


SWEPT = swept()
# Not metrics one updates: a base for the user's own classes.
BASES = {"BaseAggregator", "MetricInputTransformer"}

_AGGREGATES = {
    "dtype": "float8 and uint values are read exactly as float64 (torchmetrics' aggregators take them too)",
    "nan": "nan_strategy decides (default 'warn': dropped with a warning)",
    "inf": "an infinite value is a value: sums and extremes of it are defined",
    "list": "a list (or number) is read as a tensor, as torchmetrics does",
    "rank+1": "values of any shape are aggregated",
    "rank-1": "values of any shape are aggregated",
}
_WINDOW = {"empty": "the window counts updates: an empty batch is one of them, as in torchmetrics"}
_LOGITS = {"inf:preds": "binary preds outside [0, 1] are logits: +-inf are logits of 1 and 0"}
_RANKED = {"inf:preds": "retrieval scores are only ranked: +-inf rank first / last"}
_ANY_LEADING_DIMS = {
    "rank+1:preds": "[..., time]: one score per signal, any leading dims",
    "rank-1:preds": "[..., time]: one score per signal, any leading dims",
}
_NO_SCORES = {"preds['scores']": "the IoU family reads no scores (as torchmetrics'): anything there is ignored"}

_EXTRACTED = {
    "nan:imgs": "images go to the feature extractor as they are; its features are checked for NaN / inf (this "
    "small extractor's stride never reads the last pixel, where the fault is)",
    "inf:imgs": "as nan:imgs",
}

# faults a class takes on purpose: "<fault>:<argument>" or "<fault>" or "<argument>" -> why
ACCEPTS: Dict[str, Mapping[str, str]] = {
    **dict.fromkeys(("SumMetric", "MeanMetric", "MaxMetric", "MinMetric", "CatMetric", "AverageLoss"), _AGGREGATES),
    **dict.fromkeys(("RunningMean", "RunningSum"), {**_AGGREGATES, **_WINDOW}),
    "Running": {**_AGGREGATES, **_WINDOW},
    "Running[binary]": {**_WINDOW, **_LOGITS},
    "BootStrapper": _LOGITS,
    # SQuAD matches predictions to references by id, as torchmetrics and the official script:
    # a question without a prediction scores 0 with a warning, a prediction without a reference
    # is not scored
    "SQuAD": dict.fromkeys(("shorter:preds", "shorter:target"), "matched by id (torchmetrics' SQuAD too)"),
    "BinaryTargetTransformer": _LOGITS,
    **dict.fromkeys(
        (
            "FrechetInceptionDistance",
            "KernelInceptionDistance",
            "MemorizationInformedFrechetInceptionDistance",
            "InceptionScore",
        ),
        _EXTRACTED,
    ),  # fmt: skip
    **dict.fromkeys(
        (
            "RetrievalAUROC",
            "RetrievalFallOut",
            "RetrievalHitRate",
            "RetrievalMAP",
            "RetrievalMRR",
            "RetrievalNormalizedDCG",
            "RetrievalPrecision",
            "RetrievalPrecisionRecallCurve",
            "RetrievalRPrecision",
            "RetrievalRecall",
            "RetrievalRecallAtFixedPrecision",
        ),
        _RANKED,
    ),  # fmt: skip
    **dict.fromkeys(("ClasswiseWrapper", "MinMaxMetric", "MetricTracker", "LambdaInputTransformer"), _LOGITS),
    "MultitaskWrapper": {"inf:task_preds['cls']": _LOGITS["inf:preds"]},
    "MultioutputWrapper": {"nan": "remove_nans=True (the default) drops the rows with a NaN, as torchmetrics"},
    **dict.fromkeys(
        (
            "SpeechReverberationModulationEnergyRatio",
            "DeepNoiseSuppressionMeanOpinionScore",
            "NonIntrusiveSpeechQualityAssessment",
        ),
        _ANY_LEADING_DIMS,
    ),  # fmt: skip
    **dict.fromkeys(
        (
            "IntersectionOverUnion",
            "GeneralizedIntersectionOverUnion",
            "DistanceIntersectionOverUnion",
            "CompleteIntersectionOverUnion",
        ),
        _NO_SCORES,
    ),  # fmt: skip
}

# By the kind of input (support.metric_catalogue's families): what every class of it takes.
ACCEPTS_BY_KIND: Dict[str, Mapping[str, str]] = {
    "binary": _LOGITS,
    "multilabel": _LOGITS,
    "groups": _LOGITS,
    "groups_no_target": _LOGITS,
    "multiclass": {
        "inf:preds": "multiclass scores are argmax'd (+inf wins) or read as logits; the curves refuse a +inf logit, "
        "whose softmax is undefined"
    },
}

# Findings that another change fixes (text messages, BootStrapper's unresampled rows): class ->
# fault keys. The lead drops these entries after merging it.
_SHORTER = {"shorter:preds": "names the argument", "shorter:target": "names the argument"}
OWNED_ELSEWHERE: Dict[str, Mapping[str, str]] = {}


# Views whose float states differ from a contiguous copy's in the last bits, with why (rtol).
VIEW_TOLERANCES: Dict[str, Tuple[float, str]] = {
    "Perplexity": (1e-6, "contiguous logit rows take a vectorised float exp, strided ones expf: both within float32"),
    "DeepNoiseSuppressionMeanOpinionScore": (1e-5, "the stand-in models' float32 numpy means sum in memory order"),
    "VideoMultiMethodAssessmentFusion": (1e-5, "the stand-in model's float32 means sum in memory order"),
}


def entry_id(entry: Swept) -> str:
    return entry.name
