"""Every public metric class and functional form of torchtally, each with a maker of valid
batches: the sweeps over the whole API (tests/catalogue/test_atomic_updates.py and
tests/catalogue/test_fuzz.py) iterate these.

An ``Entry`` names the callable (a metric factory or a functional form), its family (which
fixes the shapes of its inputs) and its update arguments in order. ``entry.batch(n, ...)``
makes one valid batch of ``n`` samples; dtypes and device can be chosen per argument.

The classes are found by walking torchtally's public faces (classification, regression,
aggregation, segmentation, retrieval; the task wrappers, which return one of these classes, are left out), so a metric
added later is swept without editing this file; its family is read from its name (Binary*,
Multiclass*, Multilabel*) or from the table below.
"""

import dataclasses
import functools
import inspect
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

import torchtally as M
import torchtally.detection as D
import torchtally.functional as F
import torchtally.retrieval as RT
import torchtally.segmentation as S
from torchtally import Metric
from torchtally.classification.base import TaskWrapper

NUM = 3  # num_classes / num_labels of every classification entry

# Families of the metrics whose names do not say it: their inputs' shapes.
_NAMED_FAMILIES = {
    "MeanSquaredError": "regression",
    "MeanAbsoluteError": "regression",
    "MeanAbsolutePercentageError": "regression",
    "R2Score": "regression",
    "ExplainedVariance": "regression",
    "PearsonCorrCoef": "regression",
    "CosineSimilarity": "rows",
    "SumMetric": "aggregation",
    "MeanMetric": "aggregation",
    "MaxMetric": "aggregation",
    "MinMetric": "aggregation",
    "CatMetric": "aggregation",
    "RunningMean": "aggregation",
    "AverageLoss": "loss",
    "RunningSum": "aggregation",
    "ConcordanceCorrCoef": "regression",
    "SpearmanCorrCoef": "regression",
    "KendallRankCorrCoef": "regression",
    "ContinuousRankedProbabilityScore": "ensemble",
    "concordance_corrcoef": "regression",
    "spearman_corrcoef": "regression",
    "kendall_rank_corrcoef": "regression",
    "continuous_ranked_probability_score": "ensemble",
    "mean_squared_error": "regression",
    "mean_absolute_error": "regression",
    "mean_absolute_percentage_error": "regression",
    "r2_score": "regression",
    "explained_variance": "regression",
    "pearson_corrcoef": "regression",
    "cosine_similarity": "rows",
    "weighted_mean": "aggregation",
    "weighted_sum": "aggregation",
    "LogCoshError": "regression",
    "MeanSquaredLogError": "nonnegative",
    "MinkowskiDistance": "regression",
    "NormalizedRootMeanSquaredError": "regression",
    "RelativeSquaredError": "regression",
    "SymmetricMeanAbsolutePercentageError": "regression",
    "WeightedMeanAbsolutePercentageError": "regression",
    "TweedieDevianceScore": "regression",
    "CriticalSuccessIndex": "regression",
    "KLDivergence": "distributions",
    "JensenShannonDivergence": "distributions",
    "log_cosh_error": "regression",
    "mean_squared_log_error": "nonnegative",
    "minkowski_distance": "regression",
    "normalized_root_mean_squared_error": "regression",
    "relative_squared_error": "regression",
    "symmetric_mean_absolute_percentage_error": "regression",
    "weighted_mean_absolute_percentage_error": "regression",
    "tweedie_deviance_score": "regression",
    "critical_success_index": "regression",
    "kl_divergence": "distributions",
    "jensen_shannon_divergence": "distributions",
    # binary predictions with a group id per sample (and demographic parity's, which reads no target)
    "BinaryFairness": "groups",
    "BinaryGroupStatRates": "groups",
    "binary_fairness": "groups",
    "binary_groups_stat_rates": "groups",
    "equal_opportunity": "groups",
    "demographic_parity": "groups_no_target",
    # segmentation: one-hot 0/1 masks [N, C, H, W] for preds and target
    "MeanIoU": "segmentation",
    "DiceScore": "segmentation",
    "GeneralizedDiceScore": "segmentation",
    "HausdorffDistance": "segmentation",
    "mean_iou": "segmentation",
    "dice_score": "segmentation",
    "generalized_dice_score": "segmentation",
    "hausdorff_distance": "segmentation",
    # (category, instance) maps [N, H, W, 2]
    "PanopticQuality": "panoptic",
    "ModifiedPanopticQuality": "panoptic",
    "panoptic_quality": "panoptic",
    "modified_panoptic_quality": "panoptic",
}
_ARG_NAMES = {
    "aggregation": ("value",),
    "loss": ("loss",),
    "distributions": ("p", "q"),
    "groups": ("preds", "target", "groups"),
    "groups_no_target": ("preds", "groups"),
    "retrieval": ("preds", "target", "indexes"),
}
NUM_GROUPS = 2  # num_groups of the fairness entries
# Values for the options that have no default.
_REQUIRED = {
    "MinkowskiDistance": (("p", 2.0),),
    "minkowski_distance": (("p", 2.0),),
    "CriticalSuccessIndex": (("threshold", 0.0),),
    "critical_success_index": (("threshold", 0.0),),
    **dict.fromkeys(
        ("PanopticQuality", "ModifiedPanopticQuality", "panoptic_quality", "modified_panoptic_quality"),
        (("things", (0, 1)), ("stuffs", (2,))),
    ),
}


@dataclasses.dataclass(frozen=True)
class Entry:
    name: str
    make: Callable[..., Any]  # metrics: a factory of a fresh metric; functional forms: the function
    # binary | multiclass | multilabel | regression | nonnegative | rows | distributions | ensemble | aggregation
    # | loss | groups | groups_no_target | segmentation | retrieval | image
    family: str
    kwargs: Tuple[Tuple[str, Any], ...] = ()  # constructor / functional keyword arguments
    samplewise: bool = False  # multidim_average="samplewise": one more dim per sample

    @property
    def arg_names(self) -> Tuple[str, ...]:
        return _ARG_NAMES.get(self.family, ("preds", "target"))

    def metric(self) -> Any:
        return self.make(**dict(self.kwargs))

    def call(self, *args: Any) -> Any:
        """The functional form on a batch."""
        return self.make(*args, **dict(self.kwargs))

    def batch(
        self,
        n: int = 6,
        dtypes: Optional[Dict[str, torch.dtype]] = None,
        device: Any = "cpu",
        generator: Optional[torch.Generator] = None,
    ) -> Tuple[torch.Tensor, ...]:
        """A valid batch of ``n`` samples; ``dtypes`` converts the named arguments afterwards
        (e.g. {"target": torch.int8}: still valid; {"preds": torch.float8_e4m3fn}: not)."""
        g = generator
        extra = (4,) if self.samplewise else ()
        if self.family == "binary":
            args = (torch.rand((n,) + extra, generator=g), torch.randint(0, 2, (n,) + extra, generator=g))
        elif self.family == "multiclass":
            args = (torch.rand((n, NUM) + extra, generator=g), torch.randint(0, NUM, (n,) + extra, generator=g))
        elif self.family == "multilabel":
            args = (torch.rand((n, NUM) + extra, generator=g), torch.randint(0, 2, (n, NUM) + extra, generator=g))
        elif self.family == "regression":
            args = (torch.randn(n, generator=g), torch.randn(n, generator=g))
        elif self.family == "nonnegative":  # log(1 + x) metrics
            args = (torch.rand(n, generator=g), torch.rand(n, generator=g))
        elif self.family == "distributions":  # one distribution per row, every entry positive
            args = (torch.rand(n, NUM, generator=g) + 0.1, torch.rand(n, NUM, generator=g) + 0.1)
        elif self.family == "rows":
            args = (torch.randn(n, 2, generator=g), torch.randn(n, 2, generator=g))
        elif self.family == "ensemble":  # [N, M] members per sample, [N] targets
            args = (torch.randn(n, 4, generator=g), torch.randn(n, generator=g))
        elif self.family == "groups":
            args = tuple(torch.randint(0, 2, (n,), generator=g) for _ in range(2))
            args = (torch.rand(n, generator=g),) + args
        elif self.family == "groups_no_target":
            args = (torch.rand(n, generator=g), torch.randint(0, NUM_GROUPS, (n,), generator=g))
        elif self.family == "segmentation":
            args = tuple(torch.randint(0, 2, (n, NUM, 5, 5), generator=g) for _ in range(2))
        elif self.family == "panoptic":  # categories 0, 1 (things), 2 (stuff); instances 0-2
            args = tuple(torch.randint(0, 3, (n, 4, 4, 2), generator=g) for _ in range(2))
        elif self.family == "image":  # [N, 3, 16, 16] images in [0, 1], the target a noisy copy
            target = torch.rand(n, 3, 16, 16, generator=g)
            args = ((target + 0.1 * torch.rand(n, 3, 16, 16, generator=g)).clamp(0, 1), target)
        elif self.family == "loss":
            args = (torch.rand(n, generator=g),)
        elif self.family == "retrieval":  # scores, binary relevances, query ids 0-2
            args = (
                torch.rand(n, generator=g),
                torch.randint(0, 2, (n,), generator=g),
                torch.randint(0, 3, (n,), generator=g),
            )
        else:
            args = (torch.randn(n, generator=g),)
        dtypes = dtypes or {}
        return tuple(a.to(dtypes.get(name, a.dtype)).to(device) for name, a in zip(self.arg_names, args))


def _is_curve(name: str) -> bool:
    if "ranking" in name.lower():  # MultilabelRankingAveragePrecision: a ranking metric, not a curve
        return False
    return any(
        part in name
        for part in (
            "AUROC",
            "AveragePrecision",
            "ROC",
            "PrecisionRecallCurve",
            "auroc",
            "average_precision",
            "_roc",
            "precision_recall_curve",
            # the curves' readouts: the same states
            "EER",
            "LogAUC",
            "AtFixed",
            "SensitivityAt",
            "SpecificityAt",
        )
    )


def _family(name: str) -> Optional[str]:
    if name in _NAMED_FAMILIES:
        return _NAMED_FAMILIES[name]
    for prefix in ("binary", "multiclass", "multilabel"):
        if name.lower().startswith(prefix):
            return prefix
    return _NAMED_FAMILIES.get(name)


def _kwargs_for(fn: Callable[..., Any], name: str = "") -> Tuple[Tuple[str, Any], ...]:
    params = inspect.signature(fn).parameters
    wanted = {"beta": 1.0, "num_classes": NUM, "num_labels": NUM, "num_groups": NUM_GROUPS}
    wanted.update(min_recall=0.5, min_precision=0.5, min_specificity=0.5, min_sensitivity=0.5)  # curve readouts
    return tuple((k, v) for k, v in wanted.items() if k in params) + _REQUIRED.get(name, ())


def metric_entries() -> List[Entry]:
    """Every metric class with its default options, plus the variants whose state differs:
    samplewise counts, top_k > 1, binned curves, CosineSimilarity's rows, R2 with weights off."""
    entries = []
    public = set(M.classification.__all__) | set(M.regression.__all__) | set(M.aggregation.__all__)
    public |= set(S.__all__) | set(RT.__all__)
    # detection: the panoptic maps; the box metrics take lists of dicts, which the sweeps do not draw
    public |= {name for name in D.__all__ if name in _NAMED_FAMILIES}
    for name in sorted(public):
        face = S if name in S.__all__ else D if name in D.__all__ else RT if name in RT.__all__ else M
        cls = getattr(face, name)
        if not (inspect.isclass(cls) and issubclass(cls, Metric)) or issubclass(cls, TaskWrapper):
            continue
        if name == "BaseAggregator":  # a base for the user's own aggregators: no update of its own
            continue
        family = "retrieval" if name in RT.__all__ else _family(name)
        assert family is not None, f"metric_catalogue: no family for {name}: add it to _NAMED_FAMILIES"
        kwargs = _kwargs_for(cls.__init__, name)
        entries.append(Entry(name, cls, family, kwargs))
        if _is_curve(name) and family != "retrieval":
            entries.append(Entry(name + "[binned]", cls, family, kwargs + (("thresholds", 5),)))
    entries += [
        Entry("BinaryAccuracy[samplewise]", M.BinaryAccuracy, "binary", (("multidim_average", "samplewise"),), True),
        Entry(
            "MulticlassRecall[samplewise]",
            M.MulticlassRecall,
            "multiclass",
            (("num_classes", NUM), ("multidim_average", "samplewise")),
            True,
        ),
        Entry(
            "MultilabelPrecision[samplewise]",
            M.MultilabelPrecision,
            "multilabel",
            (("num_labels", NUM), ("multidim_average", "samplewise")),
            True,
        ),
        Entry("MulticlassAccuracy[top_k=2]", M.MulticlassAccuracy, "multiclass", (("num_classes", NUM), ("top_k", 2))),
        Entry("CosineSimilarity[none]", M.CosineSimilarity, "rows", (("reduction", "none"),)),
        Entry(
            "MulticlassHingeLoss[one-vs-all]",
            M.MulticlassHingeLoss,
            "multiclass",
            (("num_classes", NUM), ("multiclass_mode", "one-vs-all")),
        ),
        Entry("KLDivergence[none]", M.KLDivergence, "distributions", (("reduction", "none"),)),
        Entry(
            "CriticalSuccessIndex[sequence]",
            M.CriticalSuccessIndex,
            "regression",
            (("threshold", 0.0), ("keep_sequence_dim", 0)),
        ),
        Entry(
            "NormalizedRootMeanSquaredError[std]",
            M.NormalizedRootMeanSquaredError,
            "regression",
            (("normalization", "std"),),
        ),
        Entry(
            "NormalizedRootMeanSquaredError[range]",
            M.NormalizedRootMeanSquaredError,
            "regression",
            (("normalization", "range"),),
        ),
    ]
    return entries + image_entries()


def image_entries() -> List[Entry]:
    """The image metrics that compare two [N, C, H, W] batches pixel by pixel or by windows
    (the generative and pansharpening ones take other inputs; their own tests cover them)."""
    import torchtally.image as I

    window = (("window_size", 5),)
    return [
        Entry("PeakSignalNoiseRatio", I.PeakSignalNoiseRatio, "image", (("data_range", 1.0),)),
        Entry("PeakSignalNoiseRatio[None]", I.PeakSignalNoiseRatio, "image", (("data_range", None),)),
        Entry("StructuralSimilarityIndexMeasure", I.StructuralSimilarityIndexMeasure, "image", (("kernel_size", 5),)),
        Entry(
            "StructuralSimilarityIndexMeasure[none]",
            I.StructuralSimilarityIndexMeasure,
            "image",
            (("kernel_size", 5), ("reduction", "none")),
        ),
        Entry("UniversalImageQualityIndex", I.UniversalImageQualityIndex, "image", (("kernel_size", (5, 5)),)),
        Entry("SpectralAngleMapper", I.SpectralAngleMapper, "image"),
        Entry("ErrorRelativeGlobalDimensionlessSynthesis", I.ErrorRelativeGlobalDimensionlessSynthesis, "image"),
        Entry("RelativeAverageSpectralError", I.RelativeAverageSpectralError, "image", window),
        Entry("RootMeanSquaredErrorUsingSlidingWindow", I.RootMeanSquaredErrorUsingSlidingWindow, "image", window),
        Entry("SpatialCorrelationCoefficient", I.SpatialCorrelationCoefficient, "image", window),
    ]


def functional_entries() -> List[Entry]:
    """Every functional form of a task (the task= wrappers call these)."""
    entries = []
    for name in sorted(dir(F)):
        fn = getattr(F, name)
        if name.startswith("_") or not inspect.isfunction(fn):
            continue
        family = _family(name)
        if family is None:  # a task wrapper (accuracy(task=...)): it calls one of the others
            continue
        entries.append(Entry(name, fn, family, _kwargs_for(fn, name)))
    return entries


METRICS = metric_entries()
FUNCTIONALS = functional_entries()


def entry_id(entry: Entry) -> str:
    return entry.name


@functools.cache
def by_name(name: str) -> Entry:
    return next(e for e in METRICS + FUNCTIONALS if e.name == name)
