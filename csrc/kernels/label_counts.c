/*
 * label_counts.c: intersection and pixel counts per class of two index maps, one pass. The
 * workload: a segmentation metric's update on index maps (or on the argmax of its scores),
 * e.g. 16 images of 512 x 512 int64 labels and 21 classes; memory bound for small C.
 *
 * Each sample's row goes in chunks of TT_CHUNK labels converted to int64 (int64 rows with unit
 * stride are read in place); every label is range-checked where it is used (one unsigned
 * compare, well predicted). Up to JOINT_CLASSES classes a pixel is one increment of a joint
 * [C, C] histogram (4 copies, folded into the counts at the end of the row); beyond, three
 * increments of counters that sit side by side in the [N, C, 3] scratch buffer. The scratch is
 * copied to `out` once every label passed.
 */
#include "kernels/label_counts.h"

#include <stdlib.h>

/* Joint [C, C] histograms pay for themselves up to this many classes (4 copies of 32 x 32 int64
 * fill a 32 KB L1 cache) and on rows of at least JOINT_PIXELS_PER_CELL pixels per cell cleared. */
#define JOINT_CLASSES 32
#define JOINT_COPIES 4
#define JOINT_PIXELS_PER_CELL 2

/* Sample `i` of an [N, P] view as a 1-D view of P labels. */
static tt_view row_of(const tt_view *v, int64_t i)
{
    tt_view row = *v;
    row.data = v->data + i * tt_step(v, 0);
    row.ndim = 1;
    row.shape[0] = v->shape[1];
    row.stride[0] = v->stride[1];
    return row;
}

/* Labels start..start+n of a 1-D row: in place for unit-stride int64, else converted into buf. */
static const int64_t *chunk(const tt_view *row, int64_t start, int64_t n, int64_t *buf)
{
    if (row->dtype == TT_I64 && (row->stride[0] == 1 || row->shape[0] < 2))
        return (const int64_t *)(const void *)row->data + start;
    tt_load_labels(row, start, n, 0, buf);
    return buf;
}

/* The first label of `v` outside [0, classes) in row order: its sample in *sample, its value
 * in *value; 0 when there is none. The error path only: a plain walk. */
static int first_bad(const tt_view *v, int64_t classes, int64_t *sample, int64_t *value)
{
    const int64_t step0 = tt_step(v, 0), step1 = tt_step(v, 1);
    for (int64_t i = 0; i < v->shape[0]; i++) {
        for (int64_t j = 0; j < v->shape[1]; j++) {
            const int64_t x = tt_load_label(v->data + i * step0 + j * step1, v->dtype);
            if (x < 0 || x >= classes) {
                *sample = i, *value = x;
                return 1;
            }
        }
    }
    return 0;
}

/* Whether x and y both lie in [0, classes): a negative label is a huge unsigned one. */
static inline int in_range(int64_t x, int64_t y, int64_t classes)
{
    return (uint64_t)x < (uint64_t)classes && (uint64_t)y < (uint64_t)classes;
}

/* The counters below are indexed by labels checked against `classes` just before, in buffers
 * tt_label_counts sizes from `classes` (c: 3 * classes, joint: JOINT_COPIES * classes^2); the
 * analyser does not carry those sizes across the calls. */
// NOLINTBEGIN(clang-analyzer-security.ArrayBound)
/* Pixels of one chunk into c [C, 3], three increments a pixel; 0 at a label outside the range
 * (counts then partial: the caller drops them). */
static int count_triples(const int64_t *a, const int64_t *b, int64_t n, int64_t classes, int64_t *c)
{
    for (int64_t i = 0; i < n; i++) {
        if (!in_range(a[i], b[i], classes))
            return 0;
        c[3 * a[i]] += a[i] == b[i];
        c[3 * a[i] + 1]++;
        c[3 * b[i] + 2]++;
    }
    return 1;
}

/* Pixels of one chunk into JOINT_COPIES joint [C, C] histograms, pixel i into copy i % 4: one
 * increment a pixel, and runs of one class (the common case with few classes) do not wait on
 * the previous pixel's store to the same counter. 0 at a label outside the range. */
static int count_joint(const int64_t *a, const int64_t *b, int64_t n, int64_t classes,
                       int64_t *joint)
{
    const int64_t cells = classes * classes;
    int64_t i = 0;
    for (; i + JOINT_COPIES <= n; i += JOINT_COPIES) {
        for (int64_t k = 0; k < JOINT_COPIES; k++) {
            if (!in_range(a[i + k], b[i + k], classes))
                return 0;
            joint[k * cells + a[i + k] * classes + b[i + k]]++;
        }
    }
    for (; i < n; i++) {
        if (!in_range(a[i], b[i], classes))
            return 0;
        joint[a[i] * classes + b[i]]++;
    }
    return 1;
}

/* c [C, 3] from the joint histograms: the diagonal, the row sums (preds) and column sums. */
static void fold_joint(const int64_t *joint, int64_t classes, int64_t *c)
{
    const int64_t cells = classes * classes;
    for (int64_t k = 0; k < JOINT_COPIES; k++) {
        const int64_t *h = joint + k * cells;
        for (int64_t x = 0; x < classes; x++) {
            for (int64_t y = 0; y < classes; y++) {
                const int64_t v = h[x * classes + y];
                c[3 * x + 1] += v;
                c[3 * y + 2] += v;
            }
            c[3 * x] += h[x * classes + x];
        }
    }
}

// NOLINTEND(clang-analyzer-security.ArrayBound)

/* Counts of sample rows p, t into c [C, 3] (zeros on entry), through the joint histograms when
 * `joint` is not NULL; 0 when a label fell outside [0, classes). */
static int count_row(const tt_view *p, const tt_view *t, int64_t classes, int64_t *c,
                     int64_t *buf_p, int64_t *buf_t, int64_t *joint)
{
    const int64_t pixels = p->shape[0];
    if (joint != NULL)
        memset(joint, 0, (size_t)(JOINT_COPIES * classes * classes) * sizeof *joint);
    for (int64_t start = 0; start < pixels; start += TT_CHUNK) {
        const int64_t n = pixels - start < TT_CHUNK ? pixels - start : TT_CHUNK;
        const int64_t *a = chunk(p, start, n, buf_p), *b = chunk(t, start, n, buf_t);
        const int ok = joint != NULL ? count_joint(a, b, n, classes, joint)
                                     : count_triples(a, b, n, classes, c);
        if (!ok)
            return 0;
    }
    if (joint != NULL)
        fold_joint(joint, classes, c);
    return 1;
}

static tt_status check_args(const tt_view *out, const tt_view *preds, const tt_view *target,
                            tt_error *err)
{
    char got[96], want[96];
    tt_status st = tt_check_labels(preds, "preds", 2, err);
    if (st == TT_OK)
        st = tt_check_labels(target, "target", 2, err);
    if (st != TT_OK)
        return st;
    if (preds->shape[0] != target->shape[0] || preds->shape[1] != target->shape[1])
        return tt_fail(err, TT_EVALUE, "target", "expected the shape of preds (%s), got %s",
                       tt_describe(preds, want, sizeof want), tt_describe(target, got, sizeof got));
    /* C is out's: the metrics size it from num_classes */
    const int64_t shape[3] = {preds->shape[0], out->ndim == 3 ? out->shape[1] : 1, 3};
    return tt_check_out(out, "out", TT_I64, 3, shape, err);
}

/* The error of a bad label: the first one of preds, else of target. */
static tt_status explain(const tt_view *preds, const tt_view *target, int64_t classes,
                         int64_t from_scores, tt_error *err)
{
    int64_t sample = 0, value = 0;
    const int in_preds = first_bad(preds, classes, &sample, &value);
    if (!in_preds)
        first_bad(target, classes, &sample, &value);
    const char *arg = in_preds ? "preds" : "target";
    const int64_t scored = in_preds ? TT_LABELS_PREDS_SCORED : TT_LABELS_TARGET_SCORED;
    if (value == -1 && (from_scores & scored))
        return tt_fail(err, TT_EVALUE, arg, "NaN in the scores of sample %lld", (long long)sample);
    return tt_fail(err, TT_EVALUE, arg, "sample %lld: class index %lld is out of range [0, %lld)",
                   (long long)sample, (long long)value, (long long)classes);
}

tt_status tt_label_counts(const tt_view *out, const tt_view *preds, const tt_view *target,
                          int64_t from_scores, tt_error *err)
{
    if (from_scores < 0 || from_scores > 3)
        return tt_fail(err, TT_EVALUE, "from_scores", "expected 0, 1, 2 or 3, got %lld",
                       (long long)from_scores);
    tt_status st = check_args(out, preds, target, err);
    if (st != TT_OK)
        return st;
    const int64_t n = preds->shape[0], classes = out->shape[1];
    const int64_t cells = n * classes * 3;
    int64_t *counts = calloc((size_t)(cells > 0 ? cells : 1), sizeof(int64_t));
    const int64_t pixels = preds->shape[1];
    const int use_joint =
        classes <= JOINT_CLASSES &&
        pixels >= (int64_t)JOINT_PIXELS_PER_CELL * JOINT_COPIES * classes * classes;
    const int64_t joint_cells = use_joint ? JOINT_COPIES * classes * classes : 0;
    int64_t *buf = malloc((size_t)(2 * (int64_t)TT_CHUNK + joint_cells) * sizeof(int64_t));
    int ok = counts != NULL && buf != NULL;
    if (!ok)
        st = tt_fail(err, TT_ENOMEM, "out", "no memory for %lld x %lld counts", (long long)n,
                     (long long)classes);
    for (int64_t i = 0; ok && i < n; i++) {
        const tt_view p = row_of(preds, i), t = row_of(target, i);
        ok = count_row(&p, &t, classes, counts + i * classes * 3, buf, buf + TT_CHUNK,
                       use_joint ? buf + 2 * (int64_t)TT_CHUNK : NULL);
        if (!ok)
            st = explain(preds, target, classes, from_scores, err);
    }
    if (ok && cells > 0)
        memcpy(out->data, counts, (size_t)cells * sizeof(int64_t));
    free(counts);
    free(buf);
    return st;
}
