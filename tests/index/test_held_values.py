"""An index gives its records back exactly as they were given (issue 38, defect 3):
nullable dtypes kept, integers above 2**53 not rounded, and a pair's score the
same whatever else its batch holds."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf

N = 300
BIG = [1234567890123456789 + 1000 * i for i in range(N)]


def missing_every(step: int, values: list) -> list:
    return [value if i % step else None for i, value in enumerate(values)]


@pytest.fixture(scope="module")
def typed() -> pd.DataFrame:
    """A column of each kind a user may hold, most with missing values."""
    odd = [i % 2 == 1 for i in range(N)]
    moments = pd.to_datetime(["2000-01-01"] * N) + pd.to_timedelta(np.arange(N), "h")
    return pd.DataFrame(
        {
            "name": [f"person {i}" for i in range(N)],
            "acct": pd.array(missing_every(50, BIG), dtype="Int64"),
            "unsigned": pd.array(missing_every(40, BIG), dtype="UInt64"),
            "objects": pd.Series(missing_every(30, BIG), dtype=object),
            "flag": pd.array(missing_every(7, odd), dtype="boolean"),
            "amount": pd.array(missing_every(9, [i / 3 for i in range(N)]), "Float64"),
            "code": pd.array(missing_every(11, [f"c{i}" for i in range(N)]), "string"),
            "arrow": pd.array(missing_every(13, BIG), dtype="int64[pyarrow]"),
            "city": pd.Categorical(
                [("leeds", "york")[i % 2] for i in range(N)],
                categories=["leeds", "york", "hull"],
            ),
            "plain": np.array(BIG, dtype=np.int64),
            "moment": moments,
            "utc": moments.tz_localize("UTC"),
        }
    )


def build(frame: pd.DataFrame, **options) -> lf.Index:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lf.Index.build(frame, list(frame.columns), **options)


def test_records_come_back_as_given(tmp_path, typed):
    index = build(typed, min_score=0.5)
    pd.testing.assert_frame_equal(index.records(), typed, check_exact=True)
    assert index.records()["acct"][1] == 1234567890123457789
    index.save(tmp_path / "ix")
    loaded = lf.Index.load(tmp_path / "ix")
    pd.testing.assert_frame_equal(loaded.records(), typed, check_exact=True)
    # A second segment, then one merged segment: still as given.
    more = typed.iloc[:20].rename(index=lambda label: label + 1_000)
    loaded.add(more)
    pd.testing.assert_frame_equal(
        loaded.records(), pd.concat([typed, more]), check_exact=True
    )
    loaded.compact()
    pd.testing.assert_frame_equal(
        loaded.records(), pd.concat([typed, more]), check_exact=True
    )


@pytest.fixture(scope="module")
def accounts() -> pd.DataFrame:
    """The issue's table: 19-digit account numbers, every 50th missing."""
    acct = pd.array(missing_every(50, BIG + BIG[:100]), dtype="Int64")
    return pd.DataFrame({"name": [f"person {i}" for i in range(400)], "acct": acct})


def score_of(found: pd.DataFrame, left, right) -> float:
    pair = found[(found["left"] == left) & (found["right"] == right)]
    assert len(pair) == 1
    return float(pair["score"].iloc[0])


def test_a_pairs_score_does_not_depend_on_its_batch(accounts):
    index = build(accounts, min_score=0.5)
    copy = accounts.iloc[[1]].rename(index={1: "copy"})
    alone = score_of(index.query(copy), 1, "copy")
    assert alone == 1.0
    # With a record whose fetched candidates hold a missing account number.
    other = accounts.iloc[[50]].rename(index={50: "other"})
    assert score_of(index.query(pd.concat([copy, other])), 1, "copy") == alone


@pytest.mark.parametrize("rebuild", ["relearn", "compact", "resolve"])
def test_rebuilding_keeps_the_held_values(accounts, rebuild):
    """relearn(), compact() and resolve() once doubled rebuild from records()."""
    index = build(accounts.iloc[:200] if rebuild == "resolve" else accounts)
    if rebuild == "relearn":
        index.relearn()
    elif rebuild == "compact":
        index.remove([3])
        index.compact()
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            resolved = index.resolve(accounts.iloc[200:])
        assert resolved.attrs["lsh_frame"]["relearned"]
    pd.testing.assert_series_equal(
        index.records()["acct"], accounts["acct"].drop(index=[3], errors="ignore")
        if rebuild == "compact" else accounts["acct"], check_exact=True,
    )  # fmt: skip
    copy = accounts.iloc[[1]].rename(index={1: "copy"})
    assert score_of(index.query(copy), 1, "copy") == 1.0
