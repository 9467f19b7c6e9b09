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
Measured (benchmarks/README.md): 0.81-1.00 on tables with clusters (FEBRL3,
Cora, historical_50k, fake_1000, make_customers) and 0.30 on RLdata10000 with
its dates of birth, where closing made 23 false matches and no true one.

Two tables (a link) have no such paths within one table; the rule is for
one table. Memory: the matched pairs (twice, as lists of neighbours) and a
bounded slice of the candidates at a time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame._kernels.sets import SetTable
from lsh_frame.errors import ConfigError, ConfigTypeError
from lsh_frame.identical import IDENTICAL

__all__ = [
    "CLUSTERED_SHARE",
    "SHARED_AT_LEAST",
    "SHARED_SHARE",
    "TRANSITIVE_CHOICES",
    "MatchGraph",
    "Transitive",
    "check_transitive",
    "close",
    "closed_pairs",
    "closing",
    "decide",
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
    """The matched pairs of one table, as each record's sorted matched records.

    Records are positions ``0 .. records - 1``; ``neighbours[offsets[r] :
    offsets[r + 1]]`` are the records ``r`` matches.
    """

    offsets: npt.NDArray[np.int64]
    neighbours: npt.NDArray[np.int64]
    #: The same lists, ready for intersections (short ones compared directly).
    table: SetTable

    @classmethod
    def of(
        cls,
        first: npt.NDArray[np.int64],
        second: npt.NDArray[np.int64],
        records: int,
    ) -> MatchGraph:
        """Build the graph of matched pairs ``(first[i], second[i])``.

        Examples
        --------
        >>> graph = MatchGraph.of(np.array([0, 1, 0]), np.array([1, 2, 2]), 4)
        >>> graph.degrees.tolist()
        [2, 2, 2, 0]
        """
        first = np.asarray(first, dtype=np.int64)
        second = np.asarray(second, dtype=np.int64)
        records = int(records)
        keep = first != second
        # Each pair once, whichever way round it came.
        codes = np.unique(
            np.minimum(first[keep], second[keep]) * records
            + np.maximum(first[keep], second[keep])
        )
        low, high = np.divmod(codes, records)
        source = np.concatenate([low, high])
        target = np.concatenate([high, low])
        order = np.lexsort((target, source))
        offsets = np.searchsorted(source[order], np.arange(records + 1)).astype(
            np.int64
        )
        neighbours = target[order]
        return cls(
            offsets, neighbours, SetTable.build(neighbours.astype(np.uint64), offsets)
        )

    @property
    def degrees(self) -> npt.NDArray[np.int64]:
        """How many records each record matches."""
        return np.diff(self.offsets)

    def shared(
        self, first: npt.NDArray[np.int64], second: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        """How many matched records ``first[i]`` and ``second[i]`` share."""
        return self.table.intersection_sizes(first, second)

    def closed_share(self) -> float | None:
        """Share of the two-step paths between matches that a match closes.

        None when no record has two matches (there is no such path).

        Examples
        --------
        >>> MatchGraph.of(np.array([0, 1, 0]), np.array([1, 2, 2]), 3).closed_share()
        1.0
        >>> MatchGraph.of(np.array([0, 1]), np.array([1, 2]), 3).closed_share()
        0.0
        """
        degrees = self.degrees.astype(np.float64)
        paths = float(np.sum(degrees * (degrees - 1)))
        if paths == 0:
            return None
        source = np.repeat(np.arange(degrees.size, dtype=np.int64), self.degrees)
        # A pair closes paths only when both its records have another match.
        upper = (source < self.neighbours) & (
            np.minimum(degrees[source], degrees[self.neighbours]) >= 2
        )
        # Each triangle closes six ordered paths; each matched pair (once) is
        # in as many triangles as the records it shares with its partner.
        closed = 2.0 * float(self.shared(source[upper], self.neighbours[upper]).sum())
        return closed / paths


def decide(rule: Transitive, *, link: bool, graph: MatchGraph | None) -> dict[str, Any]:
    """Return whether the rule applies, and why (``attrs["transitive"]``).

    ``graph`` is None when the matches were not decided by the library (a
    ``min_score`` the caller gave), which ``"auto"`` leaves as they are.
    """
    info: dict[str, Any] = {"rule": rule, "applied": False, "closed_share": None}
    if link:
        return {**info, "reason": "two tables: no clusters within one table"}
    if rule is False:
        return {**info, "reason": "transitive=False"}
    if graph is None:
        return {
            **info,
            "reason": "the caller's min_score decided the matches (pass "
            "transitive=True to close them)",
        }
    share = graph.closed_share()
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
) -> npt.NDArray[np.bool_]:
    """Which unmatched pairs ``(first[i], second[i])`` the shared matches close."""
    degrees = graph.degrees
    lower = np.minimum(degrees[first], degrees[second])
    asked = np.flatnonzero(~match & (lower >= SHARED_AT_LEAST) & (first != second))
    result = np.zeros(match.size, dtype=bool)
    if asked.size:
        shared = graph.shared(first[asked], second[asked])
        result[asked] = (shared >= SHARED_AT_LEAST) & (
            shared >= SHARED_SHARE * lower[asked]
        )
    return result


def close(
    rule: Transitive,
    *,
    link: bool,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    match: npt.NDArray[np.bool_],
    records: int,
    decided_here: bool = True,
) -> tuple[npt.NDArray[np.bool_], dict[str, Any]]:
    """Return the matches with the closing pairs added, and the record of it.

    ``first`` and ``second`` are the pairs' record positions in a table of
    ``records`` rows; ``decided_here`` is False when the caller's
    ``min_score`` decided the matches (``"auto"`` then leaves them).

    Examples
    --------
    >>> first, second = np.array([0, 0, 1, 1, 2, 0]), np.array([1, 2, 2, 3, 3, 3])
    >>> match = np.array([True, True, True, True, True, False])
    >>> closed, info = close("auto", link=False, first=first, second=second,
    ...                      match=match, records=4)
    >>> closed.tolist(), info["applied"], info["added"]
    ([True, True, True, True, True, True], True, 1)
    """
    graph = (
        MatchGraph.of(first[match], second[match], records)
        if not link and rule is not False and (decided_here or rule is True)
        else None
    )
    info = decide(rule, link=link, graph=graph)
    if not info["applied"] or graph is None:
        return match, {**info, "added": 0}
    added = closing(graph, first, second, match)
    return match | added, {**info, "added": int(added.sum())}


def closed_pairs(scored: pd.DataFrame) -> npt.NDArray[np.bool_]:
    """Which matches of scored pairs their clusters closed (by their ``attrs``).

    A closed pair is a match below the model's match cut, in pairs whose
    ``attrs["lsh_frame"]["transitive"]`` says the rule added matches (an
    identical copy, certain, is never one). :func:`lsh_frame.cluster` leaves
    them out: they join records the other matches join already, and would
    make an entity chained through a few matches look dense. Without those
    ``attrs`` (a frame rebuilt from its columns) no pair counts as closed.
    """
    closed = np.zeros(len(scored), dtype=bool)
    found = scored.attrs.get("lsh_frame", {})
    info = found.get("transitive") if isinstance(found, dict) else None
    model = found.get("model") if isinstance(found, dict) else None
    if (
        not isinstance(info, dict)
        or not info.get("added")
        or not isinstance(model, dict)
        or "match_cut" not in model
        or "match" not in scored.columns
        or "match_probability" not in scored.columns
    ):
        return closed
    probability = scored["match_probability"].to_numpy(
        dtype=np.float64, na_value=np.nan
    )
    closed = scored["match"].fillna(False).to_numpy(dtype=bool) & (
        probability < float(model["match_cut"])
    )
    if "found_by" in scored.columns:
        closed &= (scored["found_by"] != IDENTICAL).to_numpy(dtype=bool)
    return closed
