"""Torch reference of the translation edit rate kernel (csrc/API_TEXT.md, "Translation edit rate"):
Tercom's algorithm as sacrebleu 2.x computes it, on token ids.

Per hypothesis and reference: greedy shifts of hypothesis word spans (at most 10 words, at most
50 positions away, a span shifted only where both sides hold an error and not onto its own
alignment), each the one that lowers the edit distance most (ties: longer span, earlier
start, earlier destination), until none lowers it or 1000 candidates were tried; the edits are
the shifts plus the remaining word-level Levenshtein distance, computed in a beam of 25 cells
about the diagonal (wider when the lengths differ by over 50x; the last row in full). An empty
reference costs one edit per hypothesis word. Per sentence: the fewest edits over its
references and their average length. Plain Python loops: the oracle of the C core.
"""

import math
from typing import Dict, List, Optional, Tuple

from .packed_text import unpack

MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
MAX_CANDIDATES = 1000
BEAM_WIDTH = 25
_INF = 10**16
_NOP, _SUB, _DEL, _INS, _UNDEF = 0, 1, 2, 3, 4  # _DEL: a hypothesis word alone; _INS: a reference word alone


def _distance(hyp: List[int], ref: List[int], with_trace: bool) -> Tuple[int, List[int]]:
    """Beam-limited word edit distance and (optionally) its trace of operations."""
    nh, nr = len(hyp), len(ref)
    ratio = nr / nh if nh else 1.0
    beam = math.ceil(ratio / 2 + BEAM_WIDTH) if BEAM_WIDTH < ratio / 2 else BEAM_WIDTH
    cost = [list(range(nr + 1))]
    op = [[_INS] * (nr + 1)]
    for i in range(1, nh + 1):
        prev = cost[i - 1]
        row, ops = [_INF] * (nr + 1), [_UNDEF] * (nr + 1)
        diag = math.floor(i * ratio)
        lo = max(0, diag - beam)
        hi = nr + 1 if i == nh else min(nr + 1, diag + beam)
        for j in range(lo, hi):
            if j == 0:
                row[0], ops[0] = prev[0] + 1, _DEL
                continue
            same = hyp[i - 1] == ref[j - 1]
            best, best_op = row[j], ops[j]
            for c, o in ((prev[j - 1] + (0 if same else 1), _NOP if same else _SUB), (prev[j] + 1, _DEL)):
                if best > c:
                    best, best_op = c, o
            if best > row[j - 1] + 1:
                best, best_op = row[j - 1] + 1, _INS
            row[j], ops[j] = best, best_op
        cost.append(row)
        op.append(ops)
    trace: List[int] = []
    if with_trace:
        i, j = nh, nr
        while i > 0 or j > 0:
            o = op[i][j]
            trace.append(o)
            if o in (_NOP, _SUB):
                i, j = i - 1, j - 1
            elif o == _INS:
                j -= 1
            elif o == _DEL:
                i -= 1
            else:  # pragma: no cover - the band always connects the corners
                raise RuntimeError("translation edit rate: the edit trace left the beam")
        trace.reverse()
    return cost[nh][nr], trace


def _alignment(trace: List[int]) -> Tuple[Dict[int, int], List[int], List[int]]:
    """Per reference position the hypothesis position it aligns to; error flags of each side."""
    h = r = -1
    align: Dict[int, int] = {}
    ref_err: List[int] = []
    hyp_err: List[int] = []
    for o in trace:
        if o in (_NOP, _SUB):
            h, r = h + 1, r + 1
            align[r] = h
            ref_err.append(int(o == _SUB))
            hyp_err.append(int(o == _SUB))
        elif o == _DEL:
            h += 1
            hyp_err.append(1)
        else:
            r += 1
            align[r] = h
            ref_err.append(1)
    return align, ref_err, hyp_err


def _moved(words: List[int], start: int, length: int, to: int) -> List[int]:
    """words with the span [start, start + length) moved to position ``to``."""
    span = words[start : start + length]
    if to < start:
        return words[:to] + span + words[to:start] + words[start + length :]
    if to > start + length:
        return words[:start] + words[start + length : to] + span + words[to:]
    return words[:start] + words[start + length : length + to] + span + words[length + to :]


def _best_shift(hyp: List[int], ref: List[int], checked: int) -> Tuple[int, List[int], int]:
    score, trace = _distance(hyp, ref, True)
    align, ref_err, hyp_err = _alignment(trace)
    best: Optional[Tuple[Tuple[int, int, int, int], List[int]]] = None
    for sh in range(len(hyp)):
        for sr in range(len(ref)):
            if abs(sr - sh) > MAX_SHIFT_DIST:
                continue
            length = 0
            while length < MAX_SHIFT_SIZE and hyp[sh + length] == ref[sr + length]:
                length += 1
                stop = sh + length == len(hyp) or sr + length == len(ref)
                if any(hyp_err[sh : sh + length]) and any(ref_err[sr : sr + length]):
                    if not sh <= align[sr] < sh + length:
                        previous = -1
                        for offset in range(-1, length):
                            to = 0 if sr + offset == -1 else align[sr + offset] + 1
                            if to == previous:
                                continue
                            previous = to
                            shifted = _moved(hyp, sh, length, to)
                            key = (score - _distance(shifted, ref, False)[0], length, -sh, -to)
                            checked += 1
                            if best is None or key > best[0]:
                                best = (key, shifted)
                        if checked >= MAX_CANDIDATES:
                            return _chosen(best, hyp, checked)
                if stop:
                    break
    return _chosen(best, hyp, checked)


def _chosen(best: Optional[Tuple[Tuple[int, int, int, int], List[int]]], hyp: List[int], checked: int):
    if best is None:
        return 0, hyp, checked
    return best[0][0], best[1], checked


def pair_edits(hyp: List[int], ref: List[int]) -> int:
    """Tercom's edits turning ``hyp`` into ``ref`` (shifts + beam edit distance)."""
    if not ref:
        return len(hyp)
    shifts, checked, words = 0, 0, hyp
    while True:
        delta, shifted, checked = _best_shift(words, ref, checked)
        if checked >= MAX_CANDIDATES or delta <= 0:
            break
        shifts += 1
        words = shifted
    return shifts + _distance(words, ref, False)[0]


def ter_sentences(out, hyp, hyp_offsets, refs, ref_offsets, groups, /) -> None:
    """out float64 [N, 2] = per sentence (fewest edits over its references, average reference
    length); the packed arguments as in ``packed_text``."""
    out, hyps, grouped = unpack(out, 2, hyp, hyp_offsets, refs, ref_offsets, groups)
    rows = []
    for h, rs in zip(hyps, grouped):
        fewest = min(pair_edits(h, r) for r in rs)
        rows.append((float(fewest), sum(len(r) for r in rs) / len(rs)))
    for i, (edits, length) in enumerate(rows):
        out[i, 0], out[i, 1] = edits, length
