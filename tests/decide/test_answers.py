"""A person's answers: ``labels=`` read, placed, learned from and honoured."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf
from lsh_frame._validation import check_labels
from lsh_frame.decide.labels import labelled_rows, place_answers
from lsh_frame.decide.model import MatchModel
from lsh_frame.decide.taught import _monotone, teach

FIELDS = ["given_name", "surname", "date_of_birth", "city", "postcode"]


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    return lf.datasets.make_customers(1_500, seed=7)


@pytest.fixture(scope="module")
def scored(people: pd.DataFrame) -> pd.DataFrame:
    return lf.pairs(people, FIELDS)


def _truth(people: pd.DataFrame, pairs: pd.DataFrame) -> np.ndarray:
    entity = people["entity_id"]
    return entity.loc[pairs["left"]].to_numpy() == entity.loc[pairs["right"]].to_numpy()


def _answers(people: pd.DataFrame, asked: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "left": asked["left"].to_numpy(),
            "right": asked["right"].to_numpy(),
            "match": _truth(people, asked),
        }
    )


# -- reading the answers -----------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ([True, False], [1.0, 0.0]),
        ([1, 0], [1.0, 0.0]),
        (["yes", "No"], [1.0, 0.0]),
        (["y", None], [1.0, np.nan]),
        (["u", "n"], [np.nan, 0.0]),
    ],
)
def test_answers_are_read_in_the_forms_people_write_them(given, expected):
    labels = pd.DataFrame({"left": [1, 2], "right": [3, 4], "match": given})
    np.testing.assert_array_equal(check_labels(labels, "pairs").match, expected)


def test_an_answer_that_is_no_answer_is_refused():
    labels = pd.DataFrame({"left": [1], "right": [2], "match": ["maybe"]})
    with pytest.raises(lf.ConfigError, match="'maybe'"):
        check_labels(labels, "pairs")


def test_labels_without_their_columns_are_refused():
    with pytest.raises(lf.ColumnError, match="'match'"):
        check_labels(pd.DataFrame({"left": [1], "right": [2]}), "pairs")
    with pytest.raises(lf.ConfigTypeError, match="DataFrame"):
        check_labels([(1, 2, True)], "pairs")


def test_the_last_answer_of_a_pair_wins_in_either_order():
    frame = pd.DataFrame({"name": list("abc")}, index=[10, 11, 12])
    labels = pd.DataFrame(
        {"left": [10, 11, 10], "right": [11, 10, 12], "match": [True, False, True]}
    )
    placed = place_answers(check_labels(labels, "pairs"), frame, None, "pairs")
    assert placed.left.tolist() == [1, 0]
    assert placed.right.tolist() == [0, 2]
    assert placed.match.tolist() == [0.0, 1.0]


def test_labels_naming_unknown_records_or_a_record_with_itself_are_refused():
    frame = pd.DataFrame({"name": list("ab")}, index=[10, 11])
    unknown = pd.DataFrame({"left": [10], "right": [99], "match": [True]})
    with pytest.raises(lf.ColumnError, match="99"):
        place_answers(check_labels(unknown, "pairs"), frame, None, "pairs")
    itself = pd.DataFrame({"left": [10], "right": [10], "match": [True]})
    with pytest.raises(lf.ConfigError, match="itself"):
        place_answers(check_labels(itself, "pairs"), frame, None, "pairs")


def test_a_links_pairs_keep_their_order():
    frame = pd.DataFrame({"name": list("ab")}, index=[10, 11])
    other = pd.DataFrame({"name": list("ab")}, index=[10, 11])
    labels = pd.DataFrame({"left": [11], "right": [10], "match": [True]})
    placed = place_answers(check_labels(labels, "link"), frame, other, "link")
    rows, answers = labelled_rows(placed, np.array([0, 1]), np.array([1, 0]), 2)
    assert rows.tolist() == [1] and answers.tolist() == [1.0]


# -- teaching ------------------------------------------------------------------


def test_no_answer_teaches_nothing():
    assert (
        teach(
            {"name": np.zeros(3)},
            {"name": np.zeros(0, int)},
            np.empty(0),
            lambda _: np.empty(0),
        )
        is None
    )


def test_taught_weights_stay_monotone_and_exact_agreement_never_counts_against():
    weights = _monotone(np.array([-1.0, 2.0, 0.5, -3.0]), np.ones(4))
    assert np.all(np.diff(weights) <= 0)
    assert weights[0] >= 0


def test_answers_move_the_probability_of_pairs_like_them(people, scored):
    asked = lf.uncertain_pairs(scored, n=10)
    answers = _answers(people, asked)
    answers["match"] = True  # a person who says every doubtful pair matches
    taught = lf.score(
        people, scored[["left", "right", "found_by"]], FIELDS, labels=answers
    )
    before = scored.set_index(["left", "right"])["match_probability"]
    after = taught.set_index(["left", "right"])["match_probability"]
    keys = list(zip(asked["left"], asked["right"], strict=True))
    assert (after.loc[keys].to_numpy() > before.loc[keys].to_numpy()).mean() > 0.5
    model = taught.attrs["lsh_frame"]["model"]
    assert model["taught"]["answers"] == 10 and model["taught"]["matches"] == 10
    assert taught.attrs["lsh_frame"]["labels"]["among_pairs"] == 10


def test_every_answer_is_honoured(people, scored):
    chosen = scored.iloc[:: max(len(scored) // 20, 1)].head(20)
    answers = _answers(people, chosen)
    answers["match"] = ~answers["match"]  # the opposite of the truth
    taught = lf.score(
        people, scored[["left", "right", "found_by"]], FIELDS, labels=answers
    )
    decided = taught.set_index(["left", "right"])["match"]
    keys = list(zip(answers["left"], answers["right"], strict=True))
    assert decided.loc[keys].tolist() == answers["match"].tolist()


def test_answered_pairs_blocking_did_not_find_are_added(people):
    scored = lf.pairs(people, FIELDS)
    known = set(zip(scored["left"], scored["right"], strict=True))
    far = next(
        (a, b)
        for a in people.index[:50]
        for b in people.index[-50:]
        if (a, b) not in known and (b, a) not in known
    )
    answers = pd.DataFrame({"left": [far[1]], "right": [far[0]], "match": [True]})
    taught = lf.pairs(people, FIELDS, labels=answers)
    added = taught[taught["found_by"] == "labels"]
    assert len(added) == 1 and bool(added["match"].iloc[0])
    assert {added["left"].iloc[0], added["right"].iloc[0]} == set(far)
    # Blocking's candidates are all there, and the answer's pair besides (the
    # look through the matches may add pairs the new match makes).
    found = taught["found_by"] != "through_matches"
    blocked = scored["found_by"] != "through_matches"
    assert found.sum() == blocked.sum() + 1


def test_a_taught_model_saves_and_loads_with_its_answers(people, scored):
    answers = _answers(people, lf.uncertain_pairs(scored, n=10))
    taught = lf.pairs(people, FIELDS, labels=answers)
    learned = taught.attrs["lsh_frame"]["model"]
    model = MatchModel.from_dict(json.loads(json.dumps(learned)))
    assert model.taught is not None and model.taught.answers == 10
    again = lf.score(
        people, taught[["left", "right", "found_by"]], FIELDS, min_score=model
    )
    # The saved model gives every pair its probability; the answered pairs
    # are certain only where the answers are given (1 or 0).
    answered = taught.set_index(["left", "right"]).index.isin(
        answers.set_index(["left", "right"]).index
    ) | taught.set_index(["right", "left"]).index.isin(
        answers.set_index(["left", "right"]).index
    )
    assert answered.sum() == 10
    np.testing.assert_allclose(
        again["match_probability"][~answered],
        taught["match_probability"][~answered],
        rtol=1e-12,
    )
    assert set(taught["match_probability"][answered]) <= {0.0, 1.0}


def test_a_damaged_taught_block_is_refused(people, scored):
    answers = _answers(people, lf.uncertain_pairs(scored, n=5))
    learned = lf.pairs(people, FIELDS, labels=answers).attrs["lsh_frame"]["model"]
    learned = json.loads(json.dumps(learned))
    learned["taught"]["shifts"] = {"no such field": [1.0]}
    with pytest.raises(lf.ConfigError, match="taught"):
        MatchModel.from_dict(learned)


def test_labels_are_deterministic(people):
    answers = pd.DataFrame(
        {"left": people.index[:6:2], "right": people.index[1:6:2], "match": True}
    )
    first = lf.pairs(people, FIELDS, labels=answers)
    second = lf.pairs(people, FIELDS, labels=answers)
    pd.testing.assert_frame_equal(first, second)


def test_the_jobs_take_labels(people, scored):
    answers = _answers(people, lf.uncertain_pairs(scored, n=10))
    deduped = people.lsh.dedupe(FIELDS, labels=answers)
    assert deduped.attrs["lsh_frame"]["labels"]["given"] == 10
    kept = people.lsh.drop_duplicates(FIELDS, labels=answers)
    assert len(kept) == deduped["cluster_id"].nunique()


# -- the questions -------------------------------------------------------------


def test_uncertain_pairs_are_doubtful_distinct_and_show_both_records(people, scored):
    asked = lf.uncertain_pairs(scored, people, n=8)
    assert len(asked) == 8
    assert asked.index.is_unique
    records = pd.concat([asked["left"], asked["right"]])
    assert records.is_unique  # one question per record in a batch
    doubtful = scored["match_probability"] * (1 - scored["match_probability"])
    assert doubtful.loc[asked.index].mean() > doubtful.mean()
    for column in FIELDS:
        assert f"{column}_left" in asked and f"{column}_right" in asked
    row = asked.iloc[0]
    assert row["surname_left"] == people.loc[row["left"], "surname"]


def test_uncertain_pairs_do_not_ask_again(people, scored):
    first = lf.uncertain_pairs(scored, n=10)
    answers = _answers(people, first)
    answers["match"] = answers["match"].astype(object)
    answers.loc[0, "match"] = None  # unsure answers are not asked again either
    second = lf.uncertain_pairs(scored, n=10, labels=answers)
    asked = set(zip(first["left"], first["right"], strict=True))
    assert not asked & set(zip(second["left"], second["right"], strict=True))


def test_uncertain_pairs_need_probabilities(people):
    plain = lf.pairs(people.head(200), FIELDS, min_score=0.8)
    with pytest.raises(lf.ConfigError, match="no match probabilities"):
        lf.uncertain_pairs(plain)


def test_blocking_report_counts_answered_matches_as_true_pairs(people, scored):
    matched = scored[_truth(people, scored)].head(30)
    answers = pd.DataFrame(
        {"left": matched["left"], "right": matched["right"], "match": True}
    )
    with_labels = lf.blocking_report(people, FIELDS, labels=answers)
    with_truth = lf.blocking_report(people, FIELDS, true_pairs=answers)
    pd.testing.assert_frame_equal(with_labels.table, with_truth.table)


def test_explain_says_what_the_answers_taught(people, scored):
    asked = lf.uncertain_pairs(scored, n=10)
    answers = _answers(people, asked)
    answers["match"] = True
    taught = lf.score(
        people, scored[["left", "right", "found_by"]], FIELDS, labels=answers
    )
    row = taught.iloc[0]
    told = lf.explain(people, row, FIELDS)
    assert told.taught is not None
    assert told.taught[:2] == (10, 10)
    assert "taught by 10 answers (10 matches)" in str(told)
    shifts = [item.taught_shift for item in told.fields if item.level != "missing"]
    assert all(shift is not None for shift in shifts)
    assert "taught_shift" in told.to_frame()
    same = (scored["left"] == row["left"]) & (scored["right"] == row["right"])
    plain = lf.explain(people, scored[same].iloc[0], FIELDS)
    assert plain.taught is None and "taught by" not in str(plain)
    assert "taught_shift" not in plain.to_frame()


def test_one_question_per_pattern_even_when_one_pattern_leads_by_far():
    from lsh_frame.decide.uncertain import _choose

    crowd = 5_000
    patterns = np.r_[np.zeros(crowd, dtype=np.int64), [1, 2, 3]]
    value = np.r_[np.linspace(1.0, 0.9, crowd), [0.5, 0.4, 0.3]]
    scored = pd.DataFrame(
        {"left": np.arange(patterns.size), "right": np.arange(patterns.size) + 10**6}
    )
    chosen = _choose(value, patterns, scored, 6)
    assert patterns[chosen[:4]].tolist() == [0, 1, 2, 3]
    assert chosen.size == 6 and np.unique(chosen).size == 6
