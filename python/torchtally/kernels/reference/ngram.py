"""Reference of the n-gram kernels (csrc/API_TEXT.md, "N-gram statistics"): BLEU's clipped n-gram
matches and chrF's matches with the best reference, counted with Python Counters over the same
flat layout (tokens, bounds, groups) as the C core. Slow and plain: the tests' oracle."""

from collections import Counter
from typing import List, Tuple

import torch
from torch import Tensor


def _int64(name: str, t: object) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"{name}: expected a tensor, got {type(t).__name__}")
    if t.dtype != torch.int64:
        raise TypeError(f"{name}: expected an int64 tensor, got {t.dtype}")
    return t


def _layout(
    tokens: object, bounds: object, groups: object, streams: int, min_segments: int
) -> Tuple[List[int], List[List[int]], List[int]]:
    tok, bnd, grp = _int64("tokens", tokens), _int64("bounds", bounds), _int64("groups", groups)
    if tok.dim() != 1 or (tok.numel() > 1 and tok.stride(0) != 1):
        raise ValueError(f"tokens: expected a contiguous 1-D tensor, got {list(tok.shape)}")
    if bnd.dim() != 2 or bnd.shape[0] != streams or bnd.shape[1] < 1:
        raise ValueError(f"bounds: expected [{streams}, S + 1], got {list(bnd.shape)}")
    if grp.dim() != 1 or grp.numel() < 1:
        raise ValueError(f"groups: expected [G + 1], got {list(grp.shape)}")
    t, b, g = tok.tolist(), bnd.tolist(), grp.tolist()
    for k, row in enumerate(b):
        for i, v in enumerate(row):
            if v < 0 or v > len(t) or (i > 0 and v < row[i - 1]):
                raise ValueError(f"bounds: stream {k}: bound {v} at {i} is out of order or outside [0, {len(t)}]")
    if g[0] != 0 or g[-1] != len(b[0]) - 1:
        raise ValueError(f"groups: expected to run from 0 to {len(b[0]) - 1} segments")
    for i in range(len(g) - 1):
        if g[i + 1] - g[i] < min_segments:
            what = "reference" if min_segments > 1 else "hypothesis"
            raise ValueError(f"groups: sentence {i} has no {what}")
    return t, b, g


def _grams(ids: List[int], n: int) -> Counter:
    return Counter(tuple(ids[i : i + n]) for i in range(len(ids) - n + 1))


def bleu_update(out, tokens, bounds, groups, /) -> None:
    """out int64 [N + 1, 2] += per order (clipped matches, hypothesis n-grams); last row
    (hypothesis tokens, closest reference's tokens)."""
    out = _int64("out", out)
    if out.dim() != 2 or out.shape[0] < 2 or out.shape[1] != 2 or not out.is_contiguous():
        raise ValueError(f"out: expected int64 [N + 1, 2] with N >= 1, got {list(out.shape)}")
    t, b, g = _layout(tokens, bounds, groups, 1, 2)
    orders = out.shape[0] - 1
    acc = [[0, 0] for _ in range(orders + 1)]
    for i in range(len(g) - 1):
        segs = [t[b[0][s] : b[0][s + 1]] for s in range(g[i], g[i + 1])]
        hyp, refs = segs[0], segs[1:]
        diffs = [abs(len(r) - len(hyp)) for r in refs]
        acc[orders][0] += len(hyp)
        acc[orders][1] += len(refs[diffs.index(min(diffs))])
        for n in range(1, orders + 1):
            h = _grams(hyp, n)
            most: Counter = Counter()
            for r in refs:
                most |= _grams(r, n)
            acc[n - 1][0] += sum((h & most).values())
            acc[n - 1][1] += sum(h.values())
    out += torch.tensor(acc, dtype=torch.int64, device=out.device)


def _chrf(hyp: List[int], ref: List[int], match: List[int], beta: float) -> float:
    b2, total = beta * beta, 0.0
    for h, r, m in zip(hyp, ref, match):
        p = m / h if h > 0 else 0.0
        rc = m / r if r > 0 else 0.0
        total += (1.0 + b2) * p * rc / max(b2 * p + rc, 1e-16)
    return total / len(hyp)


def chrf_update(out, sentence, tokens, bounds, groups, n_char_order, beta, /) -> None:
    """out int64 [C + W, 3] += per order (hypothesis n-grams, best reference's n-grams, matches);
    sentence (float64 [G] or None) = each sentence's best chrF."""
    out = _int64("out", out)
    if out.dim() != 2 or out.shape[0] < 1 or out.shape[1] != 3 or not out.is_contiguous():
        raise ValueError(f"out: expected int64 [C + W, 3], got {list(out.shape)}")
    t, b, g = _layout(tokens, bounds, groups, 2, 1)
    orders = out.shape[0]
    if not isinstance(n_char_order, int) or not 1 <= n_char_order <= orders:
        raise ValueError(f"n_char_order: expected 1 .. {orders} (out's rows), got {n_char_order}")
    beta = float(beta)
    if not (beta >= 0.0) or beta == float("inf"):
        raise ValueError(f"beta: expected a finite value >= 0, got {beta}")
    if sentence is not None:
        if not isinstance(sentence, Tensor) or sentence.dtype != torch.float64:
            raise TypeError("sentence: expected a float64 tensor")
        if tuple(sentence.shape) != (len(g) - 1,):
            raise ValueError(f"sentence: expected float64 [{len(g) - 1}], got {list(sentence.shape)}")
    kinds = [(0, n) for n in range(1, n_char_order + 1)] + [(1, n) for n in range(1, orders - n_char_order + 1)]
    acc = [[0, 0, 0] for _ in range(orders)]
    scores: List[float] = []
    for i in range(len(g) - 1):

        def grams_of(s: int) -> List[Counter]:
            return [_grams(t[b[k][s] : b[k][s + 1]], n) for k, n in kinds]

        hyp = grams_of(g[i])
        hyp_n = [sum(c.values()) for c in hyp]
        best, best_ref, best_match = 0.0, [0] * orders, [0] * orders
        for r in range(g[i] + 1, g[i + 1]):
            ref = grams_of(r)
            ref_n = [sum(c.values()) for c in ref]
            match = [sum((h & c).values()) for h, c in zip(hyp, ref)]
            f = _chrf(hyp_n, ref_n, match, beta)
            if f > best:
                best, best_ref, best_match = f, ref_n, match
        for o in range(orders):
            acc[o][0] += hyp_n[o]
            acc[o][1] += best_ref[o]
            acc[o][2] += best_match[o]
        scores.append(best)
    out += torch.tensor(acc, dtype=torch.int64, device=out.device).reshape(out.shape)
    if sentence is not None:
        sentence.copy_(torch.tensor(scores, dtype=torch.float64))
