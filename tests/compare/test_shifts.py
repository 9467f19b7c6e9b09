"""Fields that hold another's value where it is missing (a surname in the given-name
column of a record with one name)."""

import collections
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import (
    PEOPLE_FIELDS,
    dask_pairs_as_pandas,
    learned_part,
    part_scores_as_all,
    saved_model_again,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from test_swaps import counts_of, plain, similarity

import lsh_frame as lf
from lsh_frame.compare import plan as compare_plan
from lsh_frame.compare import swaps as _swaps
from lsh_frame.compare import table_checks
from lsh_frame.errors import ConfigError

COLUMNS = PEOPLE_FIELDS
SHIFT = "given_name_as_surname"
NAMES = ["given_name", "surname"]


def no_shifts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Score without reading shifted fields (the behaviour before them)."""
    monkeypatch.setattr(_swaps, "SHIFT_EXCESS", 2.0)


@pytest.fixture(scope="module")
def one_name(people_1500: pd.DataFrame) -> pd.DataFrame:
    """people_1500 where a quarter of the duplicates have one name: the surname,
    written as the given name."""
    frame = people_1500.copy()
    rows = frame.index[frame["entity_id"].duplicated()][::4]
    frame.loc[rows, "given_name"] = frame.loc[rows, "surname"]
    frame.loc[rows, "surname"] = None
    return frame


@pytest.fixture(scope="module")
def one_name_pairs(one_name: pd.DataFrame) -> pd.DataFrame:
    return lf.pairs(one_name, COLUMNS)


def python_checks(
    rows: list[tuple[str | None, str | None]],
) -> list[tuple[str, str, int, int, int, int]]:
    """The statistic of both directions, by the module's definition."""
    both = [(a, b) for a, b in rows if a is not None and b is not None]
    held = {"a": collections.Counter(a for a, _ in both)}
    held["b"] = collections.Counter(b for _, b in both)
    result = []
    for field, into, mine in (("a", "b", 0), ("b", "a", 1)):
        alone = [
            row[mine] for row in rows if row[mine] is not None and row[1 - mine] is None
        ]

        def theirs_more(value: str, field: str = field, into: str = into) -> bool:
            return held[into][value] > held[field][value]

        present = [row[mine] for row in both]
        result.append(
            (
                field,
                into,
                sum(map(theirs_more, alone)),
                len(alone),
                sum(map(theirs_more, present)),
                len(present),
            )
        )
    return result


VALUES = st.sampled_from(["ann", "bob", "cy", "Cy", None, ""])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(VALUES, VALUES), min_size=0, max_size=30),
    st.integers(min_value=0, max_value=30),
)
def test_counts_match_a_python_reference_and_add_up(rows, cut):
    frame = pd.DataFrame(rows, columns=["a", "b"], dtype=object)
    whole = _swaps.check_shifts(counts_of([frame]))
    normalised = [(plain(a) or None, plain(b) or None) for a, b in rows]
    assert [
        (c.field, c.into, c.shifted, c.alone, c.usual, c.both) for c in whole
    ] == python_checks(normalised)
    parts = [frame.iloc[:cut], frame.iloc[cut:]]
    assert _swaps.check_shifts(counts_of(parts)) == whole


def test_the_rule_needs_an_excess_and_enough_rows() -> None:
    check = _swaps.ShiftCheck("a", "b", shifted=30, alone=100, usual=5, both=100)
    assert check.excess == pytest.approx(0.25) and check.shifts
    assert not _swaps.ShiftCheck("a", "b", 30, 100, 15, 100).shifts  # 0.15 above
    assert not _swaps.ShiftCheck("a", "b", 9, 10, 0, 100).shifts  # too few rows
    assert check.to_dict()["share"] == 0.3


def test_one_name_records_are_read_as_surnames(
    one_name: pd.DataFrame, one_name_pairs: pd.DataFrame
) -> None:
    checks = one_name_pairs.attrs["lsh_frame"]["shifts"]
    (names,) = [c for c in checks if [c["field"], c["into"]] == NAMES]
    assert names["shifts"] and names["read_shifted"]
    assert names["share"] - names["usual_share"] >= _swaps.SHIFT_EXCESS
    assert not any(c["shifts"] for c in checks if c is not names)
    read = one_name_pairs[SHIFT].to_numpy()
    assert read.any()
    left = one_name.loc[one_name_pairs["left"]]
    right = one_name.loc[one_name_pairs["right"]]
    left_lacks = left["surname"].isna().to_numpy()
    right_lacks = right["surname"].isna().to_numpy()
    # Exactly one record of each pair read so lacks a surname; its given name
    # scored against the other's surname is the pair's surname score.
    assert (left_lacks[read] != right_lacks[read]).all()
    shifted = np.where(
        left_lacks,
        similarity(left["given_name"], right["surname"]),
        similarity(right["given_name"], left["surname"]),
    )
    straight = similarity(left["given_name"], right["given_name"])
    np.testing.assert_allclose(
        one_name_pairs["surname_score"].to_numpy()[read], shifted[read], atol=1e-12
    )
    assert one_name_pairs["given_name_score"][read].isna().all()
    assert (shifted[read] >= 0.8).all()
    assert (shifted[read] > np.nan_to_num(straight[read])).all()
    # Every other pair where the reading could apply matches no better so.
    could = (left_lacks != right_lacks) & ~np.isnan(shifted)
    others = could & ~read & ~one_name_pairs["given_name_surname_swapped"].to_numpy()
    assert others.any()
    assert not ((shifted[others] >= 0.8) & (shifted[others] > np.nan_to_num(
        straight[others]
    ))).any()  # fmt: skip
    # Pairs not read so keep their straight surname scores.
    plain_rows = ~read & ~one_name_pairs["given_name_surname_swapped"].to_numpy()
    np.testing.assert_allclose(
        one_name_pairs["surname_score"].to_numpy()[plain_rows],
        similarity(left["surname"], right["surname"])[plain_rows],
        atol=1e-12,
    )


def test_the_model_learns_as_without_shifts_and_gains_true_matches(
    one_name: pd.DataFrame,
    one_name_pairs: pd.DataFrame,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    no_shifts(monkeypatch)
    before = lf.pairs(one_name, COLUMNS)
    assert SHIFT not in before
    learned = dict(one_name_pairs.attrs["lsh_frame"]["model"])
    assert learned.pop("shifts") == [["given_name", "surname"]]
    assert learned_part(learned) == learned_part(before.attrs["lsh_frame"]["model"])
    truth = one_name["entity_id"]
    same = (
        truth.loc[one_name_pairs["left"]].to_numpy()
        == truth.loc[one_name_pairs["right"]].to_numpy()
    )
    gained = one_name_pairs["match"].to_numpy() & ~before["match"].to_numpy()
    assert gained.sum() >= 20
    assert one_name_pairs[SHIFT].to_numpy()[gained].all()
    assert same[gained].mean() >= 0.9
    after, was = lf.evaluate(one_name_pairs, truth), lf.evaluate(before, truth)
    assert after.recall > was.recall + 0.05
    assert after.precision >= was.precision - 0.005


def test_fields_that_do_not_shift_are_left_alone(
    people_1500: pd.DataFrame,
    people_1500_pairs: pd.DataFrame,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checks = people_1500_pairs.attrs["lsh_frame"]["shifts"]
    assert checks and not any(check["shifts"] for check in checks)
    assert not [column for column in people_1500_pairs if "_as_" in column]
    no_shifts(monkeypatch)
    want = lf.pairs(people_1500, COLUMNS, transitive=False)
    pd.testing.assert_frame_equal(people_1500_pairs, want)


def test_parts_of_the_pairs_score_as_all_of_them(
    one_name: pd.DataFrame, one_name_pairs: pd.DataFrame
) -> None:
    read = one_name_pairs.index[one_name_pairs[SHIFT]]
    part = one_name_pairs.loc[
        read[:5].union(one_name_pairs.index[:40]), ["left", "right", "found_by"]
    ]
    part_scores_as_all(one_name, one_name_pairs, part, COLUMNS, (SHIFT,))


def test_a_saved_model_keeps_its_shifts(
    one_name: pd.DataFrame, one_name_pairs: pd.DataFrame
) -> None:
    model, again = saved_model_again(
        one_name,
        one_name_pairs,
        COLUMNS,
        "shifts",
        (SHIFT, "match_probability", "match"),
    )
    assert model.shifts == (("given_name", "surname"),)
    assert again.attrs["lsh_frame"]["shifts"] == [
        {"field": "given_name", "into": "surname", "shifts": True, "from": "model"}
    ]


def test_a_model_whose_shifted_fields_compare_otherwise_is_refused(
    one_name: pd.DataFrame, one_name_pairs: pd.DataFrame
) -> None:
    learned = dict(one_name_pairs.attrs["lsh_frame"]["model"])
    learned.pop("swaps", None)
    fields = [lf.Field("given_name", compare="jaro_winkler"), *COLUMNS[1:]]
    with pytest.raises(ConfigError, match=r"given_name.*surname"):
        lf.pairs(one_name, fields, min_score=learned)


def test_explain_says_a_field_was_read_shifted(
    one_name: pd.DataFrame, one_name_pairs: pd.DataFrame
) -> None:
    row = one_name_pairs[one_name_pairs[SHIFT]].iloc[0]
    explanation = lf.explain(one_name, row, COLUMNS)
    by_field = {item.field: item for item in explanation.fields}
    assert by_field["surname"].shifted == ("given_name", "surname")
    assert by_field["given_name"].shifted == ("given_name", "surname")
    assert by_field["email"].shifted is None
    assert by_field["surname"].score == pytest.approx(row["surname_score"])
    assert np.isnan(by_field["given_name"].score)
    assert "read shifted" in str(explanation)
    other = one_name_pairs[~one_name_pairs[SHIFT]].iloc[0]
    assert "read shifted" not in str(lf.explain(one_name, other, COLUMNS))


def test_dask_reads_the_same_shifts(one_name: pd.DataFrame) -> None:
    assert dask_pairs_as_pandas(one_name, COLUMNS)[SHIFT].any()


def test_a_saved_index_reads_new_one_name_records(
    one_name: pd.DataFrame, tmp_path
) -> None:
    saved = one_name[COLUMNS].iloc[:1_400]
    chosen = saved.dropna(subset=COLUMNS).iloc[:40:4]
    new = chosen.assign(given_name=chosen["surname"], surname=None)
    new = new.set_axis([f"new-{label}" for label in chosen.index])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        index = lf.Index.build(saved, COLUMNS)
    found = index.query(new, k=3)
    original = found.merge(
        pd.DataFrame({"left": chosen.index, "right": new.index}), on=["left", "right"]
    )
    assert len(original) == len(new)
    assert original[SHIFT].all() and original["match"].all()
    index.save(tmp_path / "ix")
    loaded = lf.Index.load(tmp_path / "ix")
    pd.testing.assert_frame_equal(loaded.query(new, k=3), found)


def test_a_field_shifts_into_one_other_at_most() -> None:
    frame = pd.DataFrame({"a": ["x"], "b": ["y"], "c": ["z"]})
    plan = compare_plan.plan_score(
        [frame],
        [compare_plan.comparison_rows(frame)],
        ["a", "b", "c"],
        min_score="auto",
        values=False,
        estimate=False,
        num_perm=128,
        seed=1,
        owner="test",
    )
    shifts = [
        _swaps.ShiftCheck("a", "b", 30, 100, 0, 100),  # 0.3
        _swaps.ShiftCheck("a", "c", 50, 100, 0, 100),  # 0.5: a shifts into c
        _swaps.ShiftCheck("b", "c", 40, 100, 0, 100),  # c is taken
        _swaps.ShiftCheck("b", "a", 25, 100, 0, 100),  # 0.25: b into a
    ]
    decided = table_checks.with_swap_checks(plan, [], shifts)
    assert decided.shifts == (("a", "c"), ("b", "a"))
    assert decided.shift_checks == tuple(shifts)
