/*
 * host_kernels.c: a thunk per method of TT_CPU_KERNELS (host_kernels.h): the kernel called with
 * the parsed arguments.
 */
#include "cpu/host_kernels.h"

#include "kernels/average_ranks.h"
#include "kernels/binned_finish.h"
#include "kernels/box_overlap.h"
#include "kernels/calibration.h"
#include "kernels/class_argmax.h"
#include "kernels/cluster_moments.h"
#include "kernels/coco_accumulate.h"
#include "kernels/coco_match.h"
#include "kernels/crps_scores.h"
#include "kernels/curve_rows.h"
#include "kernels/contingency.h"
#include "kernels/eed.h"
#include "kernels/error_sums.h"
#include "kernels/exact_curve.h"
#include "kernels/feature_rows.h"
#include "kernels/finish.h"
#include "kernels/kendall_counts.h"
#include "kernels/label_counts.h"
#include "kernels/levenshtein.h"
#include "kernels/lip_errors.h"
#include "kernels/mask_counts.h"
#include "kernels/panoptic.h"
#include "kernels/ngram.h"
#include "kernels/lcs.h"
#include "kernels/perplexity.h"
#include "kernels/rank_pairs.h"
#include "kernels/ranking.h"
#include "kernels/rating_sums.h"
#include "kernels/residual_moments.h"
#include "kernels/retrieval.h"
#include "kernels/signal_sums.h"
#include "kernels/spectral_angles.h"
#include "kernels/squared_error.h"
#include "kernels/ssim_moments.h"
#include "kernels/surface_distance.h"
#include "kernels/ter.h"
#include "kernels/threshold_counts.h"
#include "kernels/toeplitz_solve.h"
#include "kernels/total_variation.h"

/* ---- CPU-only methods ----------------------------------------------------------------------- */

/* stat_finish and binned_finish read a small state that compute() already holds on the host:
 * torchtally's Python layer calls them for CPU states only (a CUDA state is finished by torch on
 * the device). */
tt_status run_stat_finish(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_stat_finish(a->tensor[0], a->tensor[1], a->tensor[2], a->ints[3], err);
}

tt_status run_binned_finish(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_binned_finish(a->tensor[0], a->tensor[1], a->ints[2], err);
}

/* exact_curve_points, exact_curve_rates and exact_curve_finish sort an exact curve state at
 * compute, on the host: other devices take the torch reference (kernels.curves). */
tt_status run_exact_curve_points(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_exact_curve_points(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->ints[4],
                                 a->ints[5], err);
}

tt_status run_exact_curve_rates(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_exact_curve_rates(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->ints[4],
                                a->ints[5], err);
}

tt_status run_exact_curve_finish(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_exact_curve_finish(a->tensor[0], a->tensor[1], a->tensor[2], a->ints[3], a->ints[4],
                                 a->floats[5], err);
}

/* curve_rows serves CPU batches; other devices take the update's torch path (kernels.curves). */
tt_status run_curve_rows(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_curve_rows(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                         a->ints[5], a->opt_int[6], (int)a->ints[7], err);
}

/* calibration_update and ranking_update have no CUDA build: torchtally.kernels sends every other
 * device's tensors to the torch reference. */
tt_status run_calibration_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_calibration_update(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3],
                                 a->tensor[4], err);
}

tt_status run_ranking_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_ranking_update(a->tensor[0], a->tensor[1], a->tensor[2], err);
}

/* coco_accumulate runs at compute on the host: MeanAveragePrecision hands it CPU rows. */
tt_status run_coco_accumulate(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_coco_accumulate(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                              a->tensor[5], a->tensor[6], err);
}

/* coco_match has no CUDA build either: MeanAveragePrecision's update prepares its inputs on the
 * host. */
tt_status run_coco_match(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_coco_match(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                         a->tensor[5], err);
}

/* box_overlap_matrix and box_overlap_sums have no CUDA build either. */
tt_status run_box_overlap_matrix(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_box_overlap_matrix(a->tensor[0], a->tensor[1], a->tensor[2], a->ints[3], err);
}

tt_status run_box_overlap_sums(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_box_overlap_sums(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                               a->tensor[5], a->ints[6], a->opt_float[7], err);
}

/* panoptic_update has no CUDA build either (its matching is a hash walk per image). */
tt_status run_panoptic_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_panoptic_update(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                              a->tensor[5], a->tensor[6], (int)a->ints[7], err);
}

/* surface_distance and the segmentation counts (mask_counts, class_argmax, label_counts) have no
 * CUDA build either: other devices take the torch reference. */
tt_status run_surface_distance(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_surface_distance(a->tensor[0], a->tensor[1], a->tensor[2], a->ints[3], a->floats[4],
                               a->floats[5], (int)a->ints[6], err);
}

tt_status run_mask_counts(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_mask_counts(a->tensor[0], a->tensor[1], a->tensor[2], err);
}

tt_status run_class_argmax(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_class_argmax(a->tensor[0], a->tensor[1], err);
}

tt_status run_label_counts(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_label_counts(a->tensor[0], a->tensor[1], a->tensor[2], a->ints[3], err);
}

/* levenshtein has no CUDA build either: its inputs are token ids made on the host. */
tt_status run_levenshtein(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_levenshtein(a->tensor[0], a->tensor[1], a->tensor[2], a->ints[3], err);
}

/* bleu_update and chrf_update have no CUDA build: their inputs are token ids made on the host. */
tt_status run_bleu_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_bleu_update(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], err);
}

tt_status run_chrf_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_chrf_update(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                          a->ints[5], a->floats[6], err);
}

/* lcs and perplexity_update (the text metrics) have no CUDA build either. */
tt_status run_lcs(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_lcs(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4], err);
}

tt_status run_perplexity_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_perplexity_update(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3],
                                a->opt_int[4], err);
}

/* ssim_moments (the image metrics) has no CUDA build either. */
tt_status run_ssim_moments(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_ssim_moments(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                           a->ints[5], a->ints[6], err);
}

/* squared_error (PeakSignalNoiseRatio) has no CUDA build either. */
tt_status run_squared_error(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_squared_error(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], err);
}

/* feature_rows (the generative-image metrics' feature states) has no CUDA build either. */
tt_status run_feature_rows(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_feature_rows(a->tensor[0], a->tensor[1], err);
}

/* signal_sums (the audio signal metrics) has no CUDA build either. */
tt_status run_signal_sums(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_signal_sums(a->tensor[0], a->tensor[1], a->tensor[2], (int)a->ints[3], a->ints[4],
                          a->floats[5], err);
}

/* contingency_rows, cluster_moments and cluster_distances (the clustering metrics) have no CUDA
 * build either. */
tt_status run_contingency_rows(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_contingency_rows(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                               err);
}

tt_status run_cluster_moments(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_cluster_moments(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                              err);
}

tt_status run_cluster_distances(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_cluster_distances(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3],
                                a->tensor[4], a->floats[5], err);
}

/* error_sums (the regression error metrics) has no CUDA build: other devices take the torch
 * path, whose checks can stay on the device. */
tt_status run_error_sums(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_error_sums(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                         a->ints[5], a->floats[6], err);
}

/* residual_moments (R2Score, ExplainedVariance) and threshold_counts (CriticalSuccessIndex) have
 * no CUDA build either: other devices take the metrics' torch paths. */
tt_status run_residual_moments(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_residual_moments(a->tensor[0], a->tensor[1], a->tensor[2], err);
}

tt_status run_threshold_counts(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_threshold_counts(a->tensor[0], a->tensor[1], a->tensor[2], a->floats[3], err);
}

/* rating_sums and rating_update (FleissKappa) have no CUDA build either. */
tt_status run_rating_sums(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_rating_sums(a->tensor[0], a->tensor[1], err);
}

/* spectral_angles (SpectralAngleMapper) and total_variation (TotalVariation) have no CUDA build:
 * other devices take their torch references. */
tt_status run_spectral_angles(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_spectral_angles(a->tensor[0], a->tensor[1], a->tensor[2], err);
}

tt_status run_total_variation(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_total_variation(a->tensor[0], a->tensor[1], err);
}

/* toeplitz_solve (SignalDistortionRatio) has no CUDA build: other devices take its reference. */
tt_status run_toeplitz_solve(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_toeplitz_solve(a->tensor[0], a->tensor[1], a->tensor[2], err);
}

tt_status run_rating_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_rating_update(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], err);
}

/* lip_errors (LipVertexError) has no CUDA build either. */
tt_status run_lip_errors(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_lip_errors(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], err);
}

/* ter_sentences and eed_sentences run on the host only: the text metrics pack their token ids
 * on the CPU. */
tt_status run_ter_sentences(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_ter_sentences(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                            a->tensor[5], err);
}

tt_status run_eed_sentences(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_eed_sentences(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                            a->tensor[5], a->tensor[6], err);
}

/* retrieval_scores runs at compute, on the host: the retrieval metrics hand it CPU rows. */
tt_status run_retrieval_scores(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_retrieval_scores(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->ints[4],
                               a->ints[5], (int)a->ints[6], err);
}

tt_status run_retrieval_order(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_retrieval_order(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                              a->tensor[5], err);
}

/* average_ranks (SpearmanCorrCoef's compute) has no CUDA build: other devices take its reference. */
tt_status run_average_ranks(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_average_ranks(a->tensor[0], a->tensor[1], err);
}

/* crps_scores (ContinuousRankedProbabilityScore's update) has no CUDA build either. */
tt_status run_crps_scores(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_crps_scores(a->tensor[0], a->tensor[1], a->tensor[2], err);
}

/* kendall_counts (KendallRankCorrCoef's compute) has no CUDA build either. */
tt_status run_kendall_counts(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_kendall_counts(a->tensor[0], a->tensor[1], err);
}

/* rank_pairs (SpearmanCorrCoef's and KendallRankCorrCoef's update) has no CUDA build either. */
tt_status run_rank_pairs(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_rank_pairs(a->tensor[0], a->tensor[1], a->tensor[2], err);
}

/* retrieval_rows is every retrieval update's one call on the host (CUDA: the torch reference). */
tt_status run_retrieval_rows(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_retrieval_rows(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->tensor[4],
                             a->tensor[5], err);
}
