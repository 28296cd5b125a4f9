/*
 * coco_match.c: MeanAveragePrecision's update. Per (image, label) group, the detections (already
 * in rank order and cut at the largest maxDets by the caller) are matched greedily to the ground
 * truths exactly as pycocotools' COCOeval.evaluateImg does, at every IoU threshold and in each
 * of COCO's four area ranges (all, small, medium, large), and each outcome (false positive, true
 * positive, ignored) becomes a base-3 digit of the detection's packed words. The workload is one
 * call per update: a few to a few hundred detections and ground truths per image, T = 10
 * thresholds, so a group costs 4 T D G comparisons at most and needs no cleverness.
 *
 * Every argument is checked, and the scratch memory allocated, before the first write: a failed
 * call leaves `rows` as it was.
 *
 * The box IoU is pycocotools' bbIou, operation for operation, in double (no fused multiply-add:
 * the build is ISO C, where GCC does not contract, and each product is its own statement): the
 * intersection over the union, or over the detection's area for a crowd ground truth; 0 where
 * the boxes do not overlap.
 */
#include "kernels/coco_match.h"

#include <math.h>
#include <stdlib.h>

#define N_AREAS 4
#define DIGITS_PER_WORD 10 /* thresholds per word: 4 * 10 base-3 digits, 3^40 < 2^64 */

/* COCO's area ranges (all, small, medium, large), bounds inclusive as pycocotools compares. */
static const double AREA_LO[N_AREAS] = {0.0, 0.0, 1024.0, 9216.0};
static const double AREA_HI[N_AREAS] = {1e10, 1024.0, 9216.0, 1e10};

enum { OUTCOME_FP = 0, OUTCOME_TP = 1, OUTCOME_IGNORED = 2 };

static int out_of_range(double area, int a) { return area < AREA_LO[a] || area > AREA_HI[a]; }

/* pycocotools' bbIou of one detection and one ground truth, boxes (x, y, w, h). */
static double box_iou(const double *d, const double *g, int crowd)
{
    const double w = fmin(d[2] + d[0], g[2] + g[0]) - fmax(d[0], g[0]);
    if (w <= 0)
        return 0.0;
    const double h = fmin(d[3] + d[1], g[3] + g[1]) - fmax(d[1], g[1]);
    if (h <= 0)
        return 0.0;
    const double da = d[2] * d[3];
    const double ga = g[2] * g[3];
    const double inter = w * h;
    const double uni = crowd ? da : da + ga - inter;
    return inter / uni;
}

/* The checks of everything but the group ranges. */
static tt_status check_tensors(const tt_view *rows, const tt_view *groups, const tt_view *dets,
                               const tt_view *gts, const tt_view *thr, tt_error *err)
{
    char got[96];
    if (thr->dtype != TT_F64 || thr->ndim != 1 || thr->shape[0] < 1)
        return tt_fail(err, thr->dtype != TT_F64 ? TT_ETYPE : TT_EVALUE, "iou_thresholds",
                       "expected float64 [T] with T >= 1, got %s",
                       tt_describe(thr, got, sizeof got));
    tt_status st = tt_check_out(thr, "iou_thresholds", TT_F64, 1, thr->shape, err);
    const int64_t t_count = thr->shape[0];
    const int64_t words = (t_count + DIGITS_PER_WORD - 1) / DIGITS_PER_WORD;
    if (st == TT_OK && (rows->ndim != 2 || rows->dtype != TT_I32))
        return tt_fail(err, rows->dtype != TT_I32 ? TT_ETYPE : TT_EVALUE, "rows",
                       "expected int32 [D, %lld], got %s", (long long)(2 + 2 * words),
                       tt_describe(rows, got, sizeof got));
    const int64_t d_count = st == TT_OK ? rows->shape[0] : 0;
    const int64_t rows_shape[2] = {d_count, 2 + 2 * words};
    if (st == TT_OK)
        st = tt_check_out(rows, "rows", TT_I32, 2, rows_shape, err);
    const int64_t dets_shape[2] = {d_count, 5};
    if (st == TT_OK)
        st = tt_check_out(dets, "dets", TT_F64, 2, dets_shape, err);
    if (st == TT_OK && (gts->ndim != 2 || gts->dtype != TT_F64))
        return tt_fail(err, gts->dtype != TT_F64 ? TT_ETYPE : TT_EVALUE, "gts",
                       "expected float64 [G, 6], got %s", tt_describe(gts, got, sizeof got));
    const int64_t gts_shape[2] = {st == TT_OK ? gts->shape[0] : 0, 6};
    if (st == TT_OK)
        st = tt_check_out(gts, "gts", TT_F64, 2, gts_shape, err);
    if (st == TT_OK && (groups->ndim != 2 || groups->dtype != TT_I64))
        return tt_fail(err, groups->dtype != TT_I64 ? TT_ETYPE : TT_EVALUE, "groups",
                       "expected int64 [P, 4], got %s", tt_describe(groups, got, sizeof got));
    const int64_t groups_shape[2] = {st == TT_OK ? groups->shape[0] : 0, 4};
    if (st == TT_OK)
        st = tt_check_out(groups, "groups", TT_I64, 2, groups_shape, err);
    return st;
}

/* Checks values: finite boxes and areas, crowd 0 or 1, finite thresholds, group ranges that
 * tile [0, D) and [0, G) in order; and gives the largest group's sizes. */
static tt_status check_values(const tt_view *groups, const tt_view *dets, const tt_view *gts,
                              const tt_view *thr, const tt_view *ious, int64_t *max_d,
                              int64_t *max_g, tt_error *err)
{
    const double *t = (const double *)thr->data;
    for (int64_t i = 0; i < thr->shape[0]; i++)
        if (!isfinite(t[i]))
            return tt_fail(err, TT_EVALUE, "iou_thresholds",
                           "expected finite values, got %g at %lld", t[i], (long long)i);
    const double *d = (const double *)dets->data;
    for (int64_t i = 0; i < dets->shape[0] * 5; i++)
        if (!isfinite(d[i]))
            return tt_fail(err, TT_EVALUE, "dets", "expected finite values, got %g in row %lld",
                           d[i], (long long)(i / 5));
    const double *g = (const double *)gts->data;
    for (int64_t i = 0; i < gts->shape[0]; i++) {
        for (int k = 0; k < 5; k++)
            if (!isfinite(g[6 * i + k]))
                return tt_fail(err, TT_EVALUE, "gts", "expected finite values, got %g in row %lld",
                               g[6 * i + k], (long long)i);
        if (g[6 * i + 5] != 0.0 && g[6 * i + 5] != 1.0)
            return tt_fail(err, TT_EVALUE, "gts", "expected crowd 0 or 1, got %g in row %lld",
                           g[6 * i + 5], (long long)i);
    }
    const int64_t *r = (const int64_t *)groups->data;
    int64_t d_at = 0, g_at = 0, pairs = 0;
    *max_d = 0;
    *max_g = 0;
    for (int64_t p = 0; p < groups->shape[0]; p++) {
        const int64_t *q = r + 4 * p;
        if (q[0] != d_at || q[1] < q[0] || q[1] > dets->shape[0] || q[2] != g_at || q[3] < q[2] ||
            q[3] > gts->shape[0])
            return tt_fail(err, TT_EVALUE, "groups",
                           "row %lld: expected ranges [%lld, <= %lld) and [%lld, <= %lld) that "
                           "continue the previous group's, got (%lld, %lld, %lld, %lld)",
                           (long long)p, (long long)d_at, (long long)dets->shape[0],
                           (long long)g_at, (long long)gts->shape[0], (long long)q[0],
                           (long long)q[1], (long long)q[2], (long long)q[3]);
        d_at = q[1];
        g_at = q[3];
        *max_d = q[1] - q[0] > *max_d ? q[1] - q[0] : *max_d;
        *max_g = q[3] - q[2] > *max_g ? q[3] - q[2] : *max_g;
        pairs += (q[1] - q[0]) * (q[3] - q[2]);
    }
    if (d_at != dets->shape[0] || g_at != gts->shape[0])
        return tt_fail(err, TT_EVALUE, "groups",
                       "expected ranges covering %lld detections and %lld ground truths, they end "
                       "at %lld and %lld",
                       (long long)dets->shape[0], (long long)gts->shape[0], (long long)d_at,
                       (long long)g_at);
    if (ious == NULL)
        return TT_OK;
    const int64_t ious_shape[1] = {pairs};
    tt_status st = tt_check_out(ious, "ious", TT_F64, 1, ious_shape, err);
    const double *v = st == TT_OK ? (const double *)ious->data : NULL;
    for (int64_t i = 0; st == TT_OK && i < pairs; i++)
        if (!(v[i] >= 0.0 && v[i] <= 1.0))
            return tt_fail(err, TT_EVALUE, "ious", "expected values in [0, 1], got %g at %lld",
                           v[i], (long long)i);
    return st;
}

/* Scratch for one group: its IoU block and the per-ground-truth arrays. */
typedef struct {
    double *iou;      /* [D, G] */
    int64_t *order;   /* [G]: ground truths, not ignored first (stable) */
    uint8_t *ignored; /* [G], in `order` */
    uint8_t *matched; /* [G], in `order`, at one threshold */
    uint64_t *words;  /* [D, W] */
} scratch;

/* The greedy matching of one group in area range `a`, every threshold: adds the outcome digits
 * to s->words. */
static void match_area(const scratch *s, const double *det, const double *gt, int64_t nd,
                       int64_t ng, const double *thr, int64_t t_count, int64_t w_count, int a,
                       const uint64_t *pow3)
{
    int64_t n = 0;
    for (int pass = 0; pass < 2; pass++) /* not ignored, then ignored: a stable partition */
        for (int64_t j = 0; j < ng; j++) {
            const uint8_t ig = gt[6 * j + 5] != 0.0 || out_of_range(gt[6 * j + 4], a);
            if (ig == pass) {
                s->order[n] = j;
                s->ignored[n++] = ig;
            }
        }
    for (int64_t t = 0; t < t_count; t++) {
        const double limit = fmin(thr[t], 1 - 1e-10);
        const uint64_t unit = pow3[(t % DIGITS_PER_WORD) * N_AREAS + a];
        memset(s->matched, 0, (size_t)ng);
        for (int64_t d = 0; d < nd; d++) {
            double best = limit;
            int64_t m = -1;
            for (int64_t j = 0; j < ng; j++) {
                const int64_t g = s->order[j];
                if (s->matched[j] && gt[6 * g + 5] == 0.0)
                    continue; /* taken, and not a crowd */
                if (m >= 0 && !s->ignored[m] && s->ignored[j])
                    break; /* a real match beats every ignored ground truth */
                const double v = s->iou[d * ng + g];
                if (v < best)
                    continue;
                best = v;
                m = j;
            }
            uint64_t outcome;
            if (m < 0) {
                outcome = out_of_range(det[5 * d + 4], a) ? OUTCOME_IGNORED : OUTCOME_FP;
            } else {
                s->matched[m] = 1;
                outcome = s->ignored[m] ? OUTCOME_IGNORED : OUTCOME_TP;
            }
            s->words[d * w_count + t / DIGITS_PER_WORD] += outcome * unit;
        }
    }
}

tt_status tt_coco_match(const tt_view *rows, const tt_view *groups, const tt_view *dets,
                        const tt_view *gts, const tt_view *iou_thresholds, const tt_view *ious,
                        tt_error *err)
{
    int64_t max_d = 0, max_g = 0;
    tt_status st = check_tensors(rows, groups, dets, gts, iou_thresholds, err);
    if (st == TT_OK)
        st = check_values(groups, dets, gts, iou_thresholds, ious, &max_d, &max_g, err);
    if (st != TT_OK)
        return st;
    const int64_t t_count = iou_thresholds->shape[0];
    const int64_t w_count = (t_count + DIGITS_PER_WORD - 1) / DIGITS_PER_WORD;
    uint64_t pow3[DIGITS_PER_WORD * N_AREAS];
    pow3[0] = 1;
    for (int k = 1; k < DIGITS_PER_WORD * N_AREAS; k++)
        pow3[k] = pow3[k - 1] * 3;

    const size_t block = (size_t)(max_d * max_g);
    const size_t words = (size_t)(max_d * w_count);
    const size_t g = (size_t)max_g;
    scratch s = {0};
    char *mem =
        malloc(block * sizeof(double) + words * sizeof(uint64_t) + g * sizeof(int64_t) + 2 * g + 1);
    if (mem == NULL)
        return tt_fail(err, TT_ENOMEM, "rows", "no memory for a group of %lld x %lld",
                       (long long)max_d, (long long)max_g);
    s.iou = (double *)mem;
    s.words = (uint64_t *)(s.iou + block);
    s.order = (int64_t *)(s.words + words);
    s.ignored = (uint8_t *)(s.order + g);
    s.matched = s.ignored + g;

    const int64_t *r = (const int64_t *)groups->data;
    const double *thr = (const double *)iou_thresholds->data;
    const double *iou_in = ious != NULL ? (const double *)ious->data : NULL;
    int32_t *out = (int32_t *)rows->data;
    const int64_t row_len = 2 + 2 * w_count;
    for (int64_t p = 0; p < groups->shape[0]; p++) {
        const int64_t *q = r + 4 * p;
        const int64_t nd = q[1] - q[0], ng = q[3] - q[2];
        if (nd == 0)
            continue;
        const double *det = (const double *)dets->data + 5 * q[0];
        const double *gt = (const double *)gts->data + 6 * q[2];
        if (iou_in != NULL) {
            memcpy(s.iou, iou_in, (size_t)(nd * ng) * sizeof(double));
            iou_in += nd * ng;
        } else {
            for (int64_t d = 0; d < nd; d++)
                for (int64_t j = 0; j < ng; j++)
                    s.iou[d * ng + j] = box_iou(det + 5 * d, gt + 6 * j, gt[6 * j + 5] != 0.0);
        }
        memset(s.words, 0, (size_t)(nd * w_count) * sizeof(uint64_t));
        for (int a = 0; a < N_AREAS; a++)
            match_area(&s, det, gt, nd, ng, thr, t_count, w_count, a, pow3);
        for (int64_t d = 0; d < nd; d++) {
            int32_t *row = out + (q[0] + d) * row_len;
            for (int64_t w = 0; w < w_count; w++) {
                const uint64_t word = s.words[d * w_count + w];
                row[2 + 2 * w] = (int32_t)(uint32_t)(word & 0xffffffffu);
                row[3 + 2 * w] = (int32_t)(uint32_t)(word >> 32);
            }
        }
    }
    free(mem);
    return TT_OK;
}
