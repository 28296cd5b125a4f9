/*
 * mask_counts.c: intersection and pixel counts of 0/1 masks. The workload: one-hot batches of
 * a segmentation metric's update, e.g. 16 images x 21 classes x 512 x 512 bool pixels, read
 * once, memory bound.
 *
 * Masks of one-byte elements (bool, uint8, int8) whose pixels are contiguous go 8 pixels at a
 * time: each 64-bit word adds its bytes lane-wise into byte counters (at most 255 words before
 * the lanes are summed, so no lane overflows while every byte is 0 or 1), the AND of the two
 * words counts the intersection, and the OR of every word tells whether a byte other than 0/1
 * came by (a bit above the lowest one set). Other dtypes and strides take a plain loop: class by
 * class, or, where the classes lie closer in memory than the pixels (a channels-last one-hot),
 * a sample at a time with the classes inner. The counts go to a private [N, C, 3] buffer and are
 * copied to `out` once both masks passed.
 */
#include "kernels/mask_counts.h"

#include <stdlib.h>

#define LOW_BITS 0x0101010101010101ULL
#define BLOCK 255 /* words per block: a byte lane counts up to 255 */
#define INNER 8   /* classes counted together in the classes-inner walk */

/* The sum of the 8 byte lanes of x. */
static inline uint64_t lane_sum(uint64_t x)
{
    const uint64_t pairs = (x & 0x00ff00ff00ff00ffULL) + ((x >> 8) & 0x00ff00ff00ff00ffULL);
    return (pairs * 0x0001000100010001ULL) >> 48;
}

static inline uint64_t word_at(const unsigned char *p)
{
    uint64_t x;
    memcpy(&x, p, sizeof x);
    return x;
}

/* Counts of n contiguous one-byte values; *bad_p, *bad_t |= any value other than 0/1. */
static void count_bytes(const unsigned char *p, const unsigned char *t, int64_t n, int64_t *c,
                        int *bad_p, int *bad_t)
{
    uint64_t or_p = 0, or_t = 0, inter = 0, sum_p = 0, sum_t = 0;
    int64_t i = 0;
    while (n - i >= 8) {
        int64_t words = (n - i) / 8;
        if (words > BLOCK)
            words = BLOCK;
        uint64_t acc_i = 0, acc_p = 0, acc_t = 0;
        for (int64_t k = 0; k < words; k++, i += 8) {
            const uint64_t a = word_at(p + i), b = word_at(t + i);
            or_p |= a;
            or_t |= b;
            acc_p += a;
            acc_t += b;
            acc_i += a & b;
        }
        inter += lane_sum(acc_i);
        sum_p += lane_sum(acc_p);
        sum_t += lane_sum(acc_t);
    }
    for (; i < n; i++) {
        or_p |= p[i];
        or_t |= t[i];
        sum_p += p[i];
        sum_t += t[i];
        inter += p[i] & t[i];
    }
    *bad_p |= (or_p & ~LOW_BITS) != 0;
    *bad_t |= (or_t & ~LOW_BITS) != 0;
    c[0] = (int64_t)inter, c[1] = (int64_t)sum_p, c[2] = (int64_t)sum_t;
}

/* Counts of any dtype and stride: values read as int64. */
static void count_any(const tt_view *preds, const tt_view *target, const char *p, const char *t,
                      int64_t *c, int *bad_p, int *bad_t)
{
    const int64_t n = preds->shape[2], sp = tt_step(preds, 2), st = tt_step(target, 2);
    int64_t inter = 0, sum_p = 0, sum_t = 0;
    uint64_t or_p = 0, or_t = 0;
    for (int64_t i = 0; i < n; i++) {
        const int64_t a = tt_load_label(p + i * sp, preds->dtype);
        const int64_t b = tt_load_label(t + i * st, target->dtype);
        or_p |= (uint64_t)a;
        or_t |= (uint64_t)b;
        sum_p += a;
        sum_t += b;
        inter += a & b;
    }
    *bad_p |= (or_p & ~1ULL) != 0;
    *bad_t |= (or_t & ~1ULL) != 0;
    c[0] = inter, c[1] = sum_p, c[2] = sum_t;
}

/* count_classes_inner for int64 masks (what one_hot gives), read as int64 elements (strides in
 * elements), with local accumulators: the compiler keeps them apart from the masks. */
static void count_classes_inner_i64(const tt_view *preds, const tt_view *target, const char *p,
                                    const char *t, int64_t *c, uint64_t *ors)
{
    const int64_t k = preds->shape[1], n = preds->shape[2];
    const int64_t pk = preds->stride[1], pn = preds->stride[2];
    const int64_t tk = target->stride[1], tn = target->stride[2];
    const int64_t *pv = (const int64_t *)(const void *)p, *tv = (const int64_t *)(const void *)t;
    for (int64_t j0 = 0; j0 < k; j0 += INNER) {
        const int64_t m = k - j0 < INNER ? k - j0 : INNER;
        int64_t inter[INNER] = {0}, sum_p[INNER] = {0}, sum_t[INNER] = {0};
        uint64_t or_p[INNER] = {0}, or_t[INNER] = {0};
        for (int64_t i = 0; i < n; i++) {
            const int64_t *pp = pv + i * pn + j0 * pk, *tp = tv + i * tn + j0 * tk;
            for (int64_t j = 0; j < m; j++) {
                const int64_t a = pp[j * pk], b = tp[j * tk];
                or_p[j] |= (uint64_t)a;
                or_t[j] |= (uint64_t)b;
                inter[j] += a & b;
                sum_p[j] += a;
                sum_t[j] += b;
            }
        }
        for (int64_t j = 0; j < m; j++) {
            c[3 * (j0 + j)] = inter[j], c[3 * (j0 + j) + 1] = sum_p[j];
            c[3 * (j0 + j) + 2] = sum_t[j];
            ors[2 * (j0 + j)] = or_p[j], ors[2 * (j0 + j) + 1] = or_t[j];
        }
    }
}

/* Counts of the k classes of one sample whose classes lie closer together in memory than its
 * pixels (a channels-last one-hot, as one_hot(labels).permute(0, 3, 1, 2) gives): pixels outer,
 * classes inner, so the sample is read once in memory order instead of once per class, each
 * pass touching every cache line. c [k, 3] as count_any's; ors [k, 2]: the OR of each class's
 * preds and target values (a bit above the lowest one set: a value other than 0/1). */
static void count_classes_inner(const tt_view *preds, const tt_view *target, const char *p,
                                const char *t, int64_t *c, uint64_t *ors)
{
    const int64_t k = preds->shape[1], n = preds->shape[2];
    const int64_t pk = tt_step(preds, 1), pn = tt_step(preds, 2);
    const int64_t tk = tt_step(target, 1), tn = tt_step(target, 2);
    memset(c, 0, (size_t)k * 3 * sizeof(int64_t));
    memset(ors, 0, (size_t)k * 2 * sizeof(uint64_t));
    if (preds->dtype == TT_I64 && target->dtype == TT_I64) {
        count_classes_inner_i64(preds, target, p, t, c, ors);
        return;
    }
    for (int64_t i = 0; i < n; i++) {
        const char *pp = p + i * pn, *tp = t + i * tn;
        for (int64_t j = 0; j < k; j++) {
            const int64_t a = tt_load_label(pp + j * pk, preds->dtype);
            const int64_t b = tt_load_label(tp + j * tk, target->dtype);
            ors[2 * j] |= (uint64_t)a;
            ors[2 * j + 1] |= (uint64_t)b;
            c[3 * j] += a & b;
            c[3 * j + 1] += a;
            c[3 * j + 2] += b;
        }
    }
}

/* Whether v's classes (dimension 1) lie closer together in memory than its pixels (dimension 2). */
static int classes_inner(const tt_view *v)
{
    const int64_t sk = v->stride[1] < 0 ? -v->stride[1] : v->stride[1];
    const int64_t sn = v->stride[2] < 0 ? -v->stride[2] : v->stride[2];
    return sk < sn;
}

static tt_status check_args(const tt_view *out, const tt_view *preds, const tt_view *target,
                            tt_error *err)
{
    char got[96], want[96];
    tt_status st = tt_check_labels(preds, "preds", 3, err);
    if (st == TT_OK)
        st = tt_check_labels(target, "target", 3, err);
    if (st != TT_OK)
        return st;
    for (int d = 0; d < 3; d++) {
        if (preds->shape[d] != target->shape[d])
            return tt_fail(err, TT_EVALUE, "target", "expected the shape of preds (%s), got %s",
                           tt_describe(preds, want, sizeof want),
                           tt_describe(target, got, sizeof got));
    }
    const int64_t shape[3] = {preds->shape[0], preds->shape[1], 3};
    return tt_check_out(out, "out", TT_I64, 3, shape, err);
}

tt_status tt_mask_counts(const tt_view *out, const tt_view *preds, const tt_view *target,
                         tt_error *err)
{
    tt_status st = check_args(out, preds, target, err);
    if (st != TT_OK)
        return st;
    const int64_t n = preds->shape[0], k = preds->shape[1], pixels = preds->shape[2];
    const int64_t pairs = n * k;
    int64_t *counts = malloc((size_t)(pairs > 0 ? pairs : 1) * 3 * sizeof(int64_t));
    if (counts == NULL)
        return tt_fail(err, TT_ENOMEM, "out", "no memory for %lld x %lld counts", (long long)n,
                       (long long)k);
    const int bytes = tt_dtype_size(preds->dtype) == 1 && tt_dtype_size(target->dtype) == 1 &&
                      (pixels < 2 || (preds->stride[2] == 1 && target->stride[2] == 1));
    /* the other dtypes and strides: a sample at a time where its classes are inner */
    const int inner =
        !bytes && k > 1 && pixels > 1 && classes_inner(preds) && classes_inner(target);
    uint64_t *ors = inner ? malloc((size_t)k * 2 * sizeof(uint64_t)) : NULL;
    if (inner && ors == NULL) {
        free(counts);
        return tt_fail(err, TT_ENOMEM, "out", "no memory for %lld class flags", (long long)k);
    }
    int64_t bad_at[2] = {-1, -1}; /* the first (sample, class) pair holding a bad value, per side */
    for (int64_t q = 0; q < pairs && bad_at[0] < 0; q++) { /* preds' first bad pair ends the walk */
        const int64_t i = q / k, j = q % k;
        const char *p = preds->data + i * tt_step(preds, 0) + j * tt_step(preds, 1);
        const char *t = target->data + i * tt_step(target, 0) + j * tt_step(target, 1);
        int bad_p = 0, bad_t = 0;
        int64_t *c = counts + 3 * q;
        if (inner) {
            if (j == 0) /* the whole sample, its flags read class by class below */
                count_classes_inner(preds, target, p, t, c, ors);
            bad_p = (ors[2 * j] & ~1ULL) != 0;
            bad_t = (ors[2 * j + 1] & ~1ULL) != 0;
        } else if (bytes)
            count_bytes((const unsigned char *)p, (const unsigned char *)t, pixels, c, &bad_p,
                        &bad_t);
        else
            count_any(preds, target, p, t, c, &bad_p, &bad_t);
        if (bad_p)
            bad_at[0] = q;
        if (bad_t && bad_at[1] < 0)
            bad_at[1] = q;
    }
    free(ors);
    for (int side = 0; side < 2; side++) {
        if (bad_at[side] >= 0) {
            free(counts);
            return tt_fail(err, TT_EVALUE, side ? "target" : "preds",
                           "sample %lld, class %lld: expected a one-hot (0/1) mask per class, got "
                           "values outside {0, 1}",
                           (long long)(bad_at[side] / k), (long long)(bad_at[side] % k));
        }
    }
    if (pairs > 0)
        memcpy(out->data, counts, (size_t)pairs * 3 * sizeof(int64_t));
    free(counts);
    return TT_OK;
}
