"""Pending blocks of a merge state (base/pending.py): a metric that keeps its checked batches
pending and folds them at the next read gives, on every path that reads or replaces its state,
what the same metric folding each batch at once gives (attribute read, compute, forward,
state_dict / load_state_dict, reset, merge_state, deepcopy / pickle, a collection sharing the
state, checkpoint / rollback, device moves, sync on 2 gloo ranks)."""

import copy
import pickle

import pytest
import torch
from support.rank_pools import run_on_ranks

from torchtally import Metric, MetricCollection

F64 = torch.float64


class Sums(Metric):
    """Per-key sums of values as a merge state: rows (key, sum) sorted by key; ``pending``: keep
    each batch as a block (a copy) and fold them on read."""

    full_state_update = False
    option_names = ("pending",)  # not ``folds``: a count the tests read

    def __init__(self, pending: bool = True, **kwargs):
        super().__init__(**kwargs)
        self.pending = pending
        self.folds = 0
        self.add_state("table", torch.zeros(0, 2, dtype=F64), reduce="merge", persistent=True)

    def update(self, keys, values):
        if keys.shape != values.shape:
            raise ValueError("values: expected the shape of keys")
        block = torch.stack((keys.to(F64), values.to(F64)), dim=1)
        if self.pending:
            if self.pend_state("table", block) >= 4:
                self.settle_states()
        else:
            self.table = self._folded(self.table, [block])

    def _folded(self, table, blocks):
        self.folds += 1
        rows = torch.cat([table, *blocks])
        keys, inverse = torch.unique(rows[:, 0], return_inverse=True)
        sums = torch.zeros(keys.numel(), dtype=F64).index_add_(0, inverse, rows[:, 1])
        return torch.stack((keys, sums), dim=1)

    def fold_pending_blocks(self, name, value, blocks):
        return self._folded(value, blocks)

    def merge_state_values(self, name, values):
        return self._folded(values[0], values[1:])

    def compute(self):
        return self.table[:, 1].sum() if self.table.numel() else torch.tensor(0.0, dtype=F64)


class SharedSums(Sums):
    state_key = "tests.pending_sums"


def _batches(n=7, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randint(0, 5, (3,), generator=g), torch.rand(3, generator=g, dtype=F64)) for _ in range(n)]


def _fed(metric, batches):
    for b in batches:
        metric.update(*b)
    return metric


def _reference(batches):
    return _fed(Sums(pending=False), batches)


def _pending_names(metric):
    return set(metric.__dict__["_pending"])


def test_a_read_folds_the_pending_blocks_once():
    batches = _batches(3)
    m = _fed(Sums(), batches)
    assert _pending_names(m) == {"table"} and m.folds == 0
    assert torch.equal(m.table, _reference(batches).table)
    assert m.folds == 1 and not _pending_names(m)
    m.table, m.compute()
    assert m.folds == 1


def test_blocks_are_settled_when_the_metric_says_enough():
    m = _fed(Sums(), _batches(5))
    assert m.folds == 1 and _pending_names(m) == {"table"}  # 4 folded, the 5th pending


def test_compute_and_update_after_it():
    batches = _batches(7)
    m = _fed(Sums(), batches[:3])
    assert torch.equal(m.compute(), _reference(batches[:3]).compute())
    _fed(m, batches[3:])
    assert torch.equal(m.compute(), _reference(batches).compute())


def test_forward_with_pending_blocks():
    batches = _batches(6)
    m, ref = Sums(), Sums(pending=False)
    for b in batches:
        assert torch.equal(m(*b), ref(*b))
    assert torch.equal(m.table, ref.table)


def test_a_rejected_forward_leaves_the_pending_state():
    batches = _batches(2)
    m = _fed(Sums(), batches)
    with pytest.raises(ValueError, match="values"):
        m(torch.tensor([1, 2]), torch.tensor([1.0]))
    assert torch.equal(m.table, _reference(batches).table)


def test_state_dict_and_load_with_pending_blocks():
    batches = _batches(5)
    m = _fed(Sums(), batches[:3])
    saved = m.state_dict()
    assert torch.equal(saved["table"], _reference(batches[:3]).table)
    other = _fed(Sums(), batches[3:])  # pending blocks replaced by the load
    other.load_state_dict(saved)
    assert torch.equal(other.table, _reference(batches[:3]).table)
    assert torch.equal(_fed(other, batches[3:]).table, _reference(batches).table)


def test_reset_forgets_pending_blocks():
    m = _fed(Sums(), _batches(2))
    m.reset()
    assert not _pending_names(m) and m.table.shape == (0, 2)
    batches = _batches(2, seed=1)
    assert torch.equal(_fed(m, batches).table, _reference(batches).table)


def test_merge_state_with_pending_blocks_on_both_sides():
    a, b = _batches(3), _batches(2, seed=1)
    mine, theirs = _fed(Sums(), a), _fed(Sums(), b)
    mine.merge_state(theirs)
    assert torch.equal(mine.table, _reference(a + b).table)
    assert torch.equal(theirs.table, _reference(b).table)


@pytest.mark.parametrize("how", ["deepcopy", "pickle", "clone"])
def test_copies_carry_the_pending_blocks(how):
    batches = _batches(3)
    m = _fed(Sums(), batches)
    dup = {"deepcopy": copy.deepcopy, "pickle": lambda x: pickle.loads(pickle.dumps(x)), "clone": Metric.clone}[how](m)
    dup.update(*_batches(1, seed=2)[0])
    assert torch.equal(m.table, _reference(batches).table)  # the original has its own blocks
    assert torch.equal(dup.table, _reference(batches + _batches(1, seed=2)).table)


def test_a_collection_sharing_the_state_sees_every_batch():
    batches = _batches(6)
    coll = MetricCollection({"a": SharedSums(), "b": SharedSums()})
    for b in batches:
        coll.update(*b)
    want = _reference(batches)
    assert coll["a"].table is coll["b"].table
    assert torch.equal(coll["b"].table, want.table)
    got = coll(*_batches(1, seed=3)[0])
    assert torch.equal(got["a"], got["b"])
    assert torch.equal(coll.compute()["a"], _reference(batches + _batches(1, seed=3)).compute())


def test_checkpoint_and_rollback_with_pending_blocks():
    batches = _batches(3)
    m = _fed(Sums(), batches[:2])
    saved = m.checkpoint_states()
    assert not _pending_names(m)
    m.update(*batches[2])
    m.rollback_states(saved)
    assert not _pending_names(m) and torch.equal(m.table, _reference(batches[:2]).table)


def test_hold_and_restore_with_pending_blocks():
    batches = _batches(3)
    m = _fed(Sums(), batches[:2])
    held = m.hold_states()
    m.update(*batches[2])
    m.restore_states(held)
    assert torch.equal(m.table, _reference(batches[:2]).table)


def test_assigning_the_state_drops_its_blocks():
    m = _fed(Sums(), _batches(2))
    m.table = torch.tensor([[1.0, 2.0]], dtype=F64)
    assert not _pending_names(m) and torch.equal(m.table, torch.tensor([[1.0, 2.0]], dtype=F64))


def test_a_device_move_folds_first():
    batches = _batches(2)
    m = _fed(Sums(), batches).to("meta")
    assert not _pending_names(m) and m.table.device.type == "meta"
    assert m.table.shape == _reference(batches).table.shape


def test_only_a_merge_state_takes_blocks():
    class Counted(Metric):
        def __init__(self):
            super().__init__()
            self.add_state("n", torch.tensor(0), reduce="sum")

        def update(self):
            self.pend_state("n", torch.tensor(1))

        def compute(self):
            return self.n

    with pytest.raises(ValueError, match="'n' is not a 'merge' state"):
        Counted().update()


def test_a_metric_without_a_fold_says_so():
    class NoFold(Sums):
        fold_pending_blocks = Metric.fold_pending_blocks

    m = _fed(NoFold(), _batches(1))
    with pytest.raises(NotImplementedError, match="fold_pending_blocks"):
        _ = m.table


def _synced_sums(rank, world_size, shards):
    m = _fed(Sums(), shards[rank])
    assert _pending_names(m) == ({"table"} if shards[rank] else set())
    first = m.compute()
    local = m.table.clone()
    return first, local


@pytest.mark.distributed
def test_sync_on_two_ranks_with_pending_blocks():
    batches = _batches(5)
    shards = [batches[:3], batches[3:]]
    rows = run_on_ranks(_synced_sums, 2, shards)
    want = _reference(batches).compute()
    for rank, (first, local) in enumerate(rows):
        torch.testing.assert_close(first, want, rtol=1e-12, atol=1e-12)
        assert torch.equal(local, _reference(shards[rank]).table)  # sync left the local state alone


def test_reading_the_state_while_another_thread_updates_loses_no_block():
    import threading

    batches = _batches(300, seed=4)
    m = Sums()
    done = threading.Event()

    def read():
        while not done.is_set():
            _ = m.table

    reader = threading.Thread(target=read)
    reader.start()
    try:
        _fed(m, batches)
    finally:
        done.set()
        reader.join()
    torch.testing.assert_close(m.table, _reference(batches).table, rtol=1e-12, atol=1e-12)


def test_a_metric_from_before_pending_blocks_existed_still_updates():
    """An object whose ``__dict__`` has no ``_pending`` (a pickle made before it existed)."""
    batches = _batches(3)
    for pending in (True, False):
        m = _fed(Sums(pending=pending), batches[:1])
        m.settle_states()
        del m.__dict__["_pending"]
        _fed(m, batches[1:])
        assert torch.equal(m.table, _reference(batches).table)
