"""The match cut: half the best F1 a learned model's probabilities expect."""

import numpy as np
import pandas as pd
import pytest
from conftest import PEOPLE_FIELDS
from hypothesis import given, settings
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame.decide import cut as decide_cut
from lsh_frame.errors import ConfigError


def reference_cut(probabilities: list[float]) -> tuple[float, float]:
    """Try every cut at a distinct probability: the best expected F1, halved."""
    values = np.array(probabilities)
    total = values.sum()
    if total <= 0:
        return 0.5, 0.0
    best = 0.0
    for cut in np.unique(values):
        chosen = values[values >= cut]
        best = max(best, 2 * chosen.sum() / (chosen.size + total))
    return best / 2, best


PROBABILITIES = st.lists(
    st.sampled_from([0.0, 0.05, 0.2, 0.35, 0.5, 0.61, 0.9, 0.99, 1.0]),
    min_size=0,
    max_size=40,
)


@settings(max_examples=80, deadline=None)
@given(PROBABILITIES, st.integers(min_value=0, max_value=40))
def test_the_cut_matches_a_reference_and_parts_add_up(probabilities, split):
    values = np.array(probabilities, dtype=np.float64)
    whole = decide_cut.expected_f1_cut(*decide_cut.probability_counts(values))
    want = reference_cut(probabilities)
    assert whole == pytest.approx(want, abs=1e-12)
    assert 0 < whole[0] <= 0.5
    parts = [
        decide_cut.probability_counts(part) for part in (values[:split], values[split:])
    ]
    merged = decide_cut.expected_f1_cut(*decide_cut.merge_probability_counts(parts))
    assert merged == whole


def test_nan_probabilities_are_left_out() -> None:
    values, counts = decide_cut.probability_counts(np.array([0.9, np.nan, 0.9, 0.1]))
    np.testing.assert_array_equal(values, [0.1, 0.9])
    np.testing.assert_array_equal(counts, [1, 2])


def test_on_calibrated_probabilities_the_cut_beats_one_half() -> None:
    # Pairs whose probabilities are true: each is a duplicate with that chance.
    rng = np.random.default_rng(3)
    probability = np.concatenate(
        [rng.beta(8, 2, 20_000), rng.beta(2, 5, 60_000), rng.uniform(0.3, 0.5, 8_000)]
    )
    true = rng.random(probability.size) < probability
    cut, expected = decide_cut.expected_f1_cut(
        *decide_cut.probability_counts(probability)
    )
    assert cut < 0.45

    def f1(chosen: np.ndarray) -> float:
        found = (chosen & true).sum()
        return 2 * found / (chosen.sum() + true.sum())

    assert f1(probability >= cut) > f1(probability >= 0.5) + 0.005
    # ... and the F1 expected is the one reached, within sampling error.
    assert f1(probability >= cut) == pytest.approx(expected, abs=0.01)


def test_a_learned_model_keeps_its_cut_and_old_models_decide_at_one_half(
    people_1500: pd.DataFrame, people_1500_pairs: pd.DataFrame
) -> None:
    learned = people_1500_pairs.attrs["lsh_frame"]["model"]
    cut = learned["match_cut"]
    assert cut == pytest.approx(learned["fit"]["expected_f1"] / 2, abs=1e-4)
    model = lf.decide.model.MatchModel.from_dict(learned)
    assert model.match_cut == cut
    assert lf.decide.model.MatchModel.from_dict(model.to_dict()).match_cut == cut
    probability = people_1500_pairs["match_probability"]
    np.testing.assert_array_equal(people_1500_pairs["match"], probability >= cut)
    # A model saved before the cut existed decides at 0.5, as it did.
    old = {name: value for name, value in learned.items() if name != "match_cut"}
    again = lf.pairs(people_1500, PEOPLE_FIELDS, min_score=old, transitive=False)
    np.testing.assert_array_equal(again["match"], again["match_probability"] >= 0.5)
    pd.testing.assert_series_equal(again["match_probability"], probability)


@pytest.mark.parametrize("cut", [0, 0.7, -0.1, "0.4", True, None])
def test_a_model_with_a_wrong_cut_is_refused(
    people_1500_pairs: pd.DataFrame, cut
) -> None:
    learned = {**people_1500_pairs.attrs["lsh_frame"]["model"], "match_cut": cut}
    with pytest.raises(ConfigError, match="match_cut"):
        lf.decide.model.MatchModel.from_dict(learned)


def test_explain_shows_the_cut(
    people_1500: pd.DataFrame, people_1500_pairs: pd.DataFrame
) -> None:
    row = people_1500_pairs.iloc[0]
    explanation = lf.explain(people_1500, row, PEOPLE_FIELDS)
    cut = people_1500_pairs.attrs["lsh_frame"]["model"]["match_cut"]
    assert explanation.match_cut == cut
    assert f"(a match from {cut:.3f})" in str(explanation)
