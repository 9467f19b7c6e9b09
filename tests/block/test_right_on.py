"""Two tables with different column names: ``right_on`` on every two-table call.

A contract over the stages and jobs (candidates, blocking_report, pairs, score,
explain, link, merge): mapping the right table's names with ``right_on`` gives
exactly what renaming its columns by hand gives, in either form (a list in the
order of the fields' columns, or a ``{left: right}`` mapping).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf
from lsh_frame.block.fields import other_table

#: The right table's names for two of the left table's columns.
RENAMED = {"surname": "last_name", "date_of_birth": "dob"}
PLAIN = ["given_name", "surname", "street_address", "date_of_birth", "email"]
# A field over two columns takes two right_on names; a column named by two
# fields (surname) is listed once.
SPECIFIED = [
    lf.Field(["given_name", "surname"], name="name", threshold=0.4),
    lf.Field("date_of_birth", blocking="exact"),
    lf.Field("surname", blocking=None, compare="jaro_winkler", name="family"),
    lf.Field("email", blocking=None),
]


@pytest.fixture(scope="module")
def tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    people = lf.datasets.make_customers(800, seed=11)
    left = people.iloc[::2]
    right = people.iloc[1::2].rename(columns=RENAMED)
    right.index = pd.Index([f"w{i}" for i in range(len(right))], name="web_id")
    return left, right


def _by_hand(right: pd.DataFrame) -> pd.DataFrame:
    return right.rename(columns={new: old for old, new in RENAMED.items()})


def _right_on(fields: Any, form: str) -> Any:
    columns = lf.block.fields.field_columns(fields, "test")
    if form == "mapping":
        return {column: RENAMED[column] for column in columns if column in RENAMED}
    return [RENAMED.get(column, column) for column in columns]


@pytest.mark.parametrize("fields", [PLAIN, SPECIFIED], ids=["plain", "fields"])
@pytest.mark.parametrize("form", ["list", "mapping"])
def test_right_on_equals_renaming_by_hand(
    tables: tuple[pd.DataFrame, pd.DataFrame], fields: Any, form: str
) -> None:
    left, right = tables
    before = right.copy(deep=True)
    right_on = _right_on(fields, form)
    renamed = _by_hand(right)

    got = left.lsh.candidates(fields, other=right, right_on=right_on)
    want = left.lsh.candidates(fields, other=renamed)
    assert len(want) > 0
    assert want["right"].isin(right.index).all()
    pd.testing.assert_frame_equal(got, want)
    assert got.attrs == want.attrs

    got_report = left.lsh.blocking_report(fields, other=right, right_on=right_on)
    want_report = left.lsh.blocking_report(fields, other=renamed)
    pd.testing.assert_frame_equal(got_report.table, want_report.table)
    assert got_report.decisions == want_report.decisions
    assert got_report.largest_buckets == want_report.largest_buckets

    options = {"values": True, "min_score": 0.8}
    got_pairs = left.lsh.pairs(fields, other=right, right_on=right_on, **options)
    want_pairs = left.lsh.pairs(fields, other=renamed, **options)
    pd.testing.assert_frame_equal(got_pairs, want_pairs, check_exact=True)
    assert got_pairs["match"].any()

    pairs = want[["left", "right"]]
    got_scores = left.lsh.score(pairs, fields, other=right, right_on=right_on)
    want_scores = left.lsh.score(pairs, fields, other=renamed)
    pd.testing.assert_frame_equal(got_scores, want_scores, check_exact=True)
    assert got_scores.attrs == want_scores.attrs

    got_link = left.lsh.link(right, fields, right_on=right_on)
    pd.testing.assert_frame_equal(got_link, left.lsh.link(renamed, fields))

    # The module-level functions are the same calls.
    pd.testing.assert_frame_equal(
        lf.pairs(left, fields, other=right, right_on=right_on, **options), want_pairs
    )
    pd.testing.assert_frame_equal(
        lf.score(left, pairs, fields, other=right, right_on=right_on), want_scores
    )
    pd.testing.assert_frame_equal(right, before)
    assert list(right.columns) == list(before.columns)


def test_merge_takes_fields_with_right_on(
    tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    left, right = tables
    right_on = _right_on(PLAIN, "list")
    merged = left.lsh.merge(right, PLAIN, right_on=right_on, how="left")
    # The same as the left_on/right_on pair that link and merge already took...
    pd.testing.assert_frame_equal(
        merged, left.lsh.merge(right, left_on=PLAIN, right_on=right_on, how="left")
    )
    # ... and the output keeps the right table's own names and columns.
    assert {"last_name", "dob", "surname", "date_of_birth"} <= set(merged.columns)
    assert merged["score"].notna().any()
    mapped = left.lsh.merge(right, PLAIN, right_on=RENAMED, how="left")
    pd.testing.assert_frame_equal(mapped, merged)


def test_explain_takes_right_on(tables: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    left, right = tables
    pair = left.lsh.pairs(SPECIFIED, other=_by_hand(right)).iloc[0]
    got = left.lsh.explain(
        pair, SPECIFIED, other=right, right_on=_right_on(SPECIFIED, "list")
    )
    want = left.lsh.explain(pair, SPECIFIED, other=_by_hand(right))
    assert got.to_frame().equals(want.to_frame())
    assert str(got) == str(want)


def _same_data(first: pd.Series, second: pd.Series) -> bool:
    """Tell whether two columns hold the same buffers (numpy or Arrow backed)."""
    arrow = getattr(first.array, "_pa_array", None)
    if arrow is not None:
        other = getattr(second.array, "_pa_array", None)
        return other is not None and all(
            mine.buffers()[-1].address == theirs.buffers()[-1].address
            for mine, theirs in zip(arrow.chunks, other.chunks, strict=True)
        )
    return bool(np.shares_memory(first.to_numpy(), second.to_numpy()))


def test_the_view_holds_only_the_fields_and_shares_their_data(
    tables: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    left, right = tables
    view = other_table(left, SPECIFIED, right, RENAMED, "test")
    assert view is not None
    assert list(view.columns) == ["given_name", "surname", "date_of_birth", "email"]
    assert view.index.equals(right.index)
    assert _same_data(view["surname"], right["last_name"])
    # Same names: the right table is used as it is, nothing is built.
    assert other_table(left, ["given_name"], right, None, "test") is right


@pytest.mark.parametrize(
    "call",
    [
        lambda left, **o: left.lsh.candidates(PLAIN, **o),
        lambda left, **o: left.lsh.blocking_report(PLAIN, **o),
        lambda left, **o: left.lsh.pairs(PLAIN, **o),
        lambda left, **o: left.lsh.score(
            pd.DataFrame({"left": [], "right": []}), PLAIN, **o
        ),
    ],
    ids=["candidates", "blocking_report", "pairs", "score"],
)
def test_right_on_errors(tables: tuple[pd.DataFrame, pd.DataFrame], call: Any) -> None:
    left, right = tables
    with pytest.raises(lf.ConfigError, match="no right table was given"):
        call(left, right_on=_right_on(PLAIN, "list"))
    with pytest.raises(lf.ConfigError, match=r"each of the 5 columns.*Got 2"):
        call(left, other=right, right_on=["last_name", "dob"])
    with pytest.raises(lf.ConfigError, match=r"keys that are not columns.*'surnam'"):
        call(left, other=right, right_on={"surnam": "last_name"})
    wrong = ["given_name", "lastname", "street_address", "dob", "email"]
    with pytest.raises(
        lf.ColumnError,
        match=r"Column 'lastname' is not in the right table \('other'\)\. "
        r"Did you mean 'last_name'\? Columns: ",
    ):
        call(left, other=right, right_on=wrong)
    # A column missing from the left table is still the left table's error.
    with pytest.raises(lf.ColumnError, match=r"Column 'email' is not in the frame\."):
        call(left.drop(columns="email"), other=right, right_on=_right_on(PLAIN, "list"))


@pytest.mark.parametrize(
    "call",
    [
        lambda left, right: left.lsh.link(right, ["given_name", "surname"]),
        lambda left, right: left.lsh.merge(right, ["given_name", "surname"]),
        lambda left, right: left.lsh.candidates(["given_name", "surname"], other=right),
        lambda left, right: left.lsh.pairs(["given_name", "surname"], other=right),
        lambda left, right: left.lsh.score(
            pd.DataFrame({"left": [], "right": []}),
            ["given_name", "surname"],
            other=right,
        ),
    ],
    ids=["link", "merge", "candidates", "pairs", "score"],
)
def test_a_column_missing_only_from_the_right_table_says_so(
    tables: tuple[pd.DataFrame, pd.DataFrame], call: Any
) -> None:
    left, right = tables
    with pytest.raises(lf.ColumnError) as raised:
        call(left, right)
    message = str(raised.value)
    assert message.startswith("Column 'surname' is not in the right table (")
    assert "Did you mean 'last_name'?" in message
    assert "not in the frame" not in message


def test_link_right_on_errors(tables: tuple[pd.DataFrame, pd.DataFrame]) -> None:
    left, right = tables
    with pytest.raises(lf.ColumnError, match=r"right table \('right'\)"):
        left.lsh.link(right, ["surname"], right_on=["lastname"])
    with pytest.raises(lf.ConfigError, match="each of the 2 columns of the fields"):
        left.lsh.link(right, ["given_name", "surname"], right_on=["last_name"])
    with pytest.raises(lf.ConfigError, match="each of the 2 columns of left_on"):
        left.lsh.link(right, left_on=["given_name", "surname"], right_on=["given_name"])
    with pytest.raises(lf.ConfigError, match="needs the fields"):
        left.lsh.link(right, right_on=["last_name"])
