"""Evaluation against hand-computed cases (recordlinkage's definitions)."""

import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf


def frame_of(pairs, match=None):
    result = pd.DataFrame(pairs, columns=["left", "right"])
    if match is not None:
        result["match"] = match
    return result


def test_pairs_against_true_pairs():
    # Candidates (1,2) (1,3) (2,4) (3,4); predicted (1,2) (2,4);
    # truth (2,1) (3,4) (4,5).
    result = frame_of([(1, 2), (1, 3), (2, 4), (3, 4)], [True, False, True, False])
    truth = frame_of([(2, 1), (3, 4), (4, 5)])
    evaluation = lf.evaluate(result, truth, records=5)
    assert evaluation.true_positives == 1  # (1,2) matches its swap (2,1)
    assert evaluation.precision == 0.5
    assert evaluation.recall == pytest.approx(1 / 3)
    assert evaluation.f1 == pytest.approx(2 * 0.5 * (1 / 3) / (0.5 + 1 / 3))
    assert evaluation.pairs_completeness == pytest.approx(2 / 3)
    assert evaluation.reduction_ratio == pytest.approx(1 - 4 / 10)


def test_link_pairs_are_ordered():
    result = frame_of([(1, 2), (2, 1)])
    truth = frame_of([(1, 2)])
    evaluation = lf.evaluate(result, truth, link=True, records=(3, 3))
    assert (evaluation.true_positives, evaluation.predicted_pairs) == (1, 2)
    assert evaluation.reduction_ratio == pytest.approx(1 - 2 / 9)


def test_pairs_against_entity_ids():
    ids = pd.Series([0, 0, 0, 1, 2], index=list("abcde"))  # true pairs ab ac bc
    result = frame_of([("a", "b"), ("c", "b"), ("d", "e")], [True, False, True])
    evaluation = lf.evaluate(result, ids)
    assert evaluation.true_pairs == 3
    assert evaluation.true_positives == 1
    assert evaluation.true_candidates == 2
    assert evaluation.precision == 0.5
    assert evaluation.pairs_completeness == pytest.approx(2 / 3)
    assert evaluation.reduction_ratio == pytest.approx(1 - 3 / 10)


def test_link_pairs_against_entity_ids():
    left = pd.Series([1, 2, 3], index=[0, 1, 2])
    right = pd.Series([2, 1, 1], index=[0, 1, 2])  # true pairs (0,1) (0,2) (1,0)
    result = frame_of([(0, 1), (1, 0), (2, 2)])
    evaluation = lf.evaluate(result, (left, right))
    assert evaluation.true_pairs == 3
    assert evaluation.true_positives == 2
    assert evaluation.possible_pairs == 9


def test_clusters_against_entity_ids():
    truth = pd.Series([0, 0, 0, 1, 1], index=list("abcde"))
    predicted = pd.Series([5, 5, 6, 6, 6], index=list("abcde"))
    evaluation = lf.evaluate(predicted, truth)
    # predicted pairs: ab, cd, ce, de (4); true: ab ac bc de (4); both: ab, de.
    assert (evaluation.predicted_pairs, evaluation.true_pairs) == (4, 4)
    assert evaluation.true_positives == 2
    assert evaluation.f1 == 0.5


def test_clusters_against_true_pairs_and_link_clusters():
    predicted = pd.Series([0, 0, 1], index=["x", "y", "z"])
    truth = frame_of([("y", "x"), ("y", "z")])
    evaluation = lf.evaluate(predicted, truth)
    assert (evaluation.true_positives, evaluation.predicted_pairs) == (1, 1)
    assert evaluation.recall == 0.5
    left_ids = pd.Series([0, 1], index=[0, 1])
    right_ids = pd.Series([1, 0, 0], index=[0, 1, 2])
    true_left, true_right = pd.Series([7, 8]), pd.Series([8, 7, 9])
    linked = lf.evaluate((left_ids, right_ids), (true_left, true_right))
    # predicted cross pairs: (0,1) (0,2) (1,0); true: (0,1) (1,0).
    assert (linked.predicted_pairs, linked.true_pairs, linked.true_positives) == (
        3,
        2,
        2,
    )


def test_perfect_result_and_empty_prediction():
    ids = pd.Series([0, 0, 1, 1])
    perfect = lf.evaluate(ids, ids)
    assert perfect.precision == perfect.recall == perfect.f1 == 1.0
    nothing = lf.evaluate(frame_of([]), ids)
    assert np.isnan(nothing.precision)
    assert nothing.recall == 0.0
    assert "precision" in str(perfect) and perfect.to_dict()["f1"] == 1.0


@pytest.mark.parametrize(
    "result, truth, options, error, message",
    [
        ("pairs", pd.Series([0]), {}, lf.ConfigTypeError, "DataFrame of pairs"),
        (
            frame_of([(0, 1)]),
            pd.DataFrame({"left": [0]}),
            {},
            lf.ColumnError,
            "'right'",
        ),
        (frame_of([(0, 9)]), pd.Series([0, 0]), {}, lf.ColumnError, "do not cover"),
        (frame_of([(0, 1)]), pd.Series([0, 0]), {"link": True}, lf.ConfigError, "link"),
        (
            frame_of([(0, 1)]),
            frame_of([(0, 1)]),
            {"records": -1},
            lf.ConfigError,
            "records",
        ),
    ],
)
def test_bad_input(result, truth, options, error, message):
    with pytest.raises(error, match=message):
        lf.evaluate(result, truth, **options)


def test_self_pairs_and_repeats_in_one_table_are_ignored():
    ids = pd.Series([1, 1, 2, 3], index=[0, 1, 2, 3])
    merged = ids.rename("entity").reset_index()
    truth = merged.merge(merged, on="entity").rename(
        columns={"index_x": "left", "index_y": "right"}
    )  # both orders and self pairs, as a self-merge gives them
    clusters = pd.Series([0, 0, 1, 2], index=[0, 1, 2, 3])
    assert lf.evaluate(clusters, truth).to_dict()["precision"] == 1.0
    assert lf.evaluate(clusters, truth).true_pairs == 1
    result = frame_of([(0, 1), (1, 0), (2, 2)])
    for against in (truth, ids):
        evaluation = lf.evaluate(result, against)
        assert (evaluation.predicted_pairs, evaluation.true_positives) == (1, 1)


def test_link_is_read_from_pairs_built_with_other():
    left = pd.DataFrame({"name": ["john smith", "mary jones"]})
    right = pd.DataFrame({"name": ["mary jones", "john smith"]})
    pairs = pd.DataFrame({"left": [0, 1], "right": [1, 0]})
    scored = lf.score(left, pairs, "name", other=right, min_score=0.5)
    truth = frame_of([(0, 1)])
    evaluation = lf.evaluate(scored, truth)
    assert (evaluation.predicted_pairs, evaluation.precision) == (2, 0.5)
    assert lf.evaluate(scored, truth, link=False).predicted_pairs == 1
    candidates = lf.candidates(left, "name", other=right, threshold=0.5)
    assert candidates.attrs["lsh_frame"]["link"] is True
