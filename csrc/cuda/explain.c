/*
 * explain.c: a rejected CUDA call's report (cuda_api.h) in the CPU core's words, so that a bad
 * batch raises the same ValueError, naming the same argument, on either device.
 */
#include "cuda/pending.h"

/* kernels/binned.h's TT_BINNED_NAN_NOTE, word for word (_C_cuda is built without kernels/; the
 * emulation's comparison with the C core's message holds the two texts together) */
#define BINNED_NAN_NOTE                                                                            \
    " (a NaN score, or a row of logits whose softmax is undefined: a logit of +inf, or every "     \
    "logit -inf)"

static tt_status explain_sample(const tt_cuda_explain *why, const tt_cuda_report *r, tt_error *err)
{
    const long long row = TT_CUDA_KEY_POS(r->key);
    const int code = TT_CUDA_KEY_CODE(r->key);
    if (code == TT_CODE_NAN)
        return tt_fail(err, TT_EVALUE, "preds", "NaN in the scores of sample %lld", row);
    return tt_fail(err, TT_EVALUE, code == TT_CODE_TARGET ? "target" : "preds",
                   "label %lld at index %lld is out of range [0, %lld)", r->label, row,
                   (long long)why->classes);
}

static tt_status explain_threshold(const tt_cuda_explain *why, const tt_cuda_report *r,
                                   tt_error *err)
{
    const int64_t pos = TT_CUDA_KEY_POS(r->key);
    const long long row = pos / why->columns, col = pos % why->columns;
    const int code = TT_CUDA_KEY_CODE(r->key);
    if (code == TT_CODE_NAN)
        return tt_fail(err, TT_EVALUE, "preds", "NaN at sample %lld, column %lld", row, col);
    return tt_fail(err, TT_EVALUE, code == TT_CODE_TARGET ? "target" : "preds",
                   "value %lld at sample %lld, column %lld is not a binary label (0 or 1)",
                   r->label, row, col);
}

static tt_status explain_binned(const tt_cuda_explain *why, const tt_cuda_report *r, tt_error *err)
{
    if (r->thr_key != TT_CUDA_CLEAR) { /* the CPU core checks the thresholds first */
        const long long i = TT_CUDA_KEY_POS(r->thr_key);
        if (TT_CUDA_KEY_CODE(r->thr_key) == TT_THR_NAN)
            return tt_fail(err, TT_EVALUE, "thresholds", "NaN at index %lld", i);
        return tt_fail(err, TT_EVALUE, "thresholds",
                       "expected non-decreasing values, got %g after %g at index %lld", r->thr_here,
                       r->thr_before, i);
    }
    const int64_t pos = TT_CUDA_KEY_POS(r->key);
    const long long row = pos / why->columns, col = pos % why->columns;
    if (TT_CUDA_KEY_CODE(r->key) == TT_CODE_NAN)
        return tt_fail(err, TT_EVALUE, "preds", "NaN at sample %lld, column %lld%s", row, col,
                       why->multiclass ? BINNED_NAN_NOTE : "");
    return tt_fail(err, TT_EVALUE, "target", "label %lld at sample %lld is out of range [0, %lld)",
                   r->label, row, (long long)(why->multiclass ? why->columns : 2));
}

static tt_status explain_moments(const tt_cuda_explain *why, const tt_cuda_report *r, tt_error *err)
{
    const int64_t pos = TT_CUDA_KEY_POS(r->key);
    const long long row = pos / why->columns, col = pos % why->columns;
    switch (TT_CUDA_KEY_CODE(r->key)) {
    case TT_CODE_NAN:
        return tt_fail(err, TT_EVALUE, "x", "NaN at sample %lld, column %lld", row, col);
    case TT_CODE_NAN_Y:
        return tt_fail(err, TT_EVALUE, "y", "NaN at sample %lld, column %lld", row, col);
    default:
        return tt_fail(err, TT_EVALUE, "weights",
                       "expected finite weights >= 0, got %g at sample %lld", r->value, row);
    }
}

tt_status tt_cuda_explain_report(const tt_cuda_explain *why, const tt_cuda_report *report,
                                 tt_error *err)
{
    switch (why->kind) {
    case TT_EXPLAIN_SAMPLE: return explain_sample(why, report, err);
    case TT_EXPLAIN_THRESHOLD: return explain_threshold(why, report, err);
    case TT_EXPLAIN_BINNED: return explain_binned(why, report, err);
    default: return explain_moments(why, report, err);
    }
}
