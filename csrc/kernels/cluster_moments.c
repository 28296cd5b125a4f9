/*
 * cluster_moments.c: CalinskiHarabaszScore's update in one call. The batch's clusters get their
 * count, mean and M2 (the summed squared distance to the mean) in two passes over the samples
 * (sums, then squared distances to the means: no cancellation), and merge with the clusters held
 * so far by the formula torch's reference uses: n = sum n_i, mean = sum n_i mean_i / n,
 * M2 = sum (M2_i + n_i |mean_i - mean|^2). torch spends about fifteen small ops on it (unique,
 * index_add, a float64 copy and a finiteness check of the whole batch); labels map to clusters
 * through key_slots.h, so any int64 label costs the same.
 */
#include "kernels/cluster_moments.h"

#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/embedding_rows.h"
#include "kernels/key_slots.h"

#define HALF 4294967296.0 /* 2^32 */

static tt_status check_block(const tt_view *block, int64_t *k, int64_t *d, tt_error *err)
{
    char got[96];
    if (block->dtype != TT_F64 || block->ndim != 1)
        return tt_fail(err, block->dtype != TT_F64 ? TT_ETYPE : TT_EVALUE, "block",
                       "expected a float64 block [1 + K (4 + D)], got %s",
                       tt_describe(block, got, sizeof got));
    tt_status st = tt_check_cpu(block, "block", err);
    if (st != TT_OK)
        return st;
    *k = 0;
    *d = -1;
    const int64_t len = block->shape[0];
    if (len == 0)
        return TT_OK;
    const double head = tt_f64_at(block->data);
    if (!(head >= 0 && head < 1e9 && head == floor(head)) || (len - 1) % ((int64_t)head + 4))
        return tt_fail(err, TT_EVALUE, "block",
                       "expected [D, rows of 4 + D values], got %lld values with D = %g",
                       (long long)len, head);
    *d = (int64_t)head;
    *k = (len - 1) / (*d + 4);
    return TT_OK;
}

static tt_status check_all(const tt_view *out, const tt_view *size, const tt_view *block,
                           const tt_view *data, const tt_view *labels, int64_t *k, int64_t *d,
                           tt_error *err)
{
    char got[96];
    static const int64_t one[1] = {1};
    tt_status st = tt_check_scores(data, "data", 2, err);
    if (st == TT_OK)
        st = tt_check_labels(labels, "labels", 1, err);
    if (st == TT_OK && labels->shape[0] != data->shape[0])
        st =
            tt_fail(err, TT_EVALUE, "labels", "expected %lld labels, one per row of data, got %lld",
                    (long long)data->shape[0], (long long)labels->shape[0]);
    if (st == TT_OK)
        st = check_block(block, k, d, err);
    if (st != TT_OK)
        return st;
    if (*d >= 0 && data->shape[0] > 0 && data->shape[1] != *d)
        return tt_fail(err, TT_EVALUE, "data",
                       "expected %lld features per sample, as the batches before, got %lld",
                       (long long)*d, (long long)data->shape[1]);
    if (*d < 0)
        *d = data->shape[1];
    st = tt_check_out(size, "size", TT_I64, 1, one, err);
    if (st != TT_OK)
        return st;
    const int64_t need = 1 + (*k + data->shape[0]) * (4 + *d);
    if (out->dtype != TT_F64 || out->ndim != 1 || out->shape[0] < need)
        return tt_fail(err, out->dtype != TT_F64 ? TT_ETYPE : TT_EVALUE, "out",
                       "expected float64 [L] with L >= %lld, got %s", (long long)need,
                       tt_describe(out, got, sizeof got));
    return tt_check_out(out, "out", TT_F64, 1, out->shape, err);
}

/* Row r of the block. */
static const char *row_at(const tt_view *block, int64_t d, int64_t r, int64_t col)
{
    return block->data + (1 + r * (4 + d) + col) * tt_step(block, 0);
}

/* The label of block row r; TT_EVALUE unless its halves are integers in range and its count,
 * M2 and mean are finite with count >= 1 and M2 >= 0. */
static tt_status block_row(const tt_view *block, int64_t d, int64_t r, int64_t *label,
                           tt_error *err)
{
    const double hi = tt_f64_at(row_at(block, d, r, TT_CM_HI));
    const double lo = tt_f64_at(row_at(block, d, r, TT_CM_LO));
    const double n = tt_f64_at(row_at(block, d, r, TT_CM_COUNT));
    const double m2 = tt_f64_at(row_at(block, d, r, TT_CM_M2));
    int ok = hi >= -HALF / 2 && hi < HALF / 2 && hi == floor(hi) && lo >= 0 && lo < HALF &&
             lo == floor(lo) && n >= 1 && n < INFINITY && m2 >= 0 && m2 < INFINITY;
    for (int64_t j = 0; ok && j < d; j++)
        ok = isfinite(tt_f64_at(row_at(block, d, r, TT_CM_MEAN + j)));
    if (!ok)
        return tt_fail(err, TT_EVALUE, "block",
                       "expected rows (label hi, label lo, count >= 1, M2 >= 0, finite means), "
                       "row %lld is not",
                       (long long)r);
    *label = (int64_t)((uint64_t)(int64_t)hi << 32 | (uint64_t)lo);
    return TT_OK;
}

typedef struct {
    int64_t d;
    double *arena;         /* the per-slot arrays below, one allocation */
    double *n, *m2, *mean; /* per slot: total count, M2, and first sum n_i mean_i, then mean */
    double *batch_n, *batch_mean, *batch_m2;
    int64_t *slot_of; /* per sample */
    double *x;        /* a chunk of samples widened, [chunk rows, D] (the batch is read twice, not
                         copied) */
} sums;

/* The batch's clusters: counts and means, then M2 about those means (a second read of the
 * samples rather than a float64 copy of the batch). */
static tt_status batch_moments(sums *s, tt_key_slots *slots, const tt_view *data,
                               const tt_view *labels, tt_error *err)
{
    const int64_t n = data->shape[0], d = s->d, rows = tt_embedding_chunk_rows(d);
    int64_t lab[TT_CHUNK];
    for (int64_t start = 0; start < n; start += rows) {
        const int64_t m = n - start < rows ? n - start : rows;
        if (!tt_load_embedding_rows(data, start, m, d, s->x))
            return tt_fail(err, TT_EVALUE, "data", "expected finite values, got NaN or inf");
        tt_load_labels(labels, start, m, 0, lab);
        for (int64_t i = 0; i < m; i++) {
            const int64_t slot = tt_key_slot(slots, lab[i], 0);
            s->slot_of[start + i] = slot;
            s->batch_n[slot] += 1.0;
            double *sum = s->batch_mean + slot * d;
            const double *x = s->x + i * d;
            for (int64_t j = 0; j < d; j++)
                sum[j] += x[j];
        }
    }
    for (int64_t slot = 0; slot < slots->slots; slot++)
        if (s->batch_n[slot] > 0)
            for (int64_t j = 0; j < d; j++)
                s->batch_mean[slot * d + j] /= s->batch_n[slot];
    for (int64_t start = 0; start < n; start += rows) {
        const int64_t m = n - start < rows ? n - start : rows;
        (void)tt_load_embedding_rows(data, start, m, d,
                                     s->x); /* finite: checked by the first pass */
        for (int64_t i = 0; i < m; i++) {
            const int64_t slot = s->slot_of[start + i];
            s->batch_m2[slot] += tt_squared_distance(s->x + i * d, s->batch_mean + slot * d, d);
        }
    }
    return TT_OK;
}

/* One part (count pn, means pmean, M2 pm2) of a cluster: its share of the count and weighted sum
 * (first = 1), or of M2 once the means are final (first = 0). */
static void add_part(const sums *s, int64_t slot, double pn, const double *pmean, int64_t pstep,
                     double pm2, int first)
{
    double *mean = s->mean + slot * s->d;
    if (first) {
        s->n[slot] += pn;
        for (int64_t j = 0; j < s->d; j++)
            mean[j] += pn * pmean[j * pstep];
        return;
    }
    double spread = 0.0;
    for (int64_t j = 0; j < s->d; j++)
        spread += (pmean[j * pstep] - mean[j]) * (pmean[j * pstep] - mean[j]);
    s->m2[slot] += pm2 + pn * spread;
}

/* The block's rows and the batch's clusters, merged per slot: two rounds of add_part. */
static void merge(const sums *s, const tt_key_slots *slots, const tt_view *block, int64_t k,
                  const int64_t *block_slot)
{
    const int64_t d = s->d, step = tt_step(block, 0) / (int64_t)sizeof(double);
    for (int first = 1; first >= 0; first--) {
        for (int64_t r = 0; r < k; r++)
            add_part(s, block_slot[r], tt_f64_at(row_at(block, d, r, TT_CM_COUNT)),
                     (const double *)row_at(block, d, r, TT_CM_MEAN), step,
                     tt_f64_at(row_at(block, d, r, TT_CM_M2)), first);
        for (int64_t slot = 0; slot < slots->slots; slot++)
            if (s->batch_n[slot] > 0)
                add_part(s, slot, s->batch_n[slot], s->batch_mean + slot * d, 1, s->batch_m2[slot],
                         first);
        if (first)
            for (int64_t slot = 0; slot < slots->slots; slot++)
                if (s->n[slot] > 0)
                    for (int64_t j = 0; j < d; j++)
                        s->mean[slot * d + j] /= s->n[slot];
    }
}

static void free_sums(sums *s)
{
    free(s->arena);
    free(s->slot_of);
    free(s->x);
}

tt_status tt_cluster_moments(const tt_view *out, const tt_view *size, const tt_view *block,
                             const tt_view *data, const tt_view *labels, tt_error *err)
{
    int64_t k = 0, d = 0;
    tt_status st = check_all(out, size, block, data, labels, &k, &d, err);
    if (st != TT_OK)
        return st;
    const int64_t n = data->shape[0], keys = k + n;
    if (k <= 0 && n <= 0) {
        *(int64_t *)size->data = 0;
        return TT_OK;
    }
    int64_t *block_label = malloc((size_t)(k > 0 ? k : 1) * sizeof *block_label);
    if (block_label == NULL)
        return tt_fail(err, TT_ENOMEM, "out", "out of memory for %lld clusters", (long long)k);
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int64_t r = 0; r < k && st == TT_OK; r++) {
        st = block_row(block, d, r, block_label + r, err);
        lo = block_label[r] < lo ? block_label[r] : lo;
        hi = block_label[r] > hi ? block_label[r] : hi;
    }
    int64_t lab[TT_CHUNK];
    for (int64_t start = 0; start < n && st == TT_OK; start += TT_CHUNK) {
        const int64_t m = n - start < TT_CHUNK ? n - start : TT_CHUNK;
        tt_load_labels(labels, start, m, 0, lab);
        for (int64_t i = 0; i < m; i++) {
            lo = lab[i] < lo ? lab[i] : lo;
            hi = lab[i] > hi ? lab[i] : hi;
        }
    }
    if (st != TT_OK) {
        free(block_label);
        return st;
    }
    tt_key_slots slots;
    st = tt_key_slots_init(&slots, keys, lo, hi, 0, 0, err);
    if (st != TT_OK) {
        free(block_label);
        return st;
    }
    const size_t cells = (size_t)slots.slots;
    const size_t width = (size_t)(d > 0 ? d : 1);
    sums s = {.d = d};
    /* one zeroed arena: n, m2, batch_n, batch_m2 (a double per slot), mean, batch_mean (D each) */
    s.arena = calloc(cells * (4 + 2 * width), sizeof(double));
    if (s.arena) {
        s.n = s.arena;
        s.m2 = s.n + cells;
        s.batch_n = s.m2 + cells;
        s.batch_m2 = s.batch_n + cells;
        s.mean = s.batch_m2 + cells;
        s.batch_mean = s.mean + cells * width;
    }
    s.slot_of = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    s.x = calloc((size_t)tt_embedding_chunk_rows(d) * width, sizeof(double));
    int64_t *block_slot = malloc((size_t)(k > 0 ? k : 1) * sizeof *block_slot);
    int64_t *order = malloc((size_t)keys * sizeof *order);
    if (!s.arena || !s.slot_of || !s.x || !block_slot || !order) {
        st = tt_fail(err, TT_ENOMEM, "out", "out of memory for %lld clusters", (long long)keys);
        goto done;
    }
    for (int64_t r = 0; r < k; r++)
        block_slot[r] = tt_key_slot(&slots, block_label[r], 0);
    st = batch_moments(&s, &slots, data, labels, err);
    if (st != TT_OK)
        goto done;
    merge(&s, &slots, block, k, block_slot);
    int64_t distinct = tt_key_slots_sorted(&slots, order);
    if (distinct < 0) {
        st = tt_fail(err, TT_ENOMEM, "out", "out of memory sorting %lld clusters", (long long)keys);
        goto done;
    }
    if (distinct > keys) /* never: the slots in use are at most the keys (bounds order and out) */
        distinct = keys;
    double *dst = (double *)out->data;
    dst[0] = (double)d;
    for (int64_t r = 0; r < distinct; r++) {
        double *row = dst + 1 + r * (4 + d);
        int64_t label = 0, unused = 0;
        tt_key_of(&slots, order[r], &label, &unused);
        const int64_t high = label >> 32; /* arithmetic shift: floor(label / 2^32) */
        row[TT_CM_HI] = (double)high;
        row[TT_CM_LO] = (double)(uint32_t)label;
        row[TT_CM_COUNT] = s.n[order[r]];
        row[TT_CM_M2] = s.m2[order[r]];
        for (int64_t j = 0; j < d; j++)
            row[TT_CM_MEAN + j] = s.mean[order[r] * d + j];
    }
    *(int64_t *)size->data = 1 + distinct * (4 + d);
done:
    free_sums(&s);
    free(block_slot);
    free(order);
    free(block_label);
    tt_key_slots_free(&slots);
    return st;
}
