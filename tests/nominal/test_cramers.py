"""CramersV / cramers_v / cramers_v_matrix: against scipy (association, chi2_contingency with
Bergsma's correction) and torchmetrics, through the shared tester in one process and on 3 gloo
ranks with uneven shards (one empty); NaN strategies, score inputs, edge cases, bad input with
the state unchanged, the shared table in a collection, and the Yates difference."""

import functools
import warnings

import pytest
import torch
import torchmetrics.functional.nominal as tmf
import torchmetrics.nominal as tm
from support.metric_tester import CollectionFactory, MetricCase, assert_rejects, check_metric, run_distributed_cases
from support.nominal_cases import C, batches, cramers_v_ref, series, table
from support.parity_tester import ParityCase, check_parity, run_parity_distributed

from torchtally import MetricCollection
from torchtally.functional.nominal import cramers_v, cramers_v_matrix
from torchtally.nominal import CramersV, PearsonsContingencyCoefficient, TheilsU, TschuprowsT

P = functools.partial
PREDS, TARGET = series(1)
NEAR_INDEPENDENT = series(2, noise=1.0)
SCORES = torch.randn(PREDS.shape[0], C, generator=torch.Generator().manual_seed(3))
F_PREDS = PREDS.double().masked_fill(torch.arange(PREDS.shape[0]) % 13 == 0, float("nan"))
F_TARGET = TARGET.float().masked_fill(torch.arange(PREDS.shape[0]) % 7 == 3, float("nan"))


def _drop_nan(p, t):
    keep = ~(torch.isnan(p) | torch.isnan(t))
    return p[keep], t[keep]


def _replace(value):
    return lambda p, t: (torch.nan_to_num(p, nan=value), torch.nan_to_num(t, nan=value))


CASES = [
    MetricCase("bias", P(CramersV, C), batches(PREDS, TARGET), cramers_v_ref, rtol=1e-6, atol=1e-7),
    MetricCase(
        "no_bias",
        P(CramersV, C, bias_correction=False),
        batches(PREDS, TARGET),
        lambda p, t: cramers_v_ref(p, t, False),
        rtol=1e-6,
        atol=1e-7,
    ),
    MetricCase("near_independent", P(CramersV, C), batches(*NEAR_INDEPENDENT), cramers_v_ref, rtol=1e-6, atol=1e-7),
    MetricCase(
        "scores",
        P(CramersV, C),
        batches(SCORES, TARGET),
        lambda s, t: cramers_v_ref(s.argmax(1), t),
        rtol=1e-6,
        atol=1e-7,
    ),
    MetricCase(
        "nan_drop",
        P(CramersV, C, nan_strategy="drop"),
        batches(F_PREDS, F_TARGET),
        lambda p, t: cramers_v_ref(*_drop_nan(p, t)),
        rtol=1e-6,
        atol=1e-7,
    ),
    MetricCase(
        "nan_replace",
        P(CramersV, C, nan_replace_value=4),
        batches(F_PREDS, F_TARGET),
        lambda p, t: cramers_v_ref(*_replace(4.0)(p, t)),
        rtol=1e-6,
        atol=1e-7,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_lifecycle(case):
    check_metric(case)


@pytest.mark.distributed
def test_distributed():
    run_distributed_cases(CASES + COLLECTION_CASES, world_size=3)


PARITY = [
    ParityCase("bias", P(CramersV, C), P(tm.CramersV, C), batches(PREDS, TARGET)),
    ParityCase(
        "no_bias",
        P(CramersV, C, bias_correction=False),
        P(tm.CramersV, C, bias_correction=False),
        batches(PREDS, TARGET),
    ),
    ParityCase("scores", P(CramersV, C), P(tm.CramersV, C), batches(SCORES, TARGET)),
    ParityCase(
        "nan_drop",
        P(CramersV, C, nan_strategy="drop"),
        P(tm.CramersV, C, nan_strategy="drop"),
        batches(F_PREDS, F_TARGET),
    ),
]


@pytest.mark.parametrize("case", PARITY, ids=lambda c: c.name)
def test_parity_with_torchmetrics(case):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # both warn alike on a batch too small for the correction
        check_parity(case)


@pytest.mark.distributed
def test_parity_distributed():
    run_parity_distributed(PARITY, world_size=2)


# -- a collection shares one table ----------------------------------------------------------------


def _family(**options):
    return CollectionFactory(
        cramers=P(CramersV, C, **options),
        tschuprows=P(TschuprowsT, C, **options),
        pearson=P(PearsonsContingencyCoefficient, C, **options),
        theils=P(TheilsU, C, **options),
    )


COLLECTION_CASES = [MetricCase("collection", _family(), batches(PREDS, TARGET), None, max_collectives=3)]


def test_the_family_shares_one_table_in_a_collection():
    collection = _family()()
    assert isinstance(collection, MetricCollection)
    for p, t in batches(PREDS, TARGET):
        collection.update(p, t)
    tables = {id(m.confmat) for m in collection.values()}
    assert len(tables) == 1
    got = collection.compute()
    assert torch.allclose(
        got["cramers"].double(), torch.tensor(cramers_v_ref(PREDS, TARGET), dtype=torch.float64), atol=1e-6
    )
    check_metric(COLLECTION_CASES[0])


# -- functional forms -------------------------------------------------------------------------


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("seed", range(6))
def test_functional_equals_scipy_and_torchmetrics(seed, bias):
    p, t = series(10 + seed, n=30 + 37 * seed, classes=2 + seed % 4, noise=0.3 + 0.1 * seed)
    got = cramers_v(p, t, bias)
    assert got.dtype == torch.float32
    assert got.item() == pytest.approx(cramers_v_ref(p, t, bias), abs=1e-6)
    if not (bias and table(p, t).shape == (2, 2)):  # torchmetrics' Yates step raises on int64 tables
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert torch.allclose(got, tmf.cramers_v(p, t, bias), atol=1e-6, equal_nan=True)


def test_functional_takes_any_whole_numbers_as_categories():
    p, t = series(5)
    shifted = cramers_v(p * 7 - 3, t * 7 - 3)  # torchmetrics needs labels in [0, #categories)
    assert shifted == cramers_v(p, t)
    assert cramers_v(p.float(), t.double()) == cramers_v(p, t)


def test_matrix_equals_pairwise_and_torchmetrics():
    m = torch.stack([series(s)[i] for s in range(3) for i in range(2)], 1)
    got = cramers_v_matrix(m)
    for i in range(m.shape[1]):
        for j in range(m.shape[1]):
            want = 1.0 if i == j else cramers_v_ref(m[:, i], m[:, j])
            assert got[i, j].item() == pytest.approx(want, abs=1e-6)
    assert torch.allclose(got, tmf.cramers_v_matrix(m), atol=1e-6)


def test_yates_correction_moves_a_cell_at_most_to_its_expected_count():
    # a 2 x 2 table within 0.5 of independence: scipy's Yates step gives chi^2 = 0, torchmetrics'
    # fixed 0.5 step overshoots
    p = torch.tensor([0] * 10 + [1] * 10 + [0] * 9 + [1] * 11)
    t = torch.tensor([0] * 20 + [1] * 20)
    assert cramers_v(p, t).item() == pytest.approx(cramers_v_ref(p, t), abs=1e-7)
    assert cramers_v(p, t).item() == 0.0


# -- edge cases ---------------------------------------------------------------------------------


def test_one_category_gives_nan_with_a_warning():
    for bias in (True, False):
        with pytest.warns(UserWarning):
            assert torch.isnan(cramers_v(torch.zeros(8, dtype=torch.long), torch.arange(8) % 3, bias))
        with pytest.warns(UserWarning):
            assert torch.isnan(CramersV(3, bias).update(torch.zeros(5, dtype=torch.long), torch.ones(5)).compute())


def test_empty_input_is_nan_and_categories_that_never_occur_change_nothing():
    with pytest.warns(UserWarning):
        assert torch.isnan(cramers_v(torch.zeros(0), torch.zeros(0)))
    p, t = series(7, classes=3)
    assert torch.equal(CramersV(9).update(p, t).compute(), CramersV(3).update(p, t).compute())


# -- bad input and options ------------------------------------------------------------------------


def test_bad_input_raises_and_leaves_the_state_unchanged():
    m = CramersV(C).update(PREDS[:20], TARGET[:20])
    assert_rejects(m, (torch.tensor([0, C]), torch.tensor([0, 1])), ValueError, "")
    assert_rejects(m, (torch.tensor([0, -1]), torch.tensor([0, 1])), ValueError, "")
    assert_rejects(m, (torch.tensor([0.0, 1.5]), torch.tensor([0, 1])), ValueError, "preds: expected whole-number")
    assert_rejects(m, (torch.tensor([0.0, float("inf")]), torch.tensor([0, 1])), ValueError, "preds")
    assert_rejects(m, (torch.tensor([0, 1, 2]), torch.tensor([0, 1])), ValueError, "target: expected 3 samples")
    assert_rejects(m, (torch.zeros(2, 2, 2), torch.tensor([0, 1])), ValueError, "preds: expected \\[N\\]")
    assert_rejects(m, (torch.tensor([[0.1, float("nan")]]), torch.tensor([0])), ValueError, "preds: NaN in scores")
    assert_rejects(m, ([0, 1], torch.tensor([0, 1])), TypeError, "preds: expected a torch.Tensor")
    assert_rejects(m, (torch.tensor([0, 1]), torch.tensor([0j, 1j])), TypeError, "target")
    replaced_out_of_range = CramersV(C, nan_replace_value=C)
    assert_rejects(replaced_out_of_range, (torch.tensor([0.0, float("nan")]), torch.tensor([0, 1])), ValueError, "")


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(num_classes=0), ValueError, "num_classes"),
        (dict(num_classes=2.0), TypeError, "num_classes"),
        (dict(num_classes=3, nan_strategy="fill"), ValueError, "nan_strategy"),
        (dict(num_classes=3, nan_replace_value=None), ValueError, "nan_replace_value"),
        (dict(num_classes=3, nan_replace_value=0.5), ValueError, "nan_replace_value"),
        (dict(num_classes=3, bias_correction="yes"), TypeError, "bias_correction"),
    ],
)
def test_bad_options_raise(kwargs, error, match):
    with pytest.raises(error, match=match):
        CramersV(**kwargs)


def test_bad_functional_options_raise():
    with pytest.raises(ValueError, match="nan_strategy"):
        cramers_v(PREDS, TARGET, nan_strategy="fill")
    with pytest.raises(ValueError, match="matrix: expected \\[N, F\\]"):
        cramers_v_matrix(PREDS)
    with pytest.raises(ValueError, match="matrix: columns 0 and 1"):
        cramers_v_matrix(torch.tensor([[0.5, 1.0], [1.0, 0.0]]))
