/*
 * box_overlap.c: IoU, generalized, distance and complete IoU of axis-aligned boxes. The
 * workload: the IoU metrics' update, one call per batch of images (tens of images, each up to a
 * few hundred predictions against tens of targets), and the functional forms' [N, M] matrix.
 *
 * Every box is read once, checked (finite, x1 <= x2, y1 <= y2) and turned into a private
 * record of the quantities its pairs share (area, centre, the angle of its aspect ratio), so
 * the pair loop is arithmetic only. The formulas are torchvision's, step by step in its order of
 * operations and in its precision: float arithmetic unless a box tensor is float64 (then
 * double), each operation rounded once (this file is compiled without FMA contraction:
 * setup.py's -ffp-contract=off), so every value is the bit pattern torchvision gives for
 * float32 / float64 boxes. The same eps (1e-7, as a float in float arithmetic), and 0 / 0
 * (boxes of zero area) gives NaN as there. The sums are formed in private totals and added to
 * `out` after the last image, so a rejected batch writes nothing.
 */
#include "kernels/box_overlap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EPS 1e-7 /* torchvision's eps of distance_box_iou and complete_box_iou */
/* torchvision's 4 / (pi ** 2) as Python evaluates it (pi ** 2 rounded first): 0.4052847345693511 */
#define FOUR_OVER_PI2 0x1.9f02f6222c720p-2

/* One box and what its pairs share, in double (float64 boxes) and in float (the others). */
typedef struct {
    double x1, y1, x2, y2, area, cx, cy, angle;
    float fx1, fy1, fx2, fy2, farea, fcx, fcy, fangle;
} box;

/* torch's float32 atan (torchvision's CIoU angle): see the tests for its bit-equality. */
static float atan_float(float x) { return (float)atan((double)x); }

/* x rounded (to nearest, ties to even) to float16 or bfloat16, as torch's arithmetic on two
 * float16 (bfloat16) tensors rounds its result: torchvision's IoU and GIoU subtract the
 * coordinates of such boxes in their dtype before upcasting. */
static float round_narrow(float x, tt_dtype narrow)
{
    if (narrow == TT_BF16) {
        uint32_t u;
        memcpy(&u, &x, sizeof u);
        u += 0x7fffu + ((u >> 16) & 1u); /* finite x: a carry into the exponent is the rounding */
        u &= 0xffff0000u;
        memcpy(&x, &u, sizeof x);
        return x;
    }
    if (narrow != TT_F16 || x == 0)
        return x;
    int e;
    (void)frexpf(x, &e); /* |x| in [2^(e-1), 2^e) */
    const int lsb =
        (e - 1 < -14 ? -14 : e - 1) - 10; /* 11 significant bits, subnormals below 2^-14 */
    const float r = ldexpf(rintf(ldexpf(x, -lsb)), lsb);
    return fabsf(r) > 65504.0f ? copysignf(INFINITY, x) : r;
}

/* "box 7" or, with sizes, "image 2, box 3". */
static void where(const int64_t *sizes, int64_t images, int col, int64_t i, char *buf, size_t n)
{
    if (sizes == NULL) {
        snprintf(buf, n, "box %lld", (long long)i);
        return;
    }
    int64_t b = 0;
    while (b < images - 1 && i >= sizes[2 * b + col]) {
        i -= sizes[2 * b + col];
        b++;
    }
    snprintf(buf, n, "image %lld, box %lld", (long long)b, (long long)i);
}

/* Reads and checks the boxes of v [n, 4] into dst[n]; `sizes` (or NULL) places a bad box. */
static tt_status load_boxes(const tt_view *v, const char *arg, const int64_t *sizes, int64_t images,
                            int col, box *dst, tt_error *err)
{
    const int64_t n = v->shape[0], s0 = tt_step(v, 0), s1 = tt_step(v, 1);
    for (int64_t i = 0; i < n; i++) {
        const char *row = v->data + i * s0;
        double c[4];
        for (int k = 0; k < 4; k++)
            c[k] = tt_load_score(row + k * s1, v->dtype);
        const int finite = isfinite(c[0]) && isfinite(c[1]) && isfinite(c[2]) && isfinite(c[3]);
        if (!finite || !(c[0] <= c[2]) || !(c[1] <= c[3])) {
            char at[64];
            where(sizes, images, col, i, at, sizeof at);
            return tt_fail(err, TT_EVALUE, arg,
                           "%s is (%g, %g, %g, %g): expected finite (x1, y1, x2, y2) with x1 <= x2 "
                           "and y1 <= y2",
                           at, c[0], c[1], c[2], c[3]);
        }
        box *b = &dst[i];
        b->x1 = c[0], b->y1 = c[1], b->x2 = c[2], b->y2 = c[3];
        b->area = (c[2] - c[0]) * (c[3] - c[1]);
        b->cx = (c[0] + c[2]) / 2;
        b->cy = (c[1] + c[3]) / 2;
        b->angle = atan((c[2] - c[0]) / (c[3] - c[1])); /* NaN for a point, as torchvision */
        /* float: the coordinates as float (exact for float32, float16 and bfloat16 boxes) */
        const float f[4] = {(float)c[0], (float)c[1], (float)c[2], (float)c[3]};
        b->fx1 = f[0], b->fy1 = f[1], b->fx2 = f[2], b->fy2 = f[3];
        b->farea = (f[2] - f[0]) * (f[3] - f[1]);
        b->fcx = (f[0] + f[2]) / 2.0f;
        b->fcy = (f[1] + f[3]) / 2.0f;
        b->fangle = atan_float((f[2] - f[0]) / (f[3] - f[1]));
    }
    return TT_OK;
}

/* The value of the pair (a, b) in double: a is the prediction (the order matters for rounding). */
static double pair_double(const box *a, const box *b, int64_t kind)
{
    const double iw = fmin(a->x2, b->x2) - fmax(a->x1, b->x1);
    const double ih = fmin(a->y2, b->y2) - fmax(a->y1, b->y1);
    const double inter = (iw > 0 ? iw : 0) * (ih > 0 ? ih : 0);
    const double uni = a->area + b->area - inter;
    const double iou = inter / uni;
    if (kind == TT_BOX_IOU)
        return iou;
    const double ew = fmax(a->x2, b->x2) - fmin(a->x1, b->x1);
    const double eh = fmax(a->y2, b->y2) - fmin(a->y1, b->y1);
    if (kind == TT_BOX_GIOU) {
        const double enclosing = ew * eh;
        return iou - (enclosing - uni) / enclosing;
    }
    const double dx = a->cx - b->cx, dy = a->cy - b->cy;
    const double diou = iou - (dx * dx + dy * dy) / (ew * ew + eh * eh + EPS);
    if (kind == TT_BOX_DIOU)
        return diou;
    const double d = a->angle - b->angle;
    const double v = FOUR_OVER_PI2 * (d * d);
    const double alpha = v / (1 - iou + v + EPS);
    return diou - alpha * v;
}

/* The same in float, torchvision's float32 arithmetic: its python constants (eps, 4 / pi^2, 1)
 * meet a float32 tensor as float. */
static float pair_float(const box *a, const box *b, int64_t kind, tt_dtype narrow)
{
    const float eps = (float)EPS, four_over_pi2 = (float)FOUR_OVER_PI2;
    if (kind >= TT_BOX_DIOU) /* distance_box_iou and complete_box_iou upcast the boxes first */
        narrow = TT_F32;
    const float iw = round_narrow(fminf(a->fx2, b->fx2) - fmaxf(a->fx1, b->fx1), narrow);
    const float ih = round_narrow(fminf(a->fy2, b->fy2) - fmaxf(a->fy1, b->fy1), narrow);
    const float inter = (iw > 0 ? iw : 0.0f) * (ih > 0 ? ih : 0.0f);
    const float uni = a->farea + b->farea - inter;
    const float iou = inter / uni;
    if (kind == TT_BOX_IOU)
        return iou;
    const float ew = round_narrow(fmaxf(a->fx2, b->fx2) - fminf(a->fx1, b->fx1), narrow);
    const float eh = round_narrow(fmaxf(a->fy2, b->fy2) - fminf(a->fy1, b->fy1), narrow);
    if (kind == TT_BOX_GIOU) {
        const float enclosing = ew * eh;
        return iou - (enclosing - uni) / enclosing;
    }
    const float dx = a->fcx - b->fcx, dy = a->fcy - b->fcy;
    const float diou = iou - (dx * dx + dy * dy) / (ew * ew + eh * eh + eps);
    if (kind == TT_BOX_DIOU)
        return diou;
    const float d = a->fangle - b->fangle;
    const float v = four_over_pi2 * (d * d);
    const float alpha = v / (1.0f - iou + v + eps);
    return diou - alpha * v;
}

/* What the pairs of preds and target are computed in: TT_F64 (double), TT_F32 (float), or
 * TT_F16 / TT_BF16 (float, with that dtype's rounding of the differences of coordinates). */
static tt_dtype work_dtype(const tt_view *preds, const tt_view *target)
{
    if (preds->dtype == target->dtype && preds->dtype != TT_F32)
        return preds->dtype;
    return preds->dtype == TT_F64 || target->dtype == TT_F64 ? TT_F64 : TT_F32;
}

/* The value of the pair (a, b) as a double: in double arithmetic or in float. */
static double pair_value(const box *a, const box *b, int64_t kind, tt_dtype work)
{
    return work == TT_F64 ? pair_double(a, b, kind) : (double)pair_float(a, b, kind, work);
}

static tt_status check_kind(int64_t kind, tt_error *err)
{
    if (kind >= TT_BOX_IOU && kind <= TT_BOX_CIOU)
        return TT_OK;
    return tt_fail(err, TT_EVALUE, "kind",
                   "expected 0 (IoU), 1 (GIoU), 2 (DIoU) or 3 (CIoU), got %lld", (long long)kind);
}

static tt_status check_boxes(const tt_view *v, const char *arg, tt_error *err)
{
    char got[96];
    tt_status st = tt_check_scores(v, arg, 2, err);
    if (st == TT_OK && v->shape[1] != 4)
        return tt_fail(err, TT_EVALUE, arg, "expected boxes [N, 4], got %s",
                       tt_describe(v, got, sizeof got));
    return st;
}

/* ---- the matrix ------------------------------------------------------------------------------ */

static tt_status check_matrix_args(const tt_view *out, const tt_view *preds, const tt_view *target,
                                   int64_t kind, tt_error *err)
{
    tt_status st = check_boxes(preds, "preds", err);
    if (st == TT_OK)
        st = check_boxes(target, "target", err);
    if (st == TT_OK)
        st = check_kind(kind, err);
    if (st != TT_OK)
        return st;
    const int64_t n = preds->shape[0], m = target->shape[0], k = n < m ? n : m;
    const tt_dtype dtype = out->dtype == TT_F64 ? TT_F64 : TT_F32;
    if (out->ndim == 1) {
        if (out->shape[0] > k) {
            char got[96];
            return tt_fail(err, TT_EVALUE, "out",
                           "expected [K] with K <= %lld (the pairs (i, i)) or [%lld, %lld], got %s",
                           (long long)k, (long long)n, (long long)m,
                           tt_describe(out, got, sizeof got));
        }
        return tt_check_out(out, "out", dtype, 1, out->shape, err);
    }
    const int64_t shape[2] = {n, m};
    return tt_check_out(out, "out", dtype, 2, shape, err);
}

tt_status tt_box_overlap_matrix(const tt_view *out, const tt_view *preds, const tt_view *target,
                                int64_t kind, tt_error *err)
{
    tt_status st = check_matrix_args(out, preds, target, kind, err);
    if (st != TT_OK)
        return st;
    const int64_t n = preds->shape[0], m = target->shape[0];
    box *boxes = malloc((size_t)(n + m > 0 ? n + m : 1) * sizeof(box));
    if (boxes == NULL)
        return tt_fail(err, TT_ENOMEM, "preds", "no memory for %lld boxes", (long long)(n + m));
    st = load_boxes(preds, "preds", NULL, 0, 0, boxes, err);
    if (st == TT_OK)
        st = load_boxes(target, "target", NULL, 0, 1, boxes + n, err);
    if (st == TT_OK) {
        const box *p = boxes, *t = boxes + n;
        const int pairs = out->ndim == 1;
        const tt_dtype work = work_dtype(preds, target);
        const int64_t rows = pairs ? out->shape[0] : n, cols = pairs ? 1 : m;
        for (int64_t i = 0; i < rows; i++)
            for (int64_t j = 0; j < cols; j++) {
                const double v = pair_value(&p[i], &t[pairs ? i : j], kind, work);
                if (out->dtype == TT_F64)
                    ((double *)out->data)[i * cols + j] = v;
                else
                    ((float *)out->data)[i * cols + j] = (float)v;
            }
    }
    free(boxes);
    return st;
}

/* ---- the sums per target box ------------------------------------------------------------------ */

static tt_status check_sums_args(const tt_view *out, const tt_view *preds, const tt_view *target,
                                 const tt_view *sizes, const tt_view *pred_labels,
                                 const tt_view *target_labels, int64_t kind,
                                 const double *threshold, tt_error *err)
{
    char got[96];
    tt_status st = check_boxes(preds, "preds", err);
    if (st == TT_OK)
        st = check_boxes(target, "target", err);
    if (st == TT_OK) {
        const int64_t shape[2] = {target->shape[0], 2};
        st = tt_check_out(out, "out", TT_F64, 2, shape, err);
    }
    if (st == TT_OK)
        st = check_kind(kind, err);
    if (st != TT_OK)
        return st;
    if (sizes->dtype != TT_I64 || sizes->ndim != 2 || sizes->shape[1] != 2)
        return tt_fail(err, sizes->dtype != TT_I64 ? TT_ETYPE : TT_EVALUE, "sizes",
                       "expected int64 [B, 2], got %s", tt_describe(sizes, got, sizeof got));
    st = tt_check_cpu(sizes, "sizes", err);
    if (st != TT_OK)
        return st;
    if ((pred_labels == NULL) != (target_labels == NULL))
        return tt_fail(err, TT_EVALUE, pred_labels ? "target_labels" : "pred_labels",
                       "expected labels for both preds and target, or None for both");
    if (pred_labels != NULL) {
        st = tt_check_labels(pred_labels, "pred_labels", 1, err);
        if (st == TT_OK)
            st = tt_check_labels(target_labels, "target_labels", 1, err);
        if (st != TT_OK)
            return st;
        if (pred_labels->shape[0] != preds->shape[0])
            return tt_fail(err, TT_EVALUE, "pred_labels",
                           "expected %lld labels (one a box), got %lld", (long long)preds->shape[0],
                           (long long)pred_labels->shape[0]);
        if (target_labels->shape[0] != target->shape[0])
            return tt_fail(err, TT_EVALUE, "target_labels",
                           "expected %lld labels (one a box), got %lld",
                           (long long)target->shape[0], (long long)target_labels->shape[0]);
    }
    if (threshold != NULL && isnan(*threshold))
        return tt_fail(err, TT_EVALUE, "threshold", "expected a number or None, got NaN");
    return TT_OK;
}

/* Reads sizes [B, 2] into dst[2B]: non-negative, columns summing to (P, T). */
static tt_status load_sizes(const tt_view *sizes, int64_t p, int64_t t, int64_t *dst, tt_error *err)
{
    const int64_t images = sizes->shape[0], s0 = tt_step(sizes, 0), s1 = tt_step(sizes, 1);
    int64_t total[2] = {0, 0};
    for (int64_t b = 0; b < images; b++)
        for (int c = 0; c < 2; c++) {
            const int64_t v = *(const int64_t *)(sizes->data + b * s0 + c * s1);
            if (v < 0 || v > (c ? t : p) - total[c])
                return tt_fail(
                    err, TT_EVALUE, "sizes",
                    "expected counts >= 0 whose columns sum to (%lld, %lld) (the boxes of "
                    "preds and target), got %lld at image %lld",
                    (long long)p, (long long)t, (long long)v, (long long)b);
            total[c] += v;
            dst[2 * b + c] = v;
        }
    if (total[0] != p || total[1] != t)
        return tt_fail(err, TT_EVALUE, "sizes",
                       "expected columns summing to (%lld, %lld) (the boxes of preds and target), "
                       "got (%lld, %lld)",
                       (long long)p, (long long)t, (long long)total[0], (long long)total[1]);
    return TT_OK;
}

static void load_all_labels(const tt_view *v, int64_t *dst)
{
    const int64_t n = v->shape[0];
    for (int64_t start = 0; start < n; start += TT_CHUNK)
        tt_load_labels(v, start, n - start < TT_CHUNK ? n - start : TT_CHUNK, 0, dst + start);
}

static const char *const KIND_NAMES[] = {"IoU", "GIoU", "DIoU", "CIoU"};

/* The counted values of one image with predictions and targets into sums [m, 2]. */
static tt_status image_sums(const box *p, int64_t n, const box *t, int64_t m, const int64_t *pl,
                            const int64_t *tl, int64_t kind, tt_dtype work, const double *threshold,
                            int64_t image, double *sums, tt_error *err)
{
    const double none = kind == TT_BOX_CIOU ? -2.0 : -1.0; /* torchmetrics' "no value" marker */
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < m; j++) {
            if (pl != NULL && pl[i] != tl[j])
                continue;
            const double v = pair_value(&p[i], &t[j], kind, work);
            if ((threshold != NULL && v < *threshold) || v == none)
                continue;
            if (isnan(v))
                return tt_fail(err, TT_EVALUE, "preds",
                               "image %lld: the %s of prediction %lld and target %lld is undefined "
                               "(0 / 0: boxes of zero area, or for CIoU of zero width and height)",
                               (long long)image, KIND_NAMES[kind], (long long)i, (long long)j);
            sums[2 * j] += v;
            sums[2 * j + 1] += 1;
        }
    return TT_OK;
}

tt_status tt_box_overlap_sums(const tt_view *out, const tt_view *preds, const tt_view *target,
                              const tt_view *sizes, const tt_view *pred_labels,
                              const tt_view *target_labels, int64_t kind, const double *threshold,
                              tt_error *err)
{
    tt_status st = check_sums_args(out, preds, target, sizes, pred_labels, target_labels, kind,
                                   threshold, err);
    if (st != TT_OK)
        return st;
    const int64_t p = preds->shape[0], t = target->shape[0], images = sizes->shape[0];
    const int labelled = pred_labels != NULL;
    /* one block: boxes, private sums [t, 2], sizes [images, 2], labels [p + t] */
    const size_t words = (size_t)(p + t) * (sizeof(box) / sizeof(double)) + (size_t)t * 2 +
                         (size_t)images * 2 + (labelled ? (size_t)(p + t) : 0) + 1;
    _Static_assert(sizeof(int64_t) == sizeof(double), "a count takes one word, as a sum");
    _Static_assert(sizeof(box) % sizeof(double) == 0, "a box is a whole number of words");
    double *block = calloc(words, sizeof(double));
    if (block == NULL)
        return tt_fail(err, TT_ENOMEM, "preds", "no memory for %lld boxes", (long long)(p + t));
    box *pb = (box *)block, *tb = pb + p;
    double *sums = (double *)(tb + t);
    int64_t *size = (int64_t *)(sums + 2 * t);
    int64_t *pl = labelled ? size + 2 * images : NULL, *tl = labelled ? pl + p : NULL;
    st = load_sizes(sizes, p, t, size, err);
    if (st == TT_OK)
        st = load_boxes(preds, "preds", size, images, 0, pb, err);
    if (st == TT_OK)
        st = load_boxes(target, "target", size, images, 1, tb, err);
    if (st != TT_OK)
        goto done;
    if (labelled) {
        load_all_labels(pred_labels, pl);
        load_all_labels(target_labels, tl);
    }
    const tt_dtype work = work_dtype(preds, target);
    double limit = 0;
    if (threshold != NULL) /* compared as torchmetrics does: in the values' precision */
        limit = work == TT_F64 ? *threshold : (double)(float)*threshold;
    int64_t p0 = 0, t0 = 0;
    for (int64_t b = 0; b < images; b++) {
        const int64_t n = size[2 * b], m = size[2 * b + 1];
        if (n == 0) /* torchmetrics' M x M zeros, its diagonal alone kept with labels */
            for (int64_t j = 0; j < m; j++)
                sums[2 * (t0 + j) + 1] += labelled ? 1 : (double)m;
        else if (m > 0) {
            st = image_sums(pb + p0, n, tb + t0, m, labelled ? pl + p0 : NULL,
                            labelled ? tl + t0 : NULL, kind, work, threshold ? &limit : NULL, b,
                            sums + 2 * t0, err);
            if (st != TT_OK)
                goto done;
        }
        p0 += n;
        t0 += m;
    }
    double *o = (double *)out->data;
    for (int64_t j = 0; j < 2 * t; j++)
        o[j] += sums[j];
done:
    free(block);
    return st;
}
