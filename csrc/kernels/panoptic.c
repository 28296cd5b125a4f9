/*
 * panoptic.c: panoptic segment matching. Each image of a batch is a map of (category id,
 * instance id) pairs per pixel, predicted and true. A segment is the set of pixels of one pair
 * (a stuff category's instance id is ignored: one segment per stuff and image); pixels whose
 * category is unknown form the void segment of their side. The workload: a few images per call
 * of up to millions of pixels, tens to thousands of segments, a few hundred categories.
 *
 * One walk over the pixels of an image: runs of equal (pred pair, target pair) are counted
 * together; each run's pred and target pairs are mapped to segment ids by a hash table per side,
 * and the pair of segment ids counted in a third table (the intersections). The areas of the
 * segments and their overlap with the other side's void are summed at the same time. Then every
 * intersection of a pred and a target segment of one category is scored with
 *     IoU = |P & T| / (|P| - |P & void| + |T| - |void & T| - |P & T|),
 * matched when IoU > 1/2 (decided in integers: 2 |P & T| > union), and each unmatched segment
 * that is not mostly void (2 |S & void| <= |S|) counted a false positive or negative. A stuff of
 * modified PQ adds the IoU of every intersection and counts its target segments as its "true
 * positives" (the denominator of modified PQ's mean IoU), never a false one.
 *
 * The sums are formed in private arrays and added to the outputs after the last image, so a bad
 * pixel (an unknown predicted category, when that is an error) writes nothing.
 */
#include "kernels/panoptic.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int64_t id;
    int64_t index; /* the output slot */
} category;

typedef struct {
    int64_t instance;
    int64_t k;    /* category slot, -1 for void */
    int64_t seg1; /* the segment id + 1; 0: empty slot */
} seg_slot;

typedef struct {
    int64_t area, void_area; /* void_area: pixels whose other side is void */
    int64_t k;
    int64_t matched;
} seg_info;

typedef struct {
    seg_slot *slots;
    int64_t mask; /* slots - 1, a power of two minus one */
    seg_info *info;
    int64_t n, info_cap;
} seg_table;

typedef struct {
    uint64_t key;  /* pred segment << 32 | target segment */
    int64_t count; /* 0: empty slot */
} pair_slot;

typedef struct {
    pair_slot *slots;
    int64_t mask, n;
} pair_table;

typedef struct {
    const category *cats; /* sorted by id */
    const int64_t *kind;  /* per slot */
    int64_t ncat;
    seg_table pred, target;
    pair_table pairs;
    double *iou;     /* [C] */
    int64_t *counts; /* [3, C]: tp, fp, fn */
    int allow_unknown;
    int64_t last[2][3]; /* per side: the last (category id, instance, segment) looked up */
} state;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
}

static int by_id(const void *a, const void *b)
{
    const int64_t x = ((const category *)a)->id, y = ((const category *)b)->id;
    return (x > y) - (x < y);
}

/* The slot of category `id`, or -1. */
static int64_t slot_of(const state *s, int64_t id)
{
    int64_t lo = 0, hi = s->ncat;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (s->cats[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->ncat && s->cats[lo].id == id ? s->cats[lo].index : -1;
}

static int seg_alloc(seg_table *t, int64_t slots)
{
    seg_slot *fresh = calloc((size_t)slots, sizeof *fresh);
    if (fresh == NULL)
        return -1;
    free(t->slots);
    t->slots = fresh;
    t->mask = slots - 1;
    return 0;
}

static void seg_put(seg_table *t, int64_t k, int64_t instance, int64_t seg)
{
    uint64_t h = mix((uint64_t)instance * 0x9e3779b97f4a7c15ULL + (uint64_t)k);
    for (;; h++) {
        seg_slot *e = &t->slots[h & (uint64_t)t->mask];
        if (e->seg1 == 0) {
            e->instance = instance;
            e->k = k;
            e->seg1 = seg + 1;
            return;
        }
    }
}

/* The segment of (k, instance), added when new; -1 when out of memory. */
static int64_t seg_find(seg_table *t, int64_t k, int64_t instance)
{
    uint64_t h = mix((uint64_t)instance * 0x9e3779b97f4a7c15ULL + (uint64_t)k);
    for (;; h++) {
        const seg_slot *e = &t->slots[h & (uint64_t)t->mask];
        if (e->seg1 == 0)
            break;
        if (e->instance == instance && e->k == k)
            return e->seg1 - 1;
    }
    if (2 * (t->n + 1) > t->mask + 1) { /* keep the load under 1/2 */
        const seg_slot *old = t->slots;
        const int64_t old_slots = t->mask + 1;
        t->slots = NULL;
        if (seg_alloc(t, 2 * old_slots) != 0) {
            t->slots = (seg_slot *)old;
            return -1;
        }
        for (int64_t i = 0; i < old_slots; i++)
            if (old[i].seg1 != 0)
                seg_put(t, old[i].k, old[i].instance, old[i].seg1 - 1);
        free((void *)old);
    }
    if (t->n == t->info_cap) {
        seg_info *grown = realloc(t->info, (size_t)(2 * t->info_cap) * sizeof *grown);
        if (grown == NULL)
            return -1;
        t->info = grown;
        t->info_cap *= 2;
    }
    const int64_t seg = t->n++;
    t->info[seg] = (seg_info){0, 0, k, 0};
    seg_put(t, k, instance, seg);
    return seg;
}

static int pair_alloc(pair_table *t, int64_t slots)
{
    pair_slot *fresh = calloc((size_t)slots, sizeof *fresh);
    if (fresh == NULL)
        return -1;
    free(t->slots);
    t->slots = fresh;
    t->mask = slots - 1;
    return 0;
}

static void pair_put(pair_table *t, uint64_t key, int64_t count)
{
    for (uint64_t h = mix(key);; h++) {
        pair_slot *e = &t->slots[h & (uint64_t)t->mask];
        if (e->count == 0) {
            e->key = key;
            e->count = count;
            return;
        }
    }
}

/* Adds `count` pixels to the intersection `key`; -1 when out of memory. */
static int pair_add(pair_table *t, uint64_t key, int64_t count)
{
    for (uint64_t h = mix(key);; h++) {
        pair_slot *e = &t->slots[h & (uint64_t)t->mask];
        if (e->count == 0)
            break;
        if (e->key == key) {
            e->count += count;
            return 0;
        }
    }
    if (2 * (t->n + 1) > t->mask + 1) {
        const pair_slot *old = t->slots;
        const int64_t old_slots = t->mask + 1;
        t->slots = NULL;
        if (pair_alloc(t, 2 * old_slots) != 0) {
            t->slots = (pair_slot *)old;
            return -1;
        }
        for (int64_t i = 0; i < old_slots; i++)
            if (old[i].count != 0)
                pair_put(t, old[i].key, old[i].count);
        free((void *)old);
    }
    t->n++;
    pair_put(t, key, count);
    return 0;
}

/* Empties both segment tables and the pair table for a new image, and adds each side's void
 * segment (id 0). */
static void start_image(state *s)
{
    seg_table *sides[2] = {&s->pred, &s->target};
    for (int i = 0; i < 2; i++) {
        memset(sides[i]->slots, 0, (size_t)(sides[i]->mask + 1) * sizeof *sides[i]->slots);
        sides[i]->n = 0;
        (void)seg_find(sides[i], -1, 0); /* cannot fail: the tables start with room */
        s->last[i][2] = -1;
    }
    memset(s->pairs.slots, 0, (size_t)(s->pairs.mask + 1) * sizeof *s->pairs.slots);
    s->pairs.n = 0;
}

/* The segment of the pair (id, instance) on side `side` (0 pred, 1 target); -1 when out of
 * memory. Neighbouring runs often share one side's pair: the last one is remembered. */
static int64_t segment_of(state *s, int side, int64_t id, int64_t instance)
{
    int64_t *last = s->last[side];
    if (last[2] >= 0 && last[0] == id && last[1] == instance)
        return last[2];
    const int64_t k = slot_of(s, id);
    const int64_t seg = seg_find(side == 0 ? &s->pred : &s->target, k,
                                 k < 0 || s->kind[k] != TT_PANOPTIC_THING ? 0 : instance);
    last[0] = id;
    last[1] = instance;
    last[2] = seg;
    return seg;
}

typedef struct {
    int64_t pc, pi, tc, ti; /* the run's pixel pairs */
    int64_t start, len;     /* its first pixel, its length */
} run;

static tt_status flush(state *s, const run *r, int64_t image, tt_error *err)
{
    if (!s->allow_unknown && slot_of(s, r->pc) < 0)
        return tt_fail(err, TT_EVALUE, "preds",
                       "category %lld (image %lld, pixel %lld) is neither a thing nor a stuff; "
                       "pass allow_unknown_preds_category=True to count such pixels as void",
                       (long long)r->pc, (long long)image, (long long)r->start);
    const int64_t p = segment_of(s, 0, r->pc, r->pi);
    const int64_t t = p < 0 ? -1 : segment_of(s, 1, r->tc, r->ti);
    if (t < 0 || pair_add(&s->pairs, (uint64_t)p << 32 | (uint64_t)t, r->len) != 0)
        return tt_fail(err, TT_ENOMEM, "preds", "no memory for the segments of image %lld",
                       (long long)image);
    s->pred.info[p].area += r->len;
    s->target.info[t].area += r->len;
    if (t == 0)
        s->pred.info[p].void_area += r->len;
    if (p == 0)
        s->target.info[t].void_area += r->len;
    return TT_OK;
}

/* dst[i] = element (b, start + i, col) of an integer [B, N, 2] view, i < m. */
static void load_column(const tt_view *v, int64_t b, int64_t start, int64_t m, int64_t col,
                        int64_t *dst)
{
    const char *p = v->data + b * tt_step(v, 0) + start * tt_step(v, 1) + col * tt_step(v, 2);
    const int64_t step = tt_step(v, 1);
#define TT_LOAD(type)                                                                              \
    for (int64_t i = 0; i < m; i++)                                                                \
        dst[i] = (int64_t)*(const type *)(p + i * step);                                           \
    break;
    switch (v->dtype) {
    case TT_U8: TT_LOAD(uint8_t)
    case TT_I8: TT_LOAD(int8_t)
    case TT_I16: TT_LOAD(int16_t)
    case TT_I32: TT_LOAD(int32_t)
    default: TT_LOAD(int64_t)
    }
#undef TT_LOAD
}

/* Counts one image's segments and intersections. */
static tt_status walk_image(state *s, const tt_view *preds, const tt_view *target, int64_t b,
                            tt_error *err)
{
    int64_t pc[TT_CHUNK], pi[TT_CHUNK], tc[TT_CHUNK], ti[TT_CHUNK];
    const int64_t n = preds->shape[1];
    run r = {0, 0, 0, 0, 0, 0};
    for (int64_t start = 0; start < n; start += TT_CHUNK) {
        const int64_t m = n - start < TT_CHUNK ? n - start : TT_CHUNK;
        load_column(preds, b, start, m, 0, pc);
        load_column(preds, b, start, m, 1, pi);
        load_column(target, b, start, m, 0, tc);
        load_column(target, b, start, m, 1, ti);
        for (int64_t i = 0; i < m; i++) {
            if (r.len > 0 && pc[i] == r.pc && pi[i] == r.pi && tc[i] == r.tc && ti[i] == r.ti) {
                r.len++;
                continue;
            }
            if (r.len > 0) {
                const tt_status st = flush(s, &r, b, err);
                if (st != TT_OK)
                    return st;
            }
            r = (run){pc[i], pi[i], tc[i], ti[i], start + i, 1};
        }
    }
    return r.len > 0 ? flush(s, &r, b, err) : TT_OK;
}

/* Scores one counted image into the private sums. */
static void score_image(state *s)
{
    const int64_t c = s->ncat;
    int64_t *tp = s->counts, *fp = s->counts + c, *fn = s->counts + 2 * c;
    seg_info *pred = s->pred.info, *target = s->target.info;
    for (int64_t j = 0; j <= s->pairs.mask; j++) {
        const pair_slot *e = &s->pairs.slots[j];
        const int64_t p = (int64_t)(e->key >> 32), t = (int64_t)(e->key & 0xffffffffu);
        if (e->count == 0 || p == 0 || t == 0 || pred[p].k != target[t].k)
            continue;
        const int64_t k = target[t].k, inter = e->count;
        const int64_t uni =
            pred[p].area - pred[p].void_area + target[t].area - target[t].void_area - inter;
        if (s->kind[k] == TT_PANOPTIC_MODIFIED_STUFF) {
            s->iou[k] += (double)inter / (double)uni;
        } else if (2 * inter > uni) {
            s->iou[k] += (double)inter / (double)uni;
            tp[k] += 1;
            pred[p].matched = target[t].matched = 1;
        }
    }
    for (int64_t t = 1; t < s->target.n; t++) {
        const int64_t k = target[t].k;
        if (s->kind[k] == TT_PANOPTIC_MODIFIED_STUFF)
            tp[k] += 1;
        else if (!target[t].matched && 2 * target[t].void_area <= target[t].area)
            fn[k] += 1;
    }
    for (int64_t p = 1; p < s->pred.n; p++) {
        const int64_t k = pred[p].k;
        if (s->kind[k] != TT_PANOPTIC_MODIFIED_STUFF && !pred[p].matched &&
            2 * pred[p].void_area <= pred[p].area)
            fp[k] += 1;
    }
}

static tt_status check_args(const tt_view *const outs[4], const tt_view *preds,
                            const tt_view *target, const tt_view *categories, tt_error *err)
{
    static const char *const names[4] = {"iou_sum", "true_positives", "false_positives",
                                         "false_negatives"};
    char got[96];
    if (categories->dtype != TT_I64 || categories->ndim != 2 || categories->shape[1] != 2 ||
        categories->shape[0] < 1)
        return tt_fail(err, categories->dtype != TT_I64 ? TT_ETYPE : TT_EVALUE, "categories",
                       "expected int64 [C, 2] with C >= 1, got %s",
                       tt_describe(categories, got, sizeof got));
    tt_status st = tt_check_cpu(categories, "categories", err);
    for (int i = 0; i < 4 && st == TT_OK; i++)
        st = tt_check_out(outs[i], names[i], i == 0 ? TT_F64 : TT_I64, 1, categories->shape, err);
    const tt_view *maps[2] = {preds, target};
    for (int i = 0; i < 2 && st == TT_OK; i++) {
        const char *arg = i == 0 ? "preds" : "target";
        if (maps[i]->dtype == TT_BOOL || !tt_is_label(maps[i]->dtype))
            return tt_fail(err, TT_ETYPE, arg, "expected an integer tensor [B, N, 2], got %s",
                           tt_describe(maps[i], got, sizeof got));
        if (maps[i]->ndim != 3 || maps[i]->shape[2] != 2)
            return tt_fail(err, TT_EVALUE, arg, "expected an integer tensor [B, N, 2], got %s",
                           tt_describe(maps[i], got, sizeof got));
        st = tt_check_cpu(maps[i], arg, err);
    }
    if (st != TT_OK)
        return st;
    if (target->shape[0] != preds->shape[0] || target->shape[1] != preds->shape[1])
        return tt_fail(err, TT_EVALUE, "target", "expected the shape of preds, got %s",
                       tt_describe(target, got, sizeof got));
    if (preds->shape[1] > INT32_MAX)
        return tt_fail(err, TT_EVALUE, "preds", "expected at most %d pixels an image, got %lld",
                       INT32_MAX, (long long)preds->shape[1]);
    return TT_OK;
}

/* Reads `categories` into s->cats (sorted) and s->kind; checks ids distinct, kinds known. */
static tt_status read_categories(state *s, category *cats, int64_t *kind, const tt_view *v,
                                 tt_error *err)
{
    for (int64_t j = 0; j < s->ncat; j++) {
        const char *row = v->data + j * tt_step(v, 0);
        cats[j] = (category){*(const int64_t *)row, j};
        kind[j] = *(const int64_t *)(row + tt_step(v, 1));
        if (kind[j] < TT_PANOPTIC_THING || kind[j] > TT_PANOPTIC_MODIFIED_STUFF)
            return tt_fail(err, TT_EVALUE, "categories",
                           "kind %lld of row %lld is not 0 (thing), 1 (stuff) or 2 (modified "
                           "stuff)",
                           (long long)kind[j], (long long)j);
    }
    qsort(cats, (size_t)s->ncat, sizeof *cats, by_id);
    for (int64_t j = 1; j < s->ncat; j++)
        if (cats[j].id == cats[j - 1].id)
            return tt_fail(err, TT_EVALUE, "categories", "category %lld appears twice",
                           (long long)cats[j].id);
    return TT_OK;
}

tt_status tt_panoptic_update(const tt_view *iou_sum, const tt_view *true_positives,
                             const tt_view *false_positives, const tt_view *false_negatives,
                             const tt_view *preds, const tt_view *target, const tt_view *categories,
                             int allow_unknown_preds, tt_error *err)
{
    const tt_view *const outs[4] = {iou_sum, true_positives, false_positives, false_negatives};
    tt_status st = check_args(outs, preds, target, categories, err);
    if (st != TT_OK)
        return st;
    const int64_t c = categories->shape[0];
    state s = {.ncat = c, .allow_unknown = allow_unknown_preds != 0};
    category *cats = malloc((size_t)c * sizeof *cats);
    int64_t *words = calloc((size_t)c * 5, sizeof *words); /* kind [C], counts [3, C], iou [C] */
    s.pred.info = malloc(64 * sizeof *s.pred.info);
    s.target.info = malloc(64 * sizeof *s.target.info);
    s.pred.info_cap = s.target.info_cap = 64;
    if (cats == NULL || words == NULL || s.pred.info == NULL || s.target.info == NULL ||
        seg_alloc(&s.pred, 64) != 0 || seg_alloc(&s.target, 64) != 0 ||
        pair_alloc(&s.pairs, 64) != 0) {
        st = tt_fail(err, TT_ENOMEM, "preds", "no memory for %lld categories", (long long)c);
        goto done;
    }
    _Static_assert(sizeof(int64_t) == sizeof(double), "a sum takes one word, as a count");
    s.kind = words;
    s.counts = words + c;
    s.iou = (double *)(words + 4 * c); /* calloc's zero bits are 0.0 */
    s.cats = cats;
    st = read_categories(&s, cats, words, categories, err);
    for (int64_t b = 0; b < preds->shape[0] && st == TT_OK; b++) {
        start_image(&s);
        st = walk_image(&s, preds, target, b, err);
        if (st == TT_OK)
            score_image(&s);
    }
    if (st != TT_OK)
        goto done;
    double *iou = (double *)iou_sum->data;
    int64_t *tp = (int64_t *)true_positives->data, *fp = (int64_t *)false_positives->data,
            *fn = (int64_t *)false_negatives->data;
    for (int64_t k = 0; k < c; k++) {
        iou[k] += s.iou[k];
        tp[k] += s.counts[k];
        fp[k] += s.counts[c + k];
        fn[k] += s.counts[2 * c + k];
    }
done:
    free(cats);
    free(words);
    free(s.pred.info);
    free(s.target.info);
    free(s.pred.slots);
    free(s.target.slots);
    free(s.pairs.slots);
    return st;
}
