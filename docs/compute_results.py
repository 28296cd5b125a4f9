"""What ``compute`` returns, for every metric page: type, shape, dtype, the keys of a dict result
and what ``reduction`` / ``average`` / ``num_outputs`` change. Read by docs/metric_facts.py.

A class's own entry (by name, or by its stem: the name without Binary / Multiclass / Multilabel)
wins; otherwise its family's (the package it lives in). "float32" is the metric's dtype, which
``set_dtype`` (or ``.double()``) changes; the accumulators themselves are int64 / float64.
"""

from typing import Dict

_PER_CLASS = (
    "a float32 tensor: a scalar for binary and averaged results, [C] / [L] per class or label "
    '(``average=None`` or ``"none"``), one value per sample with ``multidim_average="samplewise"``'
)
_SCALAR = "a float32 scalar tensor"
_PER_OUTPUT = f"{_SCALAR}; [num_outputs], one value per output column, with ``num_outputs`` > 1"
_PER_IMAGE = (
    f'{_SCALAR}: the mean over the images seen (``reduction="elementwise_mean"``) or their sum ("sum"); '
    '``"none"`` or None: one value per image, [N] in update order (rank order across ranks)'
)
_MEAN_DB = f"{_SCALAR}: the mean over every signal (or mixture) seen, in dB"
_QUERIES = (
    f"{_SCALAR}: the per-query values combined by ``aggregation`` (mean by default; median, min, max or a "
    "callable); a query without a relevant document scores as ``empty_target_action`` says"
)
_IOU_DICT = (
    'a dict: ``"{key}"``, the mean over every matched box pair (float32 scalar); with ``class_metrics`` also '
    '``"{key}/cl_<label>"`` per class'
)

RETURNS: Dict[str, str] = {
    # ---- classification (stems and task wrappers: a wrapper returns what its task's class returns) ----
    "CohenKappa": _SCALAR,
    "MatthewsCorrCoef": _SCALAR,
    "CalibrationError": f"{_SCALAR}: the calibration error over all bins (``norm`` picks l1, l2 or max)",
    "ExactMatch": f'{_SCALAR}; [N], one per sample, with ``multidim_average="samplewise"``',
    "HingeLoss": f'{_SCALAR}; [C], one per class, for multiclass with ``multiclass_mode="one-vs-all"``',
    "LogAUC": f"{_PER_CLASS} (the log-scaled AUC over ``fpr_range``)",
    "Fairness": 'a dict of float32 scalars: ``"DP_<min group>_<max group>"`` (demographic parity ratio) '
    'and / or ``"EO_<min group>_<max group>"`` (equal opportunity ratio), as ``task`` asks',
    "GroupStatRates": 'a dict: ``"group_<g>"`` -> a float32 [4] tensor of the group\'s tp, fp, tn, fn rates',
    # ---- regression ----
    "MeanSquaredError": f"{_PER_OUTPUT}; ``squared=False``: the root of each (RMSE)",
    "CosineSimilarity": f'{_SCALAR} with ``reduction="mean"`` or "sum" over the rows; "none" or None: [N], '
    "one value per row in update order (rank order across ranks)",
    "KLDivergence": f'{_SCALAR} with ``reduction="mean"`` or "sum" over the samples; "none" or None: [N], one '
    "value per sample",
    "JensenShannonDivergence": f'{_SCALAR} with ``reduction="mean"`` or "sum" over the samples; "none" or None: '
    "[N], one value per sample",
    "R2Score": f'{_SCALAR} (outputs combined as ``multioutput`` says); ``multioutput="raw_values"``: '
    "[num_outputs]; ``adjusted`` > 0 gives the adjusted R2",
    "ExplainedVariance": f'{_SCALAR} (outputs combined as ``multioutput`` says); ``multioutput="raw_values"``: '
    "[num_outputs]",
    "KendallRankCorrCoef": f"{_PER_OUTPUT}; with ``t_test=True`` a tuple (tau, p-value) of such tensors",
    "SpearmanCorrCoef": _PER_OUTPUT,
    "PearsonCorrCoef": _PER_OUTPUT,
    "ConcordanceCorrCoef": _PER_OUTPUT,
    "MeanAbsolutePercentageError": f"{_SCALAR} over every element seen",
    "SymmetricMeanAbsolutePercentageError": f"{_SCALAR} over every element seen",
    "WeightedMeanAbsolutePercentageError": f"{_SCALAR} over every element seen",
    "MeanSquaredLogError": f"{_SCALAR} over every element seen",
    "MinkowskiDistance": f"{_SCALAR} over every element seen",
    "TweedieDevianceScore": f"{_SCALAR}: the mean deviance over every element seen",
    "ContinuousRankedProbabilityScore": f"{_SCALAR}: the mean over every sample seen",
    "CriticalSuccessIndex": f"{_SCALAR}; with ``keep_sequence_dim=k`` one value per index of dim k ([K])",
    "FleissKappa": f"{_SCALAR}: the raters' agreement beyond chance over every sample seen",
    # ---- aggregation ----
    "CatMetric": "a float32 1-D tensor of every value seen, in update order (rank order across ranks); "
    "an empty list before any value",
    "BaseAggregator": "the state as its ``fn`` left it, in the metric's dtype",
    "MaxMetric": f"{_SCALAR}: the largest value seen",
    "MinMetric": f"{_SCALAR}: the smallest value seen",
    "SumMetric": f"{_SCALAR}: the sum of every value seen",
    "MeanMetric": f"{_SCALAR}: the weighted mean of every value seen",
    "RunningMean": f"{_SCALAR}: the mean of the values of the last ``window`` updates",
    "RunningSum": f"{_SCALAR}: the sum of the values of the last ``window`` updates",
    "AverageLoss": f"{_SCALAR}: the loss averaged over every sample seen",
    # ---- wrappers ----
    "BinaryTargetTransformer": "what the wrapped metric's compute returns",
    "LambdaInputTransformer": "what the wrapped metric's compute returns",
    "MetricInputTransformer": "what the wrapped metric's compute returns",
    "BootStrapper": 'a dict of float32 tensors: ``"mean"``, ``"std"`` (as asked by ``mean`` / ``std``), '
    '``"quantile"`` (with ``quantile``) and ``"raw"`` (every copy\'s value, [num_bootstraps, ...], with ``raw``)',
    "ClasswiseWrapper": 'a dict ``{"<prefix><label><postfix>": float32 scalar}``, one entry per class '
    "(the wrapped metric's result split along dim 0)",
    "FeatureShare": "a dict ``{name: result}``: each member metric's own result",
    "MetricTracker": "the latest step's result (a tensor, or a dict for a MetricCollection); ``compute_all()`` "
    "stacks every step's ([steps, ...]), ``best_metric()`` gives the best value (and its step)",
    "MinMaxMetric": 'a dict of float32 scalars: ``"raw"`` (the wrapped value), ``"max"`` and ``"min"`` '
    "(the extremes over every value computed so far)",
    "MultioutputWrapper": "the copies' results stacked along a new dim 0: [num_outputs, ...] float32",
    "MultitaskWrapper": "a dict ``{\"<prefix><task><postfix>\": result}``: each task metric's (or collection's) "
    "own result",
    "Running": "what the wrapped metric returns, over its last ``window`` updates only",
    # ---- segmentation ----
    "MeanIoU": f"{_SCALAR}: the mean over classes (and images); [C] with ``per_class=True``",
    "DiceScore": f'{_SCALAR} for ``average="micro"``, "macro" or "weighted"; [C] with "none" or None',
    "GeneralizedDiceScore": f"{_SCALAR}: the mean over samples; [C] with ``per_class=True``",
    "HausdorffDistance": f"{_SCALAR}: the mean over images and classes, in pixels (times ``spacing``)",
    # ---- detection ----
    "IntersectionOverUnion": _IOU_DICT.format(key="iou"),
    "GeneralizedIntersectionOverUnion": _IOU_DICT.format(key="giou"),
    "DistanceIntersectionOverUnion": _IOU_DICT.format(key="diou"),
    "CompleteIntersectionOverUnion": _IOU_DICT.format(key="ciou"),
    "MeanAveragePrecision": 'a dict of float32 tensors: ``"map"``, ``"map_50"``, ``"map_75"``, '
    '``"map_small"`` / ``"_medium"`` / ``"_large"``, ``"mar_<m>"`` per ``max_detection_thresholds`` and '
    '``"mar_small"`` / ``"_medium"`` / ``"_large"`` (scalars; -1 where nothing counts), '
    '``"map_per_class"`` / ``"mar_<m>_per_class"`` ([classes] with ``class_metrics``, else -1) and '
    '``"classes"`` (int32 labels); with ``iou_type`` a tuple, each key prefixed ``bbox_`` / ``segm_``',
    "PanopticQuality": "a float64 scalar tensor (PQ, as torchmetrics); ``return_sq_and_rq``: [3] (PQ, SQ, RQ); "
    "``return_per_class``: [1, C] per category (things by id, then stuffs); both: [C, 3]",
    "ModifiedPanopticQuality": "a float64 scalar tensor (the modified PQ); ``return_sq_and_rq`` / "
    "``return_per_class`` as PanopticQuality",
    # ---- retrieval ----
    "RetrievalPrecisionRecallCurve": "a tuple of three [max_k] tensors: precision@k and recall@k (float32, "
    "aggregated over queries) and k (int64, 1 .. max_k)",
    "RetrievalRecallAtFixedPrecision": "a tuple (recall, k): the largest recall@k whose precision@k reaches "
    "``min_precision`` (float32 scalar) and that k (int64 scalar); (0, max_k) where none does",
    # ---- text ----
    "BERTScore": 'a dict: ``"precision"``, ``"recall"``, ``"f1"``, each a float32 [N] tensor (one value per '
    "prediction, update order, rank order across ranks; [layers, N] with ``all_layers``); ``return_hash`` "
    'adds ``"hash"`` (a str)',
    "InfoLM": f"{_SCALAR}: the mean over sentences; with ``return_sentence_level_score`` a tuple (mean, [N])",
    "CHRFScore": f"{_SCALAR} (corpus chrF); with ``return_sentence_level_score`` a tuple (score, [N])",
    "ExtendedEditDistance": f"{_SCALAR} (mean EED); with ``return_sentence_level_score`` a tuple (mean, [N])",
    "TranslationEditRate": f"{_SCALAR} (corpus TER); with ``return_sentence_level_score`` a tuple (ter, [N])",
    "EditDistance": '``reduction="mean"``: a float32 scalar (the mean distance per pair); "sum": an int64 '
    'scalar; None or "none": an int32 [N] tensor, one distance per pair in update order',
    "ROUGEScore": 'a dict of float32 scalars: ``"<key>_fmeasure"``, ``"<key>_precision"`` and '
    '``"<key>_recall"`` for every key of ``rouge_keys`` (rouge1 .. rougeLsum), means over the predictions',
    "SQuAD": 'a dict of float32 scalars in percent: ``"exact_match"`` and ``"f1"``',
    "Perplexity": f"{_SCALAR}: exp of the mean negative log-likelihood of every token not ``ignore_index``",
    # ---- image ----
    "FrechetInceptionDistance": f"{_SCALAR}: the distance between the real and fake feature distributions",
    "MemorizationInformedFrechetInceptionDistance": f"{_SCALAR}: FID divided by the memorization penalty (the "
    "mean smallest cosine distance of a real image to a generated one, when below ``cosine_distance_eps``)",
    "KernelInceptionDistance": "a tuple (mean, std) of float32 scalars: the squared MMD over "
    "``subsets`` random subsets of ``subset_size`` (population std)",
    "InceptionScore": "a tuple (mean, std) of float32 scalars over the ``splits`` chunks (sample std)",
    "PerceptualPathLength": "a tuple (mean, std, distances): float32 scalars and the [M] distances kept "
    "after the ``lower_discard`` / ``upper_discard`` quantiles",
    "StructuralSimilarityIndexMeasure": f"{_PER_IMAGE}; ``return_full_image``: a tuple (scores, SSIM maps); "
    "``return_contrast_sensitivity``: a tuple (scores, contrast sensitivity [N])",
    "SpectralAngleMapper": f'{_SCALAR}: the mean ("elementwise_mean") or sum of the per-pixel angles (radians); '
    '"none" or None: [N, H, W], every pixel\'s angle',
    "PeakSignalNoiseRatio": f"{_SCALAR} in dB over every value seen; with ``dim`` one PSNR per slice, reduced "
    'by ``reduction`` ("elementwise_mean", "sum", or "none" / None: [N])',
    "PeakSignalNoiseRatioWithBlockedEffect": f"{_SCALAR} in dB",
    "RelativeAverageSpectralError": "a scalar tensor in the inputs' dtype (over every image seen)",
    "ErrorRelativeGlobalDimensionlessSynthesis": f"{_PER_IMAGE} (in the inputs' dtype)",
    "RootMeanSquaredErrorUsingSlidingWindow": f"{_SCALAR}: the mean over images",
    "SpatialCorrelationCoefficient": f"{_SCALAR}: the mean over images",
    "TotalVariation": f'{_SCALAR}: the sum ("sum", default) or mean ("mean") over every image seen; "none" or '
    "None: [N], one per image in the images' dtype (int64 for integer images)",
    "LearnedPerceptualImagePatchSimilarity": f'{_SCALAR}: the mean ("mean") or sum ("sum") of the per-pair '
    'distances; "none" or None: [N], every pair\'s distance in update order',
    "DeepImageStructureAndTextureSimilarity": f'{_SCALAR}: the mean ("mean") or sum ("sum") of the per-pair scores',
    # ---- multimodal, audio, video ----
    "CLIPScore": f"{_SCALAR}: the mean over pairs of 100 x cosine similarity, clipped at 0",
    "CLIPImageQualityAssessment": "one prompt: a float32 [N] tensor, every image's probability (update order, "
    "squeezed); several: a dict of them by prompt name",
    "LipVertexError": f"{_SCALAR}: the mean over frames of each frame's largest squared lip-vertex distance; "
    "NaN before any frame",
    "DeepNoiseSuppressionMeanOpinionScore": "a float32 [4] tensor: the mean P.808 MOS, SIG, BAK and OVRL "
    "over every utterance scored",
    "NonIntrusiveSpeechQualityAssessment": "a float32 [5] tensor: the mean MOS, noisiness, discontinuity, "
    "coloration and loudness over every utterance scored",
    "PerceptualEvaluationSpeechQuality": f"{_SCALAR}: the mean PESQ over the utterances scored (one that cannot "
    "be scored is counted and left out, with a warning)",
    "ShortTimeObjectiveIntelligibility": f"{_SCALAR}: the mean STOI over the utterances scored",
    "SpeechReverberationModulationEnergyRatio": f"{_SCALAR}: the mean SRMR over the utterances scored",
    "PermutationInvariantTraining": f"{_SCALAR}: the mean over mixtures of the best permutation's score",
    "VideoMultiMethodAssessmentFusion": "a float32 [videos, frames] tensor of per-frame VMAF; with ``features`` "
    'a dict of such tensors: ``"vmaf"`` and the 11 elementary features',
}

# the default of each family (the package a class lives in)
FAMILY: Dict[str, str] = {
    "regression": _PER_OUTPUT,
    "retrieval": _QUERIES,
    "image": _PER_IMAGE,
    "nominal": f"{_SCALAR}: the association of the two variables over every sample seen",
    "clustering": f"{_SCALAR} over every sample seen",
    "text": f"{_SCALAR} over the whole corpus seen (not a mean of per-batch values)",
    "audio": _MEAN_DB,
    "shape": f'{_SCALAR}: the mean (``reduction="mean"``) or sum ("sum") over the pairs seen',
    "segmentation": _SCALAR,
}


def _stem(name: str) -> str:
    for prefix in ("Binary", "Multiclass", "Multilabel"):
        if name.startswith(prefix) and len(name) > len(prefix):
            return name[len(prefix) :]
    return name


def _classification(name: str) -> str:
    if name.endswith(("ROC", "PrecisionRecallCurve")):
        return (
            "a tuple of curves (x, y, thresholds) as float32 tensors; per class or label a list (exact) "
            "or a stacked tensor (binned)"
        )
    if name.endswith("ConfusionMatrix"):
        return "the int64 confusion matrix ([2, 2], [C, C] or [L, 2, 2]); float32 when normalized"
    if name.endswith("StatScores"):
        return "int64 counts [tp, fp, tn, fn, support] (per class or label unless averaged)"
    if name.endswith(("AtFixedRecall", "AtFixedPrecision", "AtSpecificity", "AtSensitivity")):
        return "a tuple (value, threshold) of float32 tensors, per class or label unless averaged"
    return _PER_CLASS


def returns(name: str, module: str) -> str:
    """What compute returns for the class ``name`` of the module ``module``; never "" for a metric
    of torchtally's faces (tests/test_docs_catalogue.py holds that)."""
    for key in (name, _stem(name)):
        if key in RETURNS:
            text = RETURNS[key]
            break
    else:
        family = module.split(".")[1] if module.count(".") else ""  # torchtally.<family>[.<file>]
        text = _classification(name) if family == "classification" else FAMILY.get(family, "")
    return text
