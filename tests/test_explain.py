"""Explanations: the shingles shown are the shingles hashed, and scores agree."""

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame.config import ShingleConfig
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
