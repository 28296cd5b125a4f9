/*
 * ngram.c: n-gram statistics of tokenised sentences, for BLEU (clipped matches per order) and
 * chrF (matches with the best of a sentence's references). The workload: corpora of 10^4 to 10^6
 * sentences of tens of tokens (or a few hundred characters), one to a handful of references each;
 * orders up to 4 (BLEU) or 6 + 2 (chrF++).
 *
 * Per sentence, the hypothesis' n-grams of every order go into an open-addressing table keyed by
 * (order, the ids): a 64-bit hash, then the ids compared. Each reference's n-grams are looked up
 * in it; an entry counts the current reference's occurrences (reset when another reference first
 * reaches it), so a reference n-gram absent from the hypothesis costs one probe and no memory.
 * The table has at least twice as many slots as the hypothesis has n-grams and is cleared per
 * sentence over its used size: O(sentence length) time and memory.
 *
 * The statistics are formed in locals and added to `out` once every sentence was read, so a bad
 * bound leaves `out` untouched.
 */
#include "kernels/ngram.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
    const int64_t *start; /* NULL: an empty slot */
    uint64_t hash;
    int64_t order; /* the order's index: BLEU n - 1; chrF characters n - 1, words C + n - 1 */
    int64_t hyp;   /* occurrences in the hypothesis */
    int64_t cur;   /* occurrences in reference `ref` */
    int64_t best;  /* BLEU: the largest count in one reference */
    int64_t ref;   /* the reference `cur` counts (-1: none yet) */
} entry;

typedef struct {
    entry *slots;
    int64_t mask; /* capacity - 1; capacity a power of 2 */
} table;

/* A segment of one stream: ids [0, len). */
typedef struct {
    const int64_t *ids;
    int64_t len;
} segment;

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    return h ^ (h >> 33);
}

static uint64_t step(uint64_t h, int64_t id) { return (h ^ (uint64_t)id) * 0x100000001b3ULL; }

/* The slot of (start, n, order): the entry itself or the empty slot where it would go. */
static entry *find(const table *t, const int64_t *start, int64_t n, int64_t order, uint64_t hash)
{
    int64_t i = (int64_t)(hash & (uint64_t)t->mask);
    for (;;) {
        entry *e = &t->slots[i];
        if (e->start == NULL || (e->hash == hash && e->order == order &&
                                 memcmp(e->start, start, (size_t)n * sizeof *start) == 0))
            return e;
        i = (i + 1) & t->mask;
    }
}

static uint64_t key(uint64_t rolling, int64_t order)
{
    return mix(rolling ^ ((uint64_t)order << 56));
}

/* Adds the n-grams of orders first + 1 .. first + orders of s to the table. */
static void insert_all(table *t, segment s, int64_t orders, int64_t first)
{
    for (int64_t p = 0; p < s.len; p++) {
        uint64_t h = 0x9e3779b97f4a7c15ULL;
        for (int64_t n = 1; n <= orders && p + n <= s.len; n++) {
            h = step(h, s.ids[p + n - 1]);
            const int64_t order = first + n - 1;
            const uint64_t hash = key(h, order);
            entry *e = find(t, s.ids + p, n, order, hash);
            if (e->start == NULL)
                *e = (entry){s.ids + p, hash, order, 0, 0, 0, -1};
            e->hyp++;
        }
    }
}

/* Counts the n-grams of reference `ref` (segment s) that the hypothesis has; matches[order]
 * (when not NULL) += the occurrences up to the hypothesis' count (chrF's min per n-gram). */
static void probe_all(table *t, segment s, int64_t orders, int64_t first, int64_t ref,
                      int64_t *matches)
{
    for (int64_t p = 0; p < s.len; p++) {
        uint64_t h = 0x9e3779b97f4a7c15ULL;
        for (int64_t n = 1; n <= orders && p + n <= s.len; n++) {
            h = step(h, s.ids[p + n - 1]);
            const int64_t order = first + n - 1;
            entry *e = find(t, s.ids + p, n, order, key(h, order));
            if (e->start == NULL)
                continue;
            if (e->ref != ref)
                e->ref = ref, e->cur = 0;
            e->cur++;
            if (e->cur > e->best)
                e->best = e->cur;
            if (matches != NULL && e->cur <= e->hyp)
                matches[order]++;
        }
    }
}

static int64_t grams(int64_t len, int64_t n) { return len >= n ? len - n + 1 : 0; }

static int64_t at(const tt_view *v, int64_t i, int64_t j)
{
    return *(const int64_t *)(v->data + (i * v->stride[0] + j * (v->ndim > 1 ? v->stride[1] : 0)) *
                                            (int64_t)sizeof(int64_t));
}

/* tokens int64 [T] contiguous; bounds int64 [K, S + 1] non-decreasing in [0, T] per stream;
 * groups int64 [G + 1] from 0 to S, each sentence with its hypothesis (and `min_segments` - 1
 * references at least). *largest = the most n-grams a hypothesis can have over the orders. */
static tt_status check_layout(const tt_view *tokens, const tt_view *bounds, const tt_view *groups,
                              int64_t streams, int64_t min_segments, tt_error *err)
{
    char got[96];
    if (tokens->dtype != TT_I64 || bounds->dtype != TT_I64 || groups->dtype != TT_I64) {
        const tt_view *bad = tokens->dtype != TT_I64   ? tokens
                             : bounds->dtype != TT_I64 ? bounds
                                                       : groups;
        const char *arg = bad == tokens ? "tokens" : bad == bounds ? "bounds" : "groups";
        return tt_fail(err, TT_ETYPE, arg, "expected an int64 tensor, got %s",
                       tt_describe(bad, got, sizeof got));
    }
    tt_status st = tt_check_cpu(tokens, "tokens", err);
    if (st == TT_OK)
        st = tt_check_cpu(bounds, "bounds", err);
    if (st == TT_OK)
        st = tt_check_cpu(groups, "groups", err);
    if (st != TT_OK)
        return st;
    if (tokens->ndim != 1 || (tokens->shape[0] > 1 && tokens->stride[0] != 1))
        return tt_fail(err, TT_EVALUE, "tokens", "expected a contiguous 1-D tensor, got %s",
                       tt_describe(tokens, got, sizeof got));
    if (bounds->ndim != 2 || bounds->shape[0] != streams || bounds->shape[1] < 1)
        return tt_fail(err, TT_EVALUE, "bounds", "expected [%lld, S + 1], got %s",
                       (long long)streams, tt_describe(bounds, got, sizeof got));
    if (groups->ndim != 1 || groups->shape[0] < 1)
        return tt_fail(err, TT_EVALUE, "groups", "expected [G + 1], got %s",
                       tt_describe(groups, got, sizeof got));
    const int64_t t = tokens->shape[0], s = bounds->shape[1] - 1, g = groups->shape[0] - 1;
    for (int64_t k = 0; k < streams; k++)
        for (int64_t i = 0; i <= s; i++) {
            const int64_t b = at(bounds, k, i);
            if (b < 0 || b > t || (i > 0 && b < at(bounds, k, i - 1)))
                return tt_fail(
                    err, TT_EVALUE, "bounds",
                    "stream %lld: bound %lld at %lld is out of order or outside [0, %lld]",
                    (long long)k, (long long)b, (long long)i, (long long)t);
        }
    if (at(groups, 0, 0) != 0 || at(groups, g, 0) != s)
        return tt_fail(err, TT_EVALUE, "groups", "expected to run from 0 to %lld segments",
                       (long long)s);
    for (int64_t i = 0; i < g; i++)
        if (at(groups, i + 1, 0) - at(groups, i, 0) < min_segments)
            return tt_fail(err, TT_EVALUE, "groups",
                           min_segments > 1 ? "sentence %lld has no reference"
                                            : "sentence %lld has no hypothesis",
                           (long long)i);
    return TT_OK;
}

static segment segment_at(const tt_view *tokens, const tt_view *bounds, int64_t k, int64_t s)
{
    const int64_t b = at(bounds, k, s), e = at(bounds, k, s + 1);
    return (segment){(const int64_t *)tokens->data + b, e - b};
}

/* Empties the table and sizes it for `count` entries (at least twice as many slots); NULL
 * slots on failure. */
static int prepare(table *t, int64_t *capacity, int64_t count)
{
    int64_t want = 16;
    while (want < 2 * count)
        want *= 2;
    if (want > *capacity) {
        free(t->slots);
        t->slots = malloc((size_t)want * sizeof *t->slots);
        if (t->slots == NULL)
            return -1;
        *capacity = want;
    }
    t->mask = want - 1;
    memset(t->slots, 0, (size_t)want * sizeof *t->slots);
    return 0;
}

tt_status tt_bleu_update(const tt_view *out, const tt_view *tokens, const tt_view *bounds,
                         const tt_view *groups, tt_error *err)
{
    char got[96];
    if (out->ndim != 2 || out->shape[0] < 2 || out->shape[1] != 2 || out->dtype != TT_I64)
        return tt_fail(err, out->dtype != TT_I64 ? TT_ETYPE : TT_EVALUE, "out",
                       "expected int64 [N + 1, 2] with N >= 1, got %s",
                       tt_describe(out, got, sizeof got));
    tt_status st = tt_check_out(out, "out", TT_I64, 2, out->shape, err);
    if (st == TT_OK)
        st = check_layout(tokens, bounds, groups, 1, 2, err);
    if (st != TT_OK)
        return st;
    const int64_t orders = out->shape[0] - 1, g = groups->shape[0] - 1;
    int64_t *acc = calloc((size_t)(2 * orders + 2), sizeof *acc);
    table t = {NULL, 0};
    int64_t capacity = 0;
    if (acc == NULL)
        return tt_fail(err, TT_ENOMEM, "out", "out of memory");
    for (int64_t i = 0; i < g; i++) {
        const int64_t first = at(groups, i, 0), end = at(groups, i + 1, 0);
        const segment hyp = segment_at(tokens, bounds, 0, first);
        if (prepare(&t, &capacity, hyp.len * orders) != 0) {
            free(acc);
            return tt_fail(err, TT_ENOMEM, "tokens", "out of memory");
        }
        insert_all(&t, hyp, orders, 0);
        int64_t closest = -1;
        for (int64_t r = first + 1; r < end; r++) {
            const segment ref = segment_at(tokens, bounds, 0, r);
            probe_all(&t, ref, orders, 0, r, NULL);
            if (closest < 0 || llabs(ref.len - hyp.len) < llabs(closest - hyp.len))
                closest = ref.len;
        }
        for (int64_t k = 0; k <= t.mask; k++) {
            const entry *e = &t.slots[k];
            if (e->start != NULL)
                acc[2 * e->order] += e->hyp < e->best ? e->hyp : e->best;
        }
        for (int64_t n = 1; n <= orders; n++)
            acc[2 * (n - 1) + 1] += grams(hyp.len, n);
        acc[2 * orders] += hyp.len;
        acc[2 * orders + 1] += closest;
    }
    int64_t *o = (int64_t *)out->data;
    for (int64_t k = 0; k < 2 * orders + 2; k++)
        o[k] += acc[k];
    free(t.slots);
    free(acc);
    return TT_OK;
}

/* chrF of one reference's statistics (torchmetrics' per-order F-beta, averaged over orders). */
static double chrf_of(const int64_t *hyp, const int64_t *ref, const int64_t *match, int64_t orders,
                      double beta)
{
    const double b2 = beta * beta;
    double total = 0.0;
    for (int64_t o = 0; o < orders; o++) {
        const double p = hyp[o] > 0 ? (double)match[o] / (double)hyp[o] : 0.0;
        const double r = ref[o] > 0 ? (double)match[o] / (double)ref[o] : 0.0;
        const double den = b2 * p + r > 1e-16 ? b2 * p + r : 1e-16;
        total += (1.0 + b2) * p * r / den;
    }
    return total / (double)orders;
}

tt_status tt_chrf_update(const tt_view *out, const tt_view *sentence, const tt_view *tokens,
                         const tt_view *bounds, const tt_view *groups, int64_t n_char_order,
                         double beta, tt_error *err)
{
    char got[96];
    if (out->ndim != 2 || out->shape[0] < 1 || out->shape[1] != 3 || out->dtype != TT_I64)
        return tt_fail(err, out->dtype != TT_I64 ? TT_ETYPE : TT_EVALUE, "out",
                       "expected int64 [C + W, 3], got %s", tt_describe(out, got, sizeof got));
    tt_status st = tt_check_out(out, "out", TT_I64, 2, out->shape, err);
    if (st == TT_OK)
        st = check_layout(tokens, bounds, groups, 2, 1, err);
    if (st != TT_OK)
        return st;
    const int64_t orders = out->shape[0], g = groups->shape[0] - 1;
    if (n_char_order < 1 || n_char_order > orders)
        return tt_fail(err, TT_EVALUE, "n_char_order", "expected 1 .. %lld (out's rows), got %lld",
                       (long long)orders, (long long)n_char_order);
    if (!(beta >= 0.0) || isinf(beta))
        return tt_fail(err, TT_EVALUE, "beta", "expected a finite value >= 0, got %g", beta);
    if (sentence != NULL) {
        const int64_t shape[1] = {g};
        st = tt_check_out(sentence, "sentence", TT_F64, 1, shape, err);
        if (st != TT_OK)
            return st;
    }
    const int64_t words = orders - n_char_order;
    /* acc: [orders, 3]; then per reference: ref counts, matches; the best's; the hypothesis'. */
    int64_t *acc = calloc((size_t)(8 * orders), sizeof *acc);
    table t = {NULL, 0};
    int64_t capacity = 0;
    if (acc == NULL)
        return tt_fail(err, TT_ENOMEM, "out", "out of memory");
    int64_t *ref_n = acc + 3 * orders, *match = ref_n + orders, *best_ref = match + orders,
            *best_match = best_ref + orders, *hyp_n = best_match + orders;
    double *scores = sentence != NULL ? (double *)sentence->data : NULL;
    for (int64_t i = 0; i < g; i++) {
        const int64_t first = at(groups, i, 0), end = at(groups, i + 1, 0);
        const segment hc = segment_at(tokens, bounds, 0, first);
        const segment hw = segment_at(tokens, bounds, 1, first);
        if (prepare(&t, &capacity, hc.len * n_char_order + hw.len * words) != 0) {
            free(t.slots);
            free(acc);
            return tt_fail(err, TT_ENOMEM, "tokens", "out of memory");
        }
        insert_all(&t, hc, n_char_order, 0);
        insert_all(&t, hw, words, n_char_order);
        for (int64_t o = 0; o < orders; o++) {
            hyp_n[o] =
                o < n_char_order ? grams(hc.len, o + 1) : grams(hw.len, o - n_char_order + 1);
            best_ref[o] = best_match[o] = 0;
        }
        double best = 0.0;
        for (int64_t r = first + 1; r < end; r++) {
            const segment rc = segment_at(tokens, bounds, 0, r);
            const segment rw = segment_at(tokens, bounds, 1, r);
            memset(match, 0, (size_t)orders * sizeof *match);
            probe_all(&t, rc, n_char_order, 0, r, match);
            probe_all(&t, rw, words, n_char_order, r, match);
            for (int64_t o = 0; o < orders; o++)
                ref_n[o] =
                    o < n_char_order ? grams(rc.len, o + 1) : grams(rw.len, o - n_char_order + 1);
            const double f = chrf_of(hyp_n, ref_n, match, orders, beta);
            if (f > best) {
                best = f;
                memcpy(best_ref, ref_n, (size_t)orders * sizeof *ref_n);
                memcpy(best_match, match, (size_t)orders * sizeof *match);
            }
        }
        for (int64_t o = 0; o < orders; o++) {
            acc[3 * o] += hyp_n[o];
            acc[3 * o + 1] += best_ref[o];
            acc[3 * o + 2] += best_match[o];
        }
        if (scores != NULL)
            scores[i] = best; /* sentence is this call's own output: written as it goes */
    }
    int64_t *o = (int64_t *)out->data;
    for (int64_t k = 0; k < 3 * orders; k++)
        o[k] += acc[k];
    free(t.slots);
    free(acc);
    return TT_OK;
}
