/*
 * surface_distance.c: the Hausdorff distance between the edges of two binary images, per
 * (sample, class) pair of a batch. The workload: HausdorffDistance's update, a few images of a
 * few hundred pixels a side and a handful of classes, every pair a separate problem.
 *
 * Per pair, each mask is read once into bytes and its edges found (a mask pixel with a
 * 4-neighbour outside the mask or the image), kept row-major and transposed. The distance from
 * every pixel to the nearest edge pixel of the other mask is separable: first, per row, the
 * column distance to the nearest edge pixel of that row (two scans; inf where the row has
 * none), scaled by the column spacing into a per-column table of terms; then, per column that
 * holds an edge pixel of the first mask, the 1-D transform over the rows:
 *
 *   euclidean   min over rows q of (|r - q| sy)^2 + t(q): Felzenszwalb and Huttenlocher's lower
 *               envelope of parabolas (t the squared column distance);
 *   chessboard  min over q of max(|r - q| sy, t(q)): a forward and a backward scan, each with a
 *               queue of the rows that can still be nearest (an earlier row with a smaller term
 *               wins until its offset reaches the next row's term, and never again after);
 *   taxicab     min over q of |r - q| sy + t(q): a forward and a backward scan carrying the
 *               nearest row (equal slopes: the order of two rows never changes along a scan).
 *
 * Every candidate value is formed exactly as the oracle forms it (the offsets times the
 * spacing, then squared and added, their max or their sum, in double), so the transforms
 * pick among the same numbers; the directed distance is the max over the first mask's edge
 * pixels (for the euclidean metric, the square root of the largest squared distance). O(H W)
 * time per pair and direction, O(H W) memory for the whole call.
 */
#include "kernels/surface_distance.h"

#include <math.h>
#include <stdlib.h>

/* What one pair's work needs, allocated once per call. */
typedef struct {
    int64_t h, w;
    double sy, sx;
    int64_t metric;
    uint8_t *mask;      /* [H, W] one mask as 0/1 */
    uint8_t *edge[2];   /* [H, W] the edges of preds (0) and target (1) */
    uint8_t *edge_t[2]; /* [W, H] the same, transposed */
    double *terms;      /* [W, H] per column, the column-distance term of each row */
    int64_t *rows;      /* [H] envelope rows, queue */
    double *z;          /* [H + 1] envelope boundaries; the forward scan's values */
} workspace;

/* |a - b| times the spacing, as the oracle forms a row offset. */
static inline double offset(int64_t a, int64_t b, double step)
{
    return (double)(a > b ? a - b : b - a) * step;
}

/* Reads mask (n, c) of v into ws->mask and its edges into ws->edge[side] / edge_t[side];
 * returns the number of edge pixels. */
static int64_t load_edges(workspace *ws, const tt_view *v, int64_t n, int64_t c, int side)
{
    const int64_t h = ws->h, w = ws->w, sr = tt_step(v, 2), sc = tt_step(v, 3);
    const char *base = v->data + n * tt_step(v, 0) + c * tt_step(v, 1);
    uint8_t *mask = ws->mask;
    for (int64_t r = 0; r < h; r++) {
        const char *row = base + r * sr;
        if (tt_dtype_size(v->dtype) == 1 && sc == 1) {
            for (int64_t col = 0; col < w; col++)
                mask[r * w + col] = row[col] != 0;
        } else {
            for (int64_t col = 0; col < w; col++)
                mask[r * w + col] = tt_load_label(row + col * sc, v->dtype) != 0;
        }
    }
    uint8_t *edge = ws->edge[side], *edge_t = ws->edge_t[side];
    int64_t count = 0;
    for (int64_t r = 0; r < h; r++) {
        for (int64_t col = 0; col < w; col++) {
            const int64_t i = r * w + col;
            const int inner = r > 0 && r < h - 1 && col > 0 && col < w - 1 && mask[i - w] &&
                              mask[i + w] && mask[i - 1] && mask[i + 1];
            const uint8_t e = mask[i] && !inner;
            edge[i] = e;
            edge_t[col * h + r] = e;
            count += e;
        }
    }
    return count;
}

/* ws->terms[col, r]: the column distance from (r, col) to the nearest pixel of `edge` in row r,
 * times the column spacing (squared for the euclidean metric); inf where row r has none. */
static void column_terms(workspace *ws, const uint8_t *edge)
{
    const int64_t h = ws->h, w = ws->w;
    double *terms = ws->terms;
    for (int64_t r = 0; r < h; r++) {
        const uint8_t *row = edge + r * w;
        int64_t left = -1;
        for (int64_t col = 0; col < w; col++) { /* the gap to the left, parked in terms */
            if (row[col])
                left = col;
            terms[col * h + r] = left < 0 ? -1.0 : (double)(col - left);
        }
        int64_t right = -1;
        for (int64_t col = w - 1; col >= 0; col--) {
            if (row[col])
                right = col;
            double gap = terms[col * h + r];
            if (right >= 0 && (gap < 0 || (double)(right - col) < gap))
                gap = (double)(right - col);
            if (gap < 0) {
                terms[col * h + r] = INFINITY;
                continue;
            }
            const double d = gap * ws->sx;
            terms[col * h + r] = ws->metric == TT_SURFACE_EUCLIDEAN ? d * d : d;
        }
    }
}

static inline double euclidean(const double *t, int64_t q, int64_t r, double sy)
{
    const double dr = offset(r, q, sy);
    return dr * dr + t[q];
}

/* Where the parabolas of rows p < q cross (in rows). */
static inline double crossing(const double *t, int64_t p, int64_t q, double sy2)
{
    return ((t[q] - t[p]) / sy2 + (double)(q * q - p * p)) / (double)(2 * (q - p));
}

/* The largest squared euclidean distance over the rows `from` marks, in one column. */
static double worst_euclidean(workspace *ws, const double *t, const uint8_t *from)
{
    const int64_t h = ws->h;
    const double sy = ws->sy, sy2 = sy * sy;
    int64_t *v = ws->rows;
    double *z = ws->z;
    int64_t k = -1;
    for (int64_t q = 0; q < h; q++) {
        if (!isfinite(t[q]))
            continue;
        if (k < 0) {
            v[0] = q;
            z[0] = -INFINITY;
            z[1] = INFINITY;
            k = 0;
            continue;
        }
        double s = crossing(t, v[k], q, sy2);
        while (k > 0 && s <= z[k]) {
            k--;
            s = crossing(t, v[k], q, sy2);
        }
        k++;
        v[k] = q;
        z[k] = s;
        z[k + 1] = INFINITY;
    }
    const int64_t last = k;
    double worst = 0.0;
    k = 0;
    for (int64_t r = 0; r < h; r++) {
        while (k < last && z[k + 1] < (double)r)
            k++;
        if (!from[r])
            continue;
        double d = euclidean(t, v[k], r, sy); /* the neighbours too: a near tie rounds either way */
        if (k > 0)
            d = fmin(d, euclidean(t, v[k - 1], r, sy));
        if (k < last)
            d = fmin(d, euclidean(t, v[k + 1], r, sy));
        worst = fmax(worst, d);
    }
    return worst;
}

static inline double chessboard(const double *t, int64_t q, int64_t r, double sy)
{
    return fmax(offset(r, q, sy), t[q]);
}

/* One scan of the chessboard transform over rows start, start + dir, ...: the nearest of the
 * rows seen so far, into `out` (or, with `from`, min'd with `out` and the worst kept). */
static double chessboard_scan(workspace *ws, const double *t, int64_t dir, double *out,
                              const uint8_t *from)
{
    const int64_t h = ws->h;
    int64_t *queue = ws->rows, head = 0, tail = 0;
    double worst = 0.0;
    for (int64_t i = 0; i < h; i++) {
        const int64_t r = dir > 0 ? i : h - 1 - i;
        if (isfinite(t[r])) {
            while (tail > head && t[queue[tail - 1]] >= t[r])
                tail--;
            queue[tail++] = r;
        }
        while (tail - head >= 2 &&
               chessboard(t, queue[head + 1], r, ws->sy) <= chessboard(t, queue[head], r, ws->sy))
            head++;
        const double d = tail > head ? chessboard(t, queue[head], r, ws->sy) : INFINITY;
        if (from == NULL)
            out[r] = d;
        else if (from[r])
            worst = fmax(worst, fmin(d, out[r]));
    }
    return worst;
}

static inline double taxicab(const double *t, int64_t q, int64_t r, double sy)
{
    return offset(r, q, sy) + t[q];
}

/* The taxicab transform's scan, as chessboard_scan. */
static double taxicab_scan(workspace *ws, const double *t, int64_t dir, double *out,
                           const uint8_t *from)
{
    const int64_t h = ws->h;
    int64_t best = -1;
    double worst = 0.0;
    for (int64_t i = 0; i < h; i++) {
        const int64_t r = dir > 0 ? i : h - 1 - i;
        if (isfinite(t[r]) && (best < 0 || t[r] <= taxicab(t, best, r, ws->sy)))
            best = r;
        const double d = best < 0 ? INFINITY : taxicab(t, best, r, ws->sy);
        if (from == NULL)
            out[r] = d;
        else if (from[r])
            worst = fmax(worst, fmin(d, out[r]));
    }
    return worst;
}

/* max over the edge pixels of side `a` of the distance to the nearest edge pixel of side b. */
static double directed_distance(workspace *ws, int a, int b)
{
    const int64_t h = ws->h, w = ws->w;
    column_terms(ws, ws->edge[b]);
    double worst = 0.0;
    for (int64_t col = 0; col < w; col++) {
        const uint8_t *from = ws->edge_t[a] + col * h;
        int64_t any = 0;
        for (int64_t r = 0; r < h && !any; r++)
            any = from[r];
        if (!any)
            continue;
        const double *t = ws->terms + col * h;
        double d;
        if (ws->metric == TT_SURFACE_EUCLIDEAN) {
            d = worst_euclidean(ws, t, from);
        } else if (ws->metric == TT_SURFACE_CHESSBOARD) {
            chessboard_scan(ws, t, 1, ws->z, NULL);
            d = chessboard_scan(ws, t, -1, ws->z, from);
        } else {
            taxicab_scan(ws, t, 1, ws->z, NULL);
            d = taxicab_scan(ws, t, -1, ws->z, from);
        }
        worst = fmax(worst, d);
    }
    return ws->metric == TT_SURFACE_EUCLIDEAN ? sqrt(worst) : worst;
}

static tt_status check_args(const tt_view *out, const tt_view *preds, const tt_view *target,
                            int64_t metric, double row_spacing, double col_spacing, tt_error *err)
{
    char got[96], want[96];
    tt_status st = tt_check_labels(preds, "preds", 4, err);
    if (st == TT_OK)
        st = tt_check_labels(target, "target", 4, err);
    if (st != TT_OK)
        return st;
    for (int d = 0; d < 4; d++) {
        if (preds->shape[d] != target->shape[d])
            return tt_fail(err, TT_EVALUE, "target", "expected the shape of preds (%s), got %s",
                           tt_describe(preds, want, sizeof want),
                           tt_describe(target, got, sizeof got));
    }
    if (metric < TT_SURFACE_EUCLIDEAN || metric > TT_SURFACE_TAXICAB)
        return tt_fail(err, TT_EVALUE, "metric",
                       "expected 0 (euclidean), 1 (chessboard) or 2 (taxicab), got %lld",
                       (long long)metric);
    if (!(row_spacing > 0 && isfinite(row_spacing)))
        return tt_fail(err, TT_EVALUE, "row_spacing", "expected a positive finite number, got %g",
                       row_spacing);
    if (!(col_spacing > 0 && isfinite(col_spacing)))
        return tt_fail(err, TT_EVALUE, "col_spacing", "expected a positive finite number, got %g",
                       col_spacing);
    const int64_t shape[2] = {preds->shape[0], preds->shape[1]};
    return tt_check_out(out, "out", TT_F64, 2, shape, err);
}

static void release(workspace *ws)
{
    free(ws->mask);
    free(ws->terms);
    free(ws->rows);
    free(ws->z);
}

tt_status tt_surface_distance(const tt_view *out, const tt_view *preds, const tt_view *target,
                              int64_t metric, double row_spacing, double col_spacing, int directed,
                              tt_error *err)
{
    tt_status st = check_args(out, preds, target, metric, row_spacing, col_spacing, err);
    if (st != TT_OK)
        return st;
    const int64_t n = preds->shape[0], k = preds->shape[1];
    workspace ws = {.h = preds->shape[2],
                    .w = preds->shape[3],
                    .sy = row_spacing,
                    .sx = col_spacing,
                    .metric = metric};
    const size_t pixels = (size_t)(ws.h * ws.w > 0 ? ws.h * ws.w : 1);
    ws.mask = malloc(5 * pixels);
    ws.terms = malloc(pixels * sizeof(double));
    ws.rows = malloc((size_t)(ws.h + 1) * sizeof(int64_t));
    ws.z = malloc((size_t)(ws.h + 2) * sizeof(double));
    if (ws.mask == NULL || ws.terms == NULL || ws.rows == NULL || ws.z == NULL) {
        release(&ws);
        return tt_fail(err, TT_ENOMEM, "preds",
                       "no memory for the distance maps of %lld x %lld images", (long long)ws.h,
                       (long long)ws.w);
    }
    for (int side = 0; side < 2; side++) {
        ws.edge[side] = ws.mask + (1 + 2 * side) * pixels;
        ws.edge_t[side] = ws.mask + (2 + 2 * side) * pixels;
    }
    double *dst = (double *)out->data;
    for (int64_t i = 0; i < n; i++) {
        for (int64_t j = 0; j < k; j++) {
            const int64_t np = load_edges(&ws, preds, i, j, 0);
            const int64_t nt = load_edges(&ws, target, i, j, 1);
            double d;
            if (np == 0 || nt == 0) {
                d = np == 0 && nt == 0 ? NAN : INFINITY;
            } else {
                d = directed_distance(&ws, 0, 1);
                if (!directed)
                    d = fmax(d, directed_distance(&ws, 1, 0));
            }
            dst[i * k + j] = d;
        }
    }
    release(&ws);
    return TT_OK;
}
