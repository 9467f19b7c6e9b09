"""Deciding matches: the cut, the model's probabilities, and what decided.

A pair is a match when the learned model's probability reaches the match cut,
or, where no model can be learned, when its combined score reaches the
provisional cut (the fallback, reported in ``attrs``).
"""

from __future__ import annotations

import dataclasses
import numbers
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal, Union

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame._warn import warn
from lsh_frame.compare.fields import _combine, score_fields, without_straight
from lsh_frame.compare.plan import _rows_in_use, field_scores
from lsh_frame.decide.cut import (
    expected_f1_cut,
    merge_probability_counts,
    probability_counts,
)
from lsh_frame.decide.matching import matching_marginals, pair_weights
from lsh_frame.decide.model import MatchModel
from lsh_frame.decide.model_dict import placeholders_dict
from lsh_frame.decide.one_to_one import learns_from_assignment
from lsh_frame.errors import ConfigError

if TYPE_CHECKING:
    from lsh_frame.compare.plan import ScorePlan


MinScore = Union[float, Literal["auto"], "MatchModel", dict]


def check_min_score(min_score: Any, owner: str) -> float | Literal["auto"] | MatchModel:
    """Return ``min_score`` checked: a cut in [0, 1], ``"auto"`` or a learned model."""
    if isinstance(min_score, str) and min_score == "auto":
        return "auto"
    if isinstance(min_score, (MatchModel, dict)):
        return MatchModel.from_dict(min_score, owner)
    if (
        isinstance(min_score, (bool, np.bool_))
        or not isinstance(min_score, numbers.Real)
        or not 0 <= float(min_score) <= 1
    ):
        raise ConfigError(
            f"The 'min_score' parameter of {owner} must be a number in [0, 1], "
            f"'auto', or a learned model. Got {min_score!r} instead."
        )
    return float(min_score)


def provisional_matches(
    plan: ScorePlan, combined: npt.NDArray[np.float64], cut: float | None
) -> npt.NDArray[np.bool_]:
    """``score >= min_score`` (the given one, or the cut of ``"auto"``)."""
    chosen = cut if cut is not None else plan.min_score
    assert isinstance(chosen, float)
    return np.asarray(np.nan_to_num(combined, nan=-1.0) >= chosen)


def fallback_matches(
    plan: ScorePlan, columns: Any, cut: float | None
) -> npt.NDArray[np.bool_]:
    """Return the matches of a cut on ``score`` when no model decides.

    :func:`provisional_matches`; with ``min_score="auto"``, also the same cut
    on the identifying fields alone (see :mod:`lsh_frame.compare.information`),
    so that fields many records share by chance (a tier, a balance, a
    postcode) can keep a pair apart but never join it.
    """
    match = provisional_matches(plan, np.asarray(columns["score"]), cut)
    if plan.min_score != "auto" or not plan.information:
        return match
    chosen = cut if cut is not None else plan.min_score
    assert isinstance(chosen, float)
    weights = {spec.label: spec.weight for spec in plan.counted}
    labels = plan.identifying
    identifying = _combine(
        [np.asarray(columns[f"{label}_score"], dtype=np.float64) for label in labels],
        [weights[label] for label in labels],
        match.size,
    )
    return match & (np.nan_to_num(identifying, nan=-1.0) >= chosen)


def decide(
    plan: ScorePlan,
    model: MatchModel | None,
    levels: dict[str, npt.NDArray[np.intp]],
    provisional: npt.NDArray[np.bool_] | None,
    alone: npt.NDArray[np.bool_] | None = None,
    positions: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None = None,
) -> tuple[npt.NDArray[np.float64] | None, npt.NDArray[np.bool_]]:
    """``match_probability`` (None without one) and ``match`` of some pairs.

    A model that reads a link as a matching (``model.matching``) needs the
    pairs' records, ``positions``: a pair's probability is its marginal in
    the matching of all the pairs given (without them, pairs are read one by
    one, with the model's prior).
    """
    if model is not None:
        # Only the model's fields: one it left out (no values) is neutral.
        counted = {label: levels[label] for label in model.m}
        if model.matching is not None and positions is not None:
            probability = matched_probability(model, counted, *positions)
            return probability, model_matches(model, counted, probability)
        probability = model.probability_of_levels(counted)
        if model.alone_prior is not None and alone is not None and alone.any():
            other = dataclasses.replace(model, prior=model.alone_prior)
            probability[alone] = other.probability_of_levels(
                {label: level[alone] for label, level in counted.items()}
            )
        return probability, model_matches(model, counted, probability)
    assert provisional is not None
    size = provisional.size
    if plan.min_score == "auto":
        return np.full(size, np.nan), provisional
    return None, provisional


def matched_probability(
    model: MatchModel,
    levels: dict[str, npt.NDArray[np.intp]],
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
) -> npt.NDArray[np.float64]:
    """Each pair's marginal probability in the matching of the pairs given."""
    assert model.matching is not None
    # The answers' shift of the prior moves every pair's odds against "no match".
    shift = 0.0 if model.taught is None else model.taught.prior_shift
    log_bayes = np.full(left.size, shift)
    for weights in model.level_weights(levels).values():
        log_bayes += weights
    weight = pair_weights(left, right, log_bayes, model.matching)
    return matching_marginals(left, right, weight, model.matching.exclusive)


def model_matches(
    model: MatchModel,
    levels: dict[str, npt.NDArray[np.intp]],
    probability: npt.NDArray[np.float64],
) -> npt.NDArray[np.bool_]:
    """Return the pairs a model calls matches, given their probabilities.

    Those reaching its match cut where some field counts for a match,
    whatever the prior (see :meth:`MatchModel.speaks_for`).
    """
    counted = {label: levels[label] for label in model.m}
    return (probability >= model.match_cut) & model.speaks_for(counted)


def decision_counts(
    plan: ScorePlan,
    model: MatchModel,
    levels: dict[str, npt.NDArray[np.intp]],
    alone: npt.NDArray[np.bool_],
    identical: npt.NDArray[np.bool_],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Return the distinct match probabilities of some pairs and their counts.

    As the decision reads them (identical copies are certain matches); the
    counts of parts of the pairs add up (:func:`merge_probability_counts`).
    """
    probability = decide(plan, model, levels, None, alone)[0]
    assert probability is not None
    return certain_counts(probability, identical)


def certain_counts(
    probability: npt.NDArray[np.float64], identical: npt.NDArray[np.bool_]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Return :func:`probability_counts`, identical copies counted as certain."""
    return probability_counts(np.where(identical, 1.0, probability))


def with_match_cut(
    model: MatchModel,
    fit: dict[str, Any] | None,
    parts: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]],
) -> tuple[MatchModel, dict[str, Any]]:
    """Return the model with the match cut its pairs' probabilities expect.

    ``parts`` are :func:`decision_counts` of all the pairs (or of parts of
    them); see :func:`lsh_frame.decide.cut.expected_f1_cut`.
    """
    cut, expected = expected_f1_cut(*merge_probability_counts(parts))
    return (
        replace(model, match_cut=cut),
        {**(fit or {}), "expected_f1": round(expected, 4)},
    )


def within_table_matches(
    plan: ScorePlan,
    model: MatchModel | None,
    cut: float | None,
    table: pd.DataFrame,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    owner: str,
) -> tuple[
    npt.NDArray[np.bool_], npt.NDArray[np.float64] | None, npt.NDArray[np.float64]
]:
    """Decide pairs of records of one table as a link's pairs were decided.

    The same fields and comparisons (``plan``), and the same decision: the
    link's match model, or without one its cut on ``score``. ``first`` and
    ``second`` are positions in ``table``. Returns ``match``,
    ``match_probability`` (None without a model) and ``score`` of each pair.
    ``one_to_one="auto"`` asks this whether a record's two best matches are
    duplicates of each other.
    """
    plain = dataclasses.replace(plan, values=False, estimate=None)
    table, (first, second) = _rows_in_use(table, first, second)
    columns = without_straight(score_fields(plain, table, None, first, second, owner))
    levels = plain.levels(field_scores(plain, columns))
    provisional = None if model is not None else fallback_matches(plain, columns, cut)
    probability, match = decide(plain, model, levels, provisional)
    return match, probability, np.asarray(columns["score"], dtype=np.float64)


def no_entities(model: MatchModel) -> dict[str, Any]:
    """Return the fit of a model whose matches are another group: none match."""
    fields = ", ".join(model.another_group())
    return {
        "rejected": (
            f"the provisional matches differ on {fields} more than twice as often "
            "as they agree: they are not the same records written twice but "
            "another group (relatives?), so no pair is matched but identical "
            "copies"
        )
    }


def _fallback(
    plan: ScorePlan,
    chosen: float | None,
    model: MatchModel | None,
    fit: dict[str, Any] | None,
) -> dict[str, Any]:
    """``{"fallback": why}`` when ``"auto"`` decided without a model, else ``{}``."""
    if model is not None or plan.given_model is not None or not fit:
        return {}  # a model decided, or nothing was left to decide
    if "rejected" in fit:
        return {"fallback": fit["rejected"]}
    said = f"{fit['fallback']}: matches are the pairs with score >= {chosen}"
    if plan.information:
        identifying = plan.identifying
        weak = [reading for reading in plan.information if not reading.identifying]
        said += (
            f" and >= {chosen} on {', '.join(identifying)} alone"
            if identifying
            else ", but no field can join two records on its own, so no pair is a match"
        )
        if weak and identifying:
            said += (
                "; "
                + ", ".join(f"{reading.label} ({reading.reason})" for reading in weak)
                + " can keep two records apart, never join them"
            )
    return {
        "fallback": said,
        "identifying": [reading.to_dict() for reading in plan.information],
    }


def fallback_attrs(attrs: dict[str, Any]) -> dict[str, Any]:
    """Return what decided without a model, for a job's ``attrs`` (empty if one did).

    ``fallback`` says why and how; ``identifying`` lists each field's reading
    (see :mod:`lsh_frame.compare.information`).
    """
    return {key: attrs[key] for key in ("fallback", "identifying") if key in attrs}


def warn_fallback(attrs: dict[str, Any]) -> None:
    """Say that ``min_score="auto"`` fell back to a cut on ``score``."""
    if "fallback" in attrs:
        warn(
            f"No match model decided the pairs ({attrs['fallback']}). Pass "
            "min_score= a number, or a model learned on a larger table, to decide "
            "yourself."
        )


def scored_attrs(
    plan: ScorePlan,
    chosen: float | None,
    model: MatchModel | None,
    fit: dict[str, Any] | None,
    shape: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the ``attrs["lsh_frame"]`` of scored pairs."""
    given = plan.given_model
    return {
        "link": plan.link,
        "min_score": chosen,
        "provisional": (
            "one-to-one assignment"
            if learns_from_assignment(plan, shape)
            or (model is not None and model.matching is not None)
            else "score >= min_score"
        )
        if plan.min_score == "auto" and given is None
        else None,
        "min_score_rule": "auto"
        if plan.min_score == "auto"
        else ("model" if given is not None else "given"),
        "compare": dict(plan.comparisons),
        "weights": {spec.label: spec.weight for spec in plan.specs},
        "columns": {spec.label: list(spec.columns) for spec in plan.specs},
        "swaps": [
            {
                **check.to_dict(),
                "scored_crossed": (check.first, check.second) in plan.swaps,
            }
            for check in plan.swap_checks
        ]
        if given is None
        else [
            {
                "fields": [first, second],
                "swapped": True,
                "scored_crossed": True,
                "from": "model",
            }
            for first, second in plan.swaps
        ],
        "shifts": [
            {
                **check.to_dict(),
                "read_shifted": (check.field, check.into) in plan.shifts,
            }
            for check in plan.shift_checks
        ]
        if given is None
        else [
            {"field": label, "into": into, "shifts": True, "from": "model"}
            for label, into in plan.shifts
        ],
        "nicknames": [check.to_dict() for check in plan.name_checks]
        if given is None
        else [
            {"field": label, "given_names": True, "from": "model"}
            for label in plan.nicknames
        ],
        "dates": [check.to_dict() for check in plan.date_checks]
        if given is None
        else [
            {"field": label, "placeholder_days": days, "from": "model"}
            for label, days in placeholders_dict(plan.placeholders).items()
        ],
        **_fallback(plan, chosen, model, fit),
        "model": None
        if model is None
        else {
            **model.to_dict(),
            "compare": {
                label: plan.comparisons.get(label, "codes") for label in model.m
            },
            **({"swaps": [list(pair) for pair in plan.swaps]} if plan.swaps else {}),
            **({"shifts": [list(pair) for pair in plan.shifts]} if plan.shifts else {}),
            **({"nicknames": list(plan.nicknames)} if plan.nicknames else {}),
            **(
                {"placeholders": placeholders_dict(plan.placeholders)}
                if plan.placeholders
                else {}
            ),
            "fit": fit if given is None else "given",
        },
    }


def scored_frame(
    pairs: pd.DataFrame, columns: dict[str, Any], attrs: dict[str, Any]
) -> pd.DataFrame:
    """Return the pairs with the scored columns added (replacing same names)."""
    added = pd.DataFrame(columns, index=pairs.index)
    kept = pairs.drop(columns=[name for name in added.columns if name in pairs])
    result = pd.concat([kept, added], axis=1)
    result.attrs = {**pairs.attrs, "lsh_frame": attrs}
    return result
