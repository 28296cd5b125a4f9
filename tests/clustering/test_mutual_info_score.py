"""The label-comparing clustering metrics (MutualInfoScore and its normalised and adjusted forms,
RandScore, AdjustedRandScore, FowlkesMallowsIndex, HomogeneityScore, CompletenessScore,
VMeasureScore) on their shared sparse contingency table: against scikit-learn on seeded random
labels of arbitrary values and on edge cases, through the shared tester (one process and 3 gloo
ranks with uneven shards, one empty), side by side with torchmetrics where it is right, their
bad inputs and their state."""

import functools

import numpy as np
import pytest
import sklearn.metrics as skm
import torch
import torchmetrics.clustering as tmc
import torchmetrics.functional.clustering as tmf
from support.metric_tester import CollectionFactory, MetricCase, assert_rejects, check_metric, run_distributed_cases

import torchtally.clustering as ttc
import torchtally.functional.clustering as ttf
from torchtally import MetricCollection

P = functools.partial
METHODS = ("min", "geometric", "arithmetic", "max")


def _labels(n, kp, kt, seed):
    """preds and target with kp / kt clusters of arbitrary (negative, large, sparse) label values,
    target depending on preds so that the scores are away from 0."""
    g = torch.Generator().manual_seed(seed)
    base = torch.randint(0, kp, (n,), generator=g)
    noise = torch.randint(0, kt, (n,), generator=g)
    keep = torch.rand(n, generator=g) < 0.6
    target = torch.where(keep, base % kt, noise)
    return base * 1_000_003 - 7, target * -13 + 2**40


def _batches(preds, target, sizes=(7, 1, 13, 5, 9, 11, 4)):
    out, lo = [], 0
    for s in sizes:
        out.append((preds[lo : lo + s], target[lo : lo + s]))
        lo += s
    return out


def _sk(fn, **kw):
    """scikit-learn's fn(labels_true, labels_pred) as reference(preds, target)."""
    return lambda p, t: fn(t.numpy(), p.numpy(), **kw)


# (case name, our class factory, our functional form, scikit-learn's reference)
LABEL_METRICS = [
    ("mi", ttc.MutualInfoScore, ttf.mutual_info_score, _sk(skm.mutual_info_score)),
    ("rand", ttc.RandScore, ttf.rand_score, _sk(skm.rand_score)),
    ("ari", ttc.AdjustedRandScore, ttf.adjusted_rand_score, _sk(skm.adjusted_rand_score)),
    ("fmi", ttc.FowlkesMallowsIndex, ttf.fowlkes_mallows_index, _sk(skm.fowlkes_mallows_score)),
    ("homogeneity", ttc.HomogeneityScore, ttf.homogeneity_score, _sk(skm.homogeneity_score)),
    ("completeness", ttc.CompletenessScore, ttf.completeness_score, _sk(skm.completeness_score)),
    ("v", ttc.VMeasureScore, ttf.v_measure_score, _sk(skm.v_measure_score)),
    ("v_beta2", P(ttc.VMeasureScore, beta=2.0), P(ttf.v_measure_score, beta=2.0), _sk(skm.v_measure_score, beta=2.0)),
]
for _m in METHODS:
    LABEL_METRICS += [
        (
            f"nmi_{_m}",
            P(ttc.NormalizedMutualInfoScore, _m),
            P(ttf.normalized_mutual_info_score, average_method=_m),
            _sk(skm.normalized_mutual_info_score, average_method=_m),
        ),
        (
            f"ami_{_m}",
            P(ttc.AdjustedMutualInfoScore, _m),
            P(ttf.adjusted_mutual_info_score, average_method=_m),
            _sk(skm.adjusted_mutual_info_score, average_method=_m),
        ),
    ]

PREDS, TARGET = _labels(50, 4, 3, seed=1)
CASES = [
    MetricCase(name, factory, _batches(PREDS, TARGET), reference=ref, rtol=1e-6, atol=1e-6)
    for name, factory, _, ref in LABEL_METRICS
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed():
    everything = CollectionFactory(**{name: factory for name, factory, _, _ in LABEL_METRICS})
    run_distributed_cases(
        CASES + [MetricCase("collection", everything, _batches(PREDS, TARGET), max_collectives=3)], world_size=3
    )


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("name, _cls, functional, reference", LABEL_METRICS, ids=[m[0] for m in LABEL_METRICS])
def test_functional_equals_scikit_learn_on_random_labels(name, _cls, functional, reference, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 400))
    p, t = _labels(n, int(rng.integers(1, 9)), int(rng.integers(1, 9)), seed)
    got = functional(p, t)
    assert got.dtype == torch.get_default_dtype() and got.shape == ()
    assert float(got) == pytest.approx(reference(p, t), rel=1e-5, abs=1e-6)


EDGES = {
    "one_sample": (torch.tensor([3]), torch.tensor([9])),
    "constant_both": (torch.full((10,), 4), torch.full((10,), -1)),
    "constant_preds": (torch.full((10,), 4), torch.arange(10) % 3),
    "constant_target": (torch.arange(10) % 3, torch.full((10,), 4)),
    "all_distinct": (torch.arange(12), torch.arange(12) * 5),
    "identical": (torch.arange(20) % 4, torch.arange(20) % 4),
    "independent": (torch.arange(16) % 4, torch.arange(16) // 4),
    "bool": (torch.arange(9) % 2 == 0, torch.arange(9) % 3 == 0),
    "int8": (torch.tensor([1, 1, 2, 2, 3], dtype=torch.int8), torch.tensor([0, 0, 0, 5, 5], dtype=torch.int8)),
}


@pytest.mark.parametrize("edge", EDGES, ids=list(EDGES))
@pytest.mark.parametrize("name, cls, functional, reference", LABEL_METRICS, ids=[m[0] for m in LABEL_METRICS])
def test_edge_cases_equal_scikit_learn(name, cls, functional, reference, edge):
    p, t = EDGES[edge]
    want = reference(p.long(), t.long())
    assert float(functional(p, t)) == pytest.approx(want, abs=1e-6)
    assert float(cls().update(p, t).compute()) == pytest.approx(want, abs=1e-6)


@pytest.mark.parametrize("name, cls, _f, _r", LABEL_METRICS, ids=[m[0] for m in LABEL_METRICS])
def test_no_samples_gives_scikit_learn_value_with_a_warning(name, cls, _f, _r):
    want = {"mi": 0.0, "fmi": 0.0}.get(name, 1.0)  # scikit-learn's values for empty labellings
    with pytest.warns(UserWarning, match="update"):
        assert float(cls().compute()) == want


# torchmetrics where it is right: several clusters on each side, a sample count where its int64
# pair products do not overflow.
TM_FUNCTIONAL = [
    (ttf.mutual_info_score, tmf.mutual_info_score),
    (ttf.rand_score, tmf.rand_score),
    (ttf.adjusted_rand_score, tmf.adjusted_rand_score),
    (ttf.fowlkes_mallows_index, tmf.fowlkes_mallows_index),
    (ttf.homogeneity_score, tmf.homogeneity_score),
    (ttf.completeness_score, tmf.completeness_score),
    (ttf.v_measure_score, tmf.v_measure_score),
    (ttf.normalized_mutual_info_score, tmf.normalized_mutual_info_score),
    (ttf.adjusted_mutual_info_score, tmf.adjusted_mutual_info_score),
]


@pytest.mark.parametrize("ours, theirs", TM_FUNCTIONAL, ids=[o.__name__ for o, _ in TM_FUNCTIONAL])
def test_functional_equals_torchmetrics_where_it_is_right(ours, theirs):
    for seed in range(4):
        p, t = _labels(120, 5, 4, seed)
        got, want = ours(p, t), theirs(p, t)
        assert got.dtype == want.dtype
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_classes_equal_torchmetrics_where_it_is_right():
    pairs = [
        (ttc.MutualInfoScore(), tmc.MutualInfoScore()),
        (ttc.AdjustedRandScore(), tmc.AdjustedRandScore()),
        (ttc.NormalizedMutualInfoScore("geometric"), tmc.NormalizedMutualInfoScore("geometric")),
        (ttc.AdjustedMutualInfoScore("max"), tmc.AdjustedMutualInfoScore("max")),
        (ttc.VMeasureScore(beta=0.5), tmc.VMeasureScore(beta=0.5)),
    ]
    for ours, theirs in pairs:
        for p, t in _batches(PREDS, TARGET):
            ours.update(p, t)
            theirs.update(p, t)
        torch.testing.assert_close(ours.compute(), theirs.compute(), rtol=1e-4, atol=1e-5)


def test_deliberate_differences_from_torchmetrics():
    same = (torch.zeros(6, dtype=torch.long), torch.ones(6, dtype=torch.long))
    assert float(ttf.normalized_mutual_info_score(*same)) == 1.0  # torchmetrics: 0
    assert float(tmf.normalized_mutual_info_score(*same)) == 0.0
    assert float(ttf.adjusted_mutual_info_score(*same)) == 1.0
    apart = (torch.arange(4), torch.zeros(4, dtype=torch.long))  # homogeneity 1, completeness 0
    unrelated = (torch.tensor([0, 0, 1, 1]), torch.tensor([0, 1, 0, 1]))  # homogeneity = completeness = 0
    assert float(ttf.v_measure_score(*unrelated)) == 0.0 == skm.v_measure_score(unrelated[1], unrelated[0])
    assert float(tmf.v_measure_score(*unrelated)) == 1.0  # torchmetrics
    assert float(ttf.homogeneity_score(*apart)) == pytest.approx(skm.homogeneity_score(apart[1], apart[0]))


def test_the_table_grows_with_distinct_pairs_not_samples():
    m = ttc.AdjustedRandScore()
    g = torch.Generator().manual_seed(0)
    for _ in range(20):
        p = torch.randint(0, 3, (1000,), generator=g)
        m.update(p, (p + torch.randint(0, 2, (1000,), generator=g)) % 4)
    table = m.contingency
    assert table.dtype == torch.int64 and table.shape[1] == 3
    assert table.shape[0] <= 12 and int(table[:, 2].sum()) == 20_000
    keys = table[:, 0] * 10 + table[:, 1]
    assert bool((keys[1:] > keys[:-1]).all())  # distinct and sorted


def test_a_collection_shares_one_table():
    coll = MetricCollection({name: factory() for name, factory, _, _ in LABEL_METRICS})
    singles = {name: factory() for name, factory, _, _ in LABEL_METRICS}
    for p, t in _batches(PREDS, TARGET):
        coll.update(p, t)
        for m in singles.values():
            m.update(p, t)
    got = coll.compute()
    for name, m in singles.items():
        torch.testing.assert_close(got[name], m.compute())
    tables = {id(m.contingency) for m in coll.values()}
    assert len(tables) == 1


def test_forward_returns_the_batch_value_and_accumulates():
    m = ttc.AdjustedRandScore()
    batches = _batches(PREDS, TARGET)
    for p, t in batches:
        torch.testing.assert_close(m(p, t), ttf.adjusted_rand_score(p, t))
    torch.testing.assert_close(m.compute(), ttf.adjusted_rand_score(PREDS[:50], TARGET[:50]))


BAD = [
    ((torch.tensor([0.0, 1.0]), torch.tensor([0, 1])), TypeError, "preds: expected integer"),
    ((torch.tensor([0, 1]), torch.tensor([0.5, 1.0])), TypeError, "target: expected integer"),
    (([0, 1], torch.tensor([0, 1])), TypeError, "preds: expected a torch.Tensor"),
    ((torch.zeros(2, 2, dtype=torch.long), torch.zeros(2, 2, dtype=torch.long)), ValueError, "preds: expected a 1-D"),
    ((torch.tensor([0, 1, 2]), torch.tensor([0, 1])), ValueError, "same shape"),
]


@pytest.mark.parametrize("args, exc, match", BAD, ids=[b[2] for b in BAD])
@pytest.mark.parametrize("name, cls, functional, _r", LABEL_METRICS[:3], ids=[m[0] for m in LABEL_METRICS[:3]])
def test_bad_input_raises_and_leaves_the_state(name, cls, functional, _r, args, exc, match):
    m = cls().update(torch.tensor([0, 0, 1]), torch.tensor([1, 1, 2]))
    assert_rejects(m, args, exc, match)
    with pytest.raises(exc, match=match):
        functional(*args)


def test_bad_options_raise():
    with pytest.raises(ValueError, match="average_method"):
        ttc.NormalizedMutualInfoScore("median")
    with pytest.raises(ValueError, match="average_method"):
        ttf.adjusted_mutual_info_score(torch.tensor([0]), torch.tensor([0]), "harmonic")
    with pytest.raises(ValueError, match="beta"):
        ttc.VMeasureScore(beta=0.0)


def test_a_bad_table_does_not_load():
    m = ttc.MutualInfoScore()
    for bad in (torch.tensor([[0, 0, 0]]), torch.tensor([[1, 0, 2], [0, 0, 1]]), torch.tensor([[0, 0, 1], [0, 0, 1]])):
        with pytest.raises(ValueError, match="contingency"):
            m.load_state_dict({"contingency": bad}, strict=False)
    assert m.contingency.numel() == 0


def test_float_labels_raise_an_error_that_is_also_torchmetrics_valueerror():
    from torchtally.functional.clustering import rand_score

    for catch in (TypeError, ValueError):
        with pytest.raises(catch, match=r"preds: expected integer.*\(Expected real, discrete values"):
            rand_score(torch.tensor([0.0, 1.0]), torch.tensor([0, 1]))


def test_threads_folding_small_batches_at_once_keep_their_own_counts():
    """The fold's count slot is kept per thread: metrics updated from several threads at once,
    each with labels of its own number of clusters (so tables of other sizes), each equal one
    metric given the same batches in one thread (a slot shared across threads would hand a
    thread another's row count)."""
    import threading

    cases = [_labels(240, 3 + 4 * k, 2 + 5 * k, seed=11 + k) for k in range(6)]
    chunks = [[(p[i : i + 8], t[i : i + 8]) for i in range(0, 240, 8)] for p, t in cases]
    rounds = 30
    metrics = [ttc.MutualInfoScore() for _ in chunks]

    def run(m, batches):
        for _ in range(rounds):
            for p, t in batches:
                m.update(p, t)

    workers = [threading.Thread(target=run, args=(m, b)) for m, b in zip(metrics, chunks)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    for m, (p, t) in zip(metrics, cases):
        one = ttc.MutualInfoScore()
        one.update(p, t)
        expected = one.contingency.clone()
        expected[:, 2] *= rounds
        assert torch.equal(m.contingency, expected)


def test_small_batches_wait_bounded_and_large_ones_are_folded_at_once():
    from torchtally.clustering import mutual_info_score as module

    m = ttc.MutualInfoScore()
    p, t = _labels(module.PENDING_SAMPLES * 3, 5, 4, seed=5)
    pending = lambda: set(m.__dict__["_pending"])  # noqa: E731
    m.update(p[:8], t[:8])
    assert pending() == {"contingency"}  # waits
    for i in range(1, module.PENDING_BLOCKS):
        m.update(p[8 * i : 8 * i + 8], t[8 * i : 8 * i + 8])
    assert pending() == set()  # the 64th batch folded them all
    m.update(p[:8], t[:8])
    m.update(p, t)  # a large batch: folded at once, with the one waiting
    assert pending() == set()
    seen_p = torch.cat([p[: 8 * module.PENDING_BLOCKS], p[:8], p])
    seen_t = torch.cat([t[: 8 * module.PENDING_BLOCKS], t[:8], t])
    assert float(m.compute()) == pytest.approx(skm.mutual_info_score(seen_t.numpy(), seen_p.numpy()), abs=1e-6)
