/*
 * feature_rows.c: an extractor's feature rows into a float32 state. The workload: one batch of a
 * generative-image metric's update, N images x D features (2 x 16 for a tiny extractor, 32 x
 * 2048 for InceptionV3's pool features), where torch would take four calls (a cast, a flatten,
 * a copy and a sum read back to find NaN or infinity) whose fixed costs outweigh the copy.
 *
 * Two passes, so that out is written only once every value passed: the first finds a value that
 * is not finite in float32, the second writes. Contiguous float32 rows are tested on their bits
 * (an exponent of all ones: inf or NaN; an integer test the compiler vectorises) and copied with
 * memcpy; any other dtype or layout is widened to double, compared with the float32 overflow
 * threshold and rounded.
 */
#include "kernels/feature_rows.h"

#include <math.h>
#include <string.h>

/* The least double that rounds (to nearest, ties to even) to an infinite float32: FLT_MAX plus
 * half of its ulp. Below it a finite double rounds to a finite float32. */
#define F32_OVERFLOW 0x1.ffffffp+127

/* The flat index of the first float32 in p[0..n) whose exponent bits are all ones, or -1. */
static int64_t first_bad_f32(const float *p, int64_t n)
{
    uint32_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        uint32_t bits = 0;
        memcpy(&bits, p + i, sizeof bits);
        bad |= (uint32_t)((bits & 0x7f800000U) == 0x7f800000U);
    }
    if (!bad)
        return -1;
    for (int64_t i = 0; i < n; i++) {
        if (!isfinite(p[i]))
            return i;
    }
    return -1;
}

static inline int fits_f32(double v) { return fabs(v) < F32_OVERFLOW; } /* (NaN: false) */

tt_status tt_feature_rows(const tt_view *out, const tt_view *x, tt_error *err)
{
    tt_status st = tt_check_scores(x, "x", 2, err);
    if (st == TT_OK)
        st = tt_check_cpu(x, "x", err);
    if (st != TT_OK)
        return st;
    const int64_t n = x->shape[0], d = x->shape[1];
    const int64_t total[1] = {n * d};
    st = tt_check_out(out, "out", TT_F32, 1, total, err);
    if (st != TT_OK || n * d == 0)
        return st;
    const int64_t rs = tt_step(x, 0), cs = tt_step(x, 1);
    float *dst = (float *)out->data;
    const int dense =
        x->dtype == TT_F32 && cs == (int64_t)sizeof(float) && (rs == d * cs || n == 1);
    if (dense) {
        const int64_t bad = first_bad_f32((const float *)x->data, n * d);
        if (bad >= 0)
            return tt_fail(err, TT_EVALUE, "x",
                           "expected finite float32 values, got NaN, an infinity or a value "
                           "beyond float32's range at [%lld, %lld]",
                           (long long)(bad / d), (long long)(bad % d));
        memcpy(dst, x->data, (size_t)(n * d) * sizeof(float));
        return TT_OK;
    }
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < d; j++) {
            if (!fits_f32(tt_load_score(x->data + i * rs + j * cs, x->dtype)))
                return tt_fail(err, TT_EVALUE, "x",
                               "expected finite float32 values, got NaN, an infinity or a value "
                               "beyond float32's range at [%lld, %lld]",
                               (long long)i, (long long)j);
        }
    }
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < d; j++)
            dst[i * d + j] = (float)tt_load_score(x->data + i * rs + j * cs, x->dtype);
    }
    return TT_OK;
}
