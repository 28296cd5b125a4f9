/*
 * lip_errors.c: the sum of the per-frame Lip Vertex Errors of one batch, in one pass over the
 * lip vertices only. torch would gather the lip vertices of both meshes, widen them to float64,
 * subtract, square, sum over coordinates, take each frame's max, sum the frames and test the sum
 * for NaN: about a dozen ops, each with its own allocation, for a few hundred values. Here each
 * frame reads its lip vertices in place (byte offsets of the lips computed once per call), keeps
 * the largest squared distance in double and adds it to the total; (x - x) summed alongside is 0
 * for finite values and NaN otherwise, so finiteness costs no branch per value.
 */
#include "kernels/lip_errors.h"

#include <stdlib.h>

static tt_status check_all(const tt_view *out, const tt_view *pred, const tt_view *gt,
                           const tt_view *lips, tt_error *err)
{
    char want[96], got[96];
    tt_status st = tt_check_out(out, "out", TT_F64, 0, NULL, err);
    if (st == TT_OK)
        st = tt_check_scores(pred, "vertices_pred", 3, err);
    if (st == TT_OK)
        st = tt_check_scores(gt, "vertices_gt", 3, err);
    if (st == TT_OK)
        st = tt_check_labels(lips, "lips", 1, err);
    if (st != TT_OK)
        return st;
    if (gt->shape[1] != pred->shape[1] || gt->shape[2] != pred->shape[2])
        return tt_fail(
            err, TT_EVALUE, "vertices_gt",
            "expected the vertex and coordinate dimensions of vertices_pred (%s), got %s",
            tt_describe(pred, want, sizeof want), tt_describe(gt, got, sizeof got));
    const int64_t v = pred->shape[1], step = tt_step(lips, 0);
    for (int64_t l = 0; l < lips->shape[0]; l++) {
        const int64_t index = tt_load_label(lips->data + l * step, lips->dtype);
        if (index < 0 || index >= v)
            return tt_fail(err, TT_EVALUE, "lips", "expected vertex indices in [0, %lld), got %lld",
                           (long long)v, (long long)index);
    }
    return TT_OK;
}

/* One frame: the largest squared lip distance, and in *check the sum of (x - x) over the values
 * read (0 when all are finite). LOAD_P / LOAD_G read one value as double; the typed copies let
 * the compiler drop the per-value dtype switch of the mixed one. */
#define FRAME(NAME, LOAD_P, LOAD_G)                                                                \
    static double NAME(const char *p, const char *g, const int64_t *off_p, const int64_t *off_g,   \
                       int64_t lips, int64_t coords, int64_t cp, int64_t cg, tt_dtype dp,          \
                       tt_dtype dg, double *check)                                                 \
    {                                                                                              \
        (void)dp;                                                                                  \
        (void)dg;                                                                                  \
        double best = 0.0, finite = 0.0;                                                           \
        for (int64_t l = 0; l < lips; l++) {                                                       \
            const char *a = p + off_p[l], *b = g + off_g[l];                                       \
            double sum = 0.0;                                                                      \
            for (int64_t c = 0; c < coords; c++) {                                                 \
                const double x = LOAD_P(a + c * cp), y = LOAD_G(b + c * cg);                       \
                const double d = y - x;                                                            \
                finite += (x - x) + (y - y);                                                       \
                sum += d * d;                                                                      \
            }                                                                                      \
            best = sum > best ? sum : best;                                                        \
        }                                                                                          \
        *check += finite;                                                                          \
        return best;                                                                               \
    }

#define LOAD_F32(q) ((double)tt_f32_at(q))
#define LOAD_ANY_P(q) tt_load_score((q), dp)
#define LOAD_ANY_G(q) tt_load_score((q), dg)
FRAME(frame_f32, LOAD_F32, LOAD_F32)
FRAME(frame_f64, tt_f64_at, tt_f64_at)
FRAME(frame_any, LOAD_ANY_P, LOAD_ANY_G)

typedef double (*frame_fn)(const char *, const char *, const int64_t *, const int64_t *, int64_t,
                           int64_t, int64_t, int64_t, tt_dtype, tt_dtype, double *);

/* Whether a lip vertex of the first `frames` frames of x holds NaN or inf (the rare path taken
 * once the check sum is not 0, to name the tensor). */
static int lips_not_finite(const tt_view *x, const int64_t *off, int64_t frames, int64_t lips)
{
    const int64_t st = tt_step(x, 0), sc = tt_step(x, 2);
    for (int64_t t = 0; t < frames; t++)
        for (int64_t l = 0; l < lips; l++)
            for (int64_t c = 0; c < x->shape[2]; c++) {
                const double v = tt_load_score(x->data + t * st + off[l] + c * sc, x->dtype);
                if (v - v != 0.0)
                    return 1;
            }
    return 0;
}

tt_status tt_lip_errors(const tt_view *out, const tt_view *pred, const tt_view *gt,
                        const tt_view *lips, tt_error *err)
{
    tt_status st = check_all(out, pred, gt, lips, err);
    if (st != TT_OK)
        return st;
    const int64_t frames = pred->shape[0] < gt->shape[0] ? pred->shape[0] : gt->shape[0];
    const int64_t n = lips->shape[0];
    if (frames == 0 || n == 0)
        return TT_OK;
    int64_t *off_p = malloc(2 * (size_t)n * sizeof *off_p);
    if (off_p == NULL)
        return tt_fail(err, TT_ENOMEM, "lips", "out of memory for %lld lip vertices", (long long)n);
    int64_t *off_g = off_p + n;
    const int64_t step = tt_step(lips, 0), vp = tt_step(pred, 1), vg = tt_step(gt, 1);
    for (int64_t l = 0; l < n; l++) {
        const int64_t index = tt_load_label(lips->data + l * step, lips->dtype);
        off_p[l] = index * vp;
        off_g[l] = index * vg;
    }
    frame_fn frame = frame_any;
    if (pred->dtype == gt->dtype && pred->dtype == TT_F32)
        frame = frame_f32;
    else if (pred->dtype == gt->dtype && pred->dtype == TT_F64)
        frame = frame_f64;
    const int64_t tp = tt_step(pred, 0), tg = tt_step(gt, 0);
    const int64_t cp = tt_step(pred, 2), cg = tt_step(gt, 2), coords = pred->shape[2];
    double total = 0.0, check = 0.0;
    for (int64_t t = 0; t < frames; t++)
        total += frame(pred->data + t * tp, gt->data + t * tg, off_p, off_g, n, coords, cp, cg,
                       pred->dtype, gt->dtype, &check);
    if (check != 0.0) { /* NaN: a value was NaN or infinite */
        const int bad_pred = lips_not_finite(pred, off_p, frames, n);
        st =
            tt_fail(err, TT_EVALUE, bad_pred ? "vertices_pred" : "vertices_gt",
                    "expected finite values, got NaN or infinite values at the mouth_map vertices");
    } else {
        *(double *)out->data += total;
    }
    free(off_p);
    return st;
}
