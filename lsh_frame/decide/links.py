"""Deciding a link as a matching: which tables are exclusive, the model, the matches.

:func:`learned_matching` learns the match model of a link the way
:mod:`lsh_frame.decide.matching` describes, starting from the one-to-one
assignment by score, and (with ``one_to_one="auto"``) looks whether either
table holds duplicates before it settles which tables are exclusive.
:func:`exclusive_matches` keeps at most one match per record of an exclusive
table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from lsh_frame.compare.levels import LEVEL_CUTS
from lsh_frame.decide.matches import decide
from lsh_frame.decide.matching import (
    Side,
    fitted_matching,
    learn_matching,
    matching_marginals,
    pair_weights,
)
from lsh_frame.decide.model import MatchModel
from lsh_frame.decide.one_to_one import (
    assignment_split,
    match_rank,
    one_to_one_edges,
)
from lsh_frame.decide.tables import _AUTO_MIN_PAIRS

if TYPE_CHECKING:
    from lsh_frame.compare.plan import ScorePlan
    from lsh_frame.decide.one_to_one import OneToOne

#: Both tables exclusive: each record matches at most one of the other table.
BOTH: tuple[Side, ...] = ("left", "right")

#: A table holds duplicates when at least this share of the other table's
#: matched records are claimed by two or more of its records (see
#: :func:`_duplicated_tables`). Measured with the matching model of each link
#: (share claimed twice): 0.154 where one table lists products twice (119 of
#: 1,000 true matches of the other table have two partners), 0.111 for a
#: table of look-alikes that are different products, at most 0.053 on every
#: other link of the development and held-out sets.
CLAIMED_TWICE_SHARE = 0.125


def learned_matching(
    plan: ScorePlan,
    levels: dict[str, npt.NDArray[np.intp]],
    positions: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    combined: npt.NDArray[np.float64],
    held_out: npt.NDArray[np.bool_],
    rule: OneToOne,
) -> tuple[MatchModel | None, dict[str, Any]]:
    """Learn a link's model as a matching; None when the reading does not apply.

    ``levels`` are the counted fields' levels of every pair, ``positions`` the
    pairs' records, ``combined`` their ``score`` (the start: the one-to-one
    assignment by score), ``held_out`` the pairs decided but not learned from.
    With ``rule="auto"`` the reading applies only when the fitted model finds
    no table holding duplicates (:func:`_duplicated_tables`); otherwise pairs
    are decided one by one.
    Returns the model (None: no table is exclusive, or too few pairs) and a
    fit record that says what was read and why.
    """
    left, right = positions
    learned = ~held_out
    if int(learned.sum()) < _AUTO_MIN_PAIRS:
        return None, {"matching": "too few pairs to learn from"}
    start = assignment_split(left, right, combined) & learned
    model, fit = _fit(plan, levels, positions, start, learned, BOTH)
    if model is None or rule is True:
        return model, fit
    probability = decide(plan, model, levels, None, None, positions)[0]
    assert probability is not None
    duplicated = _duplicated_tables(model, levels, positions, probability)
    fit["duplicates"] = duplicated
    # Duplicates in one table let the other's records match several.
    exclusive = tuple(
        side for side in BOTH if not duplicated[_other(side)]["duplicated"]
    )
    if exclusive != BOTH:
        # A table with duplicates: its records' partners may match several of
        # them, and pairs are decided one by one, as in a dedupe.
        held = " and ".join(
            f"the {side} table" for side in BOTH if duplicated[side]["duplicated"]
        )
        return None, {**fit, "matching": f"{held} holds duplicates"}
    return model, fit


def not_matched(
    fit: dict[str, Any] | None, matching_fit: dict[str, Any] | None
) -> dict[str, Any] | None:
    """Return a fit that also says why the link was not read as a matching."""
    if not matching_fit or "matching" not in matching_fit or fit is None:
        return fit
    kept = {"matching": matching_fit["matching"]}
    if "duplicates" in matching_fit:
        kept["duplicates"] = matching_fit["duplicates"]
    return {**fit, **kept}


def matching_choice(
    rule: OneToOne, model: MatchModel, shape: dict[str, Any] | None, dropped: int
) -> dict[str, Any]:
    """Return the ``attrs["lsh_frame"]["one_to_one"]`` of a link read as a matching.

    The keys of :func:`lsh_frame.decide.one_to_one.choose`'s record: no pair of
    best matches was checked (the matching says which tables are exclusive),
    ``dropped`` matches were set to False to keep one per record.
    """
    assert model.matching is not None
    tables = " and ".join(f"the {side} table" for side in model.matching.exclusive)
    return {
        "rule": rule,
        "applied": True,
        "reason": f"the link is read as a matching: records of {tables} match at "
        "most once (see the model's fit)",
        "several_matches": None,
        "checked": None,
        "duplicates": None,
        "duplicate_cut": None,
        "dropped": dropped,
        "clear_best": None if shape is None else shape["close_second"],
        "exclusive": list(model.matching.exclusive),
    }


def exclusive_matches(
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    probability: npt.NDArray[np.float64],
    match: npt.NDArray[np.bool_],
    exclusive: tuple[Side, ...],
) -> npt.NDArray[np.bool_]:
    """Keep at most one match per record of each exclusive table, likeliest first.

    Examples
    --------
    >>> exclusive_matches(np.array([0, 0, 1]), np.array([0, 1, 1]),
    ...                   np.array([0.6, 0.4, 0.9]), np.ones(3, bool), ("left",))
    array([ True, False,  True])
    """
    at = np.flatnonzero(match)
    if not at.size:
        return match
    rank = match_rank(left[at], right[at], probability[at], probability[at])
    if len(exclusive) == 2:
        keep = one_to_one_edges(left[at], right[at], rank)
    else:
        records = (left if exclusive[0] == "left" else right)[at]
        order = np.lexsort((rank, records))
        first = np.ones(order.size, dtype=bool)
        first[1:] = records[order][1:] != records[order][:-1]
        keep = np.zeros(at.size, dtype=bool)
        keep[order[first]] = True
    kept = np.zeros_like(match)
    kept[at[keep]] = True
    return kept


def _other(side: Side) -> Side:
    return "right" if side == "left" else "left"


def _fit(
    plan: ScorePlan,
    levels: dict[str, npt.NDArray[np.intp]],
    positions: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    start: npt.NDArray[np.bool_],
    learned: npt.NDArray[np.bool_],
    exclusive: tuple[Side, ...],
) -> tuple[MatchModel | None, dict[str, Any]]:
    """One matching fit on the counted fields that have a value in some pair."""
    cuts = plan.field_cuts
    sizes = {label: len(cuts[label]) + 1 for label in plan.labels}
    present = [
        label
        for label in plan.labels
        if bool((levels[label][learned] < sizes[label]).any())
    ]
    no_values = tuple(label for label in plan.labels if label not in present)
    if not present or not start.any():
        return None, {"matching": "no pair to start from"}
    m, u, matching, probability, fit = learn_matching(
        present, levels, sizes, *positions, start, exclusive, learned
    )
    share = float(probability[learned].mean())
    model = MatchModel(
        prior=min(max(share, 1e-9), 1 - 1e-9),
        m=m,
        u=u,
        no_values=no_values,
        field_cuts={
            label: cuts[label] for label in present if cuts[label] != LEVEL_CUTS
        },
        matching=matching,
    )
    return model, dict(fit)


def _duplicated_tables(
    model: MatchModel,
    levels: dict[str, npt.NDArray[np.intp]],
    positions: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    probability: npt.NDArray[np.float64],
) -> dict[str, dict[str, Any]]:
    """Per table: whether it holds duplicates, read off the fitted model.

    Were the records of table T free to match several records of the other
    table, each record of T would still pick at most one: under that reading
    (T exclusive alone), a record of the other table that matches is
    *claimed* by the records of T that pick it. It is claimed twice or more
    when T holds copies of its partner. T holds duplicates when at least
    ``CLAIMED_TWICE_SHARE`` of the other table's matched records are.
    """
    left, right = positions
    assert model.matching is not None
    log_bayes = np.zeros(left.size)
    for weights in model.level_weights(
        {label: levels[label] for label in model.m}
    ).values():
        log_bayes += weights
    found: dict[str, dict[str, Any]] = {}
    sides: tuple[tuple[Side, npt.NDArray[np.int64]], ...] = (
        ("left", right),
        ("right", left),
    )
    for side, others in sides:
        alone = fitted_matching(left, right, probability, (side,))
        picked = matching_marginals(
            left, right, pair_weights(left, right, log_bayes, alone), (side,)
        )
        claims = np.bincount(others, weights=picked)
        matched = np.bincount(others, weights=probability) >= 0.5
        share = float((claims[matched] >= 1.5).mean()) if matched.any() else 0.0
        found[side] = {
            "claimed_twice": round(share, 4),
            "duplicated": share >= CLAIMED_TWICE_SHARE,
        }
    return found
