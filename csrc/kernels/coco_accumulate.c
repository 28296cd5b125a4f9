/*
 * coco_accumulate.c: pycocotools' COCOeval.accumulate over the rows MeanAveragePrecision keeps
 * (one int32 row per detection: score bits, label | level << 24, the matching outcomes packed
 * base 3; one per ground truth: label, a bitmask of the area ranges where it counts). The
 * workload: compute() of a detection metric, N up to tens of millions of detections, K up to a
 * few thousand labels, T*A*M = 120 curves per label by default.
 *
 * The detections of all labels are sorted once by (label, score descending, row): a stable
 * descending sort per label, which is pycocotools' mergesort of the concatenated images (rows
 * are in image order, each image's in rank order). Each detection's T*4 outcomes are decoded
 * once into bytes. Then, per label and per maxDets level m, the detections of level <= m (rank
 * below maxDets[m]) form the curve that, per IoU threshold and area range, gives cumulative
 * true and false positives, recall tp / npig, precision tp / (tp + fp + eps) (numpy's
 * arithmetic, in that order), the envelope of precision from the right and, per recall
 * threshold, the first point whose recall reaches it (numpy.searchsorted, side='left'); the
 * walk over recall thresholds stops at the first one beyond the curve, as pycocotools' loop
 * does, leaving 0 there. A (label, area) without a counted ground truth stays -1 everywhere.
 *
 * Every row is checked (label known, level below M) before anything is written.
 */
#include "kernels/coco_accumulate.h"

#include <float.h>
#include <stdlib.h>

#define AREAS 4
#define DIGITS_PER_WORD 40 /* 3**40 < 2**64 */
#define LABEL_MASK 0xffffff

typedef struct {
    int64_t k;   /* index of the label in `labels` */
    float score; /* the score */
    int64_t row; /* the row, for a stable order */
} entry;

static int by_label_score_row(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    if (a->k != b->k)
        return a->k < b->k ? -1 : 1;
    if (a->score != b->score)
        return a->score > b->score ? -1 : 1;
    return (a->row > b->row) - (a->row < b->row);
}

/* Index of `label` in the ascending labels [K], or -1. */
static int64_t find_label(const int64_t *labels, int64_t count, int64_t label)
{
    int64_t lo = 0, hi = count;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (labels[mid] < label)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < count && labels[lo] == label ? lo : -1;
}

/* numpy.searchsorted(rc[:n], x, side='left'): the first i with !(rc[i] < x). */
static int64_t lower_bound(const double *rc, int64_t n, double x)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (rc[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static tt_status check_args(const tt_view *precision, const tt_view *recall, const tt_view *scores,
                            const tt_view *detections, const tt_view *groundtruths,
                            const tt_view *labels, const tt_view *rec_thresholds, tt_error *err)
{
    char got[96];
    if (precision->dtype != TT_F64 || precision->ndim != 4 || precision->shape[3] % AREAS != 0 ||
        precision->shape[3] == 0)
        return tt_fail(err, precision->dtype != TT_F64 ? TT_ETYPE : TT_EVALUE, "precision",
                       "expected float64 [T, R, K, 4*M] with M >= 1, got %s",
                       tt_describe(precision, got, sizeof got));
    const int64_t t = precision->shape[0], r = precision->shape[1], k = precision->shape[2],
                  am = precision->shape[3];
    const int64_t recall_shape[3] = {t, k, am};
    const int64_t words = (t + 9) / 10;
    tt_status st = tt_check_out(precision, "precision", TT_F64, 4, precision->shape, err);
    if (st == TT_OK)
        st = tt_check_out(recall, "recall", TT_F64, 3, recall_shape, err);
    if (st == TT_OK)
        st = tt_check_out(scores, "scores", TT_F64, 4, precision->shape, err);
    if (st != TT_OK)
        return st;
    if (detections->dtype != TT_I32 || detections->ndim != 2 ||
        detections->shape[1] != 2 + 2 * words)
        return tt_fail(err, detections->dtype != TT_I32 ? TT_ETYPE : TT_EVALUE, "detections",
                       "expected int32 [N, %lld] (T = %lld IoU thresholds), got %s",
                       (long long)(2 + 2 * words), (long long)t,
                       tt_describe(detections, got, sizeof got));
    if (groundtruths->dtype != TT_I32 || groundtruths->ndim != 2 || groundtruths->shape[1] != 2)
        return tt_fail(err, groundtruths->dtype != TT_I32 ? TT_ETYPE : TT_EVALUE, "groundtruths",
                       "expected int32 [G, 2], got %s", tt_describe(groundtruths, got, sizeof got));
    if (labels->dtype != TT_I64 || labels->ndim != 1 || labels->shape[0] != k)
        return tt_fail(err, labels->dtype != TT_I64 ? TT_ETYPE : TT_EVALUE, "labels",
                       "expected int64 [%lld] (K of precision), got %s", (long long)k,
                       tt_describe(labels, got, sizeof got));
    if (rec_thresholds->dtype != TT_F64 || rec_thresholds->ndim != 1 ||
        rec_thresholds->shape[0] != r)
        return tt_fail(err, rec_thresholds->dtype != TT_F64 ? TT_ETYPE : TT_EVALUE,
                       "rec_thresholds", "expected float64 [%lld] (R of precision), got %s",
                       (long long)r, tt_describe(rec_thresholds, got, sizeof got));
    const tt_view *inputs[4] = {detections, groundtruths, labels, rec_thresholds};
    static const char *const names[4] = {"detections", "groundtruths", "labels", "rec_thresholds"};
    for (int i = 0; i < 4; i++) {
        st = tt_check_cpu(inputs[i], names[i], err);
        if (st != TT_OK)
            return st;
    }
    return TT_OK;
}

static inline int32_t cell(const tt_view *v, int64_t i, int64_t j)
{
    return *(const int32_t *)(v->data + (i * v->stride[0] + j * v->stride[1]) * 4);
}

/* The curves of one label's sorted detections `e` [n] (outcome bytes `out` [n, T*4], levels
 * `level` [n]) into the outputs; npig [4] its counted ground truths per area range. */
typedef struct {
    int64_t t, r, k, m;
    double *precision, *recall, *scores;
    const double *thresholds;
} outputs;

static void label_curves(const outputs *o, int64_t k, const entry *e, const uint8_t *outcome,
                         const uint8_t *level, int64_t n, const int64_t *npig, int64_t *kept,
                         double *rc, double *pr)
{
    const int64_t t_count = o->t, r_count = o->r, am = AREAS * o->m;
    for (int64_t m = 0; m < o->m; m++) {
        int64_t nd = 0;
        for (int64_t i = 0; i < n; i++)
            if (level[i] <= m)
                kept[nd++] = i;
        for (int64_t a = 0; a < AREAS; a++) {
            if (npig[a] == 0)
                continue;
            const double total = (double)npig[a];
            const int64_t col = a * o->m + m;
            for (int64_t t = 0; t < t_count; t++) {
                int64_t tp = 0, fp = 0;
                for (int64_t j = 0; j < nd; j++) {
                    const uint8_t v = outcome[kept[j] * t_count * AREAS + t * AREAS + a];
                    tp += v == 1;
                    fp += v == 0;
                    rc[j] = (double)tp / total;
                    pr[j] = (double)tp / ((double)fp + (double)tp + DBL_EPSILON);
                }
                for (int64_t j = nd - 1; j > 0; j--)
                    if (pr[j] > pr[j - 1])
                        pr[j - 1] = pr[j];
                o->recall[(t * o->k + k) * am + col] = nd ? rc[nd - 1] : 0.0;
                double *p = o->precision + ((t * r_count) * o->k + k) * am + col;
                double *s = o->scores + ((t * r_count) * o->k + k) * am + col;
                const int64_t step = o->k * am; /* one recall threshold further */
                int64_t ri = 0;
                for (; ri < r_count; ri++) {
                    const int64_t at = lower_bound(rc, nd, o->thresholds[ri]);
                    if (at >= nd)
                        break;
                    p[ri * step] = pr[at];
                    s[ri * step] = (double)e[kept[at]].score;
                }
                for (; ri < r_count; ri++)
                    p[ri * step] = s[ri * step] = 0.0;
            }
        }
    }
}

tt_status tt_coco_accumulate(const tt_view *precision, const tt_view *recall, const tt_view *scores,
                             const tt_view *detections, const tt_view *groundtruths,
                             const tt_view *labels, const tt_view *rec_thresholds, tt_error *err)
{
    tt_status st = check_args(precision, recall, scores, detections, groundtruths, labels,
                              rec_thresholds, err);
    if (st != TT_OK)
        return st;
    const int64_t t_count = precision->shape[0], k_count = precision->shape[2];
    const int64_t m_count = precision->shape[3] / AREAS;
    const int64_t n = detections->shape[0], g = groundtruths->shape[0];
    const int64_t words = (t_count + 9) / 10;
    const int64_t *label_ids = (const int64_t *)labels->data;
    const double *thresholds = (const double *)rec_thresholds->data;
    if (labels->stride[0] != 1 && k_count > 1)
        return tt_fail(err, TT_EVALUE, "labels", "expected a contiguous tensor");
    if (rec_thresholds->stride[0] != 1 && rec_thresholds->shape[0] > 1)
        return tt_fail(err, TT_EVALUE, "rec_thresholds", "expected a contiguous tensor");
    for (int64_t i = 0; i + 1 < k_count; i++)
        if (label_ids[i] >= label_ids[i + 1])
            return tt_fail(err, TT_EVALUE, "labels",
                           "expected strictly ascending labels, got %lld then %lld at %lld",
                           (long long)label_ids[i], (long long)label_ids[i + 1], (long long)i + 1);

    entry *e = malloc((size_t)(n ? n : 1) * sizeof *e);
    uint8_t *outcome = malloc((size_t)(n ? n : 1) * (size_t)(t_count * AREAS));
    uint8_t *level = malloc((size_t)(n ? n : 1));
    int64_t *npig = calloc((size_t)(k_count ? k_count : 1) * AREAS, sizeof *npig);
    int64_t *kept = malloc((size_t)(n ? n : 1) * sizeof *kept);
    double *rc = malloc((size_t)(n ? n : 1) * sizeof *rc);
    double *pr = malloc((size_t)(n ? n : 1) * sizeof *pr);
    if (!e || !outcome || !level || !npig || !kept || !rc || !pr) {
        st = tt_fail(err, TT_ENOMEM, "detections", "out of memory for %lld detections",
                     (long long)n);
        goto done;
    }
    /* Read and check every row before anything is written. */
    for (int64_t i = 0; i < n; i++) {
        const uint32_t packed = (uint32_t)cell(detections, i, 1);
        const int64_t k = find_label(label_ids, k_count, (int64_t)(packed & LABEL_MASK));
        const int64_t lv = (int64_t)(packed >> 24);
        if (k < 0 || lv >= m_count) {
            st = tt_fail(err, TT_EVALUE, "detections",
                         k < 0 ? "row %lld: label %lld is not in labels"
                               : "row %lld: maxDets level %lld, expected below M = %lld",
                         (long long)i, k < 0 ? (long long)(packed & LABEL_MASK) : (long long)lv,
                         (long long)m_count);
            goto done;
        }
        const int32_t bits = cell(detections, i, 0);
        float score;
        memcpy(&score, &bits, sizeof score);
        e[i] = (entry){k, score, i};
    }
    for (int64_t i = 0; i < g; i++) {
        const int64_t label = cell(groundtruths, i, 0);
        const int64_t k = find_label(label_ids, k_count, label);
        if (k < 0) {
            st = tt_fail(err, TT_EVALUE, "groundtruths", "row %lld: label %lld is not in labels",
                         (long long)i, (long long)label);
            goto done;
        }
        const int32_t counted = cell(groundtruths, i, 1);
        for (int a = 0; a < AREAS; a++)
            npig[k * AREAS + a] += (counted >> a) & 1;
    }
    qsort(e, (size_t)n, sizeof *e, by_label_score_row);
    for (int64_t i = 0; i < n; i++) {
        const int64_t row = e[i].row;
        level[i] = (uint8_t)((uint32_t)cell(detections, row, 1) >> 24);
        uint8_t *o = outcome + i * t_count * AREAS;
        for (int64_t w = 0; w < words; w++) {
            uint64_t word = (uint64_t)(uint32_t)cell(detections, row, 2 + 2 * w) |
                            (uint64_t)(uint32_t)cell(detections, row, 3 + 2 * w) << 32;
            for (int64_t d = 0; d < DIGITS_PER_WORD && w * 10 + d / AREAS < t_count; d++) {
                o[(w * 10 + d / AREAS) * AREAS + d % AREAS] = (uint8_t)(word % 3);
                word /= 3;
            }
        }
    }
    double *p_out = (double *)precision->data, *r_out = (double *)recall->data,
           *s_out = (double *)scores->data;
    const int64_t cells = t_count * precision->shape[1] * k_count * AREAS * m_count;
    for (int64_t i = 0; i < cells; i++)
        p_out[i] = s_out[i] = -1.0;
    for (int64_t i = 0; i < t_count * k_count * AREAS * m_count; i++)
        r_out[i] = -1.0;
    const outputs o = {t_count, precision->shape[1], k_count, m_count, p_out, r_out,
                       s_out,   thresholds};
    for (int64_t start = 0, k = 0; k < k_count; k++) {
        int64_t end = start;
        while (end < n && e[end].k == k)
            end++;
        label_curves(&o, k, e + start, outcome + start * t_count * AREAS, level + start,
                     end - start, npig + k * AREAS, kept, rc, pr);
        start = end;
    }
done:
    free(e);
    free(outcome);
    free(level);
    free(npig);
    free(kept);
    free(rc);
    free(pr);
    return st;
}
