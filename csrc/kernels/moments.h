/*
 * moments.h: per-column moments in float64, merged with Chan et al.'s pairwise formulas so that
 * states from ranks (or batches) whose means differ widely still combine accurately.
 * Contract in csrc/API.md. State is untouched on failure.
 */
#ifndef TT_MOMENTS_H
#define TT_MOMENTS_H

#include "core/view.h"

enum { TT_MOM_N, TT_MOM_SUM, TT_MOM_MEAN, TT_MOM_M2, TT_MOM_MIN, TT_MOM_MAX, TT_MOM_WIDTH };
enum { TT_CO_N, TT_CO_MEAN_X, TT_CO_MEAN_Y, TT_CO_M2_X, TT_CO_M2_Y, TT_CO_C_XY, TT_CO_WIDTH };

/* Chan's merge of one moments row b (n, sum, mean, m2, min, max) into a; an empty b leaves a as it
 * is, an empty a takes b's (n, mean, m2). Inline: residual_moments.c merges its rows with it. */
static inline void tt_moments_merge_row(double *a, const double *b)
{
    a[TT_MOM_SUM] += b[TT_MOM_SUM];
    if (b[TT_MOM_MIN] < a[TT_MOM_MIN])
        a[TT_MOM_MIN] = b[TT_MOM_MIN];
    if (b[TT_MOM_MAX] > a[TT_MOM_MAX])
        a[TT_MOM_MAX] = b[TT_MOM_MAX];
    const double na = a[TT_MOM_N], nb = b[TT_MOM_N], total = na + nb;
    if (nb == 0.0)
        return;
    if (na == 0.0) {
        a[TT_MOM_N] = nb;
        a[TT_MOM_MEAN] = b[TT_MOM_MEAN];
        a[TT_MOM_M2] = b[TT_MOM_M2];
        return;
    }
    const double delta = b[TT_MOM_MEAN] - a[TT_MOM_MEAN];
    a[TT_MOM_MEAN] += delta * (nb / total);
    a[TT_MOM_M2] += b[TT_MOM_M2] + delta * delta * (na * nb / total);
    a[TT_MOM_N] = total;
}

/* state float64 [D, 6] (n, sum, mean, m2, min, max); x float [N] or [N, D]; weights NULL or
 * float [N], each >= 0. */
tt_status tt_moments_update(const tt_view *state, const tt_view *x, const tt_view *weights,
                            tt_error *err);
tt_status tt_moments_merge(const tt_view *state, const tt_view *other, tt_error *err);

/* state float64 [D, 6] (n, mean_x, mean_y, m2_x, m2_y, c_xy); x, y float [N] or [N, D]. */
tt_status tt_comoments_update(const tt_view *state, const tt_view *x, const tt_view *y,
                              tt_error *err);
tt_status tt_comoments_merge(const tt_view *state, const tt_view *other, tt_error *err);

#endif /* TT_MOMENTS_H */
