/*
 * topk.c: whether each row's target falls in its top k, without sorting the row. Classes are
 * ordered by score descending, lower index first among equal scores (a stable order). A row's
 * prediction is its target when that is in the top k (a hit), else its best class (torchmetrics'
 * top-k rule, which its precision, F-beta and specificity count). The workload is top-k
 * accuracy: N from hundreds to millions, C mostly small (10, 100), k mostly 1 or 5.
 *
 * Rows of up to 32 classes count each class's rank from its pairs of classes: with i < j, i is
 * ahead of j iff s_i >= s_j, and otherwise j is ahead of i, so one compare per pair settles both
 * ranks (C(C-1)/2 compares, no branches). On SSE2 four rows share the lanes of one vector, so
 * one compare serves four rows, and a class's top-k count is summed in its lanes over a chunk.
 * Wider rows keep a small sorted list of their best k while scanning the C scores once: O(C*k)
 * worst case, O(C) in practice for the small k that top-k accuracy uses.
 *
 * A row is loaded and checked before anything is counted for it; a bad row stops the walk and
 * the rows before it are uncounted again by a second walk with sign -1.
 */
#include "kernels/topk.h"

#include <stdlib.h>

typedef struct {
    const tt_view *preds, *target, *mask;
    const int64_t *ignore_index;
    int64_t k;
    int64_t *out;   /* [C, 3] */
    double *row;    /* scratch [C]: one row of scores */
    double *best_v; /* scratch [k]: the best scores so far, in rank order */
    int64_t *best;  /* scratch [C + 1]: their class indices */
    int64_t top1;   /* the loaded row's best class (rank 0) */
} topk_job;

/* Up to this many classes a row's ranks are counted from its pairs, O(C^2) but free of
 * branches; the insertion below mispredicts a branch at almost every insertion on random
 * scores. */
#define PAIRWISE_MAX_CLASSES 32

/* Fills job->best with the classes whose stable rank is below k, in class order, and job->top1.
 * One compare per pair (i < j): i is ahead of j iff s_i >= s_j, else j is ahead of i (the row
 * holds no NaN). */
static void select_top_pairwise(topk_job *job, int64_t classes)
{
    const double *row = job->row;
    int64_t rank[PAIRWISE_MAX_CLASSES] = {0};
    for (int64_t i = 0; i < classes; i++)
        for (int64_t j = i + 1; j < classes; j++) {
            const int64_t i_ahead = row[i] >= row[j];
            rank[j] += i_ahead;
            rank[i] += 1 - i_ahead;
        }
    int64_t count = 0;
    for (int64_t j = 0; j < classes; j++) {
        job->best[count] = j;
        count += rank[j] < job->k;
        if (rank[j] == 0)
            job->top1 = j;
    }
}

/* Fills job->best with the k best class indices of the loaded row, in rank order, and job->top1. */
static void select_top_insertion(topk_job *job, int64_t classes)
{
    const double *row = job->row;
    double *best_v = job->best_v;
    int64_t *best = job->best, count = 0;
    for (int64_t j = 0; j < classes; j++) {
        const double v = row[j];
        /* equal scores keep the earlier class ahead, so only a strictly larger score moves up */
        if (count == job->k && !(v > best_v[count - 1]))
            continue;
        int64_t pos = count < job->k ? count++ : count - 1;
        while (pos > 0 && v > best_v[pos - 1]) {
            best_v[pos] = best_v[pos - 1];
            best[pos] = best[pos - 1];
            pos--;
        }
        best_v[pos] = v;
        best[pos] = j;
    }
    job->top1 = best[0];
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* ---- rows of up to PAIRWISE_MAX_CLASSES classes, four rows in the lanes of SSE2 vectors ---- */

/* v[j] after a group's pairs, per lane: #{i < j : i ahead of j} - #{i > j : j ahead of i}, so
 * that j's rank is v[j] + (C - 1 - j). A union, so the hit check reads one lane. */
typedef union {
    __m128i v[PAIRWISE_MAX_CLASSES];
    int32_t lane[PAIRWISE_MAX_CLASSES][4];
} group_ranks;

/* float16, bfloat16 and float32 are exact in float; the compare is s_i >= s_j per lane. */
static void pairs_f32(const __m128 *s, int64_t classes, group_ranks *g)
{
    for (int64_t j = 0; j < classes; j++)
        g->v[j] = _mm_setzero_si128();
    for (int64_t i = 0; i < classes; i++) {
        const __m128 si = s[i];
        __m128i behind_i = g->v[i];
        for (int64_t j = i + 1; j < classes; j++) {
            const __m128i i_ahead = _mm_castps_si128(_mm_cmpge_ps(si, s[j])); /* -1 or 0 */
            behind_i = _mm_add_epi32(behind_i, i_ahead);
            g->v[j] = _mm_sub_epi32(g->v[j], i_ahead);
        }
        g->v[i] = behind_i;
    }
}

/* float64 compares in double: rows 0, 1 in d[2j], rows 2, 3 in d[2j + 1]; the two 64-bit masks
 * are narrowed to four 32-bit lanes by taking the low half of each. */
static void pairs_f64(const __m128d *d, int64_t classes, group_ranks *g)
{
    for (int64_t j = 0; j < classes; j++)
        g->v[j] = _mm_setzero_si128();
    for (int64_t i = 0; i < classes; i++) {
        const __m128d lo = d[2 * i], hi = d[2 * i + 1];
        __m128i behind_i = g->v[i];
        for (int64_t j = i + 1; j < classes; j++) {
            const __m128 m_lo = _mm_castpd_ps(_mm_cmpge_pd(lo, d[2 * j]));
            const __m128 m_hi = _mm_castpd_ps(_mm_cmpge_pd(hi, d[2 * j + 1]));
            const __m128i i_ahead =
                _mm_castps_si128(_mm_shuffle_ps(m_lo, m_hi, _MM_SHUFFLE(2, 0, 2, 0)));
            behind_i = _mm_add_epi32(behind_i, i_ahead);
            g->v[j] = _mm_sub_epi32(g->v[j], i_ahead);
        }
        g->v[i] = behind_i;
    }
}

/* Loads column j of the four rows into s[j] (float lanes); returns the lanes holding a NaN. */
typedef int (*float_group_load)(const char *const row[4], int64_t classes, int64_t col_step,
                                __m128 *s);

/* Defines `name`, the float_group_load of scores read by `load` (tt_f16_at, ...). */
#define DEFINE_FLOAT_GROUP_LOAD(name, load)                                                        \
    static int name(const char *const row[4], int64_t classes, int64_t col_step, __m128 *s)        \
    {                                                                                              \
        __m128 nan = _mm_setzero_ps();                                                             \
        for (int64_t j = 0; j < classes; j++) {                                                    \
            const int64_t at = j * col_step;                                                       \
            s[j] = _mm_set_ps(load(row[3] + at), load(row[2] + at), load(row[1] + at),             \
                              load(row[0] + at));                                                  \
            nan = _mm_or_ps(nan, _mm_cmpunord_ps(s[j], s[j]));                                     \
        }                                                                                          \
        return _mm_movemask_ps(nan);                                                               \
    }

DEFINE_FLOAT_GROUP_LOAD(load_group_f16, tt_f16_at)
DEFINE_FLOAT_GROUP_LOAD(load_group_bf16, tt_bf16_at)
DEFINE_FLOAT_GROUP_LOAD(load_group_f32, tt_f32_at)

/* The loader of each score dtype compared in float lanes (float64 is compared as double). */
static const float_group_load float_group_loads[TT_NDTYPES] = {
    [TT_F16] = load_group_f16,
    [TT_BF16] = load_group_bf16,
    [TT_F32] = load_group_f32,
};

/* Ranks the four rows at row[0..3] into g; returns the lanes (bit r: row r) holding a NaN.
 * `load`: float_group_loads[dtype], NULL for float64. */
static int group_pairs(float_group_load load, const char *const row[4], int64_t classes,
                       int64_t col_step, group_ranks *g)
{
    if (load == NULL) {
        int nan_lanes = 0;
        __m128d d[2 * PAIRWISE_MAX_CLASSES];
        __m128d nan = _mm_setzero_pd();
        for (int64_t j = 0; j < classes; j++) {
            const int64_t at = j * col_step;
            d[2 * j] = _mm_set_pd(*(const double *)(row[1] + at), *(const double *)(row[0] + at));
            d[2 * j + 1] =
                _mm_set_pd(*(const double *)(row[3] + at), *(const double *)(row[2] + at));
            nan = _mm_or_pd(nan, _mm_cmpunord_pd(d[2 * j], d[2 * j]));
            nan_lanes |= _mm_movemask_pd(_mm_cmpunord_pd(d[2 * j + 1], d[2 * j + 1])) << 2;
        }
        nan_lanes |= _mm_movemask_pd(nan);
        pairs_f64(d, classes, g);
        return nan_lanes;
    }
    __m128 s[PAIRWISE_MAX_CLASSES];
    const int nan_lanes = load(row, classes, col_step, s);
    pairs_f32(s, classes, g);
    return nan_lanes;
}

/* int32 lane masks for the 16 sets of counted lanes */
static const int32_t lane_masks[16][4] = {
    {0, 0, 0, 0},   {-1, 0, 0, 0},   {0, -1, 0, 0},   {-1, -1, 0, 0},
    {0, 0, -1, 0},  {-1, 0, -1, 0},  {0, -1, -1, 0},  {-1, -1, -1, 0},
    {0, 0, 0, -1},  {-1, 0, 0, -1},  {0, -1, 0, -1},  {-1, -1, 0, -1},
    {0, 0, -1, -1}, {-1, 0, -1, -1}, {0, -1, -1, -1}, {-1, -1, -1, -1},
};

/* topk_walk for classes <= PAIRWISE_MAX_CLASSES: rows in groups of four. A group's NaN rows and
 * counted rows with an out-of-range label are found first; the rows before the first of them
 * are counted, then the walk stops there. */
static int64_t topk_walk_groups(topk_job *job, int64_t sign, int64_t stop, tt_error *err)
{
    int64_t targets[TT_CHUNK];
    uint8_t keep[TT_CHUNK];
    const tt_view *preds = job->preds;
    const int64_t rows = preds->shape[0], classes = preds->shape[1];
    const int64_t row_step = tt_step(preds, 0), col_step = tt_step(preds, 1);
    const int has_ignore = job->ignore_index != NULL;
    const int64_t ignore = has_ignore ? *job->ignore_index : 0;
    int64_t *out = job->out;

    /* class j is in the top k iff v[j] + (C - 1 - j) < k, i.e. v[j] < limit[j]; it is the best
     * class (rank 0) iff v[j] < first_v[j] */
    int32_t limit[PAIRWISE_MAX_CLASSES];
    __m128i first_v[PAIRWISE_MAX_CLASSES], missed_best[PAIRWISE_MAX_CLASSES];
    for (int64_t j = 0; j < classes; j++) {
        limit[j] = (int32_t)(job->k - (classes - 1 - j));
        first_v[j] = _mm_set1_epi32((int32_t)(1 - (classes - 1 - j)));
    }
    const float_group_load load = float_group_loads[preds->dtype];
    group_ranks g;

    for (int64_t start = 0; start < rows && start < stop; start += TT_CHUNK) {
        const int64_t n = rows - start < TT_CHUNK ? rows - start : TT_CHUNK;
        const int64_t end = stop - start < n ? stop - start : n; /* rows of this chunk to visit */
        tt_load_labels(job->target, start, n, 0, targets);
        tt_load_keep(job->mask, start, n, keep);
        for (int64_t j = 0; j < classes; j++)
            missed_best[j] = _mm_setzero_si128(); /* minus the count per lane */
        int64_t bad = -1;
        for (int64_t i = 0; i < end; i += 4) {
            const int lanes = end - i < 4 ? (int)(end - i) : 4;
            const char *row[4];
            for (int r = 0; r < 4; r++) /* missing lanes repeat the first row, never counted */
                row[r] = preds->data + (start + i + (r < lanes ? r : 0)) * row_step;
            int stopping = group_pairs(load, row, classes, col_step, &g) & ((1 << lanes) - 1);
            const int nan_lanes = stopping;
            int counted = 0;
            for (int r = 0; r < lanes; r++) {
                const int64_t t = targets[i + r];
                if ((keep[i + r] == 0) | (has_ignore & (t == ignore)))
                    continue;
                if ((uint64_t)t >= (uint64_t)classes)
                    stopping |= 1 << r;
                else
                    counted |= 1 << r;
            }
            int first_bad = 4;
            if (stopping) {
                first_bad = 0;
                while (!(stopping >> first_bad & 1))
                    first_bad++;
                counted &= (1 << first_bad) - 1;
            }
            int hits = 0;
            for (int r = 0; r < 4; r++) {
                if (!(counted >> r & 1))
                    continue;
                const int64_t t = targets[i + r];
                const int64_t hit = g.lane[t][r] < limit[t];
                hits |= (int)hit << r;
                out[t * 3 + 0] += sign & -hit; /* a hit predicts its target */
                out[t * 3 + 1] += sign & -hit;
                out[t * 3 + 2] += sign;
            }
            /* a miss predicts its best class */
            const __m128i miss_v = _mm_loadu_si128((const __m128i *)lane_masks[counted & ~hits]);
            for (int64_t j = 0; j < classes; j++)
                missed_best[j] = _mm_sub_epi32(
                    missed_best[j], _mm_and_si128(miss_v, _mm_cmplt_epi32(g.v[j], first_v[j])));
            if (stopping) {
                bad = start + i + first_bad;
                if (sign > 0 && (nan_lanes >> first_bad & 1))
                    tt_fail(err, TT_EVALUE, "preds", "NaN in the scores of sample %lld",
                            (long long)bad);
                else if (sign > 0)
                    tt_fail(err, TT_EVALUE, "target",
                            "label %lld at index %lld is out of range [0, %lld)",
                            (long long)targets[i + first_bad], (long long)bad, (long long)classes);
                break;
            }
        }
        for (int64_t j = 0; j < classes; j++) {
            int32_t count[4];
            _mm_storeu_si128((__m128i *)count, missed_best[j]);
            out[j * 3] += sign * ((int64_t)count[0] + count[1] + count[2] + count[3]);
        }
        if (bad >= 0)
            return bad;
    }
    return -1;
}
#endif /* __SSE2__ */

/* Loads row r of preds into job->row; returns 1 when it holds a NaN. */
static int load_row(const topk_job *job, int64_t r)
{
    const tt_view *preds = job->preds;
    tt_view row = *preds;
    row.ndim = 1;
    row.data = preds->data + r * tt_step(preds, 0);
    row.shape[0] = preds->shape[1];
    row.stride[0] = preds->stride[1];
    return tt_load_scores(&row, 0, row.shape[0], 0, job->row) >= 0;
}

static int64_t topk_walk(topk_job *job, int64_t sign, int64_t stop, tt_error *err)
{
    int64_t targets[TT_CHUNK];
    uint8_t keep[TT_CHUNK];
    const tt_view *preds = job->preds;
    const int64_t rows = preds->shape[0], classes = preds->shape[1];
    const int has_ignore = job->ignore_index != NULL;
    const int64_t ignore = has_ignore ? *job->ignore_index : 0;

    for (int64_t start = 0; start < rows && start < stop; start += TT_CHUNK) {
        const int64_t n = rows - start < TT_CHUNK ? rows - start : TT_CHUNK;
        tt_load_labels(job->target, start, n, 0, targets);
        tt_load_keep(job->mask, start, n, keep);
        for (int64_t i = 0; i < n; i++) {
            const int64_t r = start + i, t = targets[i];
            if (r >= stop)
                return -1;
            /* NaN is an error even in a masked row */
            if (load_row(job, r)) {
                if (sign > 0)
                    tt_fail(err, TT_EVALUE, "preds", "NaN in the scores of sample %lld",
                            (long long)r);
                return r;
            }
            if ((keep[i] == 0) | (has_ignore & (t == ignore)))
                continue;
            if ((uint64_t)t >= (uint64_t)classes) {
                if (sign > 0)
                    tt_fail(err, TT_EVALUE, "target",
                            "label %lld at index %lld is out of range [0, %lld)", (long long)t,
                            (long long)r, (long long)classes);
                return r;
            }
            if (classes <= PAIRWISE_MAX_CLASSES)
                select_top_pairwise(job, classes);
            else
                select_top_insertion(job, classes);
            int64_t hit = 0;
            for (int64_t m = 0; m < job->k; m++)
                hit |= job->best[m] == t;
            job->out[(hit ? t : job->top1) * 3 + 0] += sign;
            job->out[t * 3 + 1] += sign & -hit;
            job->out[t * 3 + 2] += sign;
        }
    }
    return -1;
}

tt_status tt_topk_update(const tt_view *out, const tt_view *preds, const tt_view *target,
                         const tt_view *mask, const int64_t *ignore_index, int64_t k, tt_error *err)
{
    if (tt_check_scores(preds, "preds", 2, err) || tt_check_labels(target, "target", 1, err))
        return err->status;
    const int64_t classes = preds->shape[1];
    if (target->shape[0] != preds->shape[0])
        return tt_fail(err, TT_EVALUE, "target", "expected %lld samples (as preds), got %lld",
                       (long long)preds->shape[0], (long long)target->shape[0]);
    if (k < 1 || k > classes)
        return tt_fail(err, TT_EVALUE, "k",
                       "expected 1 <= k <= %lld (the number of classes), got %lld",
                       (long long)classes, (long long)k);
    const int64_t shape[2] = {classes, 3};
    if (tt_check_out(out, "out", TT_I64, 2, shape, err) ||
        tt_check_mask(mask, preds->shape[0], err))
        return err->status;

    topk_job job = {preds, target, mask, ignore_index, k, (int64_t *)out->data, NULL,
                    NULL,  NULL,   0};
    job.row = malloc((size_t)classes * sizeof *job.row);
    job.best_v = malloc((size_t)k * sizeof *job.best_v);
    /* the pairwise path stores a candidate before it knows whether it counts: room for C + 1 */
    job.best = malloc((size_t)(classes + 1) * sizeof *job.best);
    tt_status status = TT_OK;
    if (job.row == NULL || job.best_v == NULL || job.best == NULL) {
        status =
            tt_fail(err, TT_ENOMEM, "preds", "out of memory for %lld classes", (long long)classes);
        goto done;
    }
    int64_t (*walk)(topk_job *, int64_t, int64_t, tt_error *) = topk_walk;
#if defined(__SSE2__)
    if (classes <= PAIRWISE_MAX_CLASSES)
        walk = topk_walk_groups;
#endif
    const int64_t bad = walk(&job, +1, INT64_MAX, err);
    if (bad >= 0) {
        walk(&job, -1, bad, err);
        status = err->status;
    }
done:
    free(job.row);
    free(job.best_v);
    free(job.best);
    return status;
}
