/*
 * class_argmax.c: the argmax over the class dim of score maps [N, C, P], a NaN pixel marked -1.
 * The workload: float one-hot inputs of a segmentation metric, e.g. 4 images x 5 classes x
 * 128 x 128; torch.argmax over a middle dim walks it pixel by pixel, across C strided rows.
 *
 * Here a chunk of TT_CHUNK pixels keeps its running maximum and index in two small arrays, and
 * each class's row of the chunk is read in one sequential pass (converted to double: every
 * float16, bfloat16 and float32 compares exactly as double), so the reads stream along P.
 */
#include "kernels/class_argmax.h"

#include <math.h>

/* The pixels [start, start + n) of sample i: best index into idx, -1 where a score is NaN. */
static void argmax_chunk(const tt_view *scores, int64_t i, int64_t start, int64_t n, int64_t *idx)
{
    double vals[TT_CHUNK], best[TT_CHUNK];
    unsigned char nan[TT_CHUNK];
    for (int64_t p = 0; p < n; p++)
        best[p] = -INFINITY, idx[p] = 0, nan[p] = 0;
    tt_view row = *scores; /* one class's scores of sample i, as a 1-D view over P */
    row.ndim = 1;
    row.shape[0] = scores->shape[2];
    row.stride[0] = scores->stride[2];
    for (int64_t c = 0; c < scores->shape[1]; c++) {
        row.data = scores->data + i * tt_step(scores, 0) + c * tt_step(scores, 1);
        const double *v = vals;
        if (row.dtype == TT_F64 && row.stride[0] == 1)
            v = (const double *)(const void *)row.data + start; /* read in place */
        else
            tt_load_scores(&row, start, n, 0, vals);
        for (int64_t p = 0; p < n; p++) {
            nan[p] |= v[p] != v[p];
            const int take = v[p] > best[p]; /* strict: the first index on ties */
            best[p] = take ? v[p] : best[p];
            idx[p] = take ? c : idx[p];
        }
    }
    for (int64_t p = 0; p < n; p++)
        idx[p] = nan[p] ? -1 : idx[p];
}

/* [N, C, 1] of float32 / float64 with unit class stride (a multiclass batch [N, C] viewed with
 * P = 1): each row's argmax in one sequential read of its C scores. */
#define ARGMAX_ROWS(NAME, T)                                                                       \
    static void NAME(const tt_view *scores, int64_t *dst)                                          \
    {                                                                                              \
        const int64_t classes = scores->shape[1], step = tt_step(scores, 0);                       \
        for (int64_t i = 0; i < scores->shape[0]; i++) {                                           \
            const T *row = (const T *)(const void *)(scores->data + i * step);                     \
            T best = row[0];                                                                       \
            int64_t at = 0, nan = row[0] != row[0];                                                \
            for (int64_t c = 1; c < classes; c++) {                                                \
                nan |= row[c] != row[c];                                                           \
                const int take = row[c] > best; /* strict: the first index on ties */              \
                best = take ? row[c] : best;                                                       \
                at = take ? c : at;                                                                \
            }                                                                                      \
            /* a row of -inf only, or led by NaN, keeps index 0 as the chunked walk does */        \
            dst[i] = nan ? -1 : at;                                                                \
        }                                                                                          \
    }
ARGMAX_ROWS(argmax_rows_f32, float)
ARGMAX_ROWS(argmax_rows_f64, double)

tt_status tt_class_argmax(const tt_view *out, const tt_view *scores, tt_error *err)
{
    char got[96];
    tt_status st = tt_check_scores(scores, "scores", 3, err);
    if (st != TT_OK)
        return st;
    if (scores->shape[1] < 1)
        return tt_fail(err, TT_EVALUE, "scores", "expected at least one class, got %s",
                       tt_describe(scores, got, sizeof got));
    const int64_t shape[2] = {scores->shape[0], scores->shape[2]};
    st = tt_check_out(out, "out", TT_I64, 2, shape, err);
    if (st != TT_OK)
        return st;
    const int rows_f32 = scores->dtype == TT_F32, rows_f64 = scores->dtype == TT_F64;
    if (scores->shape[2] == 1 && (scores->shape[1] == 1 || scores->stride[1] == 1) &&
        (rows_f32 || rows_f64)) {
        if (rows_f32)
            argmax_rows_f32(scores, (int64_t *)(void *)out->data);
        else
            argmax_rows_f64(scores, (int64_t *)(void *)out->data);
        return TT_OK;
    }
    /* [N, C, 1] (one score row per sample, as a multiclass batch [N, C] viewed with P = 1) is
     * walked as [1, C, N]: the same out [N, 1], but chunks of TT_CHUNK samples instead of one
     * call per sample and class */
    tt_view v = *scores;
    if (v.shape[2] == 1 && v.shape[0] > 1) {
        v.shape[2] = v.shape[0];
        v.stride[2] = v.stride[0];
        v.shape[0] = 1;
        v.stride[0] = 0;
    }
    const int64_t pixels = v.shape[2];
    int64_t *dst = (int64_t *)(void *)out->data;
    for (int64_t i = 0; i < v.shape[0]; i++) {
        for (int64_t start = 0; start < pixels; start += TT_CHUNK) {
            const int64_t n = pixels - start < TT_CHUNK ? pixels - start : TT_CHUNK;
            argmax_chunk(&v, i, start, n, dst + i * pixels + start);
        }
    }
    return TT_OK;
}
