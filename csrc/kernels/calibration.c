/*
 * calibration.c: calibration-error bins. Each confidence is placed by a binary search over the
 * bin boundaries (torch.bucketize with right=True, minus one, as torchmetrics bins), and its
 * bin's count, confidence sum and accuracy sum grow. The workload is one call per update of
 * CalibrationError: N up to millions, B = n_bins + 1 small (16 by default).
 *
 * One walk over the samples, each read once: every confidence is checked (no NaN, none below the
 * first boundary) and every hit (0 or 1) as it is counted into private per-bin totals, which are
 * added to the outputs only after the last sample; so a bad batch writes nothing, and an input
 * another thread changes meanwhile can never steer a write outside the bins.
 */
#include "kernels/calibration.h"

#include <math.h>
#include <stdlib.h>

/* The bin of c: #{j : b[j] <= c} - 1, for c >= b[0] (so the result is in [0, B)). A search
 * without branches on the data (the step a conditional move): confidences spread over the bins
 * made a branchy search mispredict at every level. */
static int64_t bin_of(const double *b, int64_t bins, double c)
{
    const double *base = b;
    int64_t n = bins;
    while (n > 1) {
        const int64_t half = n / 2;
        base = base[half] <= c ? base + half : base;
        n -= half;
    }
    return (base - b) + (*base <= c) - 1;
}

static tt_status check_args(const tt_view *counts, const tt_view *sums, const tt_view *conf,
                            const tt_view *hit, const tt_view *boundaries, tt_error *err)
{
    char got[96];
    if (counts->dtype != TT_I64 || counts->ndim != 1 || counts->shape[0] < 1)
        return tt_fail(err, counts->dtype != TT_I64 ? TT_ETYPE : TT_EVALUE, "counts",
                       "expected int64 [B] with B >= 1, got %s",
                       tt_describe(counts, got, sizeof got));
    tt_status st = tt_check_out(counts, "counts", TT_I64, 1, counts->shape, err);
    const int64_t bins = counts->shape[0];
    const int64_t sums_shape[2] = {bins, 2};
    if (st == TT_OK)
        st = tt_check_out(sums, "sums", TT_F64, 2, sums_shape, err);
    if (st == TT_OK)
        st = tt_check_scores(conf, "conf", 1, err);
    if (st == TT_OK)
        st = tt_check_labels(hit, "hit", 1, err);
    if (st != TT_OK)
        return st;
    if (hit->shape[0] != conf->shape[0])
        return tt_fail(err, TT_EVALUE, "hit", "expected %lld samples (as conf), got %lld",
                       (long long)conf->shape[0], (long long)hit->shape[0]);
    if (boundaries->dtype != TT_F64 || boundaries->ndim != 1 || boundaries->shape[0] != bins)
        return tt_fail(err, boundaries->dtype != TT_F64 ? TT_ETYPE : TT_EVALUE, "boundaries",
                       "expected float64 [%lld] (one per bin), got %s", (long long)bins,
                       tt_describe(boundaries, got, sizeof got));
    return tt_check_cpu(boundaries, "boundaries", err);
}

/* Count the samples into the private totals: counts [bins], sums [bins, 2] (zeroed). */
static tt_status count_samples(const tt_view *conf, const tt_view *hit, const double *b,
                               int64_t bins, int64_t *counts, double *sums, tt_error *err)
{
    const int64_t n = conf->shape[0];
    double c[TT_CHUNK];
    int64_t h[TT_CHUNK];
    for (int64_t start = 0; start < n; start += TT_CHUNK) {
        const int64_t m = n - start < TT_CHUNK ? n - start : TT_CHUNK;
        const int64_t nan_at = tt_load_scores(conf, start, m, 0, c);
        if (nan_at >= 0)
            return tt_fail(err, TT_EVALUE, "conf", "NaN at index %lld",
                           (long long)(start + nan_at));
        tt_load_labels(hit, start, m, 0, h);
        for (int64_t i = 0; i < m; i++) {
            if (!(c[i] >= b[0])) /* also NaN, should the chunk have changed since it was read */
                return tt_fail(err, TT_EVALUE, "conf",
                               "%g at index %lld lies below the first boundary %g", c[i],
                               (long long)(start + i), b[0]);
            if (h[i] != 0 && h[i] != 1)
                return tt_fail(err, TT_EVALUE, "hit", "expected 0 or 1, got %lld at index %lld",
                               (long long)h[i], (long long)(start + i));
            const int64_t k = bin_of(b, bins, c[i]); /* in [0, bins) since c[i] >= b[0] */
            counts[k] += 1;
            sums[2 * k] += c[i];
            sums[2 * k + 1] += (double)h[i];
        }
    }
    return TT_OK;
}

tt_status tt_calibration_update(const tt_view *counts, const tt_view *sums, const tt_view *conf,
                                const tt_view *hit, const tt_view *boundaries, tt_error *err)
{
    tt_status st = check_args(counts, sums, conf, hit, boundaries, err);
    if (st != TT_OK)
        return st;
    const int64_t bins = counts->shape[0];
    /* one block of 4 words a bin: the boundaries, the private sums [bins, 2], the private counts */
    _Static_assert(sizeof(int64_t) == sizeof(double), "a count takes one word, as a sum");
    double *b = calloc((size_t)bins * 4, sizeof(double));
    if (b == NULL)
        return tt_fail(err, TT_ENOMEM, "boundaries", "no memory for %lld bins", (long long)bins);
    double *private_sums = b + bins;
    int64_t *private_counts = (int64_t *)(private_sums + 2 * bins);
    for (int64_t j = 0; j < bins; j++) {
        b[j] = tt_f64_at(boundaries->data + j * tt_step(boundaries, 0));
        if (!isfinite(b[j]) || (j > 0 && b[j] < b[j - 1])) {
            st = tt_fail(err, TT_EVALUE, "boundaries",
                         "expected finite, non-decreasing values, got %g at index %lld", b[j],
                         (long long)j);
            goto done;
        }
    }
    st = count_samples(conf, hit, b, bins, private_counts, private_sums, err);
    if (st != TT_OK)
        goto done;
    int64_t *count = (int64_t *)counts->data;
    double *sum = (double *)sums->data;
    for (int64_t k = 0; k < bins; k++) {
        count[k] += private_counts[k];
        sum[2 * k] += private_sums[2 * k];
        sum[2 * k + 1] += private_sums[2 * k + 1];
    }
done:
    free(b);
    return st;
}
