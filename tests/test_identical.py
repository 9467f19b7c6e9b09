"""Identical rows collapse before blocking: one entity whatever their number."""

from __future__ import annotations

import warnings

import dask
import dask.dataframe as dd
import pandas as pd
import pytest

import lsh_frame as lf
import lsh_frame.dask as lfd


def copies(n: int) -> pd.DataFrame:
    return pd.DataFrame({"name": ["john smith"] * n, "dob": ["1980-01-02"] * n})


@pytest.mark.parametrize(
    "n", [100_000, pytest.param(1_000_000, marks=pytest.mark.slow)]
)
def test_identical_rows_are_one_entity(n):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        deduped = lf.dedupe(copies(n), ["name", "dob"])
        kept = lf.drop_duplicates(copies(n), ["name", "dob"])
    assert deduped["cluster_id"].nunique() == 1
    assert deduped["cluster_size"].iloc[0] == n
    assert kept.index.tolist() == [0]


def test_identical_pairs_join_members_to_their_representative():
    frame = pd.DataFrame(
        {
            "name": ["john smith", "jon smith", "john smith", None, None, "john smith"],
            "dob": ["1980-01-02", "1980-01-02", "1980-01-02", None, None, None],
        },
        index=[5, 1, 3, 0, 4, 2],
    )
    pairs = lf.candidates(frame, ["name", "dob"])
    identical = pairs[pairs["found_by"] == "identical"]
    # Representative: smallest label (3) of the group {5, 3}; all-null rows never.
    assert set(zip(identical["left"], identical["right"], strict=True)) == {(5, 3)}
    ids = lf.dedupe(frame, ["name", "dob"], min_score=0.8)["cluster_id"]
    assert ids[5] == ids[3] == ids[1]
    assert ids[0] != ids[4]


def test_identical_pairs_count_against_max_pairs():
    with pytest.raises(lf.TooManyPairsError, match="'identical' 999"):
        lf.candidates(copies(1_000), ["name", "dob"], max_pairs=10)


def test_dask_equals_pandas_with_identical_rows():
    frame = pd.concat(
        [
            copies(3_000),
            pd.DataFrame(
                {"name": ["jon smith", "mary"], "dob": ["1980-01-02", "1975-05-06"]}
            ),
        ],
        ignore_index=True,
    ).sample(frac=1.0, random_state=1)
    with dask.config.set(scheduler="synchronous"):
        for partitions in (1, 4):
            ddf = dd.from_pandas(frame, npartitions=partitions, sort=False)
            local = ddf.compute()
            pd.testing.assert_frame_equal(
                lfd.pairs(ddf, ["name", "dob"]).compute(),
                lf.pairs(local, ["name", "dob"]),
                check_exact=True,
            )
            pd.testing.assert_frame_equal(
                lfd.dedupe(ddf, ["name", "dob"]).compute(),
                lf.dedupe(local, ["name", "dob"]),
            )
