"""The match graph held by the table's partitions answers as pandas' MatchGraph.

``lsh_frame.dask._graph`` spreads the matches over the partitions of their
records and adds counts up over them; on any partitioning of the records and
of the pairs, its closed share, its path counts, the match lists it hands out
and the pairs through the matches must be those of
:class:`lsh_frame.decide.closing.MatchGraph` on every match at once.
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

from lsh_frame.dask import _graph, _transitive
from lsh_frame.dask._tables import Table, compute, persist, shared
from lsh_frame.decide.closing import (
    MatchGraph,
    closing,
    held_among,
    pair_codes,
    path_pairs,
    through_matches,
)


@pytest.fixture(autouse=True)
def sync() -> Iterator[None]:
    with dask.config.set(scheduler="synchronous"):
        yield


def _table(records: int, partitions: int) -> Table:
    frame = pd.DataFrame(
        {"x": np.arange(records)}, index=[f"r{i}" for i in range(records)]
    )
    return Table(
        dd.from_pandas(frame, npartitions=partitions, sort=False), "frame", "test"
    )


def _pair_parts(
    table: Table,
    first: np.ndarray,
    second: np.ndarray,
    match: np.ndarray,
) -> list[Any]:
    """Pairs as the engine holds them: each in the partition of its earlier record."""
    low, high = np.minimum(first, second), np.maximum(first, second)
    where = table.partition_of(low)
    labels = table.index
    parts = []
    for part in range(table.npartitions):
        rows = np.flatnonzero(where == part)
        rows = rows[np.lexsort((high[rows], low[rows]))]
        parts.append(
            pd.DataFrame(
                {
                    "left": labels[low[rows]],
                    "right": labels[high[rows]],
                    "found_by": "test",
                    "match": match[rows],
                }
            )
        )
    return persist([dask.delayed(part) for part in parts])


pairs_strategy = st.lists(
    st.tuples(st.integers(0, 29), st.integers(0, 29), st.booleans()),
    min_size=0,
    max_size=120,
)


@settings(max_examples=40, deadline=None)
@given(pairs=pairs_strategy, partitions=st.integers(1, 5))
def test_the_graph_answers_as_one_match_graph(
    pairs: list[tuple[int, int, bool]], partitions: int
) -> None:
    records = 30
    # Distinct unordered pairs of two records (candidates are).
    codes: dict[tuple[int, int], bool] = {}
    for a, b, matched in pairs:
        if a != b:
            codes.setdefault((min(a, b), max(a, b)), matched)
    first = np.array([a for a, _ in codes], dtype=np.int64)
    second = np.array([b for _, b in codes], dtype=np.int64)
    match = np.array(list(codes.values()), dtype=bool)
    table = _table(records, partitions)
    parts = _pair_parts(table, first, second, match)
    graph = _graph.Graph.of(parts, shared(table.index), table, "tasks", "test")
    whole = MatchGraph.of(first[match], second[match])

    paths, pairs_made = graph.paths()
    assert pairs_made == path_pairs(whole)
    assert paths == 2 * pairs_made
    assert _graph.closed_share(graph) == whole.closed_share()

    # The match lists asked for rebuild every match of the records asked about.
    asked = [np.arange(0, records, 2), np.array([3, 3, 7], dtype=np.int64), first]
    answers = compute(*graph.ask([dask.delayed(one) for one in asked]))
    for positions, answer in zip(asked, answers, strict=True):
        local = _graph.asked_graph(positions, answer)
        assert local.degrees(positions).tolist() == whole.degrees(positions).tolist()
    local = _graph.asked_graph(first, answers[2])
    unmatched = np.zeros(first.size, dtype=bool)
    assert (
        closing(local, first, second, unmatched).tolist()
        == closing(whole, first, second, unmatched).tolist()
    )

    # The pairs through the matches no partition holds, in pandas' order,
    # each in the partition of its first record.
    found = _transitive.new_pairs(parts, table, graph, "test")
    got = compute(*found.parts)
    assert found.lengths.tolist() == [one[0].size for one in got]
    for number, (low, _) in enumerate(got):
        assert (table.partition_of(low) == number).all()
    got_first = np.concatenate([np.empty(0, np.int64), *[one[0] for one in got]])
    got_second = np.concatenate([np.empty(0, np.int64), *[one[1] for one in got]])
    want_first, want_second = through_matches(whole)
    new = ~held_among(
        pair_codes(want_first, want_second, records),
        pair_codes(first, second, records),
    )
    assert got_first.tolist() == want_first[new].tolist()
    assert got_second.tolist() == want_second[new].tolist()
