"""Familiar forms of given names (``ned`` and ``edward``) read as nearly agreeing."""

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from conftest import PEOPLE_FIELDS, learned_part
from hypothesis import given, settings
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame.compare import nicknames as _nicknames
from lsh_frame.compare import table_checks
from lsh_frame.config import ShingleConfig
from lsh_frame.decide import model as decide_model
from lsh_frame.errors import ConfigError

COLUMNS = PEOPLE_FIELDS
NAMES = sorted({name for group in _nicknames.GROUPS for name in group})


def same_group(one: str, other: str) -> bool:
    return one != other and any(
        one in group and other in group for group in _nicknames.GROUPS
    )


def coded(pairs: list[tuple[str, str]]) -> tuple[pa.Array, np.ndarray, np.ndarray]:
    """The pairs' values as a dictionary, and their distinct pairs of codes.

    Unordered pairs of different values, as the scoring passes them.
    """
    values = sorted({name for pair in pairs for name in pair})
    code = {name: number for number, name in enumerate(values)}
    distinct = sorted({tuple(sorted((code[a], code[b]))) for a, b in pairs if a != b})
    low = np.array([a for a, _ in distinct], dtype=np.int64)
    high = np.array([b for _, b in distinct], dtype=np.int64)
    return pa.array(values, pa.large_string()), low, high


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([*NAMES, "zed", "qwerty"]),
            st.sampled_from([*NAMES, "zed", "qwerty"]),
        ),
        min_size=1,
        max_size=40,
    )
)
def test_equivalent_names_match_a_python_reference(pairs):
    dictionary, low, high = coded(pairs)
    values = dictionary.to_pylist()
    got = _nicknames.equivalent(dictionary, low, high, ShingleConfig())
    want = [same_group(values[a], values[b]) for a, b in zip(low, high, strict=True)]
    np.testing.assert_array_equal(got, want)


def test_a_column_of_codes_with_one_familiar_form_holds_no_given_names():
    config = ShingleConfig()
    states = pa.array(["vic", "nsw", "qld", "vic", None, "wa"] * 50, pa.large_string())
    check = _nicknames.check("state", [_nicknames.count_names(states, config)])
    assert check.known >= _nicknames.NAME_SHARE * check.present  # a third are "vic"
    assert check.names == 1 and not check.given_names
    names = pa.array(NAMES[:40] + ["smith", None] * 5, pa.large_string())
    parts = [names[:20], names[20:]]
    whole = _nicknames.check("given", [_nicknames.count_names(names, config)])
    assert whole == _nicknames.check(
        "given", [_nicknames.count_names(part, config) for part in parts]
    )
    assert (whole.known, whole.present, whole.names) == (40, 45, 40)
    assert whole.given_names


def without_nicknames(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(table_checks, "check_nicknames", lambda plan, *_, **__: plan)


def test_familiar_forms_are_read_as_nearly_agreeing(
    people_1500: pd.DataFrame,
    people_1500_pairs: pd.DataFrame,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checks = {
        check["field"]: check
        for check in people_1500_pairs.attrs["lsh_frame"]["nicknames"]
    }
    assert checks["given_name"]["given_names"]
    assert not checks["surname"]["given_names"] and not checks["email"]["given_names"]
    familiar = people_1500_pairs["given_name_nickname"].to_numpy()
    assert familiar.any()
    without_nicknames(monkeypatch)
    plain = lf.pairs(people_1500, COLUMNS, transitive=False)
    left = (
        people_1500.loc[people_1500_pairs["left"], "given_name"].str.lower().to_numpy()
    )
    right = (
        people_1500.loc[people_1500_pairs["right"], "given_name"].str.lower().to_numpy()
    )
    reference = np.array(
        [
            isinstance(a, str) and isinstance(b, str) and same_group(a, b)
            for a, b in zip(left, right, strict=True)
        ]
    )
    straight = plain["given_name_score"].to_numpy()
    swapped = people_1500_pairs["given_name_surname_swapped"].to_numpy()
    # Read so exactly when the two are one name's forms scoring below 0.9.
    np.testing.assert_array_equal(
        familiar, reference & (np.nan_to_num(straight) < 0.9) & ~swapped
    )
    np.testing.assert_array_equal(people_1500_pairs["given_name_score"][familiar], 0.9)
    # The model learns as without them; only the pairs read so change, and
    # any match they gain is a duplicate.
    learned = dict(people_1500_pairs.attrs["lsh_frame"]["model"])
    assert learned.pop("nicknames") == ["given_name"]
    assert learned_part(learned) == learned_part(plain.attrs["lsh_frame"]["model"])
    moved = (
        people_1500_pairs["match_probability"].to_numpy() != plain["match_probability"]
    )
    initial = people_1500_pairs["given_name_initial"].to_numpy()
    assert moved.any() and (familiar | initial)[moved].all()
    gained = people_1500_pairs["match"].to_numpy() & ~plain["match"].to_numpy()
    entity = people_1500["entity_id"]
    same = (
        entity.loc[people_1500_pairs["left"]].to_numpy()
        == entity.loc[people_1500_pairs["right"]].to_numpy()
    )
    assert same[gained].all()


def python_initial(one: str, other: str) -> bool:
    """One is a letter (maybe with a full stop) that begins the longer other."""
    one, other = one.rstrip("."), other.rstrip(".")
    if len(one) > len(other):
        one, other = other, one
    return (
        len(one) == 1
        and one.isalpha()
        and len(other) > 1
        and other[0].lower() == one.lower()
    )


INITIALS = [
    "r",
    "R.",
    "r.",
    "richard",
    "Rob",
    "e",
    "ed",
    "é",
    "éa",
    "1",
    "1a",
    ".",
    "r..",
]


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(INITIALS), st.sampled_from(INITIALS)),
        min_size=1,
        max_size=30,
    )
)
def test_initials_match_a_python_reference(pairs):
    dictionary, low, high = coded(pairs)
    values = dictionary.to_pylist()
    got = _nicknames.initial_of(dictionary, low, high)
    want = [
        python_initial(values[a], values[b]) for a, b in zip(low, high, strict=True)
    ]
    np.testing.assert_array_equal(got, want)


def test_initials_are_read_as_agreeing_at_the_lowest_level(
    people_1500: pd.DataFrame,
    people_1500_pairs: pd.DataFrame,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    initial = people_1500_pairs["given_name_initial"].to_numpy()
    assert initial.sum() >= 5
    without_nicknames(monkeypatch)
    plain = lf.pairs(people_1500, COLUMNS, transitive=False)
    names = {
        side: people_1500.loc[people_1500_pairs[side], "given_name"].to_numpy()
        for side in ("left", "right")
    }
    reference = np.array(
        [
            isinstance(a, str) and isinstance(b, str) and python_initial(a, b)
            for a, b in zip(names["left"], names["right"], strict=True)
        ]
    )
    straight = plain["given_name_score"].to_numpy()
    swapped = people_1500_pairs["given_name_surname_swapped"].to_numpy()
    familiar = people_1500_pairs["given_name_nickname"].to_numpy()
    np.testing.assert_array_equal(
        initial, reference & (np.nan_to_num(straight) < 0.8) & ~swapped & ~familiar
    )
    np.testing.assert_array_equal(people_1500_pairs["given_name_score"][initial], 0.8)
    # The matches they gain are duplicates.
    gained = people_1500_pairs["match"].to_numpy() & ~plain["match"].to_numpy()
    gained &= initial
    assert gained.any()
    entity = people_1500["entity_id"]
    same = (
        entity.loc[people_1500_pairs["left"]].to_numpy()
        == entity.loc[people_1500_pairs["right"]].to_numpy()
    )
    assert same[gained].mean() >= 0.9


def test_a_saved_model_keeps_its_fields_of_given_names(
    people_1500: pd.DataFrame, people_1500_pairs: pd.DataFrame, tmp_path
) -> None:
    learned = people_1500_pairs.attrs["lsh_frame"]["model"]
    model = decide_model.MatchModel.from_dict(learned)
    assert model.nicknames == ("given_name",)
    assert decide_model.MatchModel.from_dict(model.to_dict()).nicknames == (
        "given_name",
    )
    again = lf.pairs(people_1500, COLUMNS, min_score=learned, transitive=False)
    for column in ("given_name_nickname", "match_probability", "match"):
        pd.testing.assert_series_equal(again[column], people_1500_pairs[column])
    with pytest.raises(ConfigError, match="nicknames"):
        decide_model.MatchModel.from_dict({**learned, "nicknames": ["nickname"]})
    fields = [lf.Field("given_name", compare="jaccard"), "surname", "date_of_birth"]
    with pytest.raises(ConfigError, match="familiar forms"):
        lf.pairs(
            people_1500,
            [*fields, "email"],
            min_score={**learned, "swaps": []},
        )
    # A saved index reads new records' familiar forms with the table's fields.
    saved = people_1500[COLUMNS].iloc[:1_400]
    first = {group[0]: group for group in _nicknames.GROUPS}
    complete = saved.dropna()
    row = complete[complete["given_name"].str.lower().isin(first)].iloc[0]
    forms = first[row["given_name"].lower()]
    new = pd.DataFrame([row], index=["new"]).assign(given_name=forms[1].title())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        index = lf.Index.build(saved, COLUMNS)
    found = index.query(new, k=5)
    pair = found[found["left"] == row.name]
    assert pair["given_name_nickname"].all() and pair["match"].all()
    index.save(tmp_path / "ix")
    pd.testing.assert_frame_equal(lf.Index.load(tmp_path / "ix").query(new, k=5), found)


def test_explain_says_two_names_are_familiar_forms(
    people_1500: pd.DataFrame, people_1500_pairs: pd.DataFrame
) -> None:
    row = people_1500_pairs[people_1500_pairs["given_name_nickname"]].iloc[0]
    explanation = lf.explain(people_1500, row, COLUMNS)
    by_field = {item.field: item for item in explanation.fields}
    assert by_field["given_name"].nickname and not by_field["surname"].nickname
    assert "familiar forms of one given name" in str(explanation)
    row = people_1500_pairs[people_1500_pairs["given_name_initial"]].iloc[0]
    explanation = lf.explain(people_1500, row, COLUMNS)
    by_field = {item.field: item for item in explanation.fields}
    assert by_field["given_name"].initial and not by_field["given_name"].nickname
    assert "an initial of the other name" in str(explanation)


def test_one_text_under_several_codes_is_read_by_its_text():
    # Raw values that normalise alike keep their own codes in a field's
    # dictionary ("William", "WILLIAM"): each must be read as "william".
    dictionary = pa.array(
        ["william", "bill", "william", "ann", "bill"], pa.large_string()
    )
    low = np.array([0, 1, 1, 2, 0, 3, 0], dtype=np.int64)
    high = np.array([1, 2, 3, 4, 2, 4, 3], dtype=np.int64)
    got = _nicknames.equivalent(dictionary, low, high, ShingleConfig())
    np.testing.assert_array_equal(got, [True, True, False, True, False, False, False])
