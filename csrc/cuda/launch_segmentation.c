/*
 * launch_segmentation.c: the host side of the segmentation kernels (segmentation.cu):
 * label_counts, mask_counts and class_argmax on CUDA tensors. Each validates on the host with
 * the CPU core's shape and dtype rules and messages (and returns there with ctx->check_only),
 * then enqueues on ctx->stream: `out` zeroed, `status` set to INT64_MAX (two byte memsets: the
 * device is little-endian), the kernel. Nothing is read back and nothing waits: a bad value
 * only lowers `status` on the device (segmentation.cu has the keys), and the caller decides on
 * the device what to add to its state (csrc/API.md, "Segmentation counts on CUDA").
 */
#include "cuda/call.h"

/* Blocks per sample row: enough for the whole GPU over all rows, no more than the pixels
 * need, and enough that no block counts 2^31 pixels of a row. */
static void grid_of(int device, int64_t rows, int64_t pixels, unsigned *gx, unsigned *gy)
{
    const int64_t y = rows < 65535 ? (rows > 0 ? rows : 1) : 65535;
    const int64_t want = (int64_t)tt_sm_count(device) * 8;
    int64_t x = (want + y - 1) / y;
    const int64_t need = (pixels + TT_THREADS - 1) / TT_THREADS;
    if (x > need)
        x = need;
    const int64_t floor = pixels / ((int64_t)1 << 31) + 1;
    if (x < floor)
        x = floor;
    *gx = (unsigned)(x < 1 ? 1 : x);
    *gy = (unsigned)y;
}

/* A row view [rows, pixels] of `v` (dims 0 and last). */
static tt_dview rows_of(const tt_view *v)
{
    tt_dview d;
    memset(&d, 0, sizeof d);
    d.data = v->data;
    d.dtype = (int)v->dtype;
    d.rows = v->shape[0];
    d.cols = v->shape[v->ndim - 1];
    d.rstep = tt_step(v, 0);
    d.cstep = tt_step(v, v->ndim - 1);
    return d;
}

static tt_status check_status(const tt_view *status, const tt_view *out, tt_view *s, tt_error *err)
{
    const int64_t shape[1] = {1};
    if (tt_cuda_same_device(status, "status", out, "out", s, err))
        return err->status;
    return tt_check_out(s, "status", TT_I64, 1, shape, err);
}

/* The checks label_counts and mask_counts share: out and status on one device with preds and
 * target, both label tensors of `ndim` dims and one shape. */
static tt_status check_pair(const tt_view *out, const tt_view *status, const tt_view *preds,
                            const tt_view *target, int ndim, tt_view *o, tt_view *p, tt_view *t,
                            tt_error *err)
{
    char got[96], want[96];
    tt_view s;
    memset(o, 0, sizeof *o);
    memset(p, 0, sizeof *p);
    memset(t, 0, sizeof *t);
    if (tt_cuda_out(out, "out", o, err) || check_status(status, out, &s, err) ||
        tt_cuda_same_device(preds, "preds", out, "out", p, err) ||
        tt_cuda_same_device(target, "target", out, "out", t, err) ||
        tt_check_labels(p, "preds", ndim, err) || tt_check_labels(t, "target", ndim, err))
        return err->status;
    for (int d = 0; d < ndim; d++) {
        if (p->shape[d] != t->shape[d])
            return tt_fail(err, TT_EVALUE, "target", "expected the shape of preds (%s), got %s",
                           tt_describe(p, want, sizeof want), tt_describe(t, got, sizeof got));
    }
    return TT_OK;
}

/* Zeroes `out` (`bytes`), sets *status = INT64_MAX, launches kernel k. */
static tt_status run(const tt_cuda_ctx *ctx, int device, void *out, size_t bytes, long long *status,
                     tt_kernel_id k, unsigned gx, unsigned gy, size_t shared, void *args,
                     tt_error *err)
{
    tt_cuda_call c;
    const tt_cu_api *cu = NULL;
    tt_cu_result r = TT_CU_SUCCESS;
    tt_status st = tt_cuda_call_enter(&c, ctx, device, err);
    if (st == TT_OK) {
        cu = tt_cu();
        if (bytes > 0)
            r = cu->memset_d8_async((tt_cu_deviceptr)(uintptr_t)out, 0, bytes, c.q.stream);
        if (r == TT_CU_SUCCESS && status != NULL)
            r = cu->memset_d8_async((tt_cu_deviceptr)(uintptr_t)status, 0xff, 7, c.q.stream);
        if (r == TT_CU_SUCCESS && status != NULL)
            r = cu->memset_d8_async((tt_cu_deviceptr)(uintptr_t)status + 7, 0x7f, 1, c.q.stream);
        if (r == TT_CU_SUCCESS)
            r = tt_launch(&c.q, k, gx, gy, TT_THREADS, 1, shared, args);
        if (r != TT_CU_SUCCESS)
            st = tt_cuda_fail(err, r, "a segmentation kernel's launch");
    }
    tt_cuda_call_end(&c);
    return st;
}

tt_status tt_cuda_label_counts(const tt_cuda_ctx *ctx, const tt_view *out, const tt_view *status,
                               const tt_view *preds, const tt_view *target, int64_t from_scores,
                               tt_error *err)
{
    tt_view o, p, t;
    if (from_scores < 0 || from_scores > 3)
        return tt_fail(err, TT_EVALUE, "from_scores", "expected 0, 1, 2 or 3, got %lld",
                       (long long)from_scores);
    if (check_pair(out, status, preds, target, 2, &o, &p, &t, err))
        return err->status;
    const int64_t shape[3] = {p.shape[0], o.ndim == 3 ? o.shape[1] : 1, 3};
    if (tt_check_out(&o, "out", TT_I64, 3, shape, err))
        return err->status;
    if (ctx->check_only)
        return TT_OK;
    tt_segment_args a;
    memset(&a, 0, sizeof a);
    a.preds = rows_of(preds);
    a.target = rows_of(target);
    a.samples = p.shape[0];
    a.classes = o.shape[1];
    a.pixels = p.shape[1];
    a.out = (long long *)out->data;
    a.status = (long long *)status->data;
    unsigned gx, gy;
    grid_of(out->device_id, a.samples, a.pixels, &gx, &gy);
    const size_t shared = (size_t)(3 * a.classes) * sizeof(unsigned);
    const int fits = shared <= TT_SHARED_BYTES;
    const size_t bytes = (size_t)(a.samples * a.classes * 3) * sizeof(long long);
    return run(ctx, out->device_id, out->data, bytes, a.status,
               fits ? TT_K_LABEL_COUNTS_SHARED : TT_K_LABEL_COUNTS_GLOBAL, gx, gy,
               fits ? shared : 0, &a, err);
}

tt_status tt_cuda_mask_counts(const tt_cuda_ctx *ctx, const tt_view *out, const tt_view *status,
                              const tt_view *preds, const tt_view *target, tt_error *err)
{
    tt_view o, p, t;
    if (check_pair(out, status, preds, target, 3, &o, &p, &t, err))
        return err->status;
    const int64_t shape[3] = {p.shape[0], p.shape[1], 3};
    if (tt_check_out(&o, "out", TT_I64, 3, shape, err))
        return err->status;
    if (ctx->check_only)
        return TT_OK;
    tt_segment_args a;
    memset(&a, 0, sizeof a);
    a.preds = rows_of(preds);
    a.target = rows_of(target);
    a.preds_class_step = tt_step(preds, 1);
    a.target_class_step = tt_step(target, 1);
    a.samples = p.shape[0];
    a.classes = p.shape[1];
    a.pixels = p.shape[2];
    a.out = (long long *)out->data;
    a.status = (long long *)status->data;
    unsigned gx, gy;
    grid_of(out->device_id, a.samples * a.classes, a.pixels, &gx, &gy);
    const size_t bytes = (size_t)(a.samples * a.classes * 3) * sizeof(long long);
    return run(ctx, out->device_id, out->data, bytes, a.status, TT_K_MASK_COUNTS, gx, gy, 0, &a,
               err);
}

tt_status tt_cuda_class_argmax(const tt_cuda_ctx *ctx, const tt_view *out, const tt_view *scores,
                               tt_error *err)
{
    char got[96];
    tt_view o, sc;
    if (tt_cuda_out(out, "out", &o, err) ||
        tt_cuda_same_device(scores, "scores", out, "out", &sc, err) ||
        tt_check_scores(&sc, "scores", 3, err))
        return err->status;
    if (sc.shape[1] < 1)
        return tt_fail(err, TT_EVALUE, "scores", "expected at least one class, got %s",
                       tt_describe(&sc, got, sizeof got));
    const int64_t shape[2] = {sc.shape[0], sc.shape[2]};
    if (tt_check_out(&o, "out", TT_I64, 2, shape, err))
        return err->status;
    if (ctx->check_only || sc.shape[0] * sc.shape[2] == 0)
        return TT_OK;
    tt_class_argmax_args a;
    memset(&a, 0, sizeof a);
    a.scores = rows_of(scores);
    a.class_step = tt_step(scores, 1);
    a.classes = sc.shape[1];
    a.out = (long long *)out->data;
    unsigned gx, gy;
    grid_of(out->device_id, sc.shape[0], sc.shape[2], &gx, &gy);
    return run(ctx, out->device_id, NULL, 0, NULL, TT_K_CLASS_ARGMAX, gx, gy, 0, &a, err);
}
