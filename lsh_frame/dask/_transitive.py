"""Closing clusters of matches on Dask: decided once, on the client, over all matches.

Which pairs close depends on every match of their records, in any partition.
The matched pairs are few compared with the candidates, so their record
positions are gathered on the client into one
:class:`lsh_frame.decide.closing.MatchGraph`, and the rule is decided there as
pandas decides it. Each partition then asks the graph (sent to every worker
once) which of its own unmatched pairs close. The result equals pandas'.

The pairs found through the matches (``pairs`` only, see
:mod:`lsh_frame.decide.closing`) start from the same graph: the client lists the
pairs two matches apart, each partition says which of them it holds already,
and the rest are scored as one more partition and decided on the client.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed

from lsh_frame._validation import pair_positions
from lsh_frame.block.identical import found_identical
from lsh_frame.dask._one_to_one import with_match
from lsh_frame.dask._tables import Table, compute, shared
from lsh_frame.decide.closing import (
    MatchGraph,
    Transitive,
    closable,
    closed_pairs,
    closing,
    decide,
    held_among,
    pair_codes,
    through_matches,
)


def _pair_positions(
    part: pd.DataFrame, index: pd.Index, owner: str
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    return (
        pair_positions(part["left"], index, "left", owner),
        pair_positions(part["right"], index, "right", owner),
    )


def _closing_rows(
    part: pd.DataFrame,
    graph: MatchGraph,
    index: pd.Index,
    owner: str,
    match_cut: float | None,
) -> npt.NDArray[np.int64]:
    first, second = _pair_positions(part, index, owner)
    probability = (
        part["match_probability"].to_numpy(dtype=np.float64, na_value=np.nan)
        if "match_probability" in part.columns
        else None
    )
    match = part["match"].to_numpy(dtype=bool)
    open_ = closable(probability, match_cut, found_identical(part))
    return np.flatnonzero(closing(graph, first, second, match, open_))


def transitive_parts(
    decided: list[Any],
    table: Table,
    rule: Transitive,
    attrs: dict[str, Any],
    owner: str,
    *,
    decided_here: bool,
    match_cut: float | None,
) -> tuple[list[Any], dict[str, Any]]:
    """Decided pair partitions of one table after closing, and the new attrs.

    ``decided`` are decided pair partitions (persisted when the rule may
    apply); ``decided_here`` is False when the caller's ``min_score`` decided
    them; ``match_cut`` is the deciding model's (None without one).
    """
    nothing = [np.empty(0, np.int64)] * len(decided)
    if rule is False or not (decided_here or rule is True):
        info, rows = decide(rule, link=False, graph=None), nothing
    else:
        index = shared(table.index)
        # Nothing is closed yet: the decided matches, identical copies aside.
        graph = round_graph(decided, index, owner)
        info = decide(rule, link=False, graph=graph)
        rows = nothing
        if info["applied"]:
            sent = shared(graph)
            rows = list(
                compute(
                    *[
                        delayed(_closing_rows)(p, sent, index, owner, match_cut)
                        for p in decided
                    ]
                )
            )
    added = int(sum(part_rows.size for part_rows in rows))
    attrs = {**attrs, "transitive": {**info, "added": added}}
    closed = [
        delayed(with_match)(part, part_rows, True, attrs)
        for part, part_rows in zip(decided, rows, strict=True)
    ]
    return closed, attrs


def _counted_positions(
    part: pd.DataFrame, index: pd.Index, owner: str
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Return the matches the rule read (see ``transitive.found_pairs``)."""
    match = part["match"].to_numpy(dtype=bool)
    counted = match & ~closed_pairs(part) & ~found_identical(part)
    return _pair_positions(part[counted], index, owner)


def _held(
    part: pd.DataFrame, index: pd.Index, owner: str, codes: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Positions in the sorted pair ``codes`` of those the partition holds."""
    own = pair_codes(*_pair_positions(part, index, owner), len(index))
    return np.flatnonzero(held_among(codes, own))


def round_graph(parts: list[Any], index: Any, owner: str) -> MatchGraph:
    """Return the graph of the matches the rule read, over every partition.

    ``index``: the table's labels, shared with the workers (``shared``).
    """
    matched = compute(*[delayed(_counted_positions)(p, index, owner) for p in parts])
    return MatchGraph.of(
        np.concatenate([first for first, _ in matched]),
        np.concatenate([second for _, second in matched]),
    )


def new_pairs(
    parts: list[Any], index: Any, rows: int, graph: MatchGraph, owner: str
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Positions of the pairs through the matches that no partition holds.

    ``index``: the table's labels of ``rows`` records, shared with the workers.
    """
    first, second = through_matches(graph)
    codes = pair_codes(first, second, rows)
    sent = shared(codes)
    held = compute(*[delayed(_held)(p, index, owner, sent) for p in parts])
    fresh = np.ones(codes.size, dtype=bool)
    for found in held:
        fresh[found] = False
    return first[fresh], second[fresh]
