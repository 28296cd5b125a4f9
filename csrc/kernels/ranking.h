/*
 * ranking.h: the multilabel ranking metrics' per-sample sums (coverage error, label ranking
 * average precision, label ranking loss), as scikit-learn defines them. Contract in csrc/API.md
 * ("Ranking sums"); kernels/reference/ranking.py is the oracle. `out` is untouched on failure.
 */
#ifndef TT_RANKING_H
#define TT_RANKING_H

#include "core/view.h"

/* out float64 [3] += the sums over rows of (coverage, ranking average precision, ranking loss).
 * preds float [N, L] without NaN; target labels [N, L] in {0 negative, 1 relevant, 2 ignored}. */
tt_status tt_ranking_update(const tt_view *out, const tt_view *preds, const tt_view *target,
                            tt_error *err);

#endif /* TT_RANKING_H */
