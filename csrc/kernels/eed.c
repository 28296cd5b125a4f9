/*
 * eed.c: the extended edit distance per sentence. The workload: sentences of 20-300
 * characters against one to four references; per pair a DP of len(ref) rows over the
 * hypothesis' characters, O(len(hyp) len(ref)) time and O(len(hyp)) memory.
 *
 * Row w (reference character w): cell 0 is the previous row's + 1; cell i the least of
 * cell i-1 + deletion, the previous row's cell i-1 + (0 if the characters match, else 1) and
 * the previous row's cell i + insertion, in that order (float64, the reference's operations in
 * its order, so the values are bit-identical). The position of the row's first minimum gets a
 * visit; after a space every cell is capped at alpha + that minimum (a jump). Score:
 * min(1, (last cell + rho * coverage) / (len(ref) + rho * coverage)), coverage the sum over
 * positions of (visits - 1), a never-visited position counting 1; 0 / 0 is 0 and x / 0 is 1.
 */
#include "kernels/eed.h"

#include <math.h>
#include <stdlib.h>

#include "kernels/packed_text.h"

#define SPACE 32

typedef struct {
    double alpha, rho, deletion, insertion;
} eed_costs;

/* EED of one pair; row, next: n + 1 doubles; visits: n + 1 int64. */
static double pair_score(const int64_t *hyp, int64_t n, const int64_t *ref, int64_t nr,
                         const eed_costs *c, double *row, double *next, int64_t *visits)
{
    for (int64_t i = 0; i <= n; i++)
        row[i] = 1.0, visits[i] = -1;
    row[0] = 0.0;
    for (int64_t w = 0; w < nr; w++) {
        const int64_t ch = ref[w];
        next[0] = row[0] + 1.0;
        int64_t at = 0;
        for (int64_t i = 1; i <= n; i++) {
            double v = next[i - 1] + c->deletion;
            const double sub = row[i - 1] + (hyp[i - 1] == ch ? 0.0 : 1.0);
            const double ins = row[i] + c->insertion;
            if (sub < v)
                v = sub;
            if (ins < v)
                v = ins;
            next[i] = v;
            if (v < next[at])
                at = i;
        }
        visits[at]++;
        if (ch == SPACE) {
            const double jump = c->alpha + next[at];
            for (int64_t i = 0; i <= n; i++)
                if (jump < next[i])
                    next[i] = jump;
        }
        double *swap = row;
        row = next, next = swap;
    }
    int64_t cover = 0;
    for (int64_t i = 0; i <= n; i++)
        cover += visits[i] >= 0 ? visits[i] : 1;
    const double coverage = c->rho * (double)cover;
    const double num = row[n] + coverage, den = (double)nr + coverage;
    if (den == 0.0)
        return num > 0.0 ? 1.0 : 0.0;
    const double score = num / den;
    return score < 1.0 ? score : 1.0;
}

static tt_status check_costs(const tt_view *costs, eed_costs *c, tt_error *err)
{
    const int64_t shape[1] = {4};
    tt_status st = tt_check_out(costs, "costs", TT_F64, 1, shape, err);
    if (st != TT_OK)
        return st;
    const double *v = (const double *)costs->data;
    for (int k = 0; k < 4; k++)
        if (!(v[k] >= 0.0 && v[k] < INFINITY))
            return tt_fail(err, TT_EVALUE, "costs",
                           "expected finite non-negative (alpha, rho, deletion, insertion), got "
                           "%g at %d",
                           v[k], k);
    c->alpha = v[0], c->rho = v[1], c->deletion = v[2], c->insertion = v[3];
    return TT_OK;
}

tt_status tt_eed_sentences(const tt_view *out, const tt_view *hyp, const tt_view *hyp_offsets,
                           const tt_view *refs, const tt_view *ref_offsets, const tt_view *groups,
                           const tt_view *costs, tt_error *err)
{
    tt_packed_text t;
    eed_costs c;
    tt_status st =
        tt_packed_text_check(out, 0, hyp, hyp_offsets, refs, ref_offsets, groups, &t, err);
    if (st == TT_OK)
        st = check_costs(costs, &c, err);
    if (st != TT_OK)
        return st;
    const int64_t n = t.sentences;
    int64_t longest = 0;
    for (int64_t s = 0; s < n; s++)
        if (t.hyp_offsets[s + 1] - t.hyp_offsets[s] > longest)
            longest = t.hyp_offsets[s + 1] - t.hyp_offsets[s];
    const size_t cells = (size_t)longest + 1;
    double *scores = malloc(((size_t)(n > 0 ? n : 1) + 2 * cells) * sizeof(double));
    int64_t *visits = malloc(cells * sizeof(int64_t));
    if (scores == NULL || visits == NULL) {
        free(scores);
        free(visits);
        return tt_fail(err, TT_ENOMEM, "hyp", "no memory for %lld sentences", (long long)n);
    }
    double *row = scores + (n > 0 ? n : 1), *next = row + cells;
    for (int64_t s = 0; s < n; s++) {
        const int64_t *h = t.hyp + t.hyp_offsets[s];
        const int64_t nh = t.hyp_offsets[s + 1] - t.hyp_offsets[s];
        double best = INFINITY;
        for (int64_t g = t.groups[s]; g < t.groups[s + 1]; g++) {
            const int64_t nr = t.ref_offsets[g + 1] - t.ref_offsets[g];
            const double v =
                pair_score(h, nh, t.refs + t.ref_offsets[g], nr, &c, row, next, visits);
            if (v < best)
                best = v;
        }
        scores[s] = best;
    }
    if (n > 0)
        memcpy(out->data, scores, (size_t)n * sizeof(double));
    free(scores);
    free(visits);
    return TT_OK;
}
