/*
 * cluster_distances.c: DaviesBouldinScore's and DunnIndex's spreads, the per-cluster sum and max
 * of the samples' p-norm distances to their centroids, in one pass over the stored embeddings
 * (contract: csrc/API_CLUSTERING.md, "cluster_distances").
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>

#include "kernels/cluster_moments.h"
#include "kernels/embedding_rows.h"

/* The p-norm of v[0..d), as torch.linalg.vector_norm computes it: 2, 1, inf and 0 (the number of
 * non-zero values) by their own formulas, any other p as (sum |v|^p)^(1/p). */
static double p_norm(const double *v, int64_t d, double p)
{
    double acc = 0.0;
    if (p == 2.0) {
        for (int64_t j = 0; j < d; j++)
            acc += v[j] * v[j];
        return sqrt(acc);
    }
    for (int64_t j = 0; j < d; j++) {
        const double a = fabs(v[j]);
        if (p == 1.0)
            acc += a;
        else if (isinf(p))
            acc = a > acc ? a : acc;
        else if (p == 0.0)
            acc += a != 0.0;
        else
            acc += pow(a, p);
    }
    return (p == 1.0 || p == 0.0 || isinf(p)) ? acc : pow(acc, 1.0 / p);
}

/* The index of `label` in the sorted keys[0..k), or -1. Branch-free halving (a conditional move
 * per step): cluster labels arrive in random order, where a branching search mispredicts. */
static int64_t find_key(const int64_t *keys, int64_t k, int64_t label)
{
    if (k <= 0)
        return -1;
    const int64_t *base = keys;
    for (int64_t n = k; n > 1; n -= n / 2)
        base = base[n / 2] <= label ? base + n / 2 : base;
    return *base == label ? base - keys : -1;
}

static tt_status check_distances(const tt_view *out, const tt_view *data, const tt_view *labels,
                                 const tt_view *keys, const tt_view *centroids, double p,
                                 tt_error *err)
{
    char got[96];
    tt_status st = tt_check_scores(data, "data", 2, err);
    if (st == TT_OK)
        st = tt_check_labels(labels, "labels", 1, err);
    if (st == TT_OK && labels->shape[0] != data->shape[0])
        st =
            tt_fail(err, TT_EVALUE, "labels", "expected %lld labels, one per row of data, got %lld",
                    (long long)data->shape[0], (long long)labels->shape[0]);
    if (st == TT_OK && (keys->dtype != TT_I64 || keys->ndim != 1))
        st = tt_fail(err, keys->dtype != TT_I64 ? TT_ETYPE : TT_EVALUE, "keys",
                     "expected int64 cluster labels [K], got %s",
                     tt_describe(keys, got, sizeof got));
    if (st == TT_OK)
        st = tt_check_cpu(keys, "keys", err);
    if (st != TT_OK)
        return st;
    const int64_t k = keys->shape[0], d = data->shape[1];
    if (centroids->dtype != TT_F64 || centroids->ndim != 2 || centroids->shape[0] != k ||
        centroids->shape[1] != d)
        return tt_fail(err, centroids->dtype != TT_F64 ? TT_ETYPE : TT_EVALUE, "centroids",
                       "expected float64 [%lld, %lld] (keys x features of data), got %s",
                       (long long)k, (long long)d, tt_describe(centroids, got, sizeof got));
    st = tt_check_cpu(centroids, "centroids", err);
    if (st != TT_OK)
        return st;
    if (!(p >= 0.0))
        return tt_fail(err, TT_EVALUE, "p", "expected p >= 0 or inf, got %g", p);
    const int64_t shape[2] = {k, 2};
    return tt_check_out(out, "out", TT_F64, 2, shape, err);
}

/* The keys as int64, checked strictly increasing. */
static tt_status load_keys(const tt_view *keys, int64_t *dst, tt_error *err)
{
    const int64_t k = keys->shape[0], step = tt_step(keys, 0);
    for (int64_t i = 0; i < k; i++) {
        dst[i] = *(const int64_t *)(keys->data + i * step);
        if (i > 0 && dst[i] <= dst[i - 1])
            return tt_fail(err, TT_EVALUE, "keys",
                           "expected strictly increasing labels, got %lld "
                           "after %lld",
                           (long long)dst[i], (long long)dst[i - 1]);
    }
    return TT_OK;
}

tt_status tt_cluster_distances(const tt_view *out, const tt_view *data, const tt_view *labels,
                               const tt_view *keys, const tt_view *centroids, double p,
                               tt_error *err)
{
    tt_status st = check_distances(out, data, labels, keys, centroids, p, err);
    if (st != TT_OK)
        return st;
    const int64_t n = data->shape[0], d = data->shape[1], k = keys->shape[0];
    assert(n >= 0 && d >= 0 && k >= 0); /* shapes */
    const int64_t c_row = tt_step(centroids, 0), c_col = tt_step(centroids, 1);
    const size_t clusters = (size_t)(k > 0 ? k : 1), width = (size_t)(d > 0 ? d : 1);
    int64_t *key = malloc(clusters * sizeof *key);
    double *total = calloc(2 * clusters, sizeof *total);
    double *x = calloc(((size_t)tt_embedding_chunk_rows(d) + 1) * width,
                       sizeof *x); /* zeroed for the analyser */
    double *diff = x ? x + (size_t)tt_embedding_chunk_rows(d) * width : NULL;
    double *centre_of = malloc(clusters * width * sizeof *centre_of);
    if (key == NULL || total == NULL || x == NULL || centre_of == NULL) {
        st = tt_fail(err, TT_ENOMEM, "out", "out of memory for %lld clusters", (long long)k);
        goto done;
    }
    st = load_keys(keys, key, err);
    for (int64_t c = 0; c < k; c++) /* contiguous centroids */
        for (int64_t j = 0; j < d; j++)
            centre_of[c * d + j] = tt_f64_at(centroids->data + c * c_row + j * c_col);
    int64_t lab[TT_CHUNK];
    const int64_t rows = tt_embedding_chunk_rows(d);
    for (int64_t start = 0; start < n && st == TT_OK; start += rows) {
        const int64_t m = n - start < rows ? n - start : rows;
        tt_load_labels(labels, start, m, 0, lab);
        if (!tt_load_embedding_rows(data, start, m, d, x)) {
            st = tt_fail(err, TT_EVALUE, "data", "expected finite values, got NaN or inf");
            break;
        }
        for (int64_t i = 0; i < m; i++) {
            const int64_t c = find_key(key, k, lab[i]);
            if (c < 0) {
                st = tt_fail(err, TT_EVALUE, "labels", "label %lld (sample %lld) is not among keys",
                             (long long)lab[i], (long long)(start + i));
                break;
            }
            const double *centre = centre_of + c * d, *sample = x + i * d;
            double dist = 0.0;
            if (p == 2.0) {
                dist = sqrt(tt_squared_distance(sample, centre, d));
            } else {
                for (int64_t j = 0; j < d; j++)
                    diff[j] = sample[j] - centre[j];
                dist = p_norm(diff, d, p);
            }
            total[2 * c] += dist;
            total[2 * c + 1] = dist > total[2 * c + 1] ? dist : total[2 * c + 1];
        }
    }
    if (st == TT_OK) {
        double *dst = (double *)out->data;
        for (int64_t c = 0; c < k; c++) {
            dst[2 * c] += total[2 * c];
            dst[2 * c + 1] = total[2 * c + 1] > dst[2 * c + 1] ? total[2 * c + 1] : dst[2 * c + 1];
        }
    }
done:
    free(key);
    free(total);
    free(x);
    free(centre_of);
    return st;
}
