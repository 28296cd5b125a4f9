/*
 * packed_text.c: the checks of the text kernels' packed sentences (packed_text.h): int64 1-D
 * contiguous tensors, offsets rising from 0 to the end of what they cut, every sentence with
 * a reference. Run once per update before any work; O(N + M).
 */
#include "kernels/packed_text.h"

/* An int64 1-D contiguous host tensor. */
static tt_status check_vector(const tt_view *v, const char *arg, tt_error *err)
{
    char got[96];
    if (v->dtype != TT_I64)
        return tt_fail(err, TT_ETYPE, arg, "expected an int64 1-D tensor, got %s",
                       tt_describe(v, got, sizeof got));
    if (v->ndim != 1)
        return tt_fail(err, TT_EVALUE, arg, "expected an int64 1-D tensor, got %s",
                       tt_describe(v, got, sizeof got));
    const int64_t shape[1] = {v->shape[0]};
    return tt_check_out(v, arg, TT_I64, 1, shape, err);
}

/* `count` offsets from 0 to `end`, rising (strictly when `strict`). */
static tt_status check_offsets(const tt_view *v, const char *arg, int64_t count, int64_t end,
                               int strict, tt_error *err)
{
    if (v->shape[0] != count)
        return tt_fail(err, TT_EVALUE, arg, "expected %lld offsets, got %lld", (long long)count,
                       (long long)v->shape[0]);
    const int64_t *o = (const int64_t *)v->data;
    int ok = o[0] == 0 && o[count - 1] == end;
    for (int64_t i = 1; ok && i < count; i++)
        ok = strict ? o[i] > o[i - 1] : o[i] >= o[i - 1];
    if (!ok)
        return tt_fail(err, TT_EVALUE, arg, "expected %s offsets from 0 to %lld",
                       strict ? "increasing" : "non-decreasing", (long long)end);
    return TT_OK;
}

tt_status tt_packed_text_check(const tt_view *out, int out_cols, const tt_view *hyp,
                               const tt_view *hyp_offsets, const tt_view *refs,
                               const tt_view *ref_offsets, const tt_view *groups,
                               tt_packed_text *text, tt_error *err)
{
    const tt_view *vectors[5] = {hyp, hyp_offsets, refs, ref_offsets, groups};
    const char *names[5] = {"hyp", "hyp_offsets", "refs", "ref_offsets", "groups"};
    for (int k = 0; k < 5; k++) {
        tt_status st = check_vector(vectors[k], names[k], err);
        if (st != TT_OK)
            return st;
    }
    if (groups->shape[0] < 1)
        return tt_fail(err, TT_EVALUE, "groups",
                       "expected at least one offset (0 for no sentences), got none");
    if (ref_offsets->shape[0] < 1)
        return tt_fail(err, TT_EVALUE, "ref_offsets",
                       "expected at least one offset (0 for no references), got none");
    const int64_t n = groups->shape[0] - 1, m = ref_offsets->shape[0] - 1;
    const int64_t shape[2] = {n, out_cols};
    tt_status st = tt_check_out(out, "out", TT_F64, out_cols ? 2 : 1, shape, err);
    if (st == TT_OK)
        st = check_offsets(hyp_offsets, "hyp_offsets", n + 1, hyp->shape[0], 0, err);
    if (st == TT_OK)
        st = check_offsets(ref_offsets, "ref_offsets", m + 1, refs->shape[0], 0, err);
    if (st == TT_OK)
        st = check_offsets(groups, "groups", n + 1, m, 1, err);
    if (st != TT_OK)
        return st;
    text->sentences = n;
    text->hyp = (const int64_t *)hyp->data;
    text->hyp_offsets = (const int64_t *)hyp_offsets->data;
    text->refs = (const int64_t *)refs->data;
    text->ref_offsets = (const int64_t *)ref_offsets->data;
    text->groups = (const int64_t *)groups->data;
    return TT_OK;
}
