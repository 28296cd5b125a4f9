"""How a SyncError words the roll call's answers (torchtally.sync.failure), without processes:

* a rank nobody could ask (no header arrived, the store does not answer) is listed as not
  asked, never guessed: ``missing_ranks`` is None when no rank could be named;
* ranks that told this rank they failed in the same sync are said so (their own errors say
  why), and are not named as lost; with nobody lost, the message says none was, rather than
  that every rank is still there (a peer that gave up may have exited since).
"""

from torchtally.sync import failure, rollcall

GROUP = (1000, 1001, 1002)  # ranks no sync of this process has met: no address is known for them


def _no_store():
    raise RuntimeError("no store here")


def test_ranks_nobody_could_ask_are_listed_as_such_not_guessed():
    err = failure.sync_error(
        group=GROUP,
        me=1000,
        sync_id=1,
        stage="header",
        elapsed_s=1.0,
        timeout_s=1.0,
        cause=TimeoutError("timed out"),
        store_getter=_no_store,
    )
    assert err.missing_ranks is None and err.lost_at is None
    assert "rank(s) [1001, 1002] could not be asked" in str(err)
    assert err.stage == "header" and err.sync_id == 1


def test_ranks_that_failed_in_the_same_sync_are_said_so_and_not_named_lost():
    failed = rollcall.Answer("present", 2, "header", rollcall.FAILED)
    answers = {1001: failed, 1002: failed}
    lost, unknown = failure.judge(answers, 2, "header")
    assert lost == {} and unknown == []
    text = failure.describe(lost, unknown, answers, sync_id=2)
    assert text.startswith("every rank reached this sync and none was lost")
    assert "rank(s) [1001, 1002] failed in this sync too" in text
    assert "still there" not in text


def test_failing_peers_are_listed_after_the_lost_ones():
    answers = {
        1001: rollcall.Answer("present", 2, "header", rollcall.FAILED),
        1002: rollcall.Answer("elsewhere", 1, "data wait", rollcall.LEFT),
    }
    lost, unknown = failure.judge(answers, 2, "header")
    assert list(lost) == [1002]
    text = failure.describe(lost, unknown, answers, sync_id=2)
    assert text.startswith("rank(s) [1002] did not reach this sync (it answered from other code")
    assert text.endswith("rank(s) [1001] failed in this sync too (they told this rank so; their own errors say why)")


def test_a_failure_in_a_later_sync_is_not_counted_as_this_one():
    answers = {1001: rollcall.Answer("present", 3, "header", rollcall.FAILED)}
    lost, unknown = failure.judge(answers, 2, "header")
    assert "failed in this sync too" not in failure.describe(lost, unknown, answers, sync_id=2)
