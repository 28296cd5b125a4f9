/*
 * key_slots.c: the dense and hashed layouts of key_slots.h (the clustering kernels' dedup).
 */
#include "kernels/key_slots.h"

#include <stdlib.h>

/* Dense layouts hold at most this many cells beyond 4 per key: scanning them is then cheaper
 * than hashing the keys, and they fit in L2. */
#define DENSE_SLACK 4096

tt_status tt_key_slots_init(tt_key_slots *m, int64_t keys, int64_t amin, int64_t amax, int64_t bmin,
                            int64_t bmax, tt_error *err)
{
    memset(m, 0, sizeof *m);
    m->amin = amin;
    m->bmin = bmin;
    /* spans minus one, in uint64 so that INT64_MIN..INT64_MAX does not overflow */
    const uint64_t span_a = (uint64_t)amax - (uint64_t)amin,
                   span_b = (uint64_t)bmax - (uint64_t)bmin;
    const uint64_t limit = 4 * (uint64_t)(keys > 0 ? keys : 0) + DENSE_SLACK;
    if (span_a < limit && span_b < limit && span_a + 1 <= limit / (span_b + 1)) {
        m->dense = 1;
        m->width = span_b + 1;
        m->slots = (int64_t)((span_a + 1) * (span_b + 1));
        m->used = calloc((size_t)m->slots, 1);
        if (m->used == NULL)
            return tt_fail(err, TT_ENOMEM, "key_slots", "out of memory for %lld cells",
                           (long long)m->slots);
        return TT_OK;
    }
    uint64_t size = 16;
    while (size < 2 * (uint64_t)keys)
        size <<= 1;
    m->mask = size - 1;
    m->slots = keys;
    m->table = calloc(size, sizeof *m->table);
    m->key_a = malloc((size_t)(keys > 0 ? keys : 1) * sizeof *m->key_a);
    m->key_b = malloc((size_t)(keys > 0 ? keys : 1) * sizeof *m->key_b);
    if (m->table == NULL || m->key_a == NULL || m->key_b == NULL) {
        tt_key_slots_free(m);
        return tt_fail(err, TT_ENOMEM, "key_slots", "out of memory for %lld keys", (long long)keys);
    }
    return TT_OK;
}

void tt_key_slots_free(tt_key_slots *m)
{
    free(m->used);
    free(m->table);
    free(m->key_a);
    free(m->key_b);
    m->used = NULL;
    m->table = m->key_a = m->key_b = NULL;
}

typedef struct {
    int64_t a, b, slot;
} keyed_slot;

static int by_key(const void *x, const void *y)
{
    const keyed_slot *p = x, *q = y;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return 0;
}

int64_t tt_key_slots_sorted(const tt_key_slots *m, int64_t *order)
{
    int64_t n = 0;
    if (m->dense) {
        for (int64_t s = 0; s < m->slots; s++)
            if (m->used[s])
                order[n++] = s;
        return n;
    }
    if (m->next == 0)
        return 0;
    keyed_slot *rows = malloc((size_t)m->next * sizeof *rows);
    if (rows == NULL)
        return -1;
    for (int64_t s = 0; s < m->next; s++)
        rows[s] = (keyed_slot){m->key_a[s], m->key_b[s], s};
    qsort(rows, (size_t)m->next, sizeof *rows, by_key);
    for (int64_t i = 0; i < m->next; i++)
        order[i] = rows[i].slot;
    free(rows);
    return m->next;
}
