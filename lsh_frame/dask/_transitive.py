"""Closing clusters of matches on Dask: decided on the workers, over all matches.

Which pairs close depends on every match of their records, in any partition.
The matches are held by the partitions of their records
(:class:`lsh_frame.dask._graph.Graph`); whether the rule applies is read from
counts that add up over them (two-step paths and the matches closing them);
each pair partition then asks for the match lists of the records of its pairs
that could close, and decides them with pandas' own function
(:func:`lsh_frame.decide.closing.closing`). The result equals pandas'; the
client sees counts only.

The pairs found through the matches (``pairs`` only, see
:mod:`lsh_frame.decide.closing`) start from the same graph: each partition
lists the pairs of its records' matches and sends each to the partition of
its first record, which keeps those its candidates do not hold. They are
scored as more pair partitions (one per partition of the table) and decided
by the rule alone, on the workers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed

from lsh_frame.block.identical import found_identical
from lsh_frame.dask._graph import (
    Graph,
    asked_graph,
    closed_share,
    fresh_pairs,
    pair_positions_of,
    through_meta,
    through_pairs,
)
from lsh_frame.dask._keys import LEFT_POSITION, RIGHT_POSITION
from lsh_frame.dask._one_to_one import with_match
from lsh_frame.dask._tables import Table, check_moved, compute, persist, route, shared
from lsh_frame.decide.closing import (
    SHARED_AT_LEAST,
    THROUGH_MATCHES,
    Transitive,
    closable,
    closing,
    decide_on,
)
from lsh_frame.decide.through_matches import round_decision, round_frame

if TYPE_CHECKING:
    from lsh_frame.decide.model import MatchModel

_EMPTY = np.empty(0, dtype=np.int64)


@dataclass
class _Closable:
    """A partition's pairs that may close: their rows and records."""

    rows: npt.NDArray[np.int64]
    first: npt.NDArray[np.int64]
    second: npt.NDArray[np.int64]


def _closable(
    part: pd.DataFrame,
    index: pd.Index,
    owner: str,
    match_cut: float | None,
    eligible: npt.NDArray[np.int64],
) -> _Closable:
    """Return the unmatched pairs the rule may close (two matches each side)."""
    first, second = pair_positions_of(part, index, owner)
    probability = (
        part["match_probability"].to_numpy(dtype=np.float64, na_value=np.nan)
        if "match_probability" in part.columns
        else None
    )
    match = part["match"].to_numpy(dtype=bool)
    may = (
        ~match
        & closable(probability, match_cut, found_identical(part))
        & (first != second)
        & np.isin(first, eligible)
        & np.isin(second, eligible)
    )
    rows = np.flatnonzero(may)
    return _Closable(rows, first[rows], second[rows])


def _asked(pairs: Any) -> npt.NDArray[np.int64]:
    """Return the records whose match lists some pairs need, each once."""
    return np.unique(np.concatenate([pairs.first, pairs.second]))


def _closing_rows(pairs: _Closable, answers: pd.DataFrame) -> npt.NDArray[np.int64]:
    """Rows of the pairs that close, decided as pandas decides them."""
    graph = asked_graph(_asked(pairs), answers)
    unmatched = np.zeros(pairs.rows.size, dtype=bool)
    return pairs.rows[closing(graph, pairs.first, pairs.second, unmatched)]


def _length(values: Any) -> int:
    return len(values)


def transitive_parts(
    decided: list[Any],
    table: Table,
    rule: Transitive,
    attrs: dict[str, Any],
    owner: str,
    *,
    decided_here: bool,
    match_cut: float | None,
    method: str,
) -> tuple[list[Any], dict[str, Any]]:
    """Decided pair partitions of one table after closing, and the new attrs.

    ``decided`` are decided pair partitions (persisted when the rule may
    apply); ``decided_here`` is False when the caller's ``min_score`` decided
    them; ``match_cut`` is the deciding model's (None without one).
    """
    rows: list[Any] = [_EMPTY] * len(decided)
    added = 0
    if rule is False or not (decided_here or rule is True):
        info = decide_on(rule, link=False, closed_share=None)
    else:
        index = shared(table.index)
        # Nothing is closed yet: the decided matches, identical copies aside.
        graph = Graph.of(decided, index, table, method, owner)
        info = decide_on(rule, link=False, closed_share=lambda: closed_share(graph))
        if info["applied"]:
            eligible = graph.at_least(SHARED_AT_LEAST)
            pairs = persist(
                [
                    delayed(_closable)(part, index, owner, match_cut, eligible)
                    for part in decided
                ]
            )
            answers = graph.ask([delayed(_asked)(one) for one in pairs])
            rows = persist(
                [
                    delayed(_closing_rows)(one, answer)
                    for one, answer in zip(pairs, answers, strict=True)
                ]
            )
            added = int(sum(compute(*[delayed(_length)(part) for part in rows])))
    attrs = {**attrs, "transitive": {**info, "added": added}}
    closed = [
        delayed(with_match)(part, part_rows, True, attrs)
        for part, part_rows in zip(decided, rows, strict=True)
    ]
    return closed, attrs


@dataclass
class Through:
    """The pairs through the matches, one part per partition of the table."""

    graph: Graph
    parts: list[Any]  # (first, second) positions, sorted
    lengths: npt.NDArray[np.int64]


def _first_of(pairs: tuple[Any, Any]) -> Any:
    return pairs[0]


def _count(pairs: tuple[Any, Any]) -> int:
    return len(pairs[0])


def _both(pairs: tuple[Any, Any]) -> npt.NDArray[np.int64]:
    """Return the records of some pairs, each once (their lists are asked)."""
    return np.unique(np.concatenate(pairs))


def through_graph(parts: list[Any], table: Table, method: str, owner: str) -> Graph:
    """Return the graph of the matches the rule read, from decided and closed parts."""
    return Graph.of(parts, shared(table.index), table, method, owner)


def new_pairs(parts: list[Any], table: Table, graph: Graph, owner: str) -> Through:
    """Positions of the pairs through the matches that no partition holds.

    ``parts`` are the table's pair partitions, one per partition of the table
    (a candidate pair sits in the partition of its first record). The caller
    counts them first (:meth:`Graph.paths`).
    """
    index = shared(table.index)
    offsets = table.offsets
    listed = persist(
        [delayed(through_pairs)(lists, table.rows, offsets) for lists in graph.parts]
    )
    sent = int(sum(compute(*[delayed(_length)(part) for part in listed])))
    routed = persist(route(listed, through_meta(), table.npartitions, graph.method))
    received = int(sum(compute(*[delayed(_length)(part) for part in routed])))
    check_moved(sent, received, "pairs through the matches", graph.method)
    fresh = persist(
        [
            delayed(fresh_pairs)(arrived, part, index, table.rows, owner)
            for arrived, part in zip(routed, parts, strict=True)
        ]
    )
    lengths = np.array(
        compute(*[delayed(_count)(one) for one in fresh]), dtype=np.int64
    )
    return Through(graph, fresh, lengths)


def pair_frame(
    pairs: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    index: pd.Index,
    start: int,
) -> pd.DataFrame:
    """Return one partition's pairs through the matches, to score.

    Rows numbered from ``start``, with the records' positions.
    """
    first, second = pairs
    return pd.DataFrame(
        {
            "left": index[first],
            "right": index[second],
            "found_by": THROUGH_MATCHES,
            LEFT_POSITION: first,
            RIGHT_POSITION: second,
        },
        index=pd.RangeIndex(start, start + first.size),
    )


def _decided_round(
    found: pd.DataFrame,
    pairs: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    answers: pd.DataFrame,
    decider: MatchModel | float,
    meta: pd.DataFrame,
    categories: pd.Index | None,
) -> pd.DataFrame:
    """One partition's scored pairs through the matches, decided by the rule."""
    graph = asked_graph(_both(pairs), answers)
    match = round_decision(graph, pairs[0], pairs[1], found, decider)
    return round_frame(meta, found, match, categories)


def _matches(part: pd.DataFrame) -> int:
    return int(part["match"].sum())


def decided_rounds(
    through: Through,
    found: list[Any],
    decider: MatchModel | float,
    meta: pd.DataFrame,
    categories: pd.Index | None,
) -> tuple[list[Any], int]:
    """Decide the scored pairs through the matches by the rule; count the matches."""
    answers = through.graph.ask([delayed(_both)(one) for one in through.parts])
    decided = persist(
        [
            delayed(_decided_round)(part, pairs, answer, decider, meta, categories)
            for part, pairs, answer in zip(found, through.parts, answers, strict=True)
        ]
    )
    closed = int(sum(compute(*[delayed(_matches)(part) for part in decided])))
    return decided, closed
