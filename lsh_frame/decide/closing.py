"""Matches that close a cluster: pairs whose records share most of their matches.

Deduplicating, the copies of a record are copies of each other: a paper cited
in twenty styles, a person with ten records. Decided one at a time, a pair
can miss that. Two versions of a citation that differ in venue, year and
pages each match the same third and fourth citation clearly, yet sit below
the cut on their own scores. :func:`close` makes such a pair a match: it is a
candidate, and its two records share at least ``SHARED_AT_LEAST`` matched
records and at least ``SHARED_SHARE`` of the matches of the one with fewer.
The pair's records are then in one entity already
(:func:`lsh_frame.cluster` joins them through the records they share), so
the entities do not change: the pairs now say what the entities say.

That holds when the matches form clusters. When they do not (records with at
most one copy each, where a record with two matches is more often a
confusion than the middle of a cluster), closing would spread the
confusions. So ``transitive="auto"`` first reads the matches themselves:
of all two-step paths between matches (x matches y, y matches z), the share
that a match of x and z closes. At ``CLUSTERED_SHARE`` or more the matches
form clusters and the rule applies; labels and column names play no part.
Measured (benchmarks/HISTORY.md): 0.81-1.00 on tables with clusters (FEBRL3,
Cora, historical_50k, fake_1000, make_customers) and 0.30 on RLdata10000 with
its dates of birth, where closing made 23 false matches and no true one.

Blocking can miss a pair the rule would close: a person with fifteen records
written fifteen ways, whose records each resemble a few of the others well
enough to be found, and the rest too little. :func:`lsh_frame.pairs` therefore
looks once more, through the matches (iterative blocking: Whang, Menestrina,
Koutrika, Theobald and Garcia-Molina, *Entity resolution with iterative
blocking*, SIGMOD 2009): every pair of records that both match one same
record and are not candidates yet (:func:`through_matches`) is scored and
added, ``found_by`` :data:`THROUGH_MATCHES`. Only the rule decides such a
pair (:func:`decide_found`): its own probability was learned on the pairs
blocking found, and read alone it would take many look-alikes of the
middle record for copies.

Two tables (a link) have no such paths within one table; the rule is for
one table. Memory: the matched pairs (twice, as lists of neighbours, over the
matched records only) and a bounded slice of the candidates at a time; the
pairs found through the matches are counted before they are built.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame._kernels.ranges import expand
from lsh_frame._kernels.sets import SetTable
from lsh_frame.block.identical import found_identical
from lsh_frame.errors import ConfigError, ConfigTypeError

__all__ = [
    "CLUSTERED_SHARE",
    "SHARED_AT_LEAST",
    "SHARED_SHARE",
    "THROUGH_MATCHES",
    "TRANSITIVE_CHOICES",
    "MatchGraph",
    "Transitive",
    "check_transitive",
    "closable",
    "close",
    "closed_pairs",
    "closing",
    "decide",
    "decide_found",
    "decide_on",
    "found_pairs",
    "held_among",
    "pair_codes",
    "path_pairs",
    "through_matches",
]

Transitive = bool | Literal["auto"]

#: What ``transitive`` accepts.
TRANSITIVE_CHOICES = ("auto", True, False)
#: ``"auto"`` closes when at least this share of the two-step paths between
#: matches is closed by a match already.
CLUSTERED_SHARE = 0.5
#: A pair closes when its records share at least this many matched records ...
SHARED_AT_LEAST = 2
#: ... and at least this share of the matches of the record with fewer.
SHARED_SHARE = 0.5
#: ``found_by`` of a pair that :func:`lsh_frame.pairs` found through the
#: matches: its two records match one same record (:func:`through_matches`).
THROUGH_MATCHES = "through_matches"
#: Pairs of matched records built at a time by :func:`through_matches`.
ROUND_CHUNK = 1 << 22


def check_transitive(value: Any, owner: str, *, link: bool) -> Transitive:
    """Return the checked ``transitive`` option; True needs one table."""
    if isinstance(value, (bool, np.bool_)):
        value = bool(value)
    elif not (isinstance(value, str) and value == "auto"):
        error = ConfigError if isinstance(value, str) else ConfigTypeError
        raise error(
            f"The 'transitive' parameter of {owner} must be 'auto', True or False. "
            f"Got {value!r} instead."
        )
    if value is True and link:
        raise ConfigError(
            f"transitive=True in {owner} closes clusters of matches within one "
            "table; linking two tables has none. Leave it 'auto' or pass False."
        )
    return value


@dataclass(frozen=True)
class MatchGraph:
    """The matched pairs of one table, as each matched record's matched records.

    Only records with a match are held (``records``, sorted positions), so the
    graph's size follows the matches, not the table: ``neighbours[offsets[i] :
    offsets[i + 1]]`` are the sorted numbers (into ``records``) of the records
    that ``records[i]`` matches.
    """

    records: npt.NDArray[np.int64]
    offsets: npt.NDArray[np.int64]
    neighbours: npt.NDArray[np.int64]
    #: The same lists, ready for intersections (short ones compared directly).
    table: SetTable

    @classmethod
    def of(
        cls, first: npt.NDArray[np.int64], second: npt.NDArray[np.int64]
    ) -> MatchGraph:
        """Build the graph of matched pairs of records ``(first[i], second[i])``.

        Examples
        --------
        >>> graph = MatchGraph.of(np.array([0, 1, 0]), np.array([1, 2, 9]))
        >>> graph.degrees(np.array([0, 1, 2, 5, 9])).tolist()
        [2, 2, 1, 0, 1]
        """
        first = np.asarray(first, dtype=np.int64)
        second = np.asarray(second, dtype=np.int64)
        keep = first != second
        records = np.unique(np.concatenate([first[keep], second[keep]]))
        size = np.int64(records.size)
        low = np.searchsorted(records, np.minimum(first[keep], second[keep]))
        high = np.searchsorted(records, np.maximum(first[keep], second[keep]))
        # Each pair once, whichever way round it came (numbers below the
        # matched records' count, so the code cannot overflow).
        low, high = np.divmod(np.unique(low * size + high), size)
        source = np.concatenate([low, high])
        target = np.concatenate([high, low])
        order = np.lexsort((target, source))
        offsets = np.searchsorted(source[order], np.arange(size + 1)).astype(np.int64)
        neighbours = target[order]
        return cls(
            records,
            offsets,
            neighbours,
            SetTable.build(neighbours.astype(np.uint64), offsets),
        )

    def _numbers(
        self, positions: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
        """Each position's number in the graph, and whether it has a match."""
        number = np.searchsorted(self.records, positions)
        inside = number < self.records.size
        inside[inside] = self.records[number[inside]] == positions[inside]
        return np.where(inside, number, 0), inside

    def degrees(self, positions: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """How many records each record (by position) matches."""
        number, inside = self._numbers(np.asarray(positions, dtype=np.int64))
        # A record without a match reads the zero after the last count.
        counts = np.append(np.diff(self.offsets), 0)
        return counts[np.where(inside, number, counts.size - 1)]

    def shared(
        self, first: npt.NDArray[np.int64], second: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        """How many matched records ``first[i]`` and ``second[i]`` share.

        Both are record positions, as in :meth:`of`.
        """
        first_number, first_inside = self._numbers(np.asarray(first, dtype=np.int64))
        second_number, second_inside = self._numbers(np.asarray(second, dtype=np.int64))
        both = np.flatnonzero(first_inside & second_inside)
        result = np.zeros(first_number.size, dtype=np.int64)
        if both.size:
            result[both] = self.table.intersection_sizes(
                first_number[both], second_number[both]
            )
        return result

    def closed_share(self) -> float | None:
        """Share of the two-step paths between matches that a match closes.

        None when no record has two matches (there is no such path).

        Examples
        --------
        >>> MatchGraph.of(np.array([0, 1, 0]), np.array([1, 2, 2])).closed_share()
        1.0
        >>> MatchGraph.of(np.array([0, 1]), np.array([1, 2])).closed_share()
        0.0
        """
        counts = np.diff(self.offsets)
        degrees = counts.astype(np.float64)
        paths = float(np.sum(degrees * (degrees - 1)))
        if paths == 0:
            return None
        source = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
        # A pair closes paths only when both its records have another match.
        upper = (source < self.neighbours) & (
            np.minimum(counts[source], counts[self.neighbours]) >= 2
        )
        # Each triangle closes six ordered paths; each matched pair (once) is
        # in as many triangles as the records it shares with its partner.
        shared = self.table.intersection_sizes(source[upper], self.neighbours[upper])
        return 2.0 * float(shared.sum()) / paths


def decide(rule: Transitive, *, link: bool, graph: MatchGraph | None) -> dict[str, Any]:
    """Return whether the rule applies, and why (``attrs["transitive"]``).

    ``graph`` is None when the matches were not decided by the library (a
    ``min_score`` the caller gave), which ``"auto"`` leaves as they are.
    """
    return decide_on(
        rule, link=link, closed_share=None if graph is None else graph.closed_share
    )


def decide_on(
    rule: Transitive,
    *,
    link: bool,
    closed_share: Callable[[], float | None] | None,
) -> dict[str, Any]:
    """Return whether the rule applies, from the matches' closed share.

    ``closed_share`` computes :meth:`MatchGraph.closed_share` (asked only when
    the rule may apply: a partitioned graph adds it up over its parts); None
    when the library did not decide the matches.
    """
    info: dict[str, Any] = {"rule": rule, "applied": False, "closed_share": None}
    if link:
        return {**info, "reason": "two tables: no clusters within one table"}
    if rule is False:
        return {**info, "reason": "transitive=False"}
    if closed_share is None:
        return {
            **info,
            "reason": "the caller's min_score decided the matches (pass "
            "transitive=True to close them)",
        }
    share = closed_share()
    info["closed_share"] = None if share is None else round(share, 4)
    if share is None:
        return {**info, "applied": rule is True, "reason": "no record has two matches"}
    described = (
        f"{share:.0%} of the two-step paths between matches are closed by a match"
    )
    if rule is True:
        return {**info, "applied": True, "reason": f"transitive=True; {described}"}
    if share >= CLUSTERED_SHARE:
        return {
            **info,
            "applied": True,
            "reason": f"the matches form clusters: {described} "
            f"(at least {CLUSTERED_SHARE:.0%})",
        }
    return {
        **info,
        "reason": f"the matches do not form clusters: only {described} "
        f"(under {CLUSTERED_SHARE:.0%})",
    }


def closing(
    graph: MatchGraph,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    match: npt.NDArray[np.bool_],
    closable: npt.NDArray[np.bool_] | None = None,
) -> npt.NDArray[np.bool_]:
    """Which unmatched pairs ``(first[i], second[i])`` the shared matches close.

    ``closable`` (default: every pair) leaves out the pairs that the decision
    refused for a reason of their own (see :func:`closable`).
    """
    degrees = np.minimum(graph.degrees(first), graph.degrees(second))
    candidates = ~match & (degrees >= SHARED_AT_LEAST) & (first != second)
    if closable is not None:
        candidates &= closable
    asked = np.flatnonzero(candidates)
    result = np.zeros(match.size, dtype=bool)
    if asked.size:
        shared = graph.shared(first[asked], second[asked])
        result[asked] = (shared >= SHARED_AT_LEAST) & (
            shared >= SHARED_SHARE * degrees[asked]
        )
    return result


def path_pairs(graph: MatchGraph) -> int:
    """How many pairs :func:`through_matches` builds, repeats included.

    A record with ``d`` matches makes ``d * (d - 1) / 2`` pairs of them; a pair
    two matches apart through several records is counted once for each.

    Examples
    --------
    >>> path_pairs(MatchGraph.of(np.array([0, 0, 0]), np.array([1, 2, 3])))
    3
    """
    counts = np.diff(graph.offsets)
    return int(np.sum(counts * (counts - 1) // 2))


def through_matches(
    graph: MatchGraph,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Record positions of the pairs whose two records match one same record.

    Each pair once, ``first < second``, sorted by ``first`` then ``second``;
    matched pairs among them too (the caller leaves out the pairs it has).
    The caller counts them first (:func:`path_pairs`); they are built a slice
    of middle records at a time (about ``ROUND_CHUNK`` at once).

    Examples
    --------
    >>> graph = MatchGraph.of(np.array([5, 5, 7]), np.array([7, 9, 8]))
    >>> [position.tolist() for position in through_matches(graph)]
    [[5, 7], [8, 9]]
    """
    counts = np.diff(graph.offsets)
    size = np.int64(graph.records.size)
    paths = np.cumsum(counts * (counts - 1) // 2)
    codes = [np.empty(0, np.int64)]
    start = 0
    while start < counts.size:
        before = paths[start - 1] if start else 0
        stop = max(
            start + 1, int(np.searchsorted(paths, before + ROUND_CHUNK, side="right"))
        )
        # Each matched record of a middle record pairs with those after it in
        # the middle's sorted list.
        element = np.arange(graph.offsets[start], graph.offsets[stop], dtype=np.int64)
        middle = np.repeat(np.arange(start, stop, dtype=np.int64), counts[start:stop])
        which, partner = expand(element + 1, graph.offsets[middle + 1] - element - 1)
        low = graph.neighbours[element[which]]
        codes.append(np.unique(low * size + graph.neighbours[partner]))
        start = stop
    low, high = np.divmod(np.unique(np.concatenate(codes)), size)
    return graph.records[low], graph.records[high]


def pair_codes(
    first: npt.NDArray[np.int64], second: npt.NDArray[np.int64], records: int
) -> npt.NDArray[np.int64]:
    """One number per unordered pair of record positions (of ``records``).

    Examples
    --------
    >>> pair_codes(np.array([3, 1]), np.array([1, 3]), 10).tolist()
    [13, 13]
    """
    size = np.int64(records)
    return np.minimum(first, second) * size + np.maximum(first, second)


def held_among(
    codes: npt.NDArray[np.int64], held: npt.NDArray[np.int64]
) -> npt.NDArray[np.bool_]:
    """Which of the sorted, distinct ``codes`` occur in ``held`` (any order).

    One binary search per held code: the pairs found through the matches are
    few beside the candidates, which need no sorting.

    Examples
    --------
    >>> held_among(np.array([3, 8, 9]), np.array([9, 1, 3, 3])).tolist()
    [True, False, True]
    """
    found = np.zeros(codes.size, dtype=bool)
    if codes.size:
        at = np.minimum(np.searchsorted(codes, held), codes.size - 1)
        found[at[codes[at] == held]] = True
    return found


def found_pairs(
    scored: pd.DataFrame,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
) -> MatchGraph:
    """Return the graph the rule read when it decided ``scored`` (one table).

    ``first`` and ``second`` are the pairs' record positions. The matches
    before closing: closed pairs (:func:`closed_pairs`) and identical copies
    are left out, as :func:`close` left them out.
    """
    counted = (
        scored["match"].fillna(False).to_numpy(dtype=bool)
        & ~closed_pairs(scored)
        & ~found_identical(scored)
    )
    return MatchGraph.of(first[counted], second[counted])


def decide_found(
    graph: MatchGraph,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    probability: npt.NDArray[np.float64] | None,
    own: npt.NDArray[np.bool_],
    match_cut: float | None,
) -> npt.NDArray[np.bool_]:
    """Which pairs found through the matches are matches: those the rule closes.

    ``own`` is each pair's own decision, which does not count: the model's
    prior was learned on the pairs blocking found, and these were chosen for
    sharing a match, not for looking alike. A pair the decision refused
    although its probability reached the cut (every field it has differs)
    stays refused, as :func:`closable` keeps it.
    """
    refused = np.zeros(first.size, dtype=bool)
    if probability is not None and match_cut is not None:
        refused = (probability >= match_cut) & ~own
    unmatched = np.zeros(first.size, dtype=bool)
    return closing(graph, first, second, unmatched, ~refused)


def closable(
    probability: npt.NDArray[np.float64] | None,
    match_cut: float | None,
    identical: npt.NDArray[np.bool_],
) -> npt.NDArray[np.bool_]:
    """Which pairs the rule may make matches (``closable`` of :func:`close`).

    Closing only ever adds a pair that its probability left below the match
    cut: one at or above it is unmatched because every field it has says it
    differs (``MatchModel.speaks_for``), and stays so. An identical copy is
    a match already.
    """
    result = ~np.asarray(identical, dtype=bool)
    if probability is not None and match_cut is not None:
        result &= ~(probability >= match_cut)
    return result


def close(
    rule: Transitive,
    *,
    link: bool,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    match: npt.NDArray[np.bool_],
    decided_here: bool = True,
    identical: npt.NDArray[np.bool_] | None = None,
    closable: npt.NDArray[np.bool_] | None = None,
) -> tuple[npt.NDArray[np.bool_], dict[str, Any]]:
    """Return the matches with the closing pairs added, and the record of it.

    ``first`` and ``second`` are the pairs' record positions;
    ``decided_here`` is False when the caller's ``min_score`` decided the
    matches (``"auto"`` then leaves them). ``identical`` marks the pairs of a
    large group of identical copies (:mod:`lsh_frame.block.identical`): they come
    as a star, one copy paired with each other copy, whose two-step paths are
    never closed, so the graph leaves them out and reads the group as the one
    record it is. ``closable`` (see :func:`closable`) marks the pairs that
    may become matches (default: every pair).

    Examples
    --------
    >>> first, second = np.array([0, 0, 1, 1, 2, 0]), np.array([1, 2, 2, 3, 3, 3])
    >>> match = np.array([True, True, True, True, True, False])
    >>> closed, info = close("auto", link=False, first=first, second=second,
    ...                      match=match)
    >>> closed.tolist(), info["applied"], info["added"]
    ([True, True, True, True, True, True], True, 1)
    """
    counted = match if identical is None else match & ~identical
    graph = (
        MatchGraph.of(first[counted], second[counted])
        if not link and rule is not False and (decided_here or rule is True)
        else None
    )
    info = decide(rule, link=link, graph=graph)
    if not info["applied"] or graph is None:
        return match, {**info, "added": 0}
    added = closing(graph, first, second, match, closable)
    return match | added, {**info, "added": int(added.sum())}


def closed_pairs(scored: pd.DataFrame) -> npt.NDArray[np.bool_]:
    """Which matches of scored pairs their clusters closed (by their ``attrs``).

    A closed pair is a match the rule added, in pairs whose
    ``attrs["lsh_frame"]["transitive"]`` says it added some: a match below
    the model's match cut (without a model: a match whose ``score`` is below
    the ``min_score`` that decided), or any match found through the matches
    (``found_by`` :data:`THROUGH_MATCHES`); an identical copy, certain, is
    never one. :func:`lsh_frame.cluster` leaves them out: they join records
    the other matches join already, and would make an entity chained through
    a few matches look dense. Without those ``attrs`` (a frame rebuilt from
    its columns) no pair counts as closed: the components are the same
    either way.
    """
    closed = np.zeros(len(scored), dtype=bool)
    found = scored.attrs.get("lsh_frame", {})
    info = found.get("transitive") if isinstance(found, dict) else None
    model = found.get("model") if isinstance(found, dict) else None
    if not isinstance(info, dict) or not info.get("added") or "match" not in scored:
        return closed
    match = scored["match"].fillna(False).to_numpy(dtype=bool)
    if "found_by" in scored.columns:
        closed |= match & (scored["found_by"] == THROUGH_MATCHES).to_numpy(
            dtype=bool, na_value=False
        )
    if (
        isinstance(model, dict)
        and "match_cut" in model
        and "match_probability" in scored.columns
    ):
        probability = scored["match_probability"].to_numpy(
            dtype=np.float64, na_value=np.nan
        )
        closed |= match & (probability < float(model["match_cut"]))
    elif isinstance(found.get("min_score"), (int, float)) and "score" in scored:
        # No model: the matches were score >= the cut, and closing added pairs
        # below it (a missing score is below every cut).
        score = scored["score"].to_numpy(dtype=np.float64, na_value=np.nan)
        closed |= match & ~(score >= float(found["min_score"]))
    return closed & ~found_identical(scored)
