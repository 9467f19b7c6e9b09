"""Answers in the decision: teach the model, then honour every answer.

:func:`taught_model` fits :mod:`lsh_frame.decide.taught`'s shifts to the
answered candidate pairs, starting from the model learned without labels;
:func:`answered_choice` makes the answers win the one-to-one choice;
:func:`honour` sets every answered pair's ``match`` to its answer, after
every rule (one-to-one, closing clusters) has run, and :func:`certain` its
``match_probability`` to 1 or 0: a person who said two records are one
entity, or are not, is not overruled (not by the split of sparse clusters
either, which reads the probabilities).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from lsh_frame.decide.matches import decide, matched_probability
from lsh_frame.decide.taught import MATCHING_ROUNDS, Taught, teach

if TYPE_CHECKING:
    from lsh_frame.compare.plan import ScorePlan
    from lsh_frame.decide.labels import Placed
    from lsh_frame.decide.model import MatchModel

__all__ = ["answered_choice", "certain", "honour", "labels_attrs", "taught_model"]

#: Log odds are read at most this far from 0 (a probability of 1 - 1e-13).
_LOG_ODDS_BOUND = 30.0


def _log_odds(probability: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    with np.errstate(divide="ignore"):
        odds = np.log(probability) - np.log1p(-probability)
    return np.clip(odds, -_LOG_ODDS_BOUND, _LOG_ODDS_BOUND)


def _own_shift(
    taught: Taught | None, levels: dict[str, npt.NDArray[np.intp]]
) -> npt.NDArray[np.float64] | float:
    """Each pair's total shift from ``taught`` (fields and prior)."""
    if taught is None:
        return 0.0
    total = np.full(next(iter(levels.values())).size, taught.prior_shift)
    for label, shifts in taught.shifts.items():
        total += np.append(shifts, 0.0)[levels[label]]
    return total


def taught_model(
    plan: ScorePlan,
    model: MatchModel,
    levels: dict[str, npt.NDArray[np.intp]],
    alone: npt.NDArray[np.bool_] | None,
    positions: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    rows: npt.NDArray[np.int64],
    answers: npt.NDArray[np.float64],
) -> MatchModel:
    """Return the model taught by the answers at ``rows`` of the pairs.

    It starts from the model without earlier answers (a saved taught model
    is taught afresh by the answers given now). For pairs decided one by one
    each answered pair's log odds before teaching is its base; for a matching,
    the log odds its competition leaves it under the current shifts.
    """
    learned = dataclasses.replace(model, taught=None)
    if not rows.size:
        return learned
    counted = {label: levels[label] for label in learned.m}
    answered = {label: level[rows] for label, level in counted.items()}
    weights = {label: learned.weights_of(label) for label in learned.m}
    if learned.matching is None:
        probability = decide(
            plan,
            learned,
            answered,
            None,
            None if alone is None else alone[rows],
        )[0]
        assert probability is not None
        fixed = _log_odds(probability)
        taught = teach(weights, answered, answers, lambda _: fixed)
    else:

        def competition(current: Taught | None) -> npt.NDArray[np.float64]:
            shifted = dataclasses.replace(learned, taught=current)
            probability = matched_probability(shifted, counted, *positions)[rows]
            return _log_odds(probability) - _own_shift(current, answered)

        taught = teach(weights, answered, answers, competition, MATCHING_ROUNDS)
    return dataclasses.replace(learned, taught=taught)


def answered_choice(
    probability: npt.NDArray[np.float64] | None,
    match: npt.NDArray[np.bool_],
    rows: npt.NDArray[np.int64],
    answers: npt.NDArray[np.float64],
) -> tuple[npt.NDArray[np.float64] | None, npt.NDArray[np.bool_]]:
    """Probabilities and matches for the one-to-one choice, answers first.

    An answered pair's probability reads 1 or 0 there and its ``match`` its
    answer, so a record's answered match wins over its other candidates.
    """
    match = match.copy()
    match[rows] = answers == 1.0
    if probability is None:
        return None, match
    probability = probability.copy()
    probability[rows] = answers
    return probability, match


def honour(
    match: npt.NDArray[np.bool_],
    rows: npt.NDArray[np.int64],
    answers: npt.NDArray[np.float64],
) -> npt.NDArray[np.bool_]:
    """Set every answered pair's ``match`` to its answer."""
    if not rows.size:
        return match
    match = match.copy()
    match[rows] = answers == 1.0
    return match


def certain(
    probability: npt.NDArray[np.float64],
    rows: npt.NDArray[np.int64],
    answers: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """Set every pair answered yes or no to probability 1 or 0 (unsure: as is)."""
    known = ~np.isnan(answers)
    if not known.any():
        return probability
    probability = probability.copy()
    probability[rows[known]] = answers[known]
    return probability


def labels_attrs(
    given: Placed, rows: npt.NDArray[np.int64], model: MatchModel | None
) -> dict[str, Any]:
    """``attrs["lsh_frame"]["labels"]``: what the answers were and did."""
    answered = ~np.isnan(given.match)
    return {
        "given": int(given.match.size),
        "matches": int((given.match == 1.0).sum()),
        "non_matches": int((given.match == 0.0).sum()),
        "unsure": int((~answered).sum()),
        "among_pairs": int(rows.size),
        "taught": model is not None and model.taught is not None,
    }
