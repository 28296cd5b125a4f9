/*
 * ngram.h: n-gram statistics of tokenised sentences for BLEU and chrF, as torchmetrics forms them.
 * Contract in csrc/API_TEXT.md ("N-gram statistics"); kernels/reference/ngram.py is the oracle. `out`
 * (and `sentence`) are untouched on failure.
 *
 * The batch layout shared by both kernels: `tokens` int64 [T] (contiguous) holds every segment's
 * token ids; `bounds` int64 [K, S + 1] gives segment s as tokens[bounds[k, s] : bounds[k, s + 1]]
 * of stream k (BLEU: K = 1, words; chrF: K = 2, characters then words); `groups` int64 [G + 1]
 * gives sentence g as segments groups[g] (its hypothesis) and groups[g] + 1 .. groups[g + 1] - 1
 * (its references). Ids are compared as integers only: a sentence's ids need no fixed meaning.
 */
#ifndef TT_NGRAM_H
#define TT_NGRAM_H

#include "core/view.h"

/* out int64 [N + 1, 2] += per order n = 1..N (row n - 1) the hypothesis n-grams clipped by their
 * largest count in one reference, and the hypothesis n-grams; row N: (hypothesis tokens, tokens
 * of the reference closest in length, the first on ties). Every sentence needs a reference. */
tt_status tt_bleu_update(const tt_view *out, const tt_view *tokens, const tt_view *bounds,
                         const tt_view *groups, tt_error *err);

/* out int64 [C + W, 3] += per order (character orders 1..n_char_order, then word orders 1..W)
 * (hypothesis n-grams, n-grams of the best reference, matches with the best reference); the best
 * reference is the first with the highest chrF (beta) above 0, else none (zeros). sentence:
 * NULL or float64 [G], which receives each sentence's best chrF. */
tt_status tt_chrf_update(const tt_view *out, const tt_view *sentence, const tt_view *tokens,
                         const tt_view *bounds, const tt_view *groups, int64_t n_char_order,
                         double beta, tt_error *err);

#endif /* TT_NGRAM_H */
