"""The SyncError of a sync whose collective failed or timed out: a roll call of the group
(torchtally.sync.rollcall) tells which ranks were lost and where, and this file words it.

A rank is lost when it did not reach the sync (it answered from other code, its process is gone,
or it did not answer at all while the header had not completed), or when it was lost inside the
sync (after a completed header: gone, silent, or still running in a stage this rank had left).
Ranks that reached the sync and are still there, or that told this rank they failed in it too,
are not lost. Ranks whose address nobody knew cannot be judged and are said to be so.
"""

from typing import Any, Dict, List, Optional, Tuple

from ..errors import SyncError
from . import rollcall

_NO_ANSWER = "no answer: its host is down, the network is cut, or the process is frozen"
_GONE = "its process is gone: its host refused the connection"


# Where a rank that still runs in an earlier stage than this rank's failed one is stalled.
_STALLED = {
    "header": "stalled in the header of this sync",
    "after header": "stalled after the header, before its data collectives",
    "data call": "stalled inside its data all_reduce/all_gather call, which never got going on its side",
}


def coarse_stage(stage: str) -> str:
    """The rollcall stage of a failed collective's stage name: "header (overflow)" -> "header",
    a failed wait ("data collectives") -> "data wait", a failed start ("all_reduce", ...) ->
    "data call"."""
    if stage.startswith("header"):
        return "header"
    return "data wait" if stage == "data collectives" else "data call"


def how_lost(answer: rollcall.Answer, sync_id: int, my_stage: str) -> Optional[str]:
    """Where and how one rank was lost, as this rank (failed in ``my_stage`` of sync ``sync_id``)
    sees it; None when it was not lost."""
    mine = coarse_stage(my_stage)
    if answer.kind == "present":
        theirs = answer.stage if answer.stage in rollcall.STAGES else mine
        if (
            answer.sync_id == sync_id
            and answer.state == rollcall.RUNNING
            and rollcall.STAGES.index(theirs) < rollcall.STAGES.index(mine)
        ):
            return f"{_STALLED[theirs]} (it is alive and still there)"
        return None
    if answer.kind == "elsewhere":
        last = (
            f"its last sync over this group was #{answer.sync_id}"
            if answer.sync_id
            else "it has made no sync over this group"
        )
        return f"did not reach this sync (it answered from other code: {last})"
    if answer.kind == "unknown":
        return None  # not judged: listed apart
    if answer.kind == "never":
        return "did not reach this sync (it never started one: no address registered on its node or in the store)"
    why = (
        (f"its process is gone: {answer.detail}" if answer.detail == rollcall.STORE_HOST_GONE else _GONE)
        if answer.kind == "gone"
        else f"{_NO_ANSWER} ({answer.detail})"
        if answer.detail != "no answer"
        else _NO_ANSWER
    )
    if mine != "header":
        return f"was lost in the data collectives, after the header every rank sent ({why})"
    return f"did not reach this sync ({why})"


def judge(answers: Dict[int, rollcall.Answer], sync_id: int, my_stage: str) -> Tuple[Dict[int, str], List[int]]:
    """(lost rank -> how, ranks that could not be asked)."""
    lost = {r: how for r, a in sorted(answers.items()) if (how := how_lost(a, sync_id, my_stage)) is not None}
    unknown = sorted(r for r, a in answers.items() if a.kind == "unknown")
    return lost, unknown


def describe(
    lost: Dict[int, str], unknown: List[int], answers: Dict[int, rollcall.Answer], sync_id: Optional[int] = None
) -> str:
    """One sentence naming the lost ranks, grouped by what happened to them, then the ranks that
    told this rank they failed in this same sync ``sync_id`` (not lost: their own errors say why;
    they may have exited since, so they are never said to be "still there")."""
    by_how: Dict[str, List[int]] = {}
    for r, how in lost.items():
        by_how.setdefault(how, []).append(r)
    parts = [f"rank(s) {ranks} {how}" for how, ranks in by_how.items()]
    if unknown:
        why = "; ".join(sorted({answers[r].detail for r in unknown}))
        parts.append(
            f"rank(s) {unknown} could not be asked ({why}: no sync header over this group "
            "arrived and the store did not answer)"
        )
    if not parts:
        parts.append(
            "every rank reached this sync and none was lost, but it did not complete (a peer may "
            "have given up first, e.g. on a rank that came late, or the network is too slow for the timeout)"
        )
    failed = sorted(
        r
        for r, a in answers.items()
        if r not in lost and a.kind == "present" and a.state == rollcall.FAILED and a.sync_id == sync_id
    )
    if failed:
        parts.append(f"rank(s) {failed} failed in this sync too (they told this rank so; their own errors say why)")
    return "; ".join(parts)


def sync_error(
    *,
    group: Tuple[int, ...],
    me: int,
    sync_id: int,
    stage: str,
    elapsed_s: float,
    timeout_s: float,
    cause: BaseException,
    store_getter: Any,
) -> SyncError:
    """Hold the roll call and build the SyncError for this rank's failed ``stage``."""
    grace = min(max(0.25 * timeout_s, 0.5), 5.0)
    answers = rollcall.roll_call(
        group, me, sync_id, coarse_stage(stage), grace, store_getter, late_wait_s=max(timeout_s - elapsed_s, 0.0)
    )
    lost, unknown = judge(answers, sync_id, stage)
    missing: Optional[List[int]] = sorted(lost)
    if unknown and not lost:
        missing = None
    return SyncError(
        f"torchtally sync #{sync_id} over ranks {list(group)} failed in the {stage} after {elapsed_s:.1f}s "
        f"(timeout {timeout_s:g}s): {describe(lost, unknown, answers, sync_id)}. Cause: {cause}. (Every rank of the "
        "group must call compute() of the same metrics in the same order.) The process group should be "
        "considered broken.",
        missing_ranks=missing,
        sync_id=sync_id,
        lost_at=lost if missing is not None else None,
        stage=stage,
    )
