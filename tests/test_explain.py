"""Explanations: the shingles shown are the shingles hashed, and scores agree."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame.config import ShingleConfig
from lsh_frame.decide import closing as transitive
from lsh_frame.explain import shingle_texts


@pytest.mark.parametrize(
    "kind, k", [("char", 3), ("char", 2), ("word", 1), ("word", 2), ("stopword", 3)]
)
@given(text=st.text(alphabet="ab cdÉé\t ", max_size=20))
def test_shown_shingles_are_the_hashed_shingles(kind, k, text):
    config = ShingleConfig(kind=kind, k=k)
    hashed = lf.shingles(pd.Series([text]), kind=kind, k=k)
    assert len(shingle_texts(text, config)) == hashed.list.len().iloc[0]


def test_explain_a_scored_pair():
    frame = pd.DataFrame(
        {
            "name": ["jon smith", "john smith", "ann lee"],
            "city": ["leeds", None, "york"],
        }
    )
    scored = lf.pairs(frame, ["name", "city"], min_score=0.8, threshold=0.3)
    row = scored.iloc[0]
    explanation = lf.explain(frame, row, ["name", "city"])
    assert (explanation.left, explanation.right) == (0, 1)
    assert explanation.found_by == row["found_by"]
    assert explanation.match is True
    assert explanation.score == pytest.approx(row["score"])
    name = explanation.fields[0]
    assert name.score == pytest.approx(row["name_score"])
    assert name.jaccard == pytest.approx(row["name_jaccard"])
    assert set(name.shared) == {"n s", " sm", "smi", "mit", "ith"}
    assert set(name.only_left) == {"jon", "on "}
    assert len(name.shared) / (
        len(name.shared) + len(name.only_left) + len(name.only_right)
    ) == pytest.approx(name.jaccard)
    city = explanation.fields[1]
    assert city.right is None and pd.isna(city.score)
    text = str(explanation)
    assert "found by" in text and "only left" in text and "-> match" in text
    assert explanation.probability is None  # the pair was decided by min_score
    assert explanation.to_frame()["field"].tolist() == ["name", "city"]


def test_explain_labels_with_other_table_and_own_min_score():
    left = pd.DataFrame({"name": ["anna"]}, index=["L1"])
    right = pd.DataFrame({"name": ["hannah"]}, index=["R1"])
    explanation = left.lsh.explain(("L1", "R1"), "name", other=right, min_score=0.9)
    assert explanation.match is False
    assert explanation.found_by is None


def test_explain_rejects_other_pair_shapes():
    frame = pd.DataFrame({"name": ["a", "b"]})
    with pytest.raises(lf.ConfigTypeError, match="pair"):
        lf.explain(frame, [0, 1], "name")


def test_explain_names_itself_in_errors():
    frame = pd.DataFrame({"name": ["a", "b"]})
    with pytest.raises(lf.ColumnError, match="passed to explain"):
        lf.explain(frame, (0, 7), "name")


def test_explain_shows_the_learned_match_probability():
    customers = lf.datasets.make_customers(1_500, seed=2)
    columns = ["given_name", "surname", "date_of_birth"]
    scored = lf.pairs(customers, columns)
    row = scored.iloc[0]
    explanation = lf.explain(customers, row, columns)
    assert explanation.probability == pytest.approx(row["match_probability"])
    assert explanation.match == bool(row["match"])
    assert "match probability" in str(explanation)


@pytest.fixture(scope="module")
def customers_scored():
    customers = lf.datasets.make_customers(1_500, seed=2).drop(columns="entity_id")
    columns = ["given_name", "surname", "street_address", "date_of_birth", "email"]
    return customers, columns, lf.pairs(customers, columns)


def test_explain_reads_the_pair_with_the_learned_model(customers_scored):
    customers, columns, scored = customers_scored
    learned = scored.attrs["lsh_frame"]["model"]
    near = (scored["match_probability"] - 0.5).abs().idxmin()
    row = scored.loc[near]
    explanation = lf.explain(customers, row, columns)
    assert explanation.prior == pytest.approx(learned["prior"])
    levels = learned["levels"]
    for item in explanation.fields:
        weights = learned["fields"][item.field]["weight"]
        if pd.isna(item.score):
            assert item.level == "missing" and item.model_weight == 0
        else:
            position = levels.index(item.level)
            assert item.model_weight == pytest.approx(weights[position], abs=1e-3)
    assert explanation.fields[-1].running_probability == pytest.approx(
        row["match_probability"], rel=1e-9
    )
    text = str(explanation)
    assert "bits" in text and "weight 1" not in text
    assert f"level {explanation.fields[0].level}: " in text
    table = explanation.to_frame()
    assert table["running_probability"].iloc[-1] == pytest.approx(
        row["match_probability"]
    )
    # A number as min_score decides with a cut and shows no model.
    plain = lf.explain(customers, row, columns, min_score=0.8)
    assert plain.prior is None and plain.probability is None
    assert "weight 1" in str(plain) and "bits" not in str(plain)
    assert "level" not in plain.to_frame().columns


def test_explain_starts_pairs_only_the_neighbours_key_found_at_their_prior(
    customers_scored,
):
    customers, columns, scored = customers_scored
    learned = scored.attrs["lsh_frame"]["model"]
    row = scored[scored["found_by"] == "record_neighbours"].iloc[0]
    explanation = lf.explain(customers, row, columns)
    assert explanation.alone and explanation.prior == learned["alone_prior"]
    assert explanation.fields[-1].running_probability == pytest.approx(
        row["match_probability"], rel=1e-9
    )
    # Two labels do not say which keys found the pair: the model's own prior.
    labels = lf.explain(
        customers, (row["left"], row["right"]), columns, min_score=learned
    )
    assert not labels.alone and labels.prior == learned["prior"]
    assert labels.probability == pytest.approx(labels.fields[-1].running_probability)
    assert labels.probability > row["match_probability"]


def test_explain_on_other_fields_than_the_models_says_why_it_is_not_shown(
    customers_scored,
):
    customers, columns, scored = customers_scored
    # Some of the fields: the model's reading would not end at the probability.
    explanation = lf.explain(customers, scored.iloc[0], columns[:3])
    assert explanation.prior is None and explanation.fields[0].level is None
    assert "learned on the fields" in str(explanation) and "bits" not in str(
        explanation
    )
    # A model given explicitly must be the fields' model.
    learned = scored.attrs["lsh_frame"]["model"]
    with pytest.raises(lf.ConfigError, match="learned on the fields"):
        lf.explain(customers, scored.iloc[0], columns[:3], min_score=learned)


def test_explain_says_identical_pairs_match_with_probability_one():
    customers = lf.datasets.make_customers(600, seed=3).drop(columns="entity_id")
    copies = pd.concat([customers.iloc[[0]]] * 70, ignore_index=True)
    frame = pd.concat([customers, copies], ignore_index=True)
    columns = ["given_name", "surname", "date_of_birth", "email"]
    scored = lf.pairs(frame, columns)
    row = scored[scored["found_by"] == "identical"].iloc[0]
    explanation = lf.explain(frame, row, columns)
    assert explanation.identical and explanation.probability == 1.0
    assert "a match, with probability 1" in str(explanation)


def test_fields_read_as_one_fact_are_shown_and_still_add_up():
    frame = pd.DataFrame(
        {
            "name": ["anna berg", "anna berg"],
            "born": ["1990-01-02", "1990-01-02"],
            "street": ["1 high st", "9 low rd"],
            "city": ["york", "leeds"],
            "postcode": ["YO1", "LS2"],
        }
    )
    fields = list(frame.columns)
    shares = {"m": [0.8, 0.1, 0.05, 0.05], "u": [0.05, 0.05, 0.1, 0.8]}
    group = ["street", "city", "postcode"]
    learned = {
        "prior": 0.1,
        "cuts": [0.99, 0.9, 0.8],
        "fields": dict.fromkeys(fields, shares),
        "together": [
            {
                "fields": group,
                "cells": [
                    {"all": "differ", "present": group, "m": 0.1, "u": 0.6},
                    {"all": "agree", "present": group, "m": 0.7, "u": 0.2},
                ],
            }
        ],
    }
    explained = lf.explain(frame, (0, 1), fields, min_score=learned)
    bits = np.log2(0.1 / 0.6)
    assert len(explained.joint) == 1
    assert explained.joint[0][:2] == (tuple(group), "differ")
    assert explained.joint[0][2] == pytest.approx(bits)
    weights = {item.field: item.model_weight for item in explained.fields}
    for label in group:
        assert weights[label] == pytest.approx(bits / 3)
    assert weights["name"] == pytest.approx(np.log2(0.8 / 0.05))
    # The running probability still ends at the pair's match probability.
    assert explained.fields[-1].running_probability == pytest.approx(
        explained.probability
    )
    odds = np.log2(0.1 / 0.9) + 2 * np.log2(0.8 / 0.05) + bits
    assert explained.probability == pytest.approx(1 / (1 + 2.0**-odds))
    assert "street, city, postcode all differ: one fact" in str(explained)


def test_explain_says_a_pair_matches_because_its_cluster_closes(people_with_copies):
    fields = ["name", "town", "born"]
    frame = people_with_copies[fields]
    scored = lf.pairs(frame, fields)
    cut = scored.attrs["lsh_frame"]["model"]["match_cut"]
    closed = scored[transitive.closed_pairs(scored)]
    assert len(closed) == scored.attrs["lsh_frame"]["transitive"]["added"] > 0
    through = (closed["found_by"] == transitive.THROUGH_MATCHES).to_numpy()
    below = closed[~through]
    assert (below["match_probability"] < cut).all()
    explanation = lf.explain(frame, below.iloc[0], fields)
    assert explanation.match and explanation.closed
    assert "a match below the cut" in str(explanation)
    assert "share most of their matches" in str(explanation)
    plain = scored[scored["match"] & (scored["match_probability"] >= cut)]
    plain = plain[plain["found_by"] != transitive.THROUGH_MATCHES]
    assert not lf.explain(frame, plain.iloc[0], fields).closed
    # A pair found through the matches: only the rule decides it.
    found = lf.explain(frame, closed[through].iloc[0], fields)
    assert found.match and found.closed
    assert "found through the matches" in str(found)
    assert "a match because they share most of their matches" in str(found)
    left_open = scored[
        (scored["found_by"] == transitive.THROUGH_MATCHES) & ~scored["match"]
    ]
    unmatched = lf.explain(frame, left_open.iloc[0], fields)
    assert not unmatched.match and not unmatched.closed
    assert "only shared matches could make it a match" in str(unmatched)
