/*
 * key_slots.h: distinct (a, b) int64 key pairs -> slot numbers, and the used slots in key order.
 * The dedup step of the clustering kernels (contingency rows, per-cluster moments), where labels
 * are arbitrary int64 values, so no number of classes bounds them.
 *
 * Two layouts, chosen from the keys' ranges. Dense: when the box amin..amax x bmin..bmax holds at
 * most 4 keys + 4096 cells (labels 0..K-1 on both sides, the common case), slot = (a - amin) *
 * width + (b - bmin): an index computation per key, no hashing, and scanning the cells in order
 * gives the keys sorted at no cost. Hash: otherwise (sparse or huge labels), an open-addressing
 * table (linear probing) of at least twice the number of keys, so it never fills; slots are
 * numbered in first-seen order and sorted by key once at the end, O(K log K) for K distinct keys,
 * never O(N log N) for N samples.
 */
#ifndef TT_KEY_SLOTS_H
#define TT_KEY_SLOTS_H

#include <assert.h>
#include <stdint.h>

#include "core/view.h"

typedef struct {
    int dense;
    int64_t amin, bmin;
    uint64_t width; /* dense: bmax - bmin + 1 */
    int64_t slots;  /* the slots a caller's accumulators need: cells (dense) or keys (hash) */
    uint8_t *used;  /* dense: 1 where a key fell */
    uint64_t mask;  /* hash: table size - 1 */
    int64_t *table; /* hash: slot + 1 per position, 0 empty */
    int64_t *key_a; /* hash: the key of each slot */
    int64_t *key_b;
    int64_t next; /* hash: slots handed out */
} tt_key_slots;

/* Prepares *m for at most `keys` distinct pairs with a in [amin, amax], b in [bmin, bmax]
 * (amin <= amax, bmin <= bmax; any int64 values). TT_ENOMEM, with nothing to free, when an
 * allocation fails; else TT_OK and tt_key_slots_free must follow. */
tt_status tt_key_slots_init(tt_key_slots *m, int64_t keys, int64_t amin, int64_t amax, int64_t bmin,
                            int64_t bmax, tt_error *err);

void tt_key_slots_free(tt_key_slots *m);

static inline uint64_t tt_key_hash(int64_t a, int64_t b)
{
    uint64_t h = (uint64_t)a * 0x9E3779B97F4A7C15ULL ^ (uint64_t)b * 0xC2B2AE3D27D4EB4FULL;
    return h ^ (h >> 29);
}

/* The slot of (a, b), within the ranges given to init; a new key takes a new slot. */
static inline int64_t tt_key_slot(tt_key_slots *m, int64_t a, int64_t b)
{
    if (m->dense) {
        const int64_t s = (int64_t)(((uint64_t)a - (uint64_t)m->amin) * m->width +
                                    ((uint64_t)b - (uint64_t)m->bmin));
        assert(s >= 0 && s < m->slots); /* the key lies in the ranges given to init */
        m->used[s] = 1;
        return s;
    }
    uint64_t at = tt_key_hash(a, b) & m->mask;
    for (;;) {
        const int64_t held = m->table[at];
        if (held == 0) {
            const int64_t s = m->next++;
            m->table[at] = s + 1;
            m->key_a[s] = a;
            m->key_b[s] = b;
            return s;
        }
        if (m->key_a[held - 1] == a && m->key_b[held - 1] == b)
            return held - 1;
        at = (at + 1) & m->mask;
    }
}

/* The key of a slot that tt_key_slot handed out. */
static inline void tt_key_of(const tt_key_slots *m, int64_t slot, int64_t *a, int64_t *b)
{
    if (m->dense) {
        *a = (int64_t)((uint64_t)m->amin + (uint64_t)slot / m->width);
        *b = (int64_t)((uint64_t)m->bmin + (uint64_t)slot % m->width);
    } else {
        *a = m->key_a[slot];
        *b = m->key_b[slot];
    }
}

/* Writes the used slots into order[] sorted by (a, b) and returns their number (order holds at
 * least the `keys` given to init); -1 when the sort's scratch cannot be allocated. */
int64_t tt_key_slots_sorted(const tt_key_slots *m, int64_t *order);

#endif /* TT_KEY_SLOTS_H */
