/*
 * ter.c: Tercom's translation edit rate, as sacrebleu 2.x computes it, on int64 token ids. The
 * workload: a batch of sentences of 10-100 words, each against one to four references; per
 * pair up to 1000 candidate shifts, each an edit distance over a band of the DP matrix.
 *
 * Per (hypothesis, reference): rounds of shifts; a round traces the current hypothesis'
 * alignment and tries every span of 1-10 words that matches the reference at most 50
 * positions away, holds an error on both sides and is not aligned onto itself, moved before
 * each distinct aligned position; it keeps the candidate lowering the distance most (ties: the
 * longer span, the earlier start, the earlier destination). Rounds stop when none lowers it or
 * 1000 candidates were tried (the last round's best then unused). Edits = shifts + the final
 * distance. The distance is Levenshtein's in a beam of 25 cells about the scaled diagonal
 * (wider past a 50x length ratio, the last row in full), operations tried as substitution,
 * deletion, insertion with the first minimum kept. Candidates share their prefix with the
 * previous one: the rows of that prefix are kept (the DP of a prefix does not depend on the
 * rest, the hypothesis length being fixed), which is what sacrebleu's row cache does.
 */
#include "kernels/ter.h"

#include <math.h>
#include <stdlib.h>

#include "kernels/packed_text.h"

#define MAX_SHIFT_SIZE 10
#define MAX_SHIFT_DIST 50
#define MAX_CANDIDATES 1000
#define BEAM_WIDTH 25
#define INF_COST 10000000000000000LL /* sacrebleu's int(1e16): an unreached cell */

enum { OP_NOP, OP_SUB, OP_DEL, OP_INS, OP_UNDEF }; /* DEL: a hypothesis word alone */

/* One (hypothesis, reference) pair's buffers; nh and nr fixed for its lifetime. */
typedef struct {
    int64_t nh, nr;
    const int64_t *ref;
    int64_t *cost;    /* [nh + 1][nr + 1] */
    uint8_t *op;      /* [nh + 1][nr + 1] */
    int64_t *rowed;   /* [nh]: the words whose rows `cost` holds */
    int64_t valid;    /* rows 1..valid are those of rowed[0..valid - 1] */
    int64_t *words;   /* [nh]: the current hypothesis */
    int64_t *shifted; /* [nh]: a candidate */
    int64_t *best;    /* [nh]: the best candidate of a round */
    int64_t *align;   /* [nr]: the hypothesis position each reference word aligns to */
    uint8_t *ref_err; /* [nr] */
    uint8_t *hyp_err; /* [nh] */
    uint8_t *trace;   /* [nh + nr] */
    void *block;
} pair_work;

static int pair_init(pair_work *w, int64_t nh, int64_t nr, const int64_t *ref)
{
    if ((size_t)(nh + 1) > SIZE_MAX / 16 / (size_t)(nr + 1))
        return 0;
    const size_t cells = (size_t)(nh + 1) * (size_t)(nr + 1);
    const size_t ints = cells + 4 * (size_t)nh + (size_t)nr;
    const size_t bytes = cells + (size_t)(2 * nh + 2 * nr);
    char *block = malloc(ints * sizeof(int64_t) + bytes + 1);
    if (block == NULL)
        return 0;
    int64_t *p = (int64_t *)block;
    w->nh = nh, w->nr = nr, w->ref = ref, w->block = block, w->valid = 0;
    w->cost = p, p += cells;
    w->rowed = p, p += nh;
    w->words = p, p += nh;
    w->shifted = p, p += nh;
    w->best = p, p += nh;
    w->align = p, p += nr;
    uint8_t *b = (uint8_t *)p;
    w->op = b, b += cells;
    w->ref_err = b, b += nr;
    w->hyp_err = b, b += nh;
    w->trace = b;
    for (int64_t j = 0; j <= nr; j++)
        w->cost[j] = j, w->op[j] = OP_INS;
    return 1;
}

/* The beam-limited edit distance of `h` (nh words) to the reference; fills the rows. */
static int64_t distance(pair_work *w, const int64_t *h)
{
    const int64_t nh = w->nh, nr = w->nr, width = nr + 1;
    int64_t k = 0;
    while (k < w->valid && w->rowed[k] == h[k])
        k++;
    const double ratio = nh > 0 ? (double)nr / (double)nh : 1.0;
    const int64_t beam =
        BEAM_WIDTH < ratio / 2 ? (int64_t)ceil(ratio / 2 + BEAM_WIDTH) : (int64_t)BEAM_WIDTH;
    for (int64_t i = k + 1; i <= nh; i++) {
        int64_t *row = w->cost + i * width;
        const int64_t *prev = w->cost + (i - 1) * width;
        uint8_t *ops = w->op + i * width;
        for (int64_t j = 0; j <= nr; j++)
            row[j] = INF_COST, ops[j] = OP_UNDEF;
        const int64_t diag = (int64_t)floor((double)i * ratio);
        const int64_t lo = diag - beam > 0 ? diag - beam : 0;
        int64_t hi = diag + beam < width ? diag + beam : width;
        if (i == nh)
            hi = width;
        const int64_t word = h[i - 1];
        for (int64_t j = lo; j < hi; j++) {
            if (j == 0) {
                row[0] = prev[0] + 1, ops[0] = OP_DEL;
                continue;
            }
            const int same = word == w->ref[j - 1];
            int64_t best = INF_COST;
            uint8_t best_op = OP_UNDEF;
            if (best > prev[j - 1] + !same)
                best = prev[j - 1] + !same, best_op = same ? OP_NOP : OP_SUB;
            if (best > prev[j] + 1)
                best = prev[j] + 1, best_op = OP_DEL;
            if (best > row[j - 1] + 1)
                best = row[j - 1] + 1, best_op = OP_INS;
            row[j] = best, ops[j] = best_op;
        }
    }
    memcpy(w->rowed, h, (size_t)nh * sizeof(int64_t));
    w->valid = nh;
    return w->cost[nh * width + nr];
}

/* Alignment and error flags of the trace of the last distance(); 0 if the trace left the beam. */
static int alignment(pair_work *w)
{
    const int64_t width = w->nr + 1;
    int64_t i = w->nh, j = w->nr, n = 0;
    while (i > 0 || j > 0) {
        const uint8_t o = w->op[i * width + j];
        w->trace[n++] = o;
        if (o == OP_NOP || o == OP_SUB)
            i--, j--;
        else if (o == OP_INS)
            j--;
        else if (o == OP_DEL)
            i--;
        else
            return 0;
        if (i < 0 || j < 0)
            return 0;
    }
    int64_t h = -1, r = -1;
    while (n-- > 0) {
        const uint8_t o = w->trace[n];
        if (o == OP_NOP || o == OP_SUB) {
            h++, r++;
            w->align[r] = h;
            w->ref_err[r] = w->hyp_err[h] = o == OP_SUB;
        } else if (o == OP_DEL) {
            w->hyp_err[++h] = 1;
        } else {
            r++;
            w->align[r] = h;
            w->ref_err[r] = 1;
        }
    }
    return 1;
}

/* shifted = words with [start, start + len) moved to `to` (sacrebleu's three cases). */
static void move_span(const int64_t *words, int64_t nh, int64_t start, int64_t len, int64_t to,
                      int64_t *shifted)
{
    int64_t n = 0;
#define COPY(a, b)                                                                                 \
    for (int64_t x = (a); x < (b) && x < nh; x++) /* Python's slices stop at the end */            \
        shifted[n++] = words[x];
    if (to < start) {
        COPY(0, to) COPY(start, start + len) COPY(to, start) COPY(start + len, nh)
    } else if (to > start + len) {
        COPY(0, start) COPY(start + len, to) COPY(start, start + len) COPY(to, nh)
    } else {
        COPY(0, start) COPY(start + len, len + to) COPY(start, start + len) COPY(len + to, nh)
    }
#undef COPY
}

static int any_set(const uint8_t *flags, int64_t from, int64_t len)
{
    for (int64_t x = from; x < from + len; x++)
        if (flags[x])
            return 1;
    return 0;
}

typedef struct {
    int64_t gain, len, neg_start, neg_to;
} shift_key;

static int key_above(const shift_key *a, const shift_key *b)
{
    if (a->gain != b->gain)
        return a->gain > b->gain;
    if (a->len != b->len)
        return a->len > b->len;
    if (a->neg_start != b->neg_start)
        return a->neg_start > b->neg_start;
    return a->neg_to > b->neg_to;
}

/* One round: the best shift's gain (0 if none; negative when every candidate is worse) with
 * its words in w->best. *broken = 1 on an internal error (the trace left the beam). */
static int64_t best_shift(pair_work *w, int64_t *checked, int *broken)
{
    const int64_t nh = w->nh, nr = w->nr;
    const int64_t *h = w->words, *ref = w->ref;
    const int64_t score = distance(w, h);
    if (!alignment(w)) {
        *broken = 1;
        return 0;
    }
    int found = 0;
    shift_key best = {0, 0, 0, 0};
    for (int64_t sh = 0; sh < nh; sh++) {
        for (int64_t sr = 0; sr < nr; sr++) {
            if (sr - sh > MAX_SHIFT_DIST || sh - sr > MAX_SHIFT_DIST)
                continue;
            for (int64_t len = 1; len <= MAX_SHIFT_SIZE && h[sh + len - 1] == ref[sr + len - 1];
                 len++) {
                const int stop = sh + len == nh || sr + len == nr;
                const int64_t at = w->align[sr];
                if (any_set(w->hyp_err, sh, len) && any_set(w->ref_err, sr, len) &&
                    !(sh <= at && at < sh + len)) {
                    int64_t previous = -1;
                    for (int64_t off = -1; off < len; off++) {
                        const int64_t to = sr + off == -1 ? 0 : w->align[sr + off] + 1;
                        if (to == previous)
                            continue;
                        previous = to;
                        move_span(h, nh, sh, len, to, w->shifted);
                        const shift_key key = {score - distance(w, w->shifted), len, -sh, -to};
                        ++*checked;
                        if (!found || key_above(&key, &best)) {
                            found = 1, best = key;
                            memcpy(w->best, w->shifted, (size_t)nh * sizeof(int64_t));
                        }
                    }
                    if (*checked >= MAX_CANDIDATES)
                        return found ? best.gain : 0;
                }
                if (stop)
                    break;
            }
        }
    }
    return found ? best.gain : 0;
}

/* Tercom's edits of one pair; -1 on an internal error, -2 out of memory. */
static int64_t pair_edits(const int64_t *hyp, int64_t nh, const int64_t *ref, int64_t nr)
{
    if (nr <= 0 || nh < 0) /* lengths are >= 0 (offsets checked): an empty reference */
        return nh > 0 ? nh : 0;
    pair_work w;
    if (!pair_init(&w, nh, nr, ref))
        return -2;
    memcpy(w.words, hyp, (size_t)nh * sizeof(int64_t));
    int64_t shifts = 0, checked = 0, edits = -1;
    int broken = 0;
    for (;;) {
        const int64_t gain = best_shift(&w, &checked, &broken);
        if (broken)
            goto done;
        if (checked >= MAX_CANDIDATES || gain <= 0)
            break;
        shifts++;
        memcpy(w.words, w.best, (size_t)nh * sizeof(int64_t));
    }
    edits = shifts + distance(&w, w.words);
done:
    free(w.block);
    return edits;
}

tt_status tt_ter_sentences(const tt_view *out, const tt_view *hyp, const tt_view *hyp_offsets,
                           const tt_view *refs, const tt_view *ref_offsets, const tt_view *groups,
                           tt_error *err)
{
    tt_packed_text t;
    tt_status st =
        tt_packed_text_check(out, 2, hyp, hyp_offsets, refs, ref_offsets, groups, &t, err);
    if (st != TT_OK)
        return st;
    const int64_t n = t.sentences;
    double *rows = malloc((size_t)(n > 0 ? n : 1) * 2 * sizeof(double));
    if (rows == NULL)
        return tt_fail(err, TT_ENOMEM, "out", "no memory for %lld sentences", (long long)n);
    for (int64_t s = 0; s < n; s++) {
        const int64_t *h = t.hyp + t.hyp_offsets[s];
        const int64_t nh = t.hyp_offsets[s + 1] - t.hyp_offsets[s];
        int64_t fewest = INF_COST, length = 0;
        for (int64_t g = t.groups[s]; g < t.groups[s + 1]; g++) {
            const int64_t nr = t.ref_offsets[g + 1] - t.ref_offsets[g];
            const int64_t edits = pair_edits(h, nh, t.refs + t.ref_offsets[g], nr);
            if (edits < 0) {
                free(rows);
                if (edits == -2)
                    return tt_fail(err, TT_ENOMEM, "hyp", "no memory for a %lld x %lld word matrix",
                                   (long long)nh, (long long)nr);
                return tt_fail(err, TT_EVALUE, "hyp", "sentence %lld: the edit trace left the beam",
                               (long long)s);
            }
            if (edits < fewest)
                fewest = edits;
            length += nr;
        }
        rows[2 * s] = (double)fewest;
        rows[2 * s + 1] = (double)length / (double)(t.groups[s + 1] - t.groups[s]);
    }
    if (n > 0)
        memcpy(out->data, rows, (size_t)n * 2 * sizeof(double));
    free(rows);
    return TT_OK;
}
