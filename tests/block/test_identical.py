"""Large groups of identical rows collapse before blocking: one entity, any size."""

from __future__ import annotations

import warnings

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf
import lsh_frame.dask as lfd
from lsh_frame.block.identical import COLLAPSE_ABOVE, group_rows, row_hashes

FIELDS = ["name", "dob"]


def copies(n: int, name: str = "john smith") -> pd.DataFrame:
    return pd.DataFrame({"name": [name] * n, "dob": ["1980-01-02"] * n})


def collapsed(frame: pd.DataFrame, fields, **options) -> pd.DataFrame:
    """Candidates as deduplication builds them."""
    return lf.candidates(frame, fields, collapse_identical=True, **options)


@pytest.mark.parametrize(
    "n", [100_000, pytest.param(1_000_000, marks=pytest.mark.slow)]
)
def test_identical_rows_are_one_entity(n):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        deduped = lf.dedupe(copies(n), FIELDS)
        kept = lf.drop_duplicates(copies(n), FIELDS)
    assert deduped["cluster_id"].nunique() == 1
    assert deduped["cluster_size"].iloc[0] == n
    assert kept.index.tolist() == [0]


def test_only_groups_above_the_threshold_collapse():
    hashes = np.repeat(np.array([[1, 1], [2, 2]], np.uint64), [3, 4], axis=0)
    rows = group_rows(hashes, np.ones(7, bool), collapse_above=3)
    assert rows.representative.tolist() == [0, 1, 2, 3, 3, 3, 3]
    assert rows.collapsed == 3


def test_identical_pairs_join_members_to_their_representative():
    size = COLLAPSE_ABOVE + 1
    group = copies(size)
    nulls = pd.DataFrame({"name": [None] * size, "dob": [None] * size})
    frame = pd.concat(
        [group, nulls, pd.DataFrame({"name": ["jon smith"], "dob": ["1980-01-02"]})],
        ignore_index=True,
    )
    # Labels in no order: the group's smallest label represents it.
    frame.index = np.random.default_rng(1).permutation(len(frame)) + 10
    representative = frame.index[:size].min()

    found = collapsed(frame, FIELDS)
    identical = found[found["found_by"] == "identical"]
    assert len(identical) == size - 1
    assert set(identical["left"]).union(identical["right"]) == set(frame.index[:size])
    assert (
        (identical["left"] == representative) | (identical["right"] == representative)
    ).all()
    # Other keys pair the representative only; all-null rows never collapse.
    others = found[found["found_by"] != "identical"]
    in_group = set(frame.index[:size]) - {representative}
    assert not (others["left"].isin(in_group) | others["right"].isin(in_group)).any()

    scored = lf.pairs(frame, FIELDS)
    joined = scored[scored["found_by"] == "identical"]
    assert joined["match"].all()
    assert (joined["match_probability"] == 1.0).all()

    ids = lf.dedupe(frame, FIELDS, min_score=0.8)["cluster_id"]
    assert ids[frame.index[:size]].nunique() == 1
    assert ids[frame.index[-1]] == ids[representative]  # "jon smith" joins all
    assert ids[frame.index[size:-1]].nunique() == size


def test_groups_at_the_threshold_are_paired_row_by_row():
    frame = pd.concat(
        [copies(COLLAPSE_ABOVE), copies(3, "jon smith"), copies(1, "mary jones")],
        ignore_index=True,
    )
    found = collapsed(frame, FIELDS)
    pd.testing.assert_frame_equal(found, lf.candidates(frame, FIELDS))
    assert "identical" not in found["found_by"].cat.categories
    within = found[(found["left"] < COLLAPSE_ABOVE) & (found["right"] < COLLAPSE_ABOVE)]
    assert len(within) == COLLAPSE_ABOVE * (COLLAPSE_ABOVE - 1) // 2
    assert "match_probability" in lf.pairs(frame, FIELDS)


def test_stored_signature_columns_are_not_collapsed():
    frame = copies(COLLAPSE_ABOVE * 2)
    frame["sig"] = lf.minhash(frame["name"])
    fields = [lf.Field("sig", threshold=0.5)]
    found = collapsed(frame, fields)
    assert "identical" not in found["found_by"].cat.categories
    pd.testing.assert_frame_equal(found, lf.candidates(frame, fields))
    assert not row_hashes(frame, ["sig"])[1].any()


def test_identical_pairs_count_against_max_pairs():
    with pytest.raises(lf.TooManyPairsError, match="'identical' 999"):
        lf.pairs(copies(1_000), FIELDS, max_pairs=10)


def test_candidates_collapse_only_when_asked():
    frame = copies(COLLAPSE_ABOVE + 1)
    assert "identical" not in lf.candidates(frame, FIELDS)["found_by"].cat.categories
    assert (collapsed(frame, FIELDS)["found_by"] == "identical").all()
    linked = lf.candidates(frame, FIELDS, other=frame, collapse_identical=True)
    assert len(linked) == len(frame) ** 2  # linking pairs every row
    with pytest.raises(lf.ConfigError, match="collapse_identical"):
        lf.candidates(frame, FIELDS, collapse_identical="yes")


@pytest.mark.parametrize("size", [COLLAPSE_ABOVE, 3_000])
def test_dask_equals_pandas_with_identical_rows(size):
    frame = pd.concat(
        [
            copies(size),
            copies(3, "jon smith"),
            pd.DataFrame({"name": ["mary"], "dob": ["1975-05-06"]}),
        ],
        ignore_index=True,
    ).sample(frac=1.0, random_state=1)
    with dask.config.set(scheduler="synchronous"):
        for partitions in (1, 4):
            ddf = dd.from_pandas(frame, npartitions=partitions, sort=False)
            local = ddf.compute()
            pd.testing.assert_frame_equal(
                lfd.candidates(ddf, FIELDS, collapse_identical=True).compute(),
                collapsed(local, FIELDS),
            )
            pd.testing.assert_frame_equal(
                lfd.pairs(ddf, FIELDS).compute(),
                lf.pairs(local, FIELDS),
                check_exact=True,
            )
            pd.testing.assert_frame_equal(
                lfd.dedupe(ddf, FIELDS).compute(), lf.dedupe(local, FIELDS)
            )


def test_neighbours_key_sees_only_representatives():
    titles = ["acme widget blue large", "acme widget blue larg", "zenith lamp red"]
    frame = pd.concat(
        [
            pd.DataFrame({"title": [titles[0]] * (COLLAPSE_ABOVE * 3)}),
            pd.DataFrame({"title": [*titles[1:], *(f"gadget {n}" for n in range(40))]}),
        ],
        ignore_index=True,
    )
    fields = [lf.Field("title", blocking="neighbours")]
    found = collapsed(frame, fields)
    group = set(range(COLLAPSE_ABOVE * 3))
    identical = found[found["found_by"] == "identical"]
    assert len(identical) == len(group) - 1 and (identical["left"] == 0).all()
    others = found[found["found_by"] != "identical"]
    members = group - {0}
    assert not (others["left"].isin(members) | others["right"].isin(members)).any()
    assert ((others["left"] == 0) & (others["right"] == len(group))).any()

    ids = lf.dedupe(frame, fields, min_score=0.8)["cluster_id"]
    assert ids[[*group, len(group)]].nunique() == 1
    with dask.config.set(scheduler="synchronous"):
        ddf = dd.from_pandas(frame, npartitions=3, sort=False)
        pd.testing.assert_frame_equal(
            lfd.candidates(ddf, fields, collapse_identical=True).compute(), found
        )
        pd.testing.assert_frame_equal(
            lfd.dedupe(ddf, fields, min_score=0.8).compute(),
            lf.dedupe(ddf.compute(), fields, min_score=0.8),  # Dask's string dtype
        )
