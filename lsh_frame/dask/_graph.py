"""The match graph of one table on Dask, held by the partitions of its records.

:class:`lsh_frame.decide.closing.MatchGraph` holds every matched pair in one
process. Here each partition of the table holds the match lists of its own
records (:class:`Lists`, built by routing every match both ways to the
partitions of its two records), and a task that needs some records' lists
asks for them (:meth:`Graph.ask`): the requests are routed to the partitions
holding the records and the lists routed back. The asker builds a
:class:`MatchGraph` of the lists it received: it holds every match of the
records asked about, so their degrees and the matches they share are those
of the whole graph, and the pandas functions decide on it unchanged.

Only counts reach the client (the graph's two-step paths and the triangles
closing them, the pairs through the matches): never a match.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed

from lsh_frame._kernels.ranges import expand
from lsh_frame._validation import pair_positions
from lsh_frame.block.identical import found_identical
from lsh_frame.dask._tables import TARGET, check_moved, compute, persist, route
from lsh_frame.decide.closing import MatchGraph, closed_pairs

if TYPE_CHECKING:
    from lsh_frame.dask._tables import Table

_EMPTY = np.empty(0, dtype=np.int64)
_RECORD, _OTHER, _NUMBER, _ASKER = "__lsh_record", "__lsh_other", "__lsh_n", "__lsh_a"


@dataclass
class Lists:
    """The match lists of one partition's records (positions, sorted)."""

    records: npt.NDArray[np.int64]
    offsets: npt.NDArray[np.int64]
    neighbours: npt.NDArray[np.int64]
    #: Rows that arrived to build them (each match once from each side).
    arrived: int = 0

    @property
    def degrees(self) -> npt.NDArray[np.int64]:
        """How many records each of ``records`` matches."""
        return np.diff(self.offsets)


def pair_positions_of(
    part: pd.DataFrame, index: pd.Index, owner: str
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Both records' positions of a partition's pairs."""
    return (
        pair_positions(part["left"], index, "left", owner),
        pair_positions(part["right"], index, "right", owner),
    )


def counted_matches(
    part: pd.DataFrame, index: pd.Index, owner: str
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Return the matches the closing rule reads (``closing.found_pairs``).

    Matches, less those the rule closed and the identical copies.
    """
    match = part["match"].fillna(False).to_numpy(dtype=bool)
    counted = match & ~closed_pairs(part) & ~found_identical(part)
    return pair_positions_of(part[counted], index, owner)


def _partition_of(
    positions: npt.NDArray[np.int64], offsets: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    return np.searchsorted(offsets, positions, side="right") - 1


def _edges(
    part: pd.DataFrame, index: pd.Index, owner: str, offsets: npt.NDArray[np.int64]
) -> pd.DataFrame:
    """Send a partition's matches both ways, to the partitions of their records."""
    first, second = counted_matches(part, index, owner)
    keep = first != second
    record = np.concatenate([first[keep], second[keep]])
    other = np.concatenate([second[keep], first[keep]])
    return pd.DataFrame(
        {_RECORD: record, _OTHER: other, TARGET: _partition_of(record, offsets)}
    )


def _edge_meta() -> pd.DataFrame:
    return pd.DataFrame(
        {_RECORD: _EMPTY, _OTHER: _EMPTY, TARGET: _EMPTY},
    )


def _lists(edges: pd.DataFrame, rows: int) -> Lists:
    """Build a partition's lists from its routed matches (each pair once)."""
    size = np.int64(max(rows, 1))
    codes = np.unique(
        edges[_RECORD].to_numpy(np.int64) * size + edges[_OTHER].to_numpy(np.int64)
    )
    record, neighbours = np.divmod(codes, size)
    records, counts = np.unique(record, return_counts=True)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return Lists(records, offsets, neighbours, len(edges))


def _length(part: pd.DataFrame) -> int:
    return len(part)


def _arrived(lists: Lists) -> int:
    return lists.arrived


def _paths(lists: Lists) -> tuple[int, int]:
    """Ordered two-step paths (``d * (d - 1)``) and the pairs they make (half)."""
    degrees = lists.degrees
    paths = int(np.sum(degrees * (degrees - 1)))
    return paths, paths // 2


def _at_least(lists: Lists, degree: int) -> npt.NDArray[np.int64]:
    return lists.records[lists.degrees >= degree]


def _asks(
    positions: npt.NDArray[np.int64], asker: int, offsets: npt.NDArray[np.int64]
) -> pd.DataFrame:
    return pd.DataFrame(
        {
            _RECORD: positions,
            _NUMBER: np.arange(positions.size, dtype=np.int64),
            _ASKER: np.full(positions.size, asker, dtype=np.int64),
            TARGET: _partition_of(positions, offsets),
        }
    )


def _answer(asks: pd.DataFrame, lists: Lists) -> pd.DataFrame:
    """Answer the lists asked of a partition: a row per (ask, matched record)."""
    asked = asks[_RECORD].to_numpy(np.int64)
    at = np.searchsorted(lists.records, asked)
    held = at < lists.records.size
    held[held] = lists.records[at[held]] == asked[held]
    at = at[held]
    owner, element = expand(lists.offsets[at], lists.degrees[at])
    return pd.DataFrame(
        {
            _NUMBER: asks[_NUMBER].to_numpy(np.int64)[held][owner],
            _OTHER: lists.neighbours[element],
            TARGET: asks[_ASKER].to_numpy(np.int64)[held][owner],
        }
    )


def _answer_meta() -> pd.DataFrame:
    return pd.DataFrame({_NUMBER: _EMPTY, _OTHER: _EMPTY, TARGET: _EMPTY})


def asked_graph(positions: npt.NDArray[np.int64], answers: pd.DataFrame) -> MatchGraph:
    """Return the graph of every match of the records asked about (``positions``).

    ``answers`` is what :meth:`Graph.ask` returned for them.
    """
    number = answers[_NUMBER].to_numpy(np.int64)
    return MatchGraph.of(positions[number], answers[_OTHER].to_numpy(np.int64))


@dataclass
class Graph:
    """The match graph of a table, one :class:`Lists` per table partition."""

    parts: list[Any]
    table: Table
    method: str

    @classmethod
    def of(
        cls, pair_parts: list[Any], index: Any, table: Table, method: str, owner: str
    ) -> Graph:
        """Build the graph of the matches the rule reads, from decided pairs.

        ``index``: the table's labels, shared with the workers.
        """
        offsets = table.offsets
        edges = persist(
            [delayed(_edges)(part, index, owner, offsets) for part in pair_parts]
        )
        sent = sum(compute(*[delayed(_length)(part) for part in edges]))
        routed = route(edges, _edge_meta(), table.npartitions, method)
        parts = persist([delayed(_lists)(part, table.rows) for part in routed])
        received = sum(compute(*[delayed(_arrived)(part) for part in parts]))
        check_moved(sent, received, "matches", method)
        return cls(parts, table, method)

    def paths(self) -> tuple[int, int]:
        """Ordered two-step paths between matches, and the pairs they make."""
        counted = compute(*[delayed(_paths)(part) for part in self.parts])
        return sum(one[0] for one in counted), sum(one[1] for one in counted)

    def at_least(self, degree: int) -> Any:
        """Return the records with ``degree`` matches or more (a task's result)."""
        return delayed(np.concatenate)(
            [_EMPTY, *[delayed(_at_least)(part, degree) for part in self.parts]]
        )

    def ask(self, asked: list[Any]) -> list[Any]:
        """For each task's positions, every match of each (answers' frames).

        ``asked`` holds one array of record positions per asking task; each
        gets back a frame of (ask number, matched record) rows, which
        :func:`asked_graph` turns into the graph of those records' matches.
        """
        offsets = self.table.offsets
        asks = persist(
            [
                delayed(_asks)(positions, asker, offsets)
                for asker, positions in enumerate(asked)
            ]
        )
        meta = _asks(_EMPTY, 0, offsets)
        arrived = persist(route(asks, meta, self.table.npartitions, self.method))
        check_moved(_rows(asks), _rows(arrived), "match lists asked for", self.method)
        answers = persist(
            [
                delayed(_answer)(part, lists)
                for part, lists in zip(arrived, self.parts, strict=True)
            ]
        )
        back = persist(route(answers, _answer_meta(), len(asked), self.method))
        check_moved(_rows(answers), _rows(back), "match lists", self.method)
        return back


def _rows(parts: list[Any]) -> int:
    """Rows of some persisted frames."""
    return int(sum(compute(*[delayed(_length)(part) for part in parts])))


def closed_share(graph: Graph) -> float | None:
    """Share of the two-step paths that a match closes (``MatchGraph.closed_share``).

    Each partition asks the lists of its records' matches that could close a
    path (both records with another match); the triangles add up.
    """
    paths, _ = graph.paths()
    if paths == 0:
        return None
    eligible = graph.at_least(2)
    asked = persist([delayed(_upper_asks)(part, eligible) for part in graph.parts])
    answers = graph.ask([delayed(_positions)(one) for one in asked])
    shared = compute(
        *[
            delayed(_shared_sum)(one, answer)
            for one, answer in zip(asked, answers, strict=True)
        ]
    )
    return 2.0 * float(sum(shared)) / float(paths)


@dataclass
class _Upper:
    """A partition's matches (a, b), a < b, whose records both have two matches."""

    first: npt.NDArray[np.int64]
    second: npt.NDArray[np.int64]
    own: Lists


def _upper_asks(lists: Lists, eligible: npt.NDArray[np.int64]) -> _Upper:
    first = np.repeat(lists.records, lists.degrees)
    second = lists.neighbours
    keep = (
        (first < second)
        & np.isin(first, eligible, assume_unique=False)
        & np.isin(second, eligible, assume_unique=False)
    )
    return _Upper(first[keep], second[keep], lists)


def _positions(upper: _Upper) -> npt.NDArray[np.int64]:
    """Return the records whose match lists the pairs need, each once."""
    return np.unique(np.concatenate([upper.first, upper.second]))


def _shared_sum(upper: _Upper, answers: pd.DataFrame) -> int:
    if not upper.first.size:
        return 0
    graph = asked_graph(_positions(upper), answers)
    return int(graph.shared(upper.first, upper.second).sum())


def through_pairs(
    lists: Lists, rows: int, offsets: npt.NDArray[np.int64]
) -> pd.DataFrame:
    """Pairs of records that match one same record of this partition.

    Each pair ``(x, z)``, ``x < z``, as the code ``x * rows + z``, to the
    partition of ``x`` (which holds the candidate pair ``(x, z)`` if there is
    one); repeats are removed there.
    """
    degrees = lists.degrees
    middle_elements = np.arange(lists.neighbours.size, dtype=np.int64)
    middle = np.repeat(np.arange(degrees.size, dtype=np.int64), degrees)
    which, partner = expand(
        middle_elements + 1, lists.offsets[middle + 1] - middle_elements - 1
    )
    low = lists.neighbours[middle_elements[which]]
    high = lists.neighbours[partner]
    codes = np.unique(low * np.int64(rows) + high)
    return pd.DataFrame(
        {
            _RECORD: codes,
            TARGET: _partition_of(codes // np.int64(max(rows, 1)), offsets),
        }
    )


def through_meta() -> pd.DataFrame:
    """Return an empty frame of :func:`through_pairs`."""
    return pd.DataFrame({_RECORD: _EMPTY, TARGET: _EMPTY})


def fresh_pairs(
    arrived: pd.DataFrame, part: pd.DataFrame, index: pd.Index, rows: int, owner: str
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Return the pairs through the matches that this partition does not hold.

    Sorted by first record, then second (``closing.through_matches``' order).
    """
    codes = np.unique(arrived[_RECORD].to_numpy(np.int64))
    first, second = pair_positions_of(part, index, owner)
    size = np.int64(max(rows, 1))
    held = np.minimum(first, second) * size + np.maximum(first, second)
    fresh = codes[~np.isin(codes, held)]
    low, high = np.divmod(fresh, size)
    return low, high
