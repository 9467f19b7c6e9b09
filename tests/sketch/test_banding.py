"""plan(): the S-curve, the choice of bands and rows, and what the code delivers."""

import math

import numpy as np
import pytest

import lsh_frame as lf
from lsh_frame._kernels import keys as key_kernels
from lsh_frame._kernels import minhash as kernels
from lsh_frame.sketch.banding import candidate_probability


@pytest.mark.parametrize("threshold", [0.2, 0.35, 0.5, 0.65, 0.8, 0.95])
@pytest.mark.parametrize("recall", [0.8, 0.95, 0.99])
def test_plan_keeps_its_promise_and_is_optimal(threshold, recall):
    chosen = lf.plan(threshold, num_perm=128, recall=recall)
    assert chosen.bands * chosen.rows <= 128
    assert chosen.recall_at_threshold >= recall
    # No other feasible banding has less false-positive mass.
    for rows in range(1, 129):
        for bands in range(1, 128 // rows + 1):
            if candidate_probability(threshold, bands, rows) >= recall:
                other = lf.LshPlan(
                    threshold=threshold,
                    recall=recall,
                    num_perm=128,
                    bands=bands,
                    rows=rows,
                )
                assert other.false_positive_mass >= chosen.false_positive_mass - 1e-12


def test_plan_properties():
    chosen = lf.plan(0.5, num_perm=128, recall=0.95)
    assert chosen.effective_threshold == pytest.approx(
        (1 / chosen.bands) ** (1 / chosen.rows)
    )
    curve = chosen.curve(step=0.1)
    assert (
        curve["similarity"].tolist()[0] == 0.0
        and curve["similarity"].tolist()[-1] == 1.0
    )
    assert curve["probability"].is_monotonic_increasing
    assert chosen(0.5) == pytest.approx(1 - (1 - 0.5**chosen.rows) ** chosen.bands)
    assert 0 < chosen.false_negative_mass < chosen.false_positive_mass
    assert "bands" in str(chosen) and "P(0.5)" in str(chosen)


def test_threshold_one_means_identical_signatures():
    chosen = lf.plan(1.0, num_perm=64)
    assert (chosen.bands, chosen.rows) == (1, 64)


def test_unreachable_recall_says_what_to_change():
    with pytest.raises(lf.ConfigError, match="larger num_perm"):
        lf.plan(0.05, num_perm=4, recall=0.99)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"threshold": 0},
            r"'threshold' parameter of plan must be in \(0, 1\]. Got 0.0",
        ),
        ({"threshold": 1.5}, r"'threshold'.*Got 1.5"),
        ({"threshold": float("nan")}, r"'threshold'"),
        ({"threshold": "0.5"}, r"'threshold' parameter of plan must be a number"),
        ({"threshold": 0.5, "recall": 0}, r"'recall'"),
        ({"threshold": 0.5, "num_perm": 0}, r"'num_perm'"),
    ],
)
def test_bad_parameters(kwargs, message):
    threshold = kwargs.pop("threshold")
    with pytest.raises((lf.ConfigError, lf.ConfigTypeError), match=message):
        lf.plan(threshold, **kwargs)


def pairs_at(rng, similarity, count, union=50):
    shared = round(similarity * union)
    sets = []
    for _ in range(count):
        tokens = rng.integers(0, 2**64, size=union, dtype=np.uint64)
        only = (union - shared) // 2
        sets += [
            tokens[: shared + only],
            np.concatenate([tokens[:shared], tokens[shared + only :]]),
        ]
    return sets, shared / (shared + 2 * ((union - shared) // 2))


@pytest.mark.parametrize("threshold", [0.4, 0.7])
def test_measured_candidate_rate_follows_the_s_curve(threshold):
    """Band keys built by the library find pairs as often as P(s) says."""
    chosen = lf.plan(threshold, num_perm=128, recall=0.9)
    rng = np.random.default_rng(11)
    for target in (threshold - 0.2, threshold - 0.1, threshold, threshold + 0.1):
        sets, similarity = pairs_at(rng, target, 1500)
        offsets = np.concatenate([[0], np.cumsum([s.size for s in sets])]).astype(
            np.int64
        )
        matrix = np.zeros((len(sets), 128), dtype=np.uint32)
        permute = kernels.affine32_permute(*kernels.affine32_parameters(5, 128))
        kernels.minhash(kernels.fold32(np.concatenate(sets)), offsets, permute, matrix)
        keys = key_kernels.band_keys(matrix, chosen.bands, chosen.rows)
        found = (keys[0::2] == keys[1::2]).any(axis=1)
        expected = float(chosen(similarity))
        bound = 3.5 * math.sqrt(max(expected * (1 - expected), 1e-4) / found.size)
        assert abs(found.mean() - expected) < bound + 0.01, (
            similarity,
            found.mean(),
            expected,
        )


def test_plan_for_budget_picks_the_lowest_threshold_that_fits():
    rng = np.random.default_rng(2)
    sample = rng.beta(1, 25, 20_000)
    chosen = lf.plan_for_budget(sample, pairs=10**8, budget=50_000)
    assert chosen.expected_false_positives <= 50_000
    assert chosen.recall_at_threshold >= 0.95
    lower = round(chosen.threshold - 0.05, 2)
    if lower >= 0.3:  # the next lower threshold must not have fitted
        previous = lf.plan(lower)
        expected = 10**8 * float((previous(sample) * (sample < lower)).mean())
        assert expected > 50_000
    # Pairs above the threshold are wanted, never counted as false positives.
    with_matches = np.concatenate([sample, np.full(2_000, 0.9)])
    same = lf.plan_for_budget(with_matches, pairs=10**8, budget=50_000)
    assert same.threshold <= chosen.threshold + 0.05


def test_plan_for_budget_when_nothing_fits_says_how_far_off():
    # Every sampled pair lies below every threshold, and no false positive is allowed.
    chosen = lf.plan_for_budget(np.full(100, 0.29), pairs=10**15, budget=0)
    assert chosen.threshold == 0.95
    assert chosen.expected_false_positives > 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"pairs": -1, "budget": 1}, "'pairs'"),
        ({"pairs": 10, "budget": -1}, "'budget'"),
    ],
)
def test_plan_for_budget_bad_parameters(kwargs, message):
    with pytest.raises(lf.ConfigError, match=message):
        lf.plan_for_budget([0.1, 0.2], **kwargs)
