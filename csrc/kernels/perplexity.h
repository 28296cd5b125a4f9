/*
 * perplexity.h: the negative log-likelihood of the targets under a language model's logits,
 * summed, and the number of tokens counted (Perplexity). Contract in csrc/API_TEXT.md ("Text
 * kernels"); kernels/reference/perplexity.py is the oracle. The states are untouched on failure.
 */
#ifndef TT_PERPLEXITY_H
#define TT_PERPLEXITY_H

#include "core/view.h"

/* total float64 [] += sum over counted tokens of -log softmax(preds[n, t])[target[n, t]];
 * count int64 [] += the number of counted tokens (target != *ignore_index, every token when
 * ignore_index is NULL). preds: logits, float [N, T, V] (V >= 1), without NaN or +inf; target int64
 * [N, T], each counted one in [0, V). */
tt_status tt_perplexity_update(const tt_view *total, const tt_view *count, const tt_view *preds,
                               const tt_view *target, const int64_t *ignore_index, tt_error *err);

#endif /* TT_PERPLEXITY_H */
