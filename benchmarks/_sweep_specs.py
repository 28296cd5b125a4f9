"""What the catalogue sweep (bench_catalogue_sweep.py) runs: for every class that both torchtally
and torchmetrics export, its constructor arguments and a maker of its batches, at three sizes.

A spec's ``make(lib)`` builds the metric from that library's module (wrappers wrap that library's
own metrics), and ``batch(size, seed)`` gives the positional arguments of one update, the same
tensors for both libraries. Classes that need a trained model or an outside package to score
(BERTScore, InfoLM, CLIP, PESQ, STOI, NISQA, DNSMOS, DISTS, FeatureShare) are listed in
``MODEL_BOUND`` with the benchmark that covers them instead.

Sizes (the "usual" column is the one the README quotes):
  classification  8 / 256 / 65,536 samples, 10 classes (10 labels)
  regression, aggregation, clustering, nominal  8 / 256 / 65,536 samples
  retrieval       2 / 64 / 4,096 queries x 20 documents
  text            8 / 64 / 512 sentence pairs
  image           2 / 8 / 32 images of 3 x 64 x 64
  segmentation    1 / 4 / 16 samples of 5 classes x 128 x 128 (HausdorffDistance: 32 x 32, 5 updates)
  detection (panoptic)  2 / 8 / 32 maps of 64 x 64
  audio           2 / 8 / 64 signals of 4,000 samples
"""

import dataclasses
import importlib
import random
from typing import Any, Callable, Dict, List, Tuple

import torch

SIZES = ("small", "usual", "large")
C = 10  # classes, labels, clusters, categories
MODEL_BOUND = {
    "BERTScore": "bench_text (its tiny model)",
    "InfoLM": "bench_text (its tiny model)",
    "CLIPScore": "bench_shape_multimodal",
    "CLIPImageQualityAssessment": "bench_shape_multimodal",
    "PerceptualEvaluationSpeechQuality": "bench_audio_models",
    "ShortTimeObjectiveIntelligibility": "bench_audio_models",
    "NonIntrusiveSpeechQualityAssessment": "bench_audio_models",
    "DeepImageStructureAndTextureSimilarity": "bench_image_quality",
    "FeatureShare": "bench_image_fid",
}
NOT_SWEPT = {name: f"model-bound: see {where}" for name, where in MODEL_BOUND.items()}
NOT_SWEPT["MetricInputTransformer"] = "abstract (a user subclasses it): its LambdaInputTransformer row"
_BY_SIZE = {
    "classification": (8, 256, 65536),
    "samples": (8, 256, 65536),
    "retrieval": (2, 64, 4096),
    "text": (8, 64, 512),
    "image": (2, 8, 32),
    "segmentation": (1, 4, 16),
    "panoptic": (2, 8, 32),
    "audio": (2, 8, 64),
}


@dataclasses.dataclass(frozen=True)
class Spec:
    family: str
    name: str
    make: Callable[[str], Any]  # library name -> a fresh metric
    batch: Callable[[str, int], Tuple[Any, ...]]  # (size, seed) -> update's positional arguments
    forward: bool = True  # False: a batch alone cannot be scored (real and generated images come apart)
    epoch: int = 0  # updates per epoch where the default (50, or 10 at the large size) would take minutes


def module(lib: str, family: str) -> Any:
    return importlib.import_module(f"{lib}.{family}")


def count(kind: str, size: str) -> int:
    return _BY_SIZE[kind][SIZES.index(size)]


def _gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def _plain_specs(
    family: str, names: List[str], kwargs_of: Callable[[str], Dict[str, Any]], batch_of: Callable[..., Tuple[Any, ...]]
) -> List[Spec]:
    """Specs of ``family``'s classes made as ``cls(**kwargs_of(name))``, batches ``batch_of(name, size, seed)``."""

    def spec(name: str) -> Spec:
        return Spec(
            family,
            name,
            lambda lib: getattr(module(lib, family), name)(**kwargs_of(name)),
            lambda size, seed: batch_of(name, size, seed),
        )

    return [spec(n) for n in names]


# -- classification -------------------------------------------------------------------------------

_EXTRA_KWARGS = {
    "PrecisionAtFixedRecall": {"min_recall": 0.5},
    "RecallAtFixedPrecision": {"min_precision": 0.5},
    "SensitivityAtSpecificity": {"min_specificity": 0.5},
    "SpecificityAtSensitivity": {"min_sensitivity": 0.5},
    "Fairness": {"num_groups": 2},
    "FBetaScore": {"beta": 2.0},
    "GroupStatRates": {"num_groups": 2},
}


def _classification_batch(task: str, size: str, seed: int, groups: bool) -> Tuple[Any, ...]:
    g, n = _gen(seed), count("classification", size)
    if task == "binary":
        out: Tuple[Any, ...] = (torch.rand(n, generator=g), torch.randint(0, 2, (n,), generator=g))
    elif task == "multiclass":
        out = (torch.randn(n, C, generator=g).softmax(-1), torch.randint(0, C, (n,), generator=g))
    else:
        out = (torch.rand(n, C, generator=g), torch.randint(0, 2, (n, C), generator=g))
    return out + (torch.randint(0, 2, (n,), generator=g),) if groups else out


def _classification_specs(names: List[str]) -> List[Spec]:
    specs = []
    for name in names:
        task = next((t for t in ("binary", "multiclass", "multilabel") if name.lower().startswith(t)), None)
        base = name[len(task) :] if task else name
        kwargs: Dict[str, Any] = dict(_EXTRA_KWARGS.get(base, {}))
        if task is None:  # the task-generic classes (Accuracy, AUROC, ...): their multiclass form
            task = "multiclass"
            kwargs["task"] = "multiclass"
        if task == "multiclass":
            kwargs["num_classes"] = C
        elif task == "multilabel":
            kwargs["num_labels"] = C
        groups = base in ("Fairness", "GroupStatRates")

        def make(lib: str, name: str = name, kwargs: Dict[str, Any] = kwargs) -> Any:
            return getattr(module(lib, "classification"), name)(**kwargs)

        def batch(size: str, seed: int, task: str = task, groups: bool = groups) -> Tuple[Any, ...]:
            return _classification_batch(task, size, seed, groups)

        specs.append(Spec("classification", name, make, batch))
    return specs


# -- regression and aggregation -------------------------------------------------------------------


def _regression_batch(name: str, size: str, seed: int) -> Tuple[Any, ...]:
    g, n = _gen(seed), count("samples", size)
    if name in ("KLDivergence", "JensenShannonDivergence"):
        return torch.rand(n, C, generator=g) + 0.01, torch.rand(n, C, generator=g) + 0.01
    if name == "CosineSimilarity":
        return torch.randn(n, C, generator=g), torch.randn(n, C, generator=g)
    if name == "ContinuousRankedProbabilityScore":
        return torch.randn(n, 5, generator=g), torch.randn(n, generator=g)
    x = torch.rand(n, generator=g) + 0.1  # positive: MSLE, MAPE, Tweedie
    return x + 0.2 * torch.rand(n, generator=g), x


_REGRESSION_KWARGS = {"CriticalSuccessIndex": {"threshold": 0.5}, "MinkowskiDistance": {"p": 3.0}}


def _regression_specs(names: List[str]) -> List[Spec]:
    return _plain_specs("regression", names, lambda n: _REGRESSION_KWARGS.get(n, {}), _regression_batch)


def _aggregation_kwargs(name: str) -> Dict[str, Any]:
    return {"window": 5} if name.startswith("Running") else {}


def _aggregation_batch(name: str, size: str, seed: int) -> Tuple[Any, ...]:
    return (torch.rand(count("samples", size), generator=_gen(seed)),)


def _aggregation_specs(names: List[str]) -> List[Spec]:
    return _plain_specs("aggregation", names, _aggregation_kwargs, _aggregation_batch)


# -- retrieval, text -----------------------------------------------------------------------------------


def _retrieval_batch(size: str, seed: int) -> Tuple[Any, ...]:
    g, q, docs = _gen(seed), count("retrieval", size), 20
    indexes = (torch.arange(q) + seed * q).repeat_interleave(docs)  # new queries in every batch
    return torch.rand(q * docs, generator=g), torch.randint(0, 2, (q * docs,), generator=g), indexes


def _retrieval_kwargs(name: str) -> Dict[str, Any]:
    return {"min_precision": 0.5} if name == "RetrievalRecallAtFixedPrecision" else {}


def _retrieval_specs(names: List[str]) -> List[Spec]:
    return _plain_specs("retrieval", names, _retrieval_kwargs, lambda name, size, seed: _retrieval_batch(size, seed))


_WORDS = [f"w{i}" for i in range(500)]


def _sentences(rng: random.Random, n: int) -> Tuple[List[str], List[str]]:
    preds, target = [], []
    for _ in range(n):
        ref = [rng.choice(_WORDS) for _ in range(rng.randint(8, 24))]
        hyp = [w if rng.random() < 0.7 else rng.choice(_WORDS) for w in ref]
        preds.append(" ".join(hyp))
        target.append(" ".join(ref))
    return preds, target


def _text_batch(name: str, size: str, seed: int) -> Tuple[Any, ...]:
    n = count("text", size)
    if name == "Perplexity":
        g = _gen(seed)
        return torch.randn(n, 32, 100, generator=g), torch.randint(0, 100, (n, 32), generator=g)
    preds, target = _sentences(random.Random(seed), n)
    if name in ("BLEUScore", "SacreBLEUScore", "CHRFScore", "TranslationEditRate", "ExtendedEditDistance"):
        return preds, [[t] for t in target]
    if name == "SQuAD":
        ids = [f"{seed}-{i}" for i in range(n)]
        return (
            [{"prediction_text": p, "id": i} for p, i in zip(preds, ids)],
            [{"answers": {"answer_start": [0], "text": [t]}, "id": i} for t, i in zip(target, ids)],
        )
    return preds, target


# rougeLsum, in ROUGEScore's default keys, needs nltk's downloaded sentence splitter in both libraries
_TEXT_KWARGS = {"ROUGEScore": {"rouge_keys": ("rouge1", "rouge2", "rougeL")}}


def _text_specs(names: List[str]) -> List[Spec]:
    return _plain_specs("text", names, lambda n: _TEXT_KWARGS.get(n, {}), _text_batch)


# -- image, segmentation, panoptic, audio ---------------------------------------------------------

_IMAGE_KWARGS: Dict[str, Dict[str, Any]] = {
    "PeakSignalNoiseRatio": {"data_range": 1.0},
    "PeakSignalNoiseRatioWithBlockedEffect": {"data_range": 1.0},
    "StructuralSimilarityIndexMeasure": {"data_range": 1.0},
    "MultiScaleStructuralSimilarityIndexMeasure": {"data_range": 1.0, "betas": (0.0448, 0.2856, 0.3001)},
}


def _image_batch(name: str, size: str, seed: int) -> Tuple[Any, ...]:
    g, n = _gen(seed), count("image", size)
    channels = 1 if name == "PeakSignalNoiseRatioWithBlockedEffect" else 3
    target = torch.rand(n, channels, 64, 64, generator=g)
    preds = (target + 0.1 * torch.randn(target.shape, generator=g)).clamp(0, 1)
    if name == "TotalVariation":
        return (preds,)
    if name in _FEATURE_METRICS:  # real and generated images in turn
        return preds, seed % 2 == 0
    if name in ("QualityWithNoReference", "SpatialDistortionIndex"):
        ms = torch.rand(n, channels, 16, 16, generator=g)
        pan = torch.rand(n, channels, 64, 64, generator=g)
        pan_lr = torch.rand(n, channels, 16, 16, generator=g)  # torchmetrics needs torchvision to make it
        return preds, {"ms": ms, "pan": pan, "pan_lr": pan_lr}
    return preds, target


# the feature metrics take this extractor in both libraries (their default InceptionV3 needs a download)
_FEATURE_METRICS = ("MemorizationInformedFrechetInceptionDistance", "KernelInceptionDistance", "InceptionScore")


class TinyFeatures(torch.nn.Module):
    """Images [N, 3, H, W] (any H, W) to 16 features: pooled to 4 x 4, then one linear layer."""

    def __init__(self) -> None:
        super().__init__()
        self.pool = torch.nn.AdaptiveAvgPool2d(4)
        self.linear = torch.nn.Linear(48, 16)
        # weight AND bias from one seeded generator: a bias drawn from the global generator would
        # differ between the two libraries' extractors (MiFID's cosine distances are not
        # shift-invariant, so their values would differ for that reason alone)
        seeded = torch.Generator().manual_seed(0)
        torch.nn.init.normal_(self.linear.weight, generator=seeded)
        torch.nn.init.normal_(self.linear.bias, generator=seeded)
        self.num_features = 16

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(self.pool(x.float()).flatten(1))


def _image_kwargs(name: str) -> Dict[str, Any]:
    if name in _FEATURE_METRICS:
        extra = {"subset_size": 8} if name == "KernelInceptionDistance" else {}
        return {"feature": TinyFeatures(), "normalize": True, **extra}
    return _IMAGE_KWARGS.get(name, {})


def _image_specs(names: List[str]) -> List[Spec]:
    def spec(name: str) -> Spec:
        return Spec(
            "image",
            name,
            lambda lib: getattr(module(lib, "image"), name)(**_image_kwargs(name)),
            lambda size, seed: _image_batch(name, size, seed),
            forward=name not in _FEATURE_METRICS,
        )

    return [spec(n) for n in names]


def _regions(g: torch.Generator, n: int, side: int, high: int) -> torch.Tensor:
    """[n, side, side] values below ``high`` in regions of 8 x 8 pixels (a map of noise would be
    all edges, which no segmentation model gives)."""
    return (
        torch.randint(0, high, (n, side // 8, side // 8), generator=g).repeat_interleave(8, 1).repeat_interleave(8, 2)
    )


def _segmentation_batch(name: str, size: str, seed: int) -> Tuple[Any, ...]:
    g, n = _gen(seed), count("segmentation", size)
    side = 32 if name == "HausdorffDistance" else 128  # torchmetrics' takes 22 s per 128 x 128 map
    target, wrong = _regions(g, n, side, 5), _regions(g, n, side, 5)
    preds = torch.where(_regions(g, n, side, 10) < 8, target, wrong)
    if name == "HausdorffDistance":  # every class in every map: torchmetrics' fails on an absent one
        target[:, 0, :5] = preds[:, 0, :5] = torch.arange(5)
    hot = torch.nn.functional.one_hot
    return hot(preds, 5).permute(0, 3, 1, 2), hot(target, 5).permute(0, 3, 1, 2)


def _segmentation_specs(names: List[str]) -> List[Spec]:
    def spec(name: str) -> Spec:
        return Spec(
            "segmentation",
            name,
            lambda lib: getattr(module(lib, "segmentation"), name)(num_classes=5),
            lambda size, seed: _segmentation_batch(name, size, seed),
            epoch=5 if name == "HausdorffDistance" else 0,
        )

    return [spec(n) for n in names]


def _panoptic_batch(size: str, seed: int) -> Tuple[Any, ...]:
    g, n = _gen(seed), count("panoptic", size)

    def maps() -> torch.Tensor:
        category = torch.randint(0, 3, (n, 8, 8), generator=g).repeat_interleave(8, 1).repeat_interleave(8, 2)
        instance = torch.randint(0, 3, (n, 8, 8), generator=g).repeat_interleave(8, 1).repeat_interleave(8, 2)
        return torch.stack((category, instance * (category < 2)), dim=-1)

    return maps(), maps()


def _panoptic_specs(names: List[str]) -> List[Spec]:
    def spec(name: str) -> Spec:
        return Spec(
            "detection",
            name,
            lambda lib: getattr(module(lib, "detection"), name)(things={0, 1}, stuffs={2}),
            _panoptic_batch,
        )

    return [spec(n) for n in names]


def _audio_batch(name: str, size: str, seed: int) -> Tuple[Any, ...]:
    g, n = _gen(seed), count("audio", size)
    shape = (n, 2, 4000) if name == "PermutationInvariantTraining" else (n, 4000)
    if name == "ComplexScaleInvariantSignalNoiseRatio":
        shape = (n, 129, 32, 2)  # a spectrogram: frequency, frame, (real, imaginary)
    target = torch.randn(shape, generator=g)
    return target + 0.3 * torch.randn(shape, generator=g), target


def _audio_make(lib: str, name: str) -> Any:
    audio = module(lib, "audio")
    if name == "PermutationInvariantTraining":
        metric_func = importlib.import_module(f"{lib}.functional.audio").scale_invariant_signal_noise_ratio
        return audio.PermutationInvariantTraining(metric_func, eval_func="max")
    return getattr(audio, name)()


def _audio_specs(names: List[str]) -> List[Spec]:
    def spec(name: str) -> Spec:
        return Spec(
            "audio", name, lambda lib: _audio_make(lib, name), lambda size, seed: _audio_batch(name, size, seed)
        )

    return [spec(n) for n in names]


# -- clustering, nominal, shape, multimodal ---------------------------------------------------------

_EMBEDDING_CLUSTERING = ("CalinskiHarabaszScore", "DaviesBouldinScore", "DunnIndex")


def _clustering_batch(name: str, size: str, seed: int) -> Tuple[Any, ...]:
    g, n = _gen(seed), count("samples", size)
    labels = torch.randint(0, C, (n,), generator=g)
    if name in _EMBEDDING_CLUSTERING:
        return torch.randn(n, 8, generator=g) + labels[:, None].float(), labels
    noisy = torch.where(torch.rand(n, generator=g) < 0.7, labels, torch.randint(0, C, (n,), generator=g))
    return noisy, labels


def _clustering_kwargs(name: str) -> Dict[str, Any]:
    return {"num_classes": C} if name == "ClusterAccuracy" else {}


def _clustering_specs(names: List[str]) -> List[Spec]:
    return _plain_specs("clustering", names, _clustering_kwargs, _clustering_batch)


def _nominal_batch(name: str, size: str, seed: int) -> Tuple[Any, ...]:
    g, n = _gen(seed), count("samples", size)
    if name == "FleissKappa":  # 5 raters over C categories per sample
        return (torch.nn.functional.one_hot(torch.randint(0, C, (n, 5), generator=g), C).sum(1),)
    target = torch.randint(0, C, (n,), generator=g)
    return torch.where(torch.rand(n, generator=g) < 0.6, target, torch.randint(0, C, (n,), generator=g)), target


def _nominal_kwargs(name: str) -> Dict[str, Any]:
    return {"mode": "counts"} if name == "FleissKappa" else {"num_classes": C}


def _nominal_specs(names: List[str]) -> List[Spec]:
    return _plain_specs("nominal", names, _nominal_kwargs, _nominal_batch)


def _points_batch(size: str, seed: int) -> Tuple[Any, ...]:
    g, n = _gen(seed), count("samples", size)
    a = torch.randn(n, 20, 3, generator=g)
    return a + 0.1 * torch.randn(a.shape, generator=g), a


def _vertices_batch(size: str, seed: int) -> Tuple[Any, ...]:
    g, frames = _gen(seed), count("audio", size)
    a = torch.randn(frames, 100, 3, generator=g)
    return a + 0.01 * torch.randn(a.shape, generator=g), a


def _shape_multimodal_specs(shape: List[str], multimodal: List[str]) -> List[Spec]:
    specs = [Spec("shape", n, lambda lib, n=n: getattr(module(lib, "shape"), n)(), _points_batch) for n in shape]
    if "LipVertexError" in multimodal:
        mouth = list(range(0, 100, 5))
        specs.append(
            Spec(
                "multimodal",
                "LipVertexError",
                lambda lib: module(lib, "multimodal").LipVertexError(mouth),
                _vertices_batch,
            )
        )
    return specs


# -- wrappers ----------------------------------------------------------------------------------------


def _wrapper_make(lib: str, name: str) -> Any:
    w, cls, reg = module(lib, "wrappers"), module(lib, "classification"), module(lib, "regression")
    coll = importlib.import_module(lib).MetricCollection
    if name == "BootStrapper":
        return w.BootStrapper(cls.MulticlassAccuracy(num_classes=C), num_bootstraps=10)
    if name == "ClasswiseWrapper":
        return w.ClasswiseWrapper(cls.MulticlassAccuracy(num_classes=C, average=None))
    if name == "MultioutputWrapper":
        return w.MultioutputWrapper(reg.MeanSquaredError(), num_outputs=3)
    if name == "MultitaskWrapper":
        return w.MultitaskWrapper(
            {"a": cls.MulticlassAccuracy(num_classes=C), "b": cls.MulticlassF1Score(num_classes=C)}
        )
    if name == "Running":
        return w.Running(cls.MulticlassAccuracy(num_classes=C), window=5)
    if name == "MinMaxMetric":
        return w.MinMaxMetric(cls.MulticlassAccuracy(num_classes=C))
    if name == "MetricTracker":
        tracker = w.MetricTracker(coll([cls.MulticlassAccuracy(num_classes=C)]))
        tracker.increment()
        return tracker
    if name == "BinaryTargetTransformer":
        return w.BinaryTargetTransformer(cls.BinaryAccuracy(), threshold=0.5)
    if name == "LambdaInputTransformer":
        return w.LambdaInputTransformer(cls.MulticlassAccuracy(num_classes=C), transform_pred=lambda p: p * 2)
    raise KeyError(name)


def _wrapper_batch(name: str, size: str, seed: int) -> Tuple[Any, ...]:
    if name == "MultioutputWrapper":
        g, n = _gen(seed), count("samples", size)
        return torch.randn(n, 3, generator=g), torch.randn(n, 3, generator=g)
    if name == "MultitaskWrapper":
        preds, target = _classification_batch("multiclass", size, seed, False)
        return {"a": preds, "b": preds}, {"a": target, "b": target}
    if name == "BinaryTargetTransformer":
        g, n = _gen(seed), count("classification", size)
        return torch.rand(n, generator=g), torch.rand(n, generator=g)
    return _classification_batch("multiclass", size, seed, False)


def _wrapper_specs(names: List[str]) -> List[Spec]:
    def spec(name: str) -> Spec:
        return Spec(
            "wrappers", name, lambda lib: _wrapper_make(lib, name), lambda size, seed: _wrapper_batch(name, size, seed)
        )

    return [spec(n) for n in names if n not in NOT_SWEPT]


# -- the catalogue -------------------------------------------------------------------------------------

FAMILIES = (
    "aggregation",
    "classification",
    "regression",
    "retrieval",
    "text",
    "image",
    "detection",
    "segmentation",
    "audio",
    "clustering",
    "nominal",
    "shape",
    "multimodal",
    "wrappers",
)


def shared_names(family: str) -> List[str]:
    """The public classes of ``family`` that both libraries export, in torchmetrics' order."""
    theirs = module("torchmetrics", family)
    ours = module("torchtally", family)
    base = importlib.import_module("torchmetrics").Metric
    names = getattr(theirs, "__all__", None) or [n for n in dir(theirs) if n[:1].isupper()]
    return [
        n
        for n in names
        if isinstance(getattr(theirs, n, None), type)
        and issubclass(getattr(theirs, n), base)
        and hasattr(ours, n)
        and n not in ("Metric", "BaseAggregator", "WrapperMetric")
    ]


def all_specs() -> Tuple[List[Spec], Dict[str, str]]:
    """(every spec, {class: why it is not swept}) over the classes both libraries export."""
    names = {f: shared_names(f) for f in FAMILIES}
    skipped = {n: NOT_SWEPT[n] for f in FAMILIES for n in names[f] if n in NOT_SWEPT}
    names = {f: [n for n in ns if n not in NOT_SWEPT] for f, ns in names.items()}
    specs = (
        _aggregation_specs(names["aggregation"])
        + _classification_specs(names["classification"])
        + _regression_specs(names["regression"])
        + _retrieval_specs(names["retrieval"])
        + _text_specs(names["text"])
        + _image_specs(names["image"])
        + _panoptic_specs(names["detection"])
        + _segmentation_specs(names["segmentation"])
        + _audio_specs(names["audio"])
        + _clustering_specs(names["clustering"])
        + _nominal_specs(names["nominal"])
        + _shape_multimodal_specs(names["shape"], names["multimodal"])
        + _wrapper_specs(names["wrappers"])
    )
    return specs, skipped
