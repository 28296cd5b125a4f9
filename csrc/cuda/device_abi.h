/*
 * device_abi.h: what the host C code and the CUDA kernels must agree on, byte for byte. The
 * kernels are compiled apart from the host code (by NVRTC at first use, or by nvcc into
 * prebuilt cubins) and launched through the driver with pointers to these structs, so this
 * header is the whole interface: the error record and report, the compact tensor view, and each
 * kernel's argument struct. Plain C with fixed-size types, read by the host compiler, NVRTC and
 * nvcc alike (under NVRTC the integer types come from the device prelude).
 */
#ifndef TT_CUDA_DEVICE_ABI_H
#define TT_CUDA_DEVICE_ABI_H

#ifndef __CUDACC_RTC__
#include <stdint.h>
#endif

#include "core/dtype.h"

#define TT_THREADS 256
/* Dynamic shared memory a kernel may take without an opt-in, on every supported arch. */
#define TT_SHARED_BYTES 49152 /* 48 KiB */

/* The per-call error record in device memory: `key` for the inputs, `thr_key` for the
 * thresholds of binned_update. TT_CUDA_CLEAR means no error. */
typedef struct {
    unsigned long long key;
    unsigned long long thr_key;
} tt_cuda_record;

#define TT_CUDA_CLEAR 0xFFFFFFFFFFFFFFFFull
#define TT_CUDA_KEY(pos, code) (((unsigned long long)(pos) << 3) | (unsigned long long)(code))
#define TT_CUDA_KEY_POS(key) ((int64_t)((key) >> 3))
#define TT_CUDA_KEY_CODE(key) ((int)((key) & 7u))

/* Codes, in the order the CPU core checks one position. `pos` is the sample (row) for the
 * per-sample kernels (confmat_labels, confmat_scores, topk) and row * columns + column for the
 * elementwise ones (confmat_threshold, binned, moments). */
enum {
    TT_CODE_NAN = 0,    /* NaN in preds / x */
    TT_CODE_NAN_Y = 1,  /* NaN in y */
    TT_CODE_WEIGHT = 2, /* weight < 0, inf or NaN */
    TT_CODE_TARGET = 3, /* target label out of range */
    TT_CODE_PREDS = 4,  /* preds label out of range */
};
enum { TT_THR_NAN = 0, TT_THR_ORDER = 1 }; /* thresholds: NaN, decreasing */

/* What the latch kernel leaves in host memory for one call: the record, and the rejected
 * element (read where the record points, before the caller may reuse the input). */
typedef struct {
    unsigned long long key, thr_key; /* the record; TT_CUDA_CLEAR when clean */
    long long label;                 /* the rejected element read as a label (integer dtypes) */
    double value;                    /* ... read as a number (weights) */
    double thr_here, thr_before;     /* thresholds[i] and thresholds[i - 1] for a thr_key error */
} tt_cuda_report;

/* A tensor as a kernel reads it: [rows, cols] with steps in bytes (cols = 1, cstep = 0 for a
 * vector). A NULL view (no mask, no weights) has data == NULL. */
typedef struct {
    const char *data;
    int dtype;
    int64_t rows, cols;
    int64_t rstep, cstep;
} tt_dview;

/* ---- the kernels' arguments ------------------------------------------------------------- */

/* Counting kernels: `sign` +1 counts and reports into `rec`; -1 is the undo replay, which runs
 * only when `gate` (the record of the call being undone) holds an error. */

typedef struct { /* confmat_labels_*, confmat_scores_* */
    tt_dview preds, target, mask;
    int64_t classes;
    int has_ignore;
    int64_t ignore;
    int vectorised; /* scores rows are contiguous and 16-byte aligned */
    int64_t sign;
    long long *out;
    tt_cuda_record *rec;
    const tt_cuda_record *gate;
} tt_labels_args;

typedef struct { /* confmat_threshold_* */
    tt_dview preds, target, mask;
    int float_preds;
    double threshold;
    const double *threshold_at; /* device: the threshold chosen by the pick kernel, or NULL */
    int has_ignore;
    int64_t ignore;
    int64_t sign;
    long long *out; /* [L, 2, 2] */
    tt_cuda_record *rec;
    const tt_cuda_record *gate;
} tt_threshold_args;

typedef struct { /* threshold_pick */
    tt_dview preds;
    double threshold, logit_threshold;
    double *chosen;
    unsigned *counters; /* two, cleared on the stream before the launch */
} tt_pick_args;

typedef struct { /* binned_* */
    tt_dview preds, target, mask;
    int multiclass; /* target holds class labels [N], one-vs-rest per column */
    int has_ignore;
    int64_t ignore;
    const double *thresholds;
    int64_t count; /* T */
    int uniform;
    int64_t sign;
    long long *out; /* [K, T + 1, 2] */
    tt_cuda_record *rec;
    const tt_cuda_record *gate;
} tt_binned_args;

typedef struct { /* thresholds_check */
    const double *thresholds;
    int64_t count;
    tt_cuda_record *rec;
} tt_thresholds_check_args;

typedef struct { /* topk_* */
    tt_dview preds, target, mask;
    int64_t classes, k;
    int has_ignore;
    int64_t ignore;
    int64_t sign;
    long long *out; /* [C, 3] */
    tt_cuda_record *rec;
    const tt_cuda_record *gate;
} tt_topk_args;

/* Moments: a row of six float64 in the state's column order, moments (n, sum, mean, m2, min,
 * max) or co-moments (n, mean_x, mean_y, m2_x, m2_y, c_xy). */
typedef struct {
    double v[6];
} tt_row6;

typedef struct {        /* moments_partial, comoments_partial: blockDim (columns, rows) */
    tt_dview x, second; /* second: the weights [N] (or none) / y */
    int64_t columns;
    tt_row6 *partials; /* [gridDim.y, columns] */
    tt_cuda_record *rec;
} tt_partial_args;

typedef struct { /* moments_finalize, comoments_finalize */
    const tt_row6 *partials;
    int64_t groups, columns;
    tt_row6 *batch;
} tt_finalize_args;

typedef struct { /* moments_merge, comoments_merge */
    double *state;
    tt_dview other;
    int64_t rows;
    const tt_cuda_record *gate; /* NULL: merge unconditionally */
} tt_merge_args;

typedef struct { /* latch */
    const tt_cuda_record *rec;
    tt_dview by_code[5]; /* per error code, the tensor holding the rejected element */
    int64_t columns;
    tt_dview thresholds;
    tt_cuda_report *report; /* host memory mapped into the device */
} tt_latch_args;

/* Segmentation counts (segmentation.cu). They take no part in the record / undo protocol: they
 * count into a scratch `out` and lower `status` (int64, INT64_MAX when clean) to the key of the
 * first bad element with atomicMin; the caller adds `out` to its state only where status is
 * clean (csrc/API.md, "Segmentation counts on CUDA"). */
typedef struct {                                 /* label_counts, mask_counts */
    tt_dview preds, target;                      /* [N, P] rows (mask_counts: of class 0) */
    int64_t preds_class_step, target_class_step; /* mask_counts: bytes between class masks */
    int64_t samples, classes, pixels;
    long long *out;    /* [N, C, 3], zeroed on the stream before the launch */
    long long *status; /* [1] */
} tt_segment_args;

typedef struct {        /* class_argmax */
    tt_dview scores;    /* [N, P] rows of class 0 */
    int64_t class_step; /* bytes between class maps */
    int64_t classes;
    long long *out; /* [N, P], C-contiguous */
} tt_class_argmax_args;

#endif /* TT_CUDA_DEVICE_ABI_H */
