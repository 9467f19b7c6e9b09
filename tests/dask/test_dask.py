"""ddf.lsh gives exactly what df.lsh gives, on any partitioning and scheduler.

Every parity test runs the pandas path on ``ddf.compute()`` (the same values and
dtypes Dask holds) and compares whole frames: pairs, their order, scores,
decisions in ``attrs``, entity ids. They run on the synchronous scheduler for
several partition counts, and the main jobs again on a session-wide
``distributed.LocalCluster`` (2 worker processes, 1 thread each).
"""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from collections.abc import Iterator
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from conftest import catalogues, chained_people

import lsh_frame as lf
import lsh_frame.dask as lfd
from lsh_frame.dask import _components, _tables
from lsh_frame.errors import (
    ColumnError,
    ConfigError,
    ConfigTypeError,
    LshFrameError,
    TooManyPairsError,
)

COLUMNS = ["given_name", "surname", "street_address", "date_of_birth", "email"]
PARTITIONS = [1, 3, 7]


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    return lf.datasets.make_customers(1_200, seed=3)


@pytest.fixture
def sync() -> Iterator[None]:
    with dask.config.set(scheduler="synchronous"):
        yield


def as_dask(frame: pd.DataFrame, partitions: int) -> tuple[dd.DataFrame, pd.DataFrame]:
    """A dask frame and the pandas frame of exactly its values and dtypes."""
    ddf = dd.from_pandas(frame, npartitions=partitions, sort=False)
    return ddf, ddf.compute()


def same(got: Any, want: Any) -> None:
    """Equal to the last bit: scores are computed pair by pair, as in pandas."""
    if isinstance(want, pd.Series):
        pd.testing.assert_series_equal(got, want, check_exact=True)
    else:
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        assert got.attrs == want.attrs


def quietly(call: Any, *args: Any, **options: Any) -> tuple[Any, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call(*args, **options)
        if isinstance(result, (dd.DataFrame, dd.Series)):
            result = result.compute()
    return result, [str(warning.message) for warning in caught]


# ----------------------------------------------------------------------------
# Parity on the synchronous scheduler


@pytest.mark.usefixtures("sync")
@pytest.mark.parametrize("partitions", PARTITIONS)
def test_candidates_and_report_equal_pandas(
    people: pd.DataFrame, partitions: int
) -> None:
    ddf, df = as_dask(people, partitions)
    truth = lf.datasets.true_pairs(df["entity_id"])
    cases: list[tuple[Any, int]] = [
        (COLUMNS, 1_000),  # the data decides: exact keys and the record key
        # A key asked for, beside the keys the data decides over the others.
        (
            [
                lf.Field("city", blocking="exact"),
                "given_name",
                lf.Field("street_address", compare="ratio"),
                "date_of_birth",
            ],
            1_000,
        ),
        # The last case drops buckets (checked below).
        ([lf.Field("city", blocking="exact"), lf.Field("surname", threshold=0.5)], 6),
    ]
    for fields, max_bucket in cases:
        got, got_warnings = quietly(ddf.lsh.candidates, fields, max_bucket=max_bucket)
        want, want_warnings = quietly(df.lsh.candidates, fields, max_bucket=max_bucket)
        same(got, want)
        assert got_warnings == want_warnings
        got_report = ddf.lsh.blocking_report(
            fields, max_bucket=max_bucket, true_pairs=truth
        )
        want_report = df.lsh.blocking_report(
            fields, max_bucket=max_bucket, true_pairs=truth
        )
        pd.testing.assert_frame_equal(got_report.table, want_report.table)
        assert got_report.decisions == want_report.decisions
        assert got_report.largest_buckets == want_report.largest_buckets
    # The small cap drops buckets: before the shuffle when one partition alone
    # holds too many rows of a key, after it otherwise. Either way, as pandas.
    assert want_warnings and "dropped" in want_warnings[0]


@pytest.mark.usefixtures("sync")
@pytest.mark.parametrize("partitions", PARTITIONS)
def test_pairs_equal_pandas_for_every_decision(
    people: pd.DataFrame, partitions: int
) -> None:
    ddf, df = as_dask(people, partitions)
    learned = df.lsh.pairs(COLUMNS)
    assert learned.attrs["lsh_frame"]["model"]["fit"]["em_steps"] > 0
    same(ddf.lsh.pairs(COLUMNS).compute(), learned)
    model = learned.attrs["lsh_frame"]["model"]
    for options in (
        {"min_score": 0.8, "values": True},
        {"min_score": model, "estimate": True, "num_perm": 64},
    ):
        same(
            ddf.lsh.pairs(COLUMNS, **options).compute(),
            df.lsh.pairs(COLUMNS, **options),
        )


@pytest.mark.usefixtures("sync")
@pytest.mark.parametrize("partitions", PARTITIONS)
def test_closing_clusters_equals_pandas(
    people_with_copies: pd.DataFrame, partitions: int
) -> None:
    fields = ["name", "town", "born"]
    ddf, df = as_dask(people_with_copies[fields], partitions)
    closed = df.lsh.pairs(fields)
    assert closed.attrs["lsh_frame"]["transitive"]["added"] > 0
    # Pairs found through the matches are scored as more partitions.
    assert closed.attrs["lsh_frame"]["transitive"]["through_matches"]["closed"] > 0
    same(ddf.lsh.pairs(fields).compute(), closed)
    for transitive in (False, True):
        same(
            ddf.lsh.pairs(fields, transitive=transitive, min_score=0.7).compute(),
            df.lsh.pairs(fields, transitive=transitive, min_score=0.7),
        )
    # Too many to look for: skipped, with the same warning and record.
    options = {"min_score": 0.7, "transitive": True}
    rows = len(df.lsh.pairs(fields, min_score=0.7, transitive=False))
    found = df.lsh.pairs(fields, **options).attrs["lsh_frame"]["transitive"]
    limit = rows + found["through_matches"]["pairs"] - 1
    got, got_warnings = quietly(ddf.lsh.pairs, fields, max_pairs=limit, **options)
    want, want_warnings = quietly(df.lsh.pairs, fields, max_pairs=limit, **options)
    same(got, want)
    assert got_warnings == want_warnings
    assert "through the matches" in want_warnings[-1]
    given = df.lsh.candidates(fields)
    same(
        ddf.lsh.score(dd.from_pandas(given, npartitions=2), fields).compute(),
        df.lsh.score(given, fields),
    )
    same(ddf.lsh.dedupe(fields).compute(), df.lsh.dedupe(fields))
    # A large group of identical rows (paired as a star) is one record to it.
    copies = pd.concat(
        [people_with_copies[fields], people_with_copies[fields].iloc[[0] * 80]],
        ignore_index=True,
    )
    ddf, df = as_dask(copies, partitions)
    closed = df.lsh.pairs(fields)
    assert closed.attrs["lsh_frame"]["transitive"]["applied"]
    same(ddf.lsh.pairs(fields).compute(), closed)
    with pytest.raises(ConfigError, match="within one table"):
        ddf.lsh.pairs(fields, other=ddf, transitive=True)
    # Decided by a number (no model): the new pairs have no probability.
    chained, chained_fields = chained_people()
    ddf, df = as_dask(chained, partitions)
    got, got_warnings = quietly(ddf.lsh.pairs, chained_fields)
    want, want_warnings = quietly(df.lsh.pairs, chained_fields)
    same(got, want)
    assert got_warnings == want_warnings
    assert want.attrs["lsh_frame"]["transitive"]["through_matches"]["closed"] == 10


def test_the_sample_falls_back_on_labels_as_in_pandas(people: pd.DataFrame) -> None:
    # The threshold's sample hashes the records' values; a column without a
    # text (vectors) in some partitions only makes pandas, which sees the whole
    # column, sample by the labels: so must every partition.
    rng = np.random.default_rng(1)
    vectors = [None if i < 200 else rng.normal(size=4).tolist() for i in range(400)]
    frame = people.iloc[:400][["surname", "given_name"]].assign(vector=vectors)
    fields = [
        lf.Field(["surname", "given_name"]),
        lf.Field("vector", blocking="cosine", threshold=0.9),
    ]
    settings = {"scheduler": "synchronous", "dataframe.convert-string": False}
    with dask.config.set(settings):
        ddf = dd.from_pandas(frame, npartitions=2, sort=False)
        df = ddf.compute()
        assert df["vector"].dtype == object
        got = ddf.lsh.blocking_report(fields)
        assert got.decisions == df.lsh.blocking_report(fields).decisions
        same(ddf.lsh.candidates(fields).compute(), df.lsh.candidates(fields))


@pytest.mark.usefixtures("sync")
def test_an_unclear_split_is_read_as_in_pandas(
    people: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No valley counts as clear: EM may then grow the matches freely, in both.
    monkeypatch.setattr(lf.decide.cut, "_CLEAR_VALLEY", -1.0)
    ddf, df = as_dask(people, 3)
    want = df.lsh.pairs(COLUMNS)
    assert want.attrs["lsh_frame"]["model"]["fit"]["split"] == "unclear"
    same(ddf.lsh.pairs(COLUMNS).compute(), want)


@pytest.mark.usefixtures("sync")
@pytest.mark.parametrize("partitions", [1, 3])
def test_a_field_with_no_values_is_left_out_as_in_pandas(
    people: pd.DataFrame, partitions: int
) -> None:
    ddf, df = as_dask(people.assign(notes=None), partitions)
    fields = [*COLUMNS, "notes"]
    want = df.lsh.pairs(fields)
    assert want.attrs["lsh_frame"]["model"]["no_values"] == ["notes"]
    same(ddf.lsh.pairs(fields).compute(), want)


@pytest.mark.usefixtures("sync")
@pytest.mark.parametrize("partitions", PARTITIONS)
def test_a_given_neighbours_field_equals_pandas(
    people: pd.DataFrame, partitions: int
) -> None:
    ddf, df = as_dask(people, partitions)
    truth = lf.datasets.true_pairs(df["entity_id"])
    fields = [
        lf.Field("email", blocking="exact"),
        lf.Field(["given_name", "surname", "street_address"], blocking="neighbours"),
        lf.Field("surname", threshold=0.6),
        lf.Field("date_of_birth", blocking=None),
    ]
    want = df.lsh.candidates(fields)
    same(ddf.lsh.candidates(fields).compute(), want)
    labels = set(want["found_by"].cat.categories)
    assert any("given_name" in label and "|" in label for label in labels)
    got_report = ddf.lsh.blocking_report(fields, true_pairs=truth)
    want_report = df.lsh.blocking_report(fields, true_pairs=truth)
    pd.testing.assert_frame_equal(got_report.table, want_report.table)
    assert got_report.decisions == want_report.decisions
    assert got_report.largest_buckets == want_report.largest_buckets
    assert any("neighbours key" in line for line in want_report.decisions)
    same(ddf.lsh.pairs(fields).compute(), df.lsh.pairs(fields))
    same(ddf.lsh.dedupe(fields).compute(), df.lsh.dedupe(fields))
    # The neighbours key alone, and its pairs over max_pairs as pandas refuses them.
    alone = [lf.Field(COLUMNS, blocking="neighbours")]
    same(ddf.lsh.candidates(alone).compute(), df.lsh.candidates(alone))
    with pytest.raises(TooManyPairsError) as want_error:
        df.lsh.candidates(alone, max_pairs=10)
    with pytest.raises(TooManyPairsError) as got_error:
        ddf.lsh.candidates(alone, max_pairs=10)
    assert str(got_error.value) == str(want_error.value)


@pytest.mark.usefixtures("sync")
@pytest.mark.parametrize(("left_parts", "right_parts"), [(1, 1), (3, 2)])
def test_link_report_and_neighbours_field_equal_pandas(
    people: pd.DataFrame, left_parts: int, right_parts: int
) -> None:
    dleft, left = as_dask(people.iloc[::2], left_parts)
    dright, right = as_dask(people.iloc[1::2], right_parts)
    truth = (
        left["entity_id"]
        .rename_axis("left")
        .reset_index()
        .merge(right["entity_id"].rename_axis("right").reset_index())[["left", "right"]]
    )
    assert len(truth)
    given = [
        lf.Field(["given_name", "surname", "email"], blocking="neighbours"),
        lf.Field("date_of_birth", blocking="exact"),
    ]
    for fields in (COLUMNS, given):
        want = left.lsh.candidates(fields, other=right)
        same(dleft.lsh.candidates(fields, other=dright).compute(), want)
        got_report = dleft.lsh.blocking_report(fields, other=dright, true_pairs=truth)
        want_report = left.lsh.blocking_report(fields, other=right, true_pairs=truth)
        pd.testing.assert_frame_equal(got_report.table, want_report.table)
        assert got_report.decisions == want_report.decisions
        assert got_report.largest_buckets == want_report.largest_buckets
        # One neighbours key: given, or beside the LSH record key of plain
        # columns.
        how = want_report.table["how"].str.startswith("most similar records")
        assert how.sum() == 1
        same(dleft.lsh.link(dright, fields).compute(), left.lsh.link(right, fields))
        same(
            dleft.lsh.merge(dright, fields, how="left").compute(),
            left.lsh.merge(right, fields, how="left"),
        )


@pytest.mark.usefixtures("sync")
def test_neighbours_on_categories_that_differ_between_partitions(
    people: pd.DataFrame,
) -> None:
    pieces = []
    for start in range(0, 600, 200):
        piece = people.iloc[start : start + 200].astype({"surname": "category"})
        known = sorted(piece["surname"].dropna().unique())
        pieces.append(piece.assign(surname=piece["surname"].cat.set_categories(known)))
    ddf = dd.from_delayed(
        [dask.delayed(piece) for piece in pieces],
        meta=pieces[0].iloc[:0],
        verify_meta=False,
    )
    df = ddf.compute()
    assert df["surname"].dtype == "category"  # Dask unites the categories
    fields = [lf.Field(["given_name", "surname", "city"], blocking="neighbours")]
    same(ddf.lsh.candidates(fields).compute(), df.lsh.candidates(fields))
    same(ddf.lsh.dedupe(COLUMNS).compute(), df.lsh.dedupe(COLUMNS))


@pytest.mark.usefixtures("sync")
def test_score_keeps_the_pairs_partitions_order_and_index(people: pd.DataFrame) -> None:
    ddf, df = as_dask(people, 4)
    pairs = df.lsh.candidates(COLUMNS)[["left", "right"]]
    shuffled = pairs.sample(frac=1.0, random_state=1)
    shuffled.index = shuffled.index * 10
    got = ddf.lsh.score(dd.from_pandas(shuffled, npartitions=3, sort=False), COLUMNS)
    same(got.compute(), df.lsh.score(shuffled, COLUMNS))


@pytest.mark.usefixtures("sync")
@pytest.mark.parametrize("partitions", PARTITIONS)
def test_cluster_dedupe_and_drop_duplicates_equal_pandas(
    people: pd.DataFrame, partitions: int
) -> None:
    # String labels out of order: entity ids follow the labels' sorted order.
    shuffled = people.sample(frac=1.0, random_state=2)
    shuffled.index = [f"r{label}" for label in shuffled.index]
    ddf, df = as_dask(shuffled, partitions)
    scored = df.lsh.pairs(COLUMNS)
    same(
        ddf.lsh.cluster(dd.from_pandas(scored, npartitions=2)).compute(),
        df.lsh.cluster(scored),
    )
    same(
        ddf.lsh.cluster(scored, min_score=0.9).compute(),
        df.lsh.cluster(scored, min_score=0.9),
    )
    same(ddf.lsh.dedupe(COLUMNS).compute(), df.lsh.dedupe(COLUMNS))
    for keep in (
        "first",
        "last",
        "most_complete",
        False,
        lambda group: group.index[-1],
    ):
        same(
            ddf.lsh.drop_duplicates(COLUMNS, keep=keep).compute(),
            df.lsh.drop_duplicates(COLUMNS, keep=keep),
        )
    same(
        ddf.lsh.drop_duplicates(COLUMNS, ignore_index=True).compute(),
        df.lsh.drop_duplicates(COLUMNS, ignore_index=True),
    )
    # pandas' keywords (issue 17): subset=, and duplicated().
    same(
        ddf.lsh.drop_duplicates(subset=COLUMNS, keep="last").compute(),
        df.lsh.drop_duplicates(subset=COLUMNS, keep="last"),
    )
    for keep in ("first", False):
        same(
            ddf.lsh.duplicated(subset=COLUMNS, keep=keep).compute(),
            df.lsh.duplicated(subset=COLUMNS, keep=keep),
        )


@pytest.mark.usefixtures("sync")
@pytest.mark.parametrize("collect", [True, False])
def test_sparse_entities_are_split_and_reviewed_as_in_pandas(
    collect: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from entities import cliques_and_a_chain

    if not collect:  # the components are found on the cluster (large-star)
        monkeypatch.setattr(_components, "COLLECT_EDGES", 0)
    ddf, frame = as_dask(cliques_and_a_chain()[0], 3)
    dpairs, pairs = as_dask(cliques_and_a_chain()[1], 2)
    for split in (True, False):
        want, want_warnings = quietly(lf.cluster, frame, pairs, split=split)
        got, got_warnings = quietly(ddf.lsh.cluster, dpairs, split=split)
        same(got, want)
        assert got.attrs == want.attrs and got_warnings == want_warnings
    assert want.attrs["lsh_frame"]["review"]  # split=False: both entities


@pytest.mark.usefixtures("sync")
def test_a_table_without_duplicates_is_decided_as_in_pandas() -> None:
    people = lf.datasets.make_customers(1_500, seed=3, duplicate_rate=0.0)
    ddf, df = as_dask(people.drop(columns="entity_id"), 3)
    columns = list(df.columns)
    want, want_warnings = quietly(df.lsh.pairs, columns)
    got, got_warnings = quietly(ddf.lsh.pairs, columns)
    assert "another group" in want.attrs["lsh_frame"]["fallback"]
    same(got, want)
    assert got_warnings == want_warnings


@pytest.mark.usefixtures("sync")
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_splitting_on_the_cluster_gives_the_pandas_ids(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Random groups (cliques of strong links, chains of weak and strong ones,
    # identical copies) over shuffled labels: large-star, then only the sparse
    # entities' links gathered and split, equals pandas splitting every link.
    rng = np.random.default_rng(seed)
    n = 400
    labels = rng.permutation(n) * 7
    rows = []
    for start in range(0, n - 12, 12):
        kind = rng.integers(3)
        members = np.arange(start, start + 12)
        if kind == 0:  # a clique
            rows += [(a, b, 0.999) for a in members for b in members if a < b]
        elif kind == 1:  # a chain, links of any strength
            rows += [(a, a + 1, rng.choice([0.6, 0.95, 0.995, 0.9999, np.nan]))
                     for a in members[:-1]]  # fmt: skip
        else:  # two cliques joined by one weak link
            rows += [(a, b, 0.99) for a in members[:6] for b in members[:6] if a < b]
            rows += [(a, b, 0.99) for a in members[6:] for b in members[6:] if a < b]
            rows.append((members[5], members[6], 0.7))
    pairs = pd.DataFrame(rows, columns=["left", "right", "match_probability"])
    pairs["left"], pairs["right"] = labels[pairs["left"]], labels[pairs["right"]]
    pairs["match"] = True
    pairs["found_by"] = np.where(rng.random(len(pairs)) < 0.05, "identical", "record")
    frame = pd.DataFrame({"x": ["a"] * n}, index=labels)
    want, want_warnings = quietly(lf.cluster, frame, pairs)
    assert want.attrs["lsh_frame"]["links_cut"] > 0
    monkeypatch.setattr(_components, "COLLECT_EDGES", 0)
    ddf = dd.from_pandas(frame, npartitions=4, sort=False)
    got, got_warnings = quietly(
        ddf.lsh.cluster, dd.from_pandas(pairs, npartitions=3, sort=False)
    )
    pd.testing.assert_series_equal(got, want, check_index_type=False)
    assert got.attrs == want.attrs and got_warnings == want_warnings


@pytest.mark.usefixtures("sync")
@pytest.mark.parametrize(("left_parts", "right_parts"), [(1, 1), (3, 2)])
def test_link_and_merge_equal_pandas(
    people: pd.DataFrame, left_parts: int, right_parts: int
) -> None:
    dleft, left = as_dask(people.iloc[::2], left_parts)
    dright, right = as_dask(
        people.iloc[1::2].rename(columns={"surname": "family"}), right_parts
    )
    mapping = {
        "left_on": COLUMNS,
        "right_on": ["family" if column == "surname" else column for column in COLUMNS],
    }
    same(dleft.lsh.link(dright, **mapping).compute(), left.lsh.link(right, **mapping))
    for how in ("inner", "left", "right", "outer"):
        for one_to_one in (False, True):
            options = {**mapping, "how": how, "one_to_one": one_to_one}
            if one_to_one:  # the pandas keywords of issue 17, with the choice
                options.update(indicator="source", validate="1:1")
            same(
                dleft.lsh.merge(dright, **options).compute(),
                left.lsh.merge(right, **options),
            )
    # A match that breaks validate= is refused as in pandas.
    options = {**mapping, "validate": "one_to_one", "min_score": 0.3}
    with pytest.raises(lf.MergeError) as refused:
        left.lsh.merge(right, **options)
    with pytest.raises(lf.MergeError, match=re.escape(str(refused.value))):
        dleft.lsh.merge(dright, **options)
    # Linked entity ids: one Series per table, equal to pandas'.
    scored = left.lsh.link(right, **mapping)
    got = dleft.lsh.cluster(scored, other=dright)
    want = left.lsh.cluster(scored, other=right)
    same(got[0].compute(), want[0])
    same(got[1].compute(), want[1])


@pytest.mark.usefixtures("sync")
def test_minhash_equals_pandas(people: pd.DataFrame) -> None:
    ddf, df = as_dask(people, 3)
    same(
        ddf.lsh.minhash(["surname", "email"], num_perm=32).compute(),
        df.lsh.minhash(["surname", "email"], num_perm=32),
    )
    same(ddf.lsh.minhash("surname").compute(), df.lsh.minhash("surname"))


@pytest.mark.usefixtures("sync")
def test_empty_partitions_and_tiny_frames(people: pd.DataFrame) -> None:
    part = people.iloc[:300]
    pieces = [part.iloc[:0], part.iloc[:150], part.iloc[150:150], part.iloc[150:]]
    ddf = dd.from_delayed(
        [dask.delayed(piece) for piece in pieces], meta=part.iloc[:0], verify_meta=False
    )
    df = ddf.compute()
    same(ddf.lsh.dedupe(COLUMNS).compute(), df.lsh.dedupe(COLUMNS))
    same(ddf.lsh.candidates(COLUMNS).compute(), df.lsh.candidates(COLUMNS))
    # No columns: every column, as in pandas.
    same(ddf.lsh.duplicated().compute(), df.lsh.duplicated())
    other = dd.from_delayed(
        [dask.delayed(piece) for piece in pieces[::-1]],
        meta=part.iloc[:0],
        verify_meta=False,
    )
    options = {"on": COLUMNS, "how": "outer", "indicator": True, "one_to_one": True}
    same(
        ddf.lsh.merge(other[[*COLUMNS, "city"]], **options).compute(),
        df.lsh.merge(other.compute()[[*COLUMNS, "city"]], **options),
    )
    for rows in (0, 1):
        tiny_ddf, tiny = as_dask(people.iloc[:rows], 1)
        same(tiny_ddf.lsh.dedupe(COLUMNS).compute(), tiny.lsh.dedupe(COLUMNS))


@pytest.mark.usefixtures("sync")
def test_large_star_small_star_gives_the_union_find_ids(
    people: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lsh_frame.dask import _components

    monkeypatch.setattr(_components, "COLLECT_EDGES", 0)  # never gather the pairs
    # A long chain (many rounds), a star, and random links, on shuffled labels.
    rng = np.random.default_rng(5)
    labels = rng.permutation(2_000)
    frame = pd.DataFrame({"name": ["x"] * labels.size}, index=labels)
    chain = [(labels[i], labels[i + 1]) for i in range(600)]
    star = [(labels[700], labels[i]) for i in range(701, 800)]
    random_links = [
        tuple(rng.choice(labels[900:], 2, replace=False)) for _ in range(400)
    ]
    links = pd.DataFrame(chain + star + random_links, columns=["left", "right"])
    ddf, df = as_dask(frame, 5)
    same(
        ddf.lsh.cluster(dd.from_pandas(links, npartitions=3)).compute(),
        df.lsh.cluster(links),
    )
    ddf, df = as_dask(people.iloc[:600], 3)
    same(ddf.lsh.dedupe(COLUMNS).compute(), df.lsh.dedupe(COLUMNS))


@pytest.mark.usefixtures("sync")
@pytest.mark.parametrize(("left_parts", "right_parts"), [(1, 1), (2, 3)])
def test_right_on_equals_pandas(
    people: pd.DataFrame, left_parts: int, right_parts: int
) -> None:
    renamed = {"surname": "family", "date_of_birth": "dob"}
    dleft, left = as_dask(people.iloc[::2], left_parts)
    dright, right = as_dask(people.iloc[1::2].rename(columns=renamed), right_parts)
    right_on = [renamed.get(column, column) for column in COLUMNS]
    by_hand = right.rename(columns={new: old for old, new in renamed.items()})
    for mapping in (right_on, renamed):
        options = {"other": dright, "right_on": mapping}
        want = left.lsh.candidates(COLUMNS, other=right, right_on=mapping)
        pd.testing.assert_frame_equal(want, left.lsh.candidates(COLUMNS, other=by_hand))
        same(dleft.lsh.candidates(COLUMNS, **options).compute(), want)
        got_report = dleft.lsh.blocking_report(COLUMNS, **options)
        want_report = left.lsh.blocking_report(COLUMNS, other=right, right_on=mapping)
        pd.testing.assert_frame_equal(got_report.table, want_report.table)
        assert got_report.decisions == want_report.decisions
        scored = left.lsh.pairs(COLUMNS, other=right, right_on=mapping, values=True)
        assert scored["match"].any()
        same(dleft.lsh.pairs(COLUMNS, values=True, **options).compute(), scored)
        given = want[["left", "right"]]
        same(
            dleft.lsh.score(given, COLUMNS, **options).compute(),
            left.lsh.score(given, COLUMNS, other=right, right_on=mapping),
        )
        same(
            dleft.lsh.link(dright, COLUMNS, right_on=mapping).compute(),
            left.lsh.link(right, COLUMNS, right_on=mapping),
        )
        same(
            dleft.lsh.merge(dright, COLUMNS, right_on=mapping, how="left").compute(),
            left.lsh.merge(right, COLUMNS, right_on=mapping, how="left"),
        )
    assert list(dright.columns) == list(right.columns)  # the user's frame as it was


@pytest.mark.usefixtures("sync")
def test_right_on_errors_equal_pandas(people: pd.DataFrame) -> None:
    dleft, left = as_dask(people.iloc[:100], 2)
    dright, right = as_dask(people.iloc[100:200].rename(columns={"surname": "x"}), 2)
    cases: list[tuple[dict[str, Any], type[Exception], str]] = [
        ({"right_on": ["x"]}, ConfigError, "no right table was given"),
        ({"right_on": ["x"], "use_other": True}, ConfigError, "one to one"),
        ({"use_other": True}, ColumnError, r"not in the right table \('other'\)"),
    ]
    for options, error, message in cases:
        use_other = options.pop("use_other", False)
        fields = ["given_name", "surname"]
        for engine_left, engine_right in ((dleft, dright), (left, right)):
            other = {"other": engine_right} if use_other else {}
            for call in (
                engine_left.lsh.candidates,
                engine_left.lsh.blocking_report,
                engine_left.lsh.pairs,
            ):
                with pytest.raises(error, match=message):
                    call(fields, **options, **other)
    with pytest.raises(ColumnError, match=r"'surname' is not in the right table"):
        dleft.lsh.link(dright, ["given_name", "surname"])


@pytest.mark.usefixtures("sync")
def test_link_edge_cases_equal_pandas() -> None:
    fields = [lf.Field("city", blocking="exact")]
    # A bucket over the cap in one table only makes no pairs: not "dropped".
    left = pd.DataFrame({"city": ["a", "b", "c"]}, index=[0, 1, 2])
    right = pd.DataFrame({"city": ["a"] * 5 + ["zzz"] * 20}, index=range(100, 125))
    dleft, left = as_dask(left, 1)
    dright, right = as_dask(right, 2)
    got, got_warnings = quietly(
        dleft.lsh.candidates, fields, other=dright, max_bucket=6
    )
    want, want_warnings = quietly(
        left.lsh.candidates, fields, other=right, max_bucket=6
    )
    same(got, want)
    assert got_warnings == want_warnings == []
    # Completeness does not count pairs whose only shared bucket was dropped.
    left = pd.DataFrame({"city": ["a"] * 4 + ["b"]}, index=range(5))
    right = pd.DataFrame({"city": ["a"] * 4 + ["b"]}, index=range(10, 15))
    dleft, left = as_dask(left, 1)
    dright, right = as_dask(right, 1)
    truth = pd.DataFrame({"left": [0, 4], "right": [10, 14]})
    got_report = dleft.lsh.blocking_report(
        fields, other=dright, max_bucket=5, true_pairs=truth
    )
    want_report = left.lsh.blocking_report(
        fields, other=right, max_bucket=5, true_pairs=truth
    )
    pd.testing.assert_frame_equal(got_report.table, want_report.table)
    assert got_report.table["pairs_completeness"].iloc[0] == 0.5


def typed_people(people: pd.DataFrame) -> pd.DataFrame:
    """The people with numbers, dates, booleans and categoricals, not text."""
    dob = pd.to_datetime(people["date_of_birth"], errors="coerce")
    entity = people["entity_id"].to_numpy()
    price = np.where(entity % 5 == 0, np.nan, entity * 1.5 % 300)
    return people[["given_name", "surname", "email"]].assign(
        dob=dob,
        year=dob.dt.year.astype("Int64"),
        month=dob.dt.month.astype("Int64"),
        day=dob.dt.day.astype("Int64"),
        price=price,
        member=entity % 3 == 0,
        city=people["city"].astype("category"),
    )


TYPED_FIELDS = [
    "given_name",
    "surname",
    "dob",
    "price",
    "member",
    "city",
    lf.Field(["year", "month", "day"]),
]


@pytest.mark.usefixtures("sync")
@pytest.mark.parametrize("partitions", PARTITIONS)
def test_typed_columns_equal_pandas(people: pd.DataFrame, partitions: int) -> None:
    typed = typed_people(people)
    ddf, df = as_dask(typed, partitions)
    want = df.lsh.candidates(TYPED_FIELDS)
    same(ddf.lsh.candidates(TYPED_FIELDS).compute(), want)
    # What pandas finds on the typed frame is what it finds on their text.
    as_text = df.assign(
        dob=df["dob"].dt.strftime("%Y-%m-%d"),
        price=df["price"].map(lambda v: None if np.isnan(v) else f"{v:g}"),
        member=df["member"].map({True: "true", False: "false"}),
    )
    pd.testing.assert_frame_equal(want, as_text.lsh.candidates(TYPED_FIELDS))
    same(ddf.lsh.pairs(TYPED_FIELDS).compute(), df.lsh.pairs(TYPED_FIELDS))
    deduped = ddf.lsh.dedupe(TYPED_FIELDS).compute()
    same(deduped, df.lsh.dedupe(TYPED_FIELDS))
    kept_types = ["dob", "year", "month", "day", "price", "member", "city"]
    assert deduped[kept_types].dtypes.equals(typed[kept_types].dtypes)
    same(
        ddf.lsh.drop_duplicates(TYPED_FIELDS).compute(),
        df.lsh.drop_duplicates(TYPED_FIELDS),
    )


@pytest.mark.usefixtures("sync")
def test_typed_columns_link_and_merge_equal_pandas(people: pd.DataFrame) -> None:
    typed = typed_people(people)
    dleft, left = as_dask(typed.iloc[::2], 3)
    dright, right = as_dask(typed.iloc[1::2], 2)
    fields = ["given_name", "surname", "dob", "price"]
    same(dleft.lsh.link(dright, fields).compute(), left.lsh.link(right, fields))
    merged = dleft.lsh.merge(dright, fields, how="inner").compute()
    same(merged, left.lsh.merge(right, fields, how="inner"))
    assert merged["dob_x"].dtype == typed["dob"].dtype


@pytest.mark.usefixtures("sync")
def test_merge_from_parquet_with_categories_and_an_empty_side(
    people: pd.DataFrame, tmp_path: Any
) -> None:
    records = people.iloc[:400].astype({"city": "category"})
    records = records.rename_axis("record_id").reset_index()
    for number, start in enumerate(range(0, 400, 100)):
        records.iloc[start : start + 100].to_parquet(
            tmp_path / f"part{number}.parquet", index=False
        )
    files = sorted(tmp_path.glob("*.parquet"))
    dleft = dd.read_parquet(files[:3], index="record_id")  # categories unknown to Dask
    dright = dd.read_parquet(files[3:], index="record_id")
    left, right = dleft.compute(), dright.compute()
    fields = [*COLUMNS, "city"]
    same(
        dleft.lsh.merge(dright, fields, how="left").compute(),
        left.lsh.merge(right, fields, how="left"),
    )
    empty_dask, empty = as_dask(right.iloc[:0], 1)
    same(
        dleft.lsh.merge(empty_dask, fields, how="left").compute(),
        left.lsh.merge(empty, fields, how="left"),
    )
    for how in ("right", "outer"):
        same(
            dleft.lsh.merge(dright, fields, how=how, indicator=True).compute(),
            left.lsh.merge(right, fields, how=how, indicator=True),
        )
        same(
            empty_dask.lsh.merge(dleft, fields, how=how).compute(),
            empty.lsh.merge(left, fields, how=how),
        )


@pytest.mark.usefixtures("sync")
def test_values_of_signature_fields_and_given_pairs_keep_their_dtypes_and_attrs(
    people: pd.DataFrame,
) -> None:
    frame = people.iloc[:500].copy()
    frame["address_sig"] = frame.lsh.minhash("street_address", num_perm=32)
    ddf, df = as_dask(frame, 3)
    fields = [lf.Field("address_sig"), lf.Field("surname")]
    got = ddf.lsh.pairs(fields, values=True, min_score=0.7).compute()
    same(got, df.lsh.pairs(fields, values=True, min_score=0.7))
    assert isinstance(got["address_sig_left"].dtype.pyarrow_dtype, lf.MinHashType)
    given = df.lsh.candidates(fields)[["left", "right"]]
    given.index = given.index * 10 + 5
    given.attrs["note"] = "mine"
    scored = ddf.lsh.score(dd.from_pandas(given, npartitions=2, sort=False), fields)
    assert scored.compute().attrs["note"] == "mine"
    assert len(scored.loc[given.index[-1]].compute()) == 1  # the index is the pairs'
    same(
        ddf.lsh.minhash("surname", k=2, num_perm=16).compute(),
        df.lsh.minhash("surname", k=2, num_perm=16),
    )


# ----------------------------------------------------------------------------
# Bad input and safety checks


@pytest.mark.usefixtures("sync")
def test_bad_input_is_refused_clearly(people: pd.DataFrame) -> None:
    ddf, _ = as_dask(people.iloc[:200], 2)
    with pytest.raises(ConfigTypeError, match="must be a dask DataFrame"):
        lfd.dedupe(people, COLUMNS)
    repeated = dd.from_pandas(people.iloc[:200], npartitions=2).reset_index(drop=True)
    with pytest.raises(ColumnError, match=r"duplicate labels.*index='id'"):
        repeated.lsh.candidates(COLUMNS)
    with pytest.raises(ConfigError, match="shuffle_method"):
        ddf.lsh.pairs(COLUMNS, shuffle_method="fast")
    with pytest.raises(ConfigError, match="npartitions"):
        ddf.lsh.candidates(COLUMNS, npartitions=0)
    with pytest.raises(ColumnError, match="nickname"):
        ddf.lsh.candidates(["surname", "nickname"])
    with pytest.raises(TooManyPairsError, match="max_pairs=0"):
        ddf.lsh.candidates(COLUMNS, max_pairs=0)
    with pytest.raises(ColumnError, match="cluster_id"):
        ddf.assign(cluster_id=1).lsh.dedupe(COLUMNS)
    with pytest.raises(ColumnError, match="not in the left frame"):
        ddf.lsh.score(pd.DataFrame({"left": [-5], "right": [0]}), COLUMNS).compute()


def test_a_shuffle_that_loses_rows_stops_the_job() -> None:
    _tables.check_moved(10, 10, "pairs", "tasks")
    with pytest.raises(LshFrameError, match="8426"):
        _tables.check_moved(10, 9, "pairs", "p2p")
    from lsh_frame.dask._fetch import _aligned

    answers = pd.DataFrame({"name": ["a", "c"], "__lsh_number": [0, 2]})
    with pytest.raises(LshFrameError, match="delivered"):
        _aligned(answers, 3, "p2p")
    doubled = pd.DataFrame({"name": ["a", "a"], "__lsh_number": [0, 0]})
    with pytest.raises(LshFrameError, match="some twice"):
        _aligned(doubled, 2, "p2p")


def test_importing_lsh_frame_does_not_import_dask() -> None:
    code = "import sys, lsh_frame; print('dask' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_missing_dask_names_the_install_command() -> None:
    code = (
        "import sys; sys.modules['dask'] = None; sys.modules['dask.dataframe'] = None\n"
        "try:\n    import lsh_frame.dask\nexcept ImportError as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert "pip install 'lsh-frame[dask]'" in result.stdout


# ----------------------------------------------------------------------------
# Parity on a distributed cluster


@pytest.fixture(scope="session")
def local_cluster() -> Iterator[Any]:
    from distributed import LocalCluster

    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    yield cluster
    cluster.close()


@pytest.fixture
def on_cluster(local_cluster: Any) -> Iterator[Any]:
    from distributed import Client

    with Client(local_cluster) as client:
        yield client


@pytest.mark.usefixtures("on_cluster")
@pytest.mark.parametrize(("partitions", "method"), [(2, "tasks"), (5, "p2p")])
def test_jobs_on_a_local_cluster_equal_pandas(
    people: pd.DataFrame, partitions: int, method: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    ddf, df = as_dask(people.iloc[:800], partitions)
    options = {"shuffle_method": method}
    same(ddf.lsh.pairs(COLUMNS, **options).compute(), df.lsh.pairs(COLUMNS))
    same(ddf.lsh.dedupe(COLUMNS, **options).compute(), df.lsh.dedupe(COLUMNS))
    dright, right = as_dask(people.iloc[800:], 2)
    same(
        ddf.lsh.merge(dright, COLUMNS, how="left", **options).compute(),
        df.lsh.merge(right, COLUMNS, how="left"),
    )
    # Columns named differently: mapped on the workers as pandas maps them.
    renamed = {"surname": "family"}
    dfamily, family = as_dask(people.iloc[800:].rename(columns=renamed), 2)
    same(
        ddf.lsh.pairs(COLUMNS, other=dfamily, right_on=renamed, **options).compute(),
        df.lsh.pairs(COLUMNS, other=right),
    )
    same(
        ddf.lsh.link(dfamily, COLUMNS, right_on=renamed, **options).compute(),
        df.lsh.link(family, COLUMNS, right_on=renamed),
    )
    from lsh_frame.dask import _components

    monkeypatch.setattr(_components, "COLLECT_EDGES", 0)  # large/small-star
    scored = df.lsh.pairs(COLUMNS)
    same(
        ddf.lsh.cluster(scored, shuffle_method=method).compute(), df.lsh.cluster(scored)
    )


@pytest.mark.usefixtures("on_cluster")
def test_tfidf_on_a_local_cluster_equals_pandas(people: pd.DataFrame) -> None:
    # Document frequencies are counted over every partition and sent to the
    # workers once; each pair partition scores with them as pandas does.
    ddf, df = as_dask(people.iloc[:800], 3)
    who = lf.Field(
        ["given_name", "surname", "street_address"],
        name="who",
        blocking=None,
        compare="tfidf",
    )
    fields = [*COLUMNS, who]
    want = df.lsh.pairs(fields)
    assert want["who_score"].between(0.01, 0.99).any()
    same(ddf.lsh.pairs(fields).compute(), want)


@pytest.mark.usefixtures("sync")
@pytest.mark.parametrize(
    ("options", "name"),
    [({"threshold": float("nan")}, "threshold"), ({"recall": 1.5}, "recall")],
)
def test_call_level_fractions_are_checked_when_every_field_is_exact(
    people: pd.DataFrame, options: dict[str, Any], name: str
) -> None:
    ddf = dd.from_pandas(people.head(100), npartitions=2, sort=False)
    exact = [lf.Field("email", blocking="exact")]
    for call in (ddf.lsh.candidates, ddf.lsh.pairs, ddf.lsh.dedupe):
        with pytest.raises(ConfigError, match=rf"'{name}' parameter of .*\(0, 1\]"):
            quietly(call, exact, **options)


def test_a_set_of_columns_is_refused(people: pd.DataFrame) -> None:
    ddf = dd.from_pandas(people.head(100), npartitions=2, sort=False)
    with pytest.raises(ConfigTypeError, match="a set"):
        ddf.lsh.minhash({"given_name", "surname"})
    with pytest.raises(ConfigTypeError, match="a set"):
        ddf.lsh.candidates({"given_name", "surname"})


@pytest.mark.usefixtures("sync")
@pytest.mark.parametrize(("left_parts", "right_parts"), [(1, 1), (3, 2)])
def test_a_link_read_as_a_matching_with_codes_equals_pandas(
    left_parts: int, right_parts: int
) -> None:
    left_frame, right_frame, _ = catalogues(250, seed=6)
    dleft, left = as_dask(left_frame, left_parts)
    dright, right = as_dask(right_frame, right_parts)
    columns = ["title", "price"]
    want = left.lsh.link(right, columns)
    assert want.attrs["lsh_frame"]["model"]["fit"]["reading"] == "matching"
    assert want.attrs["lsh_frame"]["model"]["codes"] == "codes"
    same(dleft.lsh.link(dright, columns).compute(), want)
