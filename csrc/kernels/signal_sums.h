/*
 * signal_sums.h: the per-utterance float64 energies that every audio signal metric (SNR,
 * SI-SNR, SI-SDR, C-SI-SNR, SA-SDR and PIT over them) is a formula of, in one or two passes over
 * the samples with no float64 copy of them. Contract in csrc/API_AUDIO.md ("signal_sums");
 * kernels/reference/signal_sums.py is the oracle. out is untouched on failure.
 */
#ifndef TT_SIGNAL_SUMS_H
#define TT_SIGNAL_SUMS_H

#include "core/view.h"

/* preds, target [R, T] (one floating dtype, one shape, any strides); out float64 [R, 3] or
 * [R, 4], C-contiguous. Per row r, with p', t' the row widened to double (and, when zero_mean,
 * less its own mean):
 *   out[r, 0] = sum t'^2, out[r, 1] = sum t' p', out[r, 2] = sum (p' - t')^2;
 *   out[r, 3] (when out has 4 columns) = sum (g t' - p')^2, the residual of the scaled target,
 *   where g = (sum of column 1 + eps) / (sum of column 0 + eps) over the `group` consecutive
 *   rows that row r belongs to (the least-squares gain for eps = 0; g = 0 where the denominator
 *   is 0). group >= 1 must divide R (else a ValueError naming `group`); eps finite and >= 0
 *   (else a ValueError naming `eps`). NaN and inf propagate as in the
 * sums; T = 0 gives zeros. */
tt_status tt_signal_sums(const tt_view *out, const tt_view *preds, const tt_view *target,
                         int zero_mean, int64_t group, double eps, tt_error *err);

#endif /* TT_SIGNAL_SUMS_H */
