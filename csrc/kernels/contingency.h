/*
 * contingency.h: the clustering label metrics' sparse contingency table, (pred label, target
 * label, count) rows, counted from a batch of label pairs and folded into the rows held so far in
 * one call. Contract in csrc/API_CLUSTERING.md ("contingency_rows");
 * kernels/reference/clustering.py is the oracle. out and size are untouched on failure.
 */
#ifndef TT_CONTINGENCY_H
#define TT_CONTINGENCY_H

#include "core/view.h"

/* out int64 [M, 3] (contiguous), size int64 [1]: out[:size] = one row (pred, target, count) per
 * distinct key among table's rows (int64 [K, 3], NULL for none, any order, counts >= 1) and the
 * pairs (preds[i], target[i]) (integer or bool [N], any stride), sorted by pred then target,
 * count = the table's counts of that key + the pairs equal to it. M >= K + N. */
tt_status tt_contingency_rows(const tt_view *out, const tt_view *size, const tt_view *table,
                              const tt_view *preds, const tt_view *target, tt_error *err);

#endif /* TT_CONTINGENCY_H */
