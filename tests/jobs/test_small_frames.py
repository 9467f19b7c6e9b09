"""Small frames: the fallback without a model never joins two people on weak columns."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest
from small_frames import CASES

import lsh_frame as lf

#: The frames too small to learn a model from (the fallback decides them).
FALLBACK_CASES = [case for case in CASES if case.name != "40 customers"]


@pytest.mark.parametrize("case", FALLBACK_CASES, ids=lambda case: case.name)
def test_no_two_people_are_merged_on_low_information_columns(case):
    frame = case.frame()
    with pytest.warns(UserWarning, match="alone"):
        result = frame.lsh.dedupe()
    assert case.wrong_merges(result["cluster_id"]) == []
    # The result says what decided.
    assert "alone" in result.attrs["lsh_frame"]["fallback"]
    assert result.attrs["lsh_frame"]["identifying"]


def test_the_duplicates_the_identifying_fields_show_are_still_found():
    case = next(case for case in CASES if case.name == "tier and balance")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = case.frame().lsh.dedupe()
    assert case.missed(result["cluster_id"]) == []


def test_attrs_and_warning_say_which_fields_decided():
    frame = CASES[0].frame()
    with pytest.warns(UserWarning) as said:
        scored = frame.lsh.pairs(list(frame.columns))
    info = scored.attrs["lsh_frame"]
    readings = {reading["field"]: reading for reading in info["identifying"]}
    assert [field for field, r in readings.items() if r["identifying"]] == ["name"]
    assert readings["tier"]["reason"].startswith("two records share a value")
    assert readings["balance"]["reason"] == "short codes of digits"
    assert "on name alone" in info["fallback"]
    assert "tier" in str(said[0].message)


def test_a_pair_agreeing_on_weak_columns_only_is_no_match():
    # 0.8 over every field, but the name (the only identifying field) differs.
    frame = pd.DataFrame(
        {
            "name": ["Mary Jones", "Bob Brown", "Ann Lee", "Tom Hardy"],
            "tier": ["gold", "gold", "silver", "gold"],
            "city": ["Leeds", "Leeds", "York", "Leeds"],
        }
    )
    pairs = pd.DataFrame({"left": [0], "right": [1]})
    with pytest.warns(UserWarning):
        scored = lf.score(frame, pairs, ["name", "tier", "city"])
    assert scored["score"].iloc[0] >= 0.7
    assert not scored["match"].iloc[0]
    # A cut the user gives is theirs: it reads every field.
    given = lf.score(frame, pairs, ["name", "tier", "city"], min_score=0.7)
    assert given["match"].iloc[0]


def test_without_an_identifying_field_no_pair_is_a_match():
    frame = pd.DataFrame(
        {"tier": ["gold", "gold", "gold", "silver"], "balance": [10.0, 10.0, 11.0, 5.0]}
    )
    # Rows 0 and 1 agree on everything, and still say nothing of who they are.
    with pytest.warns(UserWarning, match="no pair is a match"):
        result = frame.lsh.dedupe()
    assert result["cluster_id"].nunique() == len(frame)
