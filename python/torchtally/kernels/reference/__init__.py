"""Torch reference of every kernel of the C core (csrc/API.md), in plain torch ops.

Same positional arguments, semantics, checks and error messages as `torchtally._C`. It runs on
any device: it is the fallback where no compiled kernel serves (a CUDA device the CUDA kernels
do not serve, MPS, ...) and the oracle the C core is tested against. Every function validates all of its
arguments before it writes `out` / `state`, so an error leaves them exactly as they were.
"""

from .average_ranks import average_ranks
from .binned import binned_update
from .box_overlap import box_overlap_matrix, box_overlap_sums
from .calibration import calibration_update
from .class_argmax import class_argmax
from .clustering import cluster_distances, cluster_moments, contingency_rows
from .coco_accumulate import coco_accumulate
from .coco_match import coco_match
from .confmat import confmat_labels, confmat_scores, confmat_threshold
from .crps_scores import crps_scores
from .curve_rows import curve_rows
from .eed import eed_sentences
from .error_sums import error_sums
from .exact_curve import exact_curve_finish, exact_curve_points, exact_curve_rates
from .feature_rows import feature_rows
from .kendall_counts import kendall_counts
from .label_counts import label_counts
from .lcs import lcs
from .levenshtein import levenshtein
from .lip_errors import lip_errors
from .mask_counts import mask_counts
from .moments import comoments_merge, comoments_update, moments_merge, moments_update
from .ngram import bleu_update, chrf_update
from .panoptic import panoptic_update
from .perplexity import perplexity_update
from .rank_pairs import rank_pairs
from .ranking import ranking_update
from .rating_sums import rating_sums, rating_update
from .residual_moments import residual_moments
from .retrieval import retrieval_order, retrieval_rows, retrieval_scores
from .signal_sums import signal_sums
from .spectral_angles import spectral_angles
from .squared_error import squared_error
from .ssim_moments import ssim_moments
from .surface_distance import surface_distance
from .ter import ter_sentences
from .threshold_counts import threshold_counts
from .toeplitz_solve import toeplitz_solve
from .topk import topk_update
from .total_variation import total_variation

__all__ = [
    "confmat_labels",
    "confmat_scores",
    "confmat_threshold",
    "binned_update",
    "moments_update",
    "moments_merge",
    "comoments_update",
    "comoments_merge",
    "topk_update",
    "calibration_update",
    "ranking_update",
    "coco_accumulate",
    "coco_match",
    "box_overlap_matrix",
    "box_overlap_sums",
    "panoptic_update",
    "surface_distance",
    "mask_counts",
    "label_counts",
    "class_argmax",
    "levenshtein",
    "bleu_update",
    "chrf_update",
    "lcs",
    "perplexity_update",
    "ter_sentences",
    "eed_sentences",
    "error_sums",
    "residual_moments",
    "threshold_counts",
    "retrieval_scores",
    "retrieval_order",
    "retrieval_rows",
    "average_ranks",
    "rank_pairs",
    "kendall_counts",
    "crps_scores",
    "exact_curve_points",
    "exact_curve_rates",
    "exact_curve_finish",
    "curve_rows",
    "ssim_moments",
    "squared_error",
    "feature_rows",
    "spectral_angles",
    "total_variation",
    "toeplitz_solve",
    "signal_sums",
    "contingency_rows",
    "cluster_moments",
    "cluster_distances",
    "rating_sums",
    "rating_update",
    "lip_errors",
]
