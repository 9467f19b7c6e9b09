"""One-to-one links: each record matches at most one record of the other table.

When each of two tables holds one record per entity (a product catalogue
against another, two film databases), a record that matches several records
of the other table has at most one true partner; the others are confusions.
:func:`choose` keeps, among the matched pairs, the greedy one-to-one choice
(most likely first, see :func:`match_rank`) and unmatches the rest.

``one_to_one="auto"`` decides from the data whether that holds. Several
matches of one record mean either a confusion (its best matches are different
entities) or duplicates in the other table (its best matches are the same
entity). So for every record with several matches, its two best matches, two
records of the *other* table, are scored against each other with the same
fields and decided by the same decision (the learned model, or the cut on
``score``). They count as duplicates when that makes them a match as strong
as a typical match: at least the lower quartile of the link's matches'
``score`` (not ``match_probability``, which saturates near 1 with a good
model, where a quartile says nothing). The decision alone cannot
tell: a confusion R2 of a record L whose true partner R1 is nearly L is as
close to R1 as to L, so whatever let L-R2 in lets R1-R2 in too; but it sits
at the bottom of the matches, where true duplicates seldom do. When fewer
than half of those pairs are duplicates, dropping the weaker matches removes
more confusions than it loses true matches, and the one-to-one choice
applies. Labels and column names play no part. The cost is bounded: at most
one pair per record with several matches is scored.

This module decides; how a pair of records of one table is scored and decided
is passed in (a function), so that pandas and Dask share the rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt

from lsh_frame._kernels.neighbours import run_starts
from lsh_frame.errors import ConfigError, ConfigTypeError

if TYPE_CHECKING:
    from lsh_frame.compare.plan import ScorePlan

__all__ = [
    "ONE_TO_ONE_CHOICES",
    "TYPICAL_MATCH_QUANTILE",
    "OneToOne",
    "choose",
    "match_rank",
    "one_to_one_edges",
]

OneToOne = bool | Literal["auto"]

#: What ``one_to_one`` accepts.
ONE_TO_ONE_CHOICES = ("auto", True, False)

#: A pair of best matches counts as duplicates when it is as strong as a
#: typical match: at least this quantile of the matches' strength.
TYPICAL_MATCH_QUANTILE = 0.25

#: Decides pairs of records of one table (``"left"`` or ``"right"``) given by
#: their positions in that table, as the link decided its pairs: ``match``,
#: ``match_probability`` (None without a model) and ``score`` of each.
Decided = tuple[
    npt.NDArray[np.bool_], npt.NDArray[np.float64] | None, npt.NDArray[np.float64]
]
WithinTable = Callable[[str, npt.NDArray[np.int64], npt.NDArray[np.int64]], Decided]


def check_one_to_one(value: Any, owner: str, *, link: bool) -> OneToOne:
    """Return the checked ``one_to_one`` option; True needs two tables."""
    if isinstance(value, (bool, np.bool_)):
        value = bool(value)
    elif not (isinstance(value, str) and value == "auto"):
        error = ConfigError if isinstance(value, str) else ConfigTypeError
        raise error(
            f"The 'one_to_one' parameter of {owner} must be 'auto', True or False. "
            f"Got {value!r} instead."
        )
    if value is True and not link:
        raise ConfigError(
            f"{owner} got one_to_one=True without a second table: a record can only "
            "match at most one record of another table. Pass other= to link two "
            "tables, or leave one_to_one out when deduplicating one table."
        )
    return value


def match_rank(
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    probability: npt.NDArray[np.float64] | None,
    score: npt.NDArray[np.float64],
) -> npt.NDArray[np.int64]:
    """Rank of each pair, 0 for the best: most likely, highest score, row order.

    ``left`` and ``right`` are the records' positions in their tables; missing
    probabilities and scores rank last. Ranks are distinct (a total order).

    Examples
    --------
    >>> match_rank(np.array([0, 1, 2]), np.array([0, 0, 1]),
    ...            np.array([0.9, 0.99, 0.9]), np.array([0.8, 0.7, 0.9]))
    array([2, 0, 1])
    """
    likely = np.zeros(left.size) if probability is None else probability
    order = np.lexsort(
        (
            right,
            left,
            -np.nan_to_num(score, nan=-1.0),
            -np.nan_to_num(likely, nan=-1.0),
        )
    )
    rank = np.empty(order.size, dtype=np.int64)
    rank[order] = np.arange(order.size)
    return rank


def one_to_one_edges(
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    rank: npt.NDArray[np.int64],
) -> npt.NDArray[np.bool_]:
    """Greedy one-to-one choice of edges, best ``rank`` (smallest) first.

    Equal to walking the edges from best to worst and taking each whose two
    ends are still free, computed in rounds: an edge that is the best of both
    its ends is taken; edges touching a taken end are dropped; repeat. The
    ranks must be distinct (a total order), which makes the result unique.

    Examples
    --------
    >>> one_to_one_edges(np.array([0, 0, 1]), np.array([0, 1, 0]), np.array([0, 1, 2]))
    array([ True, False, False])
    >>> one_to_one_edges(np.array([0, 0, 1]), np.array([0, 1, 0]), np.array([1, 2, 0]))
    array([False,  True,  True])
    """
    if np.unique(rank).size != rank.size:
        raise ConfigError("one_to_one_edges needs distinct ranks (a total order).")
    taken = np.zeros(left.size, dtype=bool)
    alive = np.arange(left.size)
    rounds_taking_little = 0
    nodes_left = int(left.max()) + 1 if left.size else 0
    nodes_right = int(right.max()) + 1 if right.size else 0
    while alive.size:
        if alive.size > _GREEDY_TAIL and rounds_taking_little >= _SLOW_ROUNDS:
            # A long chain of ranks takes one edge per round (quadratic): walk
            # what is left in rank order instead.
            _greedy_walk(left, right, rank, alive, taken)
            break
        best_left = np.full(nodes_left, np.iinfo(np.int64).max)
        best_right = np.full(nodes_right, np.iinfo(np.int64).max)
        np.minimum.at(best_left, left[alive], rank[alive])
        np.minimum.at(best_right, right[alive], rank[alive])
        mutual = (best_left[left[alive]] == rank[alive]) & (
            best_right[right[alive]] == rank[alive]
        )
        chosen = alive[mutual]
        rounds_taking_little = (
            rounds_taking_little + 1 if chosen.size * 100 < alive.size else 0
        )
        taken[chosen] = True
        used_left = np.zeros(nodes_left, dtype=bool)
        used_right = np.zeros(nodes_right, dtype=bool)
        used_left[left[chosen]] = True
        used_right[right[chosen]] = True
        alive = alive[~(used_left[left[alive]] | used_right[right[alive]])]
    return taken


#: one_to_one_edges walks the remaining edges one by one after this many rounds
#: that each took under 1% of them (only chains of ranks do that), unless few
#: edges are left.
_SLOW_ROUNDS = 3
_GREEDY_TAIL = 64


def _greedy_walk(
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    rank: npt.NDArray[np.int64],
    alive: npt.NDArray[np.int64],
    taken: npt.NDArray[np.bool_],
) -> None:
    """Take the ``alive`` edges in rank order whose two ends are still free."""
    used_left = set(left[taken].tolist())
    used_right = set(right[taken].tolist())
    for edge in alive[np.argsort(rank[alive], kind="stable")].tolist():
        one, two = int(left[edge]), int(right[edge])
        if one not in used_left and two not in used_right:
            taken[edge] = True
            used_left.add(one)
            used_right.add(two)


def best_two(
    records: npt.NDArray[np.int64],
    partners: npt.NDArray[np.int64],
    rank: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Return the two best partners of every record that has several.

    Returns two arrays of partner positions, one pair per such record, each
    pair ordered (smaller position first) and the pairs in record order. A
    pair given twice is one partner.

    Examples
    --------
    >>> best_two(np.array([0, 0, 0, 1]), np.array([5, 3, 4, 9]), np.array([2, 1, 0, 3]))
    (array([3]), array([4]))
    """
    order = np.lexsort((rank, records))
    records, partners = records[order], partners[order]
    width = np.int64(partners.max()) + 1 if partners.size else np.int64(1)
    _, first_seen = np.unique(records * width + partners, return_index=True)
    once = np.sort(first_seen)
    records, partners = records[once], partners[once]
    starts = np.flatnonzero(run_starts(records))
    sizes = np.diff(np.r_[starts, records.size])
    first = starts[sizes > 1]
    one, two = partners[first], partners[first + 1]
    return np.minimum(one, two), np.maximum(one, two)


def choose(
    rule: OneToOne,
    *,
    link: bool,
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    probability: npt.NDArray[np.float64] | None,
    score: npt.NDArray[np.float64],
    within: WithinTable,
    shape: dict[str, Any] | None = None,
) -> tuple[npt.NDArray[np.bool_], dict[str, Any]]:
    """Which of the matched pairs stay matches, and what was decided and why.

    ``left``, ``right``, ``probability`` (None without a match model) and
    ``score`` describe the *matched* pairs only, by the records' positions in
    their tables. ``within(side, first, second)`` decides pairs of records of
    one table as the link decided its pairs (called by ``"auto"`` only, with
    at most one pair per record that has several matches).

    Returns the pairs kept as matches, and the ``attrs["lsh_frame"]["one_to_one"]``
    record: ``rule``, ``applied``, ``reason``, ``several_matches`` (records with
    more than one match, per table), ``checked`` and ``duplicates`` (pairs of
    two records of a table, the two best matches of one record of the other
    table, that were scored, and how many of them are duplicates; None unless
    ``"auto"`` looked), ``duplicate_cut`` (the strength a pair of best matches
    needs to count as duplicates) and ``dropped`` (matches set to False).

    ``shape`` is :func:`clear_best` of all the candidate pairs: when each
    record has one clear best candidate, ``"auto"`` applies without looking
    further (recorded as ``clear_best``).
    """
    keep = np.ones(left.size, dtype=bool)
    info: dict[str, Any] = {
        "rule": rule,
        "applied": False,
        "reason": "",
        "several_matches": None,
        "checked": None,
        "duplicates": None,
        "duplicate_cut": None,
        "dropped": 0,
        "clear_best": None if shape is None else shape["close_second"],
    }
    if not link:
        info["reason"] = "one table: there is no other table to match at most once"
        return keep, info
    if rule is False:
        info["reason"] = "one_to_one=False"
        return keep, info
    rank = match_rank(left, right, probability, score)
    # A left record's two best matches are a pair of the right table, and a
    # right record's are a pair of the left table.
    pairs = {
        "left": best_two(right, left, rank),
        "right": best_two(left, right, rank),
    }
    info["several_matches"] = {
        "left": int(pairs["right"][0].size),
        "right": int(pairs["left"][0].size),
    }
    if rule == "auto" and shape is not None and shape["clear"]:
        info["reason"] = (
            "each record has one clear best candidate (a second within "
            f"{CLOSE_SECOND:g} of the best for {shape['close_second']['left']:.0%} "
            f"of the left and {shape['close_second']['right']:.0%} of the right "
            f"records, under {CLEAR_BEST_MAX_SHARE:.0%})"
        )
    elif rule == "auto":
        if not sum(info["several_matches"].values()):
            info["reason"] = "no record has more than one match"
            return keep, info
        found, checked = _duplicates(pairs, score, within, info)
        if found * 2 >= checked:
            info["reason"] = (
                f"{found} of the {checked} pairs of a record's two best matches are "
                "duplicates of each other (half or more): a record may match "
                "several duplicates"
            )
            return keep, info
        info["reason"] = (
            f"{found} of the {checked} pairs of a record's two best matches are "
            "duplicates of each other (fewer than half): several matches are "
            "confusions"
        )
    else:
        info["reason"] = "one_to_one=True"
    keep = one_to_one_edges(left, right, rank)
    info["applied"] = True
    info["dropped"] = int(keep.size - np.count_nonzero(keep))
    return keep, info


def _duplicates(
    pairs: dict[str, tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]],
    score: npt.NDArray[np.float64],
    within: WithinTable,
    info: dict[str, Any],
) -> tuple[int, int]:
    """Count the pairs of best matches that are duplicates; fill ``info``.

    A pair of best matches is a duplicate when the link's decision makes it a
    match *and* it is as strong as a typical match (at least the lower
    quartile of the matches' ``score``). The decision alone is not enough: a
    confusion R2 of a record L, whose true partner R1 is nearly L, is about as
    close to R1 as to L, so the decision that let L-R2 in lets R1-R2 in too.
    But such a pair sits at the bottom of the matches, where true duplicates
    (the same entity, so a true match) seldom do.
    """
    # The combined score, also with a model: match probabilities of a good
    # model saturate near 1, where a quartile says nothing (a batch matched
    # with a saved model had its true duplicates at 0.999 against a quartile
    # of 0.9999).
    strength = score[np.isfinite(score)]
    cut = (
        float(np.quantile(strength, TYPICAL_MATCH_QUANTILE))
        if strength.size
        else np.inf
    )
    found: dict[str, int] = {}
    for side, (first, second) in pairs.items():
        if not first.size:
            found[side] = 0
            continue
        match, _, pair_score = within(side, first, second)
        typical = np.nan_to_num(pair_score, nan=-np.inf) >= cut
        found[side] = int(np.count_nonzero(match & typical))
    info["checked"] = {side: int(pair[0].size) for side, pair in pairs.items()}
    info["duplicates"] = found
    info["duplicate_cut"] = {"score": cut}
    return sum(found.values()), sum(info["checked"].values())


def assignment_split(
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    score: npt.NDArray[np.float64],
) -> npt.NDArray[np.bool_]:
    """Return the provisional matches of a link: the one-to-one choice by score.

    When each record has at most one match in the other table, a record's
    best candidate that is also the best of its own best candidates is the
    classic unsupervised guess of a match, whatever the scale of the scores:
    the match model of ``"auto"`` learns from these pairs (see
    :func:`lsh_frame.score`). Pairs without a score are never chosen. Ranked
    by :func:`match_rank` (score, then positions), so it is deterministic.

    Examples
    --------
    >>> assignment_split(np.array([0, 0, 1, 1]), np.array([0, 1, 1, 0]),
    ...                  np.array([0.3, 0.9, 0.8, np.nan]))
    array([False,  True, False, False])
    """
    present = ~np.isnan(score)
    chosen = np.zeros(score.size, dtype=bool)
    if not present.any():
        return chosen
    at = np.flatnonzero(present)
    rank = match_rank(left[at], right[at], None, score[at])
    chosen[at] = one_to_one_edges(left[at], right[at], rank)
    return chosen


#: A record's second-best candidate is *close* when it scores at least this
#: share of its best ...
CLOSE_SECOND = 0.9
#: ... and a link looks one-to-one when fewer than this share of the records
#: of each table that have a candidate have a close second. Measured on links
#: built from the development data: where one table holds duplicates of the
#: other's records, 65-84% of that table's partners' records had a close
#: second; on one-to-one links (FEBRL4, Abt-Buy, IMDb-TMDb, and the dedupe
#: sets split into first and second records) 0-42%.
CLEAR_BEST_MAX_SHARE = 0.5


def clear_best(
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    score: npt.NDArray[np.float64],
) -> dict[str, Any]:
    """Whether each record of a link has one clear best candidate.

    For each table, the share of its records (with a scored candidate) whose
    second-best candidate scores at least :data:`CLOSE_SECOND` of their best.
    When each record has at most one match in the other table, its match
    stands out; when the other table holds several records of its entity,
    they score alike. ``clear`` is true when both shares are below
    :data:`CLEAR_BEST_MAX_SHARE`. ``left`` and ``right`` are the records'
    positions, ``score`` the combined score of every candidate pair.

    Examples
    --------
    >>> clear_best(np.array([0, 0, 1, 1]), np.array([0, 1, 1, 0]),
    ...            np.array([0.9, 0.3, 0.8, 0.2]))["clear"]
    True
    """
    present = ~np.isnan(score)
    shares = {}
    for side, records in (("left", left[present]), ("right", right[present])):
        values = score[present]
        order = np.lexsort((-values, records))
        records, values = records[order], values[order]
        if not records.size:
            shares[side] = 0.0
            continue
        starts = np.flatnonzero(run_starts(records))
        several = np.diff(np.r_[starts, records.size]) > 1
        if not several.any():
            shares[side] = 0.0
            continue
        second = values[np.minimum(starts + 1, records.size - 1)]
        close = several & (second >= CLOSE_SECOND * values[starts])
        # Among the records with a second candidate: a sparse blocking
        # (few candidates a record) says nothing about the others.
        shares[side] = round(float(close.sum() / several.sum()), 4)
    return {
        "close_second": shares,
        "clear": all(share < CLEAR_BEST_MAX_SHARE for share in shares.values()),
    }


def one_to_one_matches(
    rule: OneToOne,
    plan: ScorePlan,
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
    probability: npt.NDArray[np.float64] | None,
    combined: npt.NDArray[np.float64],
    match: npt.NDArray[np.bool_],
    within: Callable[..., Any],
    shape: dict[str, Any] | None = None,
) -> tuple[npt.NDArray[np.bool_], dict[str, Any]]:
    """Return ``match`` after the one-to-one choice, and its attrs record."""
    matched = np.flatnonzero(match)
    keep, info = choose(
        rule,
        link=plan.link,
        left=left_positions[matched],
        right=right_positions[matched],
        probability=None if probability is None else probability[matched],
        score=combined[matched],
        within=within,
        shape=shape,
    )
    if not keep.all():
        match = match.copy()
        match[matched[~keep]] = False
    return match, info


def link_shape(
    plan: ScorePlan,
    one_to_one: OneToOne,
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    combined: npt.NDArray[np.float64],
) -> dict[str, Any] | None:
    """:func:`clear_best` of a link's candidates, when one-to-one may apply."""
    if not plan.link or one_to_one is False:
        return None
    return clear_best(left, right, combined)


def learns_from_assignment(plan: ScorePlan, shape: dict[str, Any] | None) -> bool:
    """Whether ``"auto"`` learns from the one-to-one assignment, not the cut.

    A link whose records each have one clear best candidate
    (:func:`clear_best`, unless ``one_to_one=False``) learns its model from
    the greedy one-to-one choice by score (:func:`assignment_split`): no
    valley is needed, so it works where the matches' scores spread over the
    whole scale (product titles: Abt-Buy pair F1 0.04 with the cut, 0.77
    with the assignment). A dedupe, or a link where a table holds several
    records of an entity, learns from the cut.
    """
    return (
        plan.link
        and plan.min_score == "auto"
        and shape is not None
        and bool(shape["clear"])
    )
