/*
 * launch_moments.c: the host side of the moments kernels (launch.h): moments_update and
 * comoments_update reduce the batch into the call's scratch and merge it into the state with a
 * merge gated on the call's error record, so a batch holding a bad value (NaN, a bad weight)
 * leaves the state as it was, with no host synchronisation (the report is call.c's, as for the
 * counting kernels). moments_merge and comoments_merge launch the merge and read nothing back.
 * Validation first, with the CPU core's rules and messages; ctx->check_only returns after it.
 */
#include "cuda/call.h"

#include "core/dlpack_abi.h"

static int64_t columns_of(const tt_view *x) { return x->ndim == 2 ? x->shape[1] : 1; }

static tt_status check_state(const tt_view *state, int64_t columns, tt_error *err)
{
    const int64_t shape[2] = {columns, 6};
    return tt_check_out(state, "state", TT_F64, 2, shape, err);
}

/* Batch into scratch, merge into the state gated on the record, report. */
static tt_status moments_call(const tt_cuda_ctx *ctx, const tt_view *state, const tt_view *x,
                              const tt_view *second, int co, tt_error *err)
{
    const int64_t rows = x->shape[0], columns = columns_of(x);
    if (rows == 0 || columns == 0)
        return TT_OK; /* an empty batch merges as a no-op */
    tt_cuda_call c;
    tt_cu_result e;
    tt_status status = tt_cuda_call_enter(&c, ctx, state->device_id, err);
    if (status == TT_OK)
        status = tt_cuda_earlier_rejection(c.device, state->data, err);
    if (status != TT_OK)
        goto done;
    const size_t batch_bytes = ((size_t)columns * 6 * sizeof(double) + 255) & ~(size_t)255;
    const size_t partial_bytes = tt_cuda_moments_scratch_bytes(rows, columns, c.device);
    if ((status = tt_cuda_call_begin(&c, batch_bytes + partial_bytes, err)) != TT_OK)
        goto done;
    double *batch = (double *)c.scratch, *partials = (double *)(c.scratch + batch_bytes);
    e = co ? tt_cuda_comoments_batch_launch(x, second, columns, partials, batch, c.rec, &c.q)
           : tt_cuda_moments_batch_launch(x, second, columns, partials, batch, c.rec, &c.q);
    if (e != TT_CU_SUCCESS) {
        status = tt_cuda_fail(err, e, "a kernel launch");
        goto done;
    }
    tt_view bv;
    memset(&bv, 0, sizeof bv);
    bv.data = (char *)batch;
    bv.dtype = TT_F64;
    bv.ndim = 2;
    bv.shape[0] = columns;
    bv.shape[1] = 6;
    bv.stride[0] = 6;
    bv.stride[1] = 1;
    bv.device_type = TT_DL_CUDA;
    bv.device_id = c.device;
    e = co ? tt_cuda_comoments_merge_launch(state, &bv, c.rec, &c.q)
           : tt_cuda_moments_merge_launch(state, &bv, c.rec, &c.q);
    if (e != TT_CU_SUCCESS) {
        status = tt_cuda_fail(err, e, "the state merge");
        goto done;
    }
    tt_cuda_latch_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.by_code[TT_CODE_WEIGHT] = co ? NULL : second;
    spec.columns = columns;
    const tt_cuda_explain why = {TT_EXPLAIN_MOMENTS, 0, columns, 0};
    status = tt_cuda_call_report(&c, state->data, &spec, &why, err);
done:
    tt_cuda_call_end(&c);
    return status;
}

tt_status tt_cuda_moments_update(const tt_cuda_ctx *ctx, const tt_view *state, const tt_view *x,
                                 const tt_view *weights, tt_error *err)
{
    char got[96];
    tt_view s, xv, w;
    if (tt_cuda_out(state, "state", &s, err) ||
        tt_cuda_same_device(x, "x", state, "state", &xv, err) ||
        tt_cuda_same_device(weights, "weights", state, "state", &w, err))
        return err->status;
    if (tt_check_values(&xv, "x", err) || check_state(&s, columns_of(&xv), err))
        return err->status;
    if (weights != NULL) {
        if (tt_check_scores(&w, "weights", 1, err))
            return err->status;
        if (w.shape[0] != xv.shape[0])
            return tt_fail(err, TT_EVALUE, "weights", "expected [%lld] (one per sample), got %s",
                           (long long)xv.shape[0], tt_describe(&w, got, sizeof got));
    }
    if (ctx->check_only)
        return TT_OK;
    return moments_call(ctx, state, x, weights, 0, err);
}

tt_status tt_cuda_comoments_update(const tt_cuda_ctx *ctx, const tt_view *state, const tt_view *x,
                                   const tt_view *y, tt_error *err)
{
    char got[96], want[96];
    tt_view s, xv, yv;
    if (tt_cuda_out(state, "state", &s, err) ||
        tt_cuda_same_device(x, "x", state, "state", &xv, err) ||
        tt_cuda_same_device(y, "y", state, "state", &yv, err))
        return err->status;
    if (tt_check_values(&xv, "x", err) || tt_check_values(&yv, "y", err))
        return err->status;
    if (xv.ndim != yv.ndim || xv.shape[0] != yv.shape[0] || columns_of(&xv) != columns_of(&yv))
        return tt_fail(err, TT_EVALUE, "y", "expected the shape of x (%s), got %s",
                       tt_describe(&xv, want, sizeof want), tt_describe(&yv, got, sizeof got));
    if (check_state(&s, columns_of(&xv), err))
        return err->status;
    if (ctx->check_only)
        return TT_OK;
    return moments_call(ctx, state, x, y, 1, err);
}

/* Merges read nothing back: launch on the stream and return. */
static tt_status merge_call(const tt_cuda_ctx *ctx, const tt_view *state, const tt_view *other,
                            int co, tt_error *err)
{
    char got[96];
    tt_view s, o;
    if (tt_cuda_out(state, "state", &s, err) ||
        tt_cuda_same_device(other, "other", state, "state", &o, err))
        return err->status;
    if (o.dtype != TT_F64 || o.ndim != 2 || o.shape[1] != 6)
        return tt_fail(err, o.dtype != TT_F64 ? TT_ETYPE : TT_EVALUE, "other",
                       "expected a float64 state [D, 6], got %s", tt_describe(&o, got, sizeof got));
    if (check_state(&s, o.shape[0], err))
        return err->status;
    if (ctx->check_only || o.shape[0] == 0)
        return TT_OK;
    tt_cuda_call c;
    tt_status status = tt_cuda_call_enter(&c, ctx, state->device_id, err);
    if (status == TT_OK) {
        const tt_cu_result e = co ? tt_cuda_comoments_merge_launch(state, other, NULL, &c.q)
                                  : tt_cuda_moments_merge_launch(state, other, NULL, &c.q);
        if (e != TT_CU_SUCCESS)
            status = tt_cuda_fail(err, e, "the state merge");
    }
    tt_cuda_call_end(&c);
    return status;
}

tt_status tt_cuda_moments_merge(const tt_cuda_ctx *ctx, const tt_view *state, const tt_view *other,
                                tt_error *err)
{
    return merge_call(ctx, state, other, 0, err);
}

tt_status tt_cuda_comoments_merge(const tt_cuda_ctx *ctx, const tt_view *state,
                                  const tt_view *other, tt_error *err)
{
    return merge_call(ctx, state, other, 1, err);
}