/*
 * kernel_table.h: every CUDA kernel, by the C name it has in the device module (extern "C", so
 * NVRTC's and nvcc's builds name it alike). The host looks each one up once per device when the
 * module is loaded (kernels.c) and launches it by its id here; `python -m torchtally.cuda compile`
 * checks that a compiled module holds exactly these names.
 *
 * Kernels that come in one variant per score dtype are listed f16, bf16, f32, f64, the order of
 * tt_dtype from TT_F16, so that the variant of a dtype is the f16 id + tt_score_index(dtype).
 */
#ifndef TT_CUDA_KERNEL_TABLE_H
#define TT_CUDA_KERNEL_TABLE_H

#define TT_PER_SCORE_DTYPE(X, ID, name)                                                            \
    X(ID##_F16, name##_f16)                                                                        \
    X(ID##_BF16, name##_bf16) X(ID##_F32, name##_f32) X(ID##_F64, name##_f64)

#define TT_KERNEL_TABLE(X)                                                                         \
    X(CONFMAT_LABELS_SHARED, tt_confmat_labels_shared)                                             \
    X(CONFMAT_LABELS_GLOBAL, tt_confmat_labels_global)                                             \
    TT_PER_SCORE_DTYPE(X, CONFMAT_SCORES_THREAD_SHARED, tt_confmat_scores_thread_shared)           \
    TT_PER_SCORE_DTYPE(X, CONFMAT_SCORES_THREAD_GLOBAL, tt_confmat_scores_thread_global)           \
    TT_PER_SCORE_DTYPE(X, CONFMAT_SCORES_WARP_SHARED, tt_confmat_scores_warp_shared)               \
    TT_PER_SCORE_DTYPE(X, CONFMAT_SCORES_WARP_GLOBAL, tt_confmat_scores_warp_global)               \
    X(CONFMAT_THRESHOLD_SHARED, tt_confmat_threshold_shared)                                       \
    X(CONFMAT_THRESHOLD_GLOBAL, tt_confmat_threshold_global)                                       \
    X(THRESHOLD_PICK, tt_threshold_pick)                                                           \
    X(BINNED_SHARED_HIST_SHARED_THR, tt_binned_shared_hist_shared_thr)                             \
    X(BINNED_SHARED_HIST_GLOBAL_THR, tt_binned_shared_hist_global_thr)                             \
    X(BINNED_GLOBAL_HIST_SHARED_THR, tt_binned_global_hist_shared_thr)                             \
    X(BINNED_GLOBAL_HIST_GLOBAL_THR, tt_binned_global_hist_global_thr)                             \
    X(THRESHOLDS_CHECK, tt_thresholds_check)                                                       \
    TT_PER_SCORE_DTYPE(X, TOPK_SHARED, tt_topk_shared)                                             \
    TT_PER_SCORE_DTYPE(X, TOPK_GLOBAL, tt_topk_global)                                             \
    X(MOMENTS_PARTIAL, tt_moments_partial)                                                         \
    X(COMOMENTS_PARTIAL, tt_comoments_partial)                                                     \
    X(MOMENTS_FINALIZE, tt_moments_finalize)                                                       \
    X(COMOMENTS_FINALIZE, tt_comoments_finalize)                                                   \
    X(MOMENTS_MERGE, tt_moments_merge)                                                             \
    X(COMOMENTS_MERGE, tt_comoments_merge)                                                         \
    X(LABEL_COUNTS_SHARED, tt_label_counts_shared)                                                 \
    X(LABEL_COUNTS_GLOBAL, tt_label_counts_global)                                                 \
    X(MASK_COUNTS, tt_mask_counts)                                                                 \
    X(CLASS_ARGMAX, tt_class_argmax)                                                               \
    X(LATCH, tt_latch)

#define TT_KERNEL_ID(id, name) TT_K_##id,
typedef enum { TT_KERNEL_TABLE(TT_KERNEL_ID) TT_N_KERNELS } tt_kernel_id;
#undef TT_KERNEL_ID

#endif /* TT_CUDA_KERNEL_TABLE_H */
