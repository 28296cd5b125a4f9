"""What a sync's exchanged header table says (torchtally.sync): every rank reads the same table,
in rank order, so every rank draws the same conclusions from it and raises (or goes on) alike.

A header row is HEADER_FIXED words (the positions below), then the plan's unit flag words, the
dim-0 length of each cat/merge state, the kind of each number state and, for a small plan, each
number's word and the data (torchtally.sync_plan.SmallLayout).
"""
from typing import List, NamedTuple

from .sync_plan import FLAG_BITS, HEADER_FIXED, SyncPlan

# ADDRESS: torchtally.rollcall's; VOTE and HOST: this rank's say in how the group's headers
# travel, and the machine it runs on (torchtally.sync_exchange)
FP, STATUS, PROBLEM, OPTIONS, DIRTY, ADDRESS, VOTE, HOST = 0, 1, 2, 3, 4, 5, 6, 7
PROBLEMS = {1: "shape", 2: "dtype", 3: "type"}  # a rank's STATUS != 0: its state's PROBLEM
REJECTED = 4  # the PROBLEM of a rank whose compute found a rejected batch (local_error)


class Scan(NamedTuple):
    """One pass over the rows (at every step under a per-step sync, so one pass only)."""

    agree: bool  # every rank has the same plan fingerprint and options
    troubled: bool  # some rank reported a local problem (its STATUS)
    rejected: bool  # ... that is a rejected batch of its own
    dirty_anywhere: bool  # some rank has data its last result did not see
    flags: List[int]  # every rank's unit flag words, or-ed


class Header(NamedTuple):
    """What the header exchange told every rank."""

    table: List[List[int]]  # every rank's header words (Python ints), in rank order
    lengths: List[List[int]]  # per rank, the dim-0 length of each cat/merge state
    updated_anywhere: List[bool]  # per unit, whether any rank updated it
    number_kinds: List[int]  # per number state, the kind the ranks agreed on
    dirty_anywhere: bool


def scan(plan: SyncPlan, table: List[List[int]]) -> Scan:
    fingerprint, options = table[0][FP], table[0][OPTIONS]
    agree, troubled, rejected, dirty_anywhere = True, False, False, False
    n_words = plan.n_flag_words
    flags = [0] * n_words
    for row in table:
        if row[FP] != fingerprint or row[OPTIONS] != options:
            agree = False
        if row[STATUS]:
            troubled = True
            rejected = rejected or row[PROBLEM] == REJECTED
        if row[DIRTY]:
            dirty_anywhere = True
        for w in range(n_words):
            flags[w] |= row[HEADER_FIXED + w]
    return Scan(agree, troubled, rejected, dirty_anywhere, flags)


def decode(plan: SyncPlan, table: List[List[int]], seen: Scan) -> Header:
    """The rest of what a table agreed on (after ``scan`` found nothing to raise)."""
    flags = seen.flags
    updated_anywhere = [bool((flags[u // FLAG_BITS] >> (u % FLAG_BITS)) & 1) for u in range(plan.n_units)]
    base = HEADER_FIXED + plan.n_flag_words
    lengths = [row[base : base + len(plan.var_indices)] for row in table] if plan.var_indices else []
    base += len(plan.var_indices)
    number_kinds = ([max(row[base + k] for row in table) for k in range(len(plan.number_indices))]
                    if plan.number_indices else [])
    return Header(table, lengths, updated_anywhere, number_kinds, seen.dirty_anywhere)
