"""The neighbours key on the workers gives pandas' pairs, on any partitioning.

``lsh_frame.dask._neighbours`` counts tokens by partition, adds them up by
token range, ranks, chunks and looks up by groups of records; each of those
cuts is made small here (few ranges, small groups, a low work floor so that
the cap binds), and the pairs, the decision line and the keyed counts must be
those of :func:`lsh_frame.block.neighbours.neighbour_pairs` on the whole table.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame.block import neighbours as whole_table
from lsh_frame.dask import _keys, _neighbours
from lsh_frame.dask._tables import Table
from lsh_frame.errors import TooManyPairsError

COLUMNS = ["given_name", "surname", "street_address", "city", "date_of_birth"]


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    frame = lf.datasets.make_customers(1_500, seed=11)
    # Ties: exact copies under other labels, and records without any value.
    copies = frame.iloc[:40].set_axis([f"copy{i}" for i in range(40)])
    empty = frame.iloc[:5].assign(**dict.fromkeys(COLUMNS, None))
    empty.index = [f"empty{i}" for i in range(5)]
    frame.index = frame.index.astype(str)
    # Text that is not ASCII in some partitions only.
    frame.loc[frame.index[7], "surname"] = "Ñúñez-Ødegård"
    frame.loc[frame.index[900], "city"] = "Zürich"
    return pd.concat([frame, copies, empty])


@pytest.fixture
def small_cuts(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Make every cut of the distributed key bite on a small table."""
    monkeypatch.setattr(whole_table, "WORK_FLOOR", 100_000)
    monkeypatch.setattr(whole_table, "CHUNK_WORK", 20_000)
    monkeypatch.setattr(_neighbours, "GROUP_WORK", 60_000)
    monkeypatch.setattr(_neighbours, "MAX_RANGES", 3)
    with dask.config.set(scheduler="synchronous"):
        yield


def tables(frames: list[pd.DataFrame], partitions: list[int]) -> list[Table]:
    return [
        Table(dd.from_pandas(frame, npartitions=parts, sort=False), "frame", "test")
        for frame, parts in zip(frames, partitions, strict=True)
    ]


def assert_same(
    frames: list[pd.DataFrame], partitions: list[int], columns: list[Any]
) -> Any:
    want = whole_table.neighbour_pairs(frames, columns, owner="test")
    got = _neighbours.distributed_neighbours(
        tables(frames, partitions), columns, owner="test"
    )
    codes = np.concatenate([np.empty(0, np.int64), *dask.compute(*got.parts)])
    assert codes.tolist() == (want.left * len(frames[-1]) + want.right).tolist()
    assert got.description == want.describe()
    assert got.keyed == [int(mask.sum()) for mask in want.keyed]
    assert got.pairs == want.left.size
    assert got.largest == int(want.kept_per_record.max(initial=0))
    return want


@pytest.mark.usefixtures("small_cuts")
@pytest.mark.parametrize("partitions", [1, 3, 7])
def test_dedupe_equals_pandas(people: pd.DataFrame, partitions: int) -> None:
    want = assert_same([people], [partitions], COLUMNS)
    # The cuts bit: the cap left tokens out, and there were several chunks.
    assert want.cap < 100 and want.work > 4 * whole_table.CHUNK_WORK
    assert want.left.size > len(people)


@pytest.mark.usefixtures("small_cuts")
@pytest.mark.parametrize(("left_parts", "right_parts"), [(1, 1), (3, 2), (7, 4)])
def test_link_equals_pandas(
    people: pd.DataFrame, left_parts: int, right_parts: int
) -> None:
    left, right = people.iloc[::2], people.iloc[1::2]
    assert_same([left, right], [left_parts, right_parts], COLUMNS)
    # One table much smaller: only its records look up, as in pandas.
    assert_same([left.iloc[:60], right], [2, right_parts], COLUMNS)
    assert_same([left, right.iloc[:60]], [left_parts, 3], COLUMNS)


@pytest.mark.usefixtures("small_cuts")
def test_empty_partitions_and_empty_tables(people: pd.DataFrame) -> None:
    parts = [people.iloc[:0], people.iloc[:300], people.iloc[:0], people.iloc[300:700]]
    ddf = dd.from_delayed(
        [dask.delayed(part) for part in parts], meta=people.iloc[:0], verify_meta=False
    )
    table = Table(ddf, "frame", "test")
    want = whole_table.neighbour_pairs([people.iloc[:700]], COLUMNS, owner="test")
    got = _neighbours.distributed_neighbours([table], COLUMNS, owner="test")
    codes = np.concatenate(dask.compute(*got.parts))
    assert codes.tolist() == (want.left * 700 + want.right).tolist()
    assert got.description == want.describe()
    assert_same([people.iloc[:0]], [1], COLUMNS)
    assert_same([people.iloc[:50], people.iloc[:0]], [2, 1], COLUMNS)


@pytest.mark.usefixtures("small_cuts")
def test_too_many_pairs_stops_as_pandas_does(people: pd.DataFrame) -> None:
    with pytest.raises(TooManyPairsError) as want:
        whole_table.neighbour_pairs([people], COLUMNS, owner="test", max_pairs=500)
    with pytest.raises(TooManyPairsError) as got:
        _neighbours.distributed_neighbours(
            tables([people], [3]), COLUMNS, owner="test", max_pairs=500
        )
    assert str(got.value) == str(want.value)


@settings(max_examples=25)
@given(
    names=st.lists(
        st.sampled_from(["ann lee", "anne lee", "bo chan", "bo chen", "al", "", "x y"]),
        min_size=1,
        max_size=40,
    ),
    partitions=st.integers(1, 6),
)
def test_any_partitioning_gives_the_same_pairs(
    names: list[str], partitions: int
) -> None:
    frame = pd.DataFrame(
        {"name": names, "town": [f"t{i % 3}" for i in range(len(names))]},
        index=[f"r{i}" for i in range(len(names))],
    )
    with dask.config.set(scheduler="synchronous"):
        assert_same([frame], [partitions], ["name", "town"])


@pytest.mark.usefixtures("small_cuts")
def test_the_client_never_gathers_the_columns(
    people: pd.DataFrame, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: Any) -> None:
        raise AssertionError("a column was gathered to the client")

    monkeypatch.setattr(_keys, "_gathered", refuse)
    ddf = dd.from_pandas(people, npartitions=3, sort=False)
    df = ddf.compute()
    fields = [lf.Field(COLUMNS, blocking="neighbours")]
    pd.testing.assert_frame_equal(
        ddf.lsh.candidates(fields).compute(), df.lsh.candidates(fields)
    )
