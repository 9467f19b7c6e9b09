"""Pairs that only a weak key found: decided with a prior of their own.

Evidence that turns it on, read from the candidates (never from labels):

- a key is *weak* when at least ``WEAK_KEY_SHARE`` of its pairs no other key
  found: it finds pairs by chance (a birthday shared among 20,000 people, the
  same "PO box" line of an address). The neighbours key of plain columns and
  compound keys are always read so. Pairs that only weak keys found are
  decided with the prior learned among them (:func:`with_alone_prior`), and
  are left out when the model learns from the other keys' pairs;
- with the neighbours key beside the LSH record key, the model is learned
  again from the other keys' pairs when at least ``TRAIN_ON_OTHERS_SHARE`` of
  its matches were found by them: the neighbours key then added mostly
  look-alikes, which would tilt a model learned from them.

Where it was measured (pair F1; the constants' comments give every set):
make_customers 20,000 with a date-of-birth key 0.9700 -> 0.9937; learning
from the other keys' pairs, make_customers 100,000 0.962 -> 0.995, and left
off where the neighbours key finds matches the others miss (fake_1000,
historical_50k, Cora, Abt-Buy).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame.block.identical import IDENTICAL
from lsh_frame.block.keys import is_compound_label
from lsh_frame.compare.fields import without
from lsh_frame.config import NEIGHBOURS_KEY, RECORD_KEY
from lsh_frame.decide.cut import ScoreSpread
from lsh_frame.decide.learn import learn_model
from lsh_frame.decide.matches import provisional_matches
from lsh_frame.decide.one_to_one import assignment_split
from lsh_frame.decide.tables import LevelTable

if TYPE_CHECKING:
    from lsh_frame.compare.plan import ScorePlan
    from lsh_frame.decide.model import MatchModel


#: With the neighbours key beside the LSH record key (plain columns), the model
#: is learned again from the pairs the other keys found when at least this
#: share of its matches were found by them: the neighbours key then added
#: mostly look-alikes (relatives of a household), which tilt a model learned
#: from them. Measured (pair F1 learned from all pairs / from the other keys'
#: pairs; share): make_customers 5,000 0.956 / 0.989 (1.000), 100,000 0.962 /
#: 0.995 (0.996); where the neighbours key finds matches the others miss, the
#: share is low and all pairs teach: fake_1000 0.918 / 0.732 (0.81),
#: historical_50k 0.819 / 0.773 (0.34), Cora (0.55), Abt-Buy (0.35).
TRAIN_ON_OTHERS_SHARE = 0.95


#: A key is weak when at least this share of its pairs no other key found:
#: it finds pairs by chance (a birthday shared among 20,000 people, the same
#: "PO box" line of an address), and the pairs only it found are decided,
#: like those only the neighbours key found, with a prior of their own, and
#: are left out when the model learns from the other keys' pairs. Measured
#: (share; pair F1 before -> after): make_customers 20,000 date_of_birth
#: (0.81; 0.9700 -> 0.9937); FEBRL4 address_1 and address_2 (0.70, 0.77;
#: 1.0000 -> 0.9999); identifiers stay strong (phone and e-mail 0.00-0.06,
#: FEBRL's soc_sec_id 0.00, FEBRL4's date of birth 0.12).
WEAK_KEY_SHARE = 0.5


def found_by_counts(pairs: pd.DataFrame) -> dict[str, int]:
    """How many pairs each ``found_by`` value names (parts add up, see Dask)."""
    if "found_by" not in pairs.columns:
        return {}
    counts = pairs["found_by"].astype(object).value_counts(dropna=True)
    return {str(value): int(count) for value, count in counts.items()}


def weak_keys(counts: dict[str, int]) -> tuple[str, ...]:
    """Return the keys whose lone pairs take the alone prior (``WEAK_KEY_SHARE``).

    ``counts`` are :func:`found_by_counts`. The neighbours key of plain columns
    always; another key (not the LSH record key of plain columns, which finds
    pairs by similarity) when at least ``WEAK_KEY_SHARE`` of its pairs only it
    found, unless every key is (then no pair is found by another to learn from).
    Compound keys always (their lone pairs share, say, a surname and a
    birthday: as much by chance as the neighbours key's).
    """
    found: dict[str, int] = {}
    for value, count in counts.items():
        for label in value.split("|"):
            found[label] = found.get(label, 0) + count
    # The record keys of plain columns find pairs by similarity, not by chance.
    similar = (NEIGHBOURS_KEY, RECORD_KEY, IDENTICAL)
    candidates = [
        label
        for label in found
        if label not in similar and not is_compound_label(label)
    ]
    weak = [
        label
        for label in candidates
        if counts.get(label, 0) >= WEAK_KEY_SHARE * found[label]
    ]
    if len(weak) == len(candidates):
        weak = []
    weak += [label for label in found if is_compound_label(label)]
    return tuple(sorted([NEIGHBOURS_KEY, *weak]))


def found_only_by(pairs: pd.DataFrame, keys: tuple[str, ...]) -> npt.NDArray[np.bool_]:
    """Which pairs only one of ``keys`` found, compound keys aside.

    ``found_by`` names one of ``keys`` besides compound keys (see
    :func:`~lsh_frame.block.keys.compound_field`), or only compound keys: those
    are always weak (a model saved before them decides their pairs alike).
    """
    if "found_by" not in pairs.columns:
        return np.zeros(len(pairs), dtype=bool)
    values = pairs["found_by"]
    only = [value for value in values.dropna().unique() if found_alone(value, keys)]
    # Missing values: not found.
    return np.asarray(values.isin(only).to_numpy(dtype=bool, na_value=False))


def found_alone(found_by: Any, keys: tuple[str, ...]) -> bool:
    """Tell whether one ``found_by`` value is a pair only a weak key found.

    The rule of :func:`found_only_by`, for one pair (``explain``).
    """
    others = [
        label for label in str(found_by).split("|") if not is_compound_label(label)
    ]
    return not others or (len(others) == 1 and others[0] in keys)


def added_by_compound(pairs: pd.DataFrame) -> npt.NDArray[np.bool_]:
    """Which pairs only compound keys found.

    They are decided (with the neighbours key's prior) but never learned from,
    so the pairs other keys found are decided as they would be without them.
    """
    # Alone with no weak key at all: found by compound keys only.
    return found_only_by(pairs, ())


def alone_keys_of(plan: ScorePlan, pairs: pd.DataFrame) -> tuple[str, ...]:
    """Return the given model's alone keys, or those the pairs' keys show."""
    given = plan.given_model
    return given.alone_keys if given is not None else weak_keys(found_by_counts(pairs))


def alone_table(
    levels: dict[str, npt.NDArray[np.intp]],
    identical: npt.NDArray[np.bool_],
    alone: npt.NDArray[np.bool_],
) -> LevelTable:
    """Level table of the pairs only a weak key found (identical ones out)."""
    left_out = identical | ~alone
    return LevelTable.of(
        without(levels, left_out), np.zeros(int((~left_out).sum()), dtype=bool)
    )


def with_alone_prior(
    model: MatchModel,
    plan: ScorePlan,
    table: LevelTable,
    fit: dict[str, Any],
    alone_keys: tuple[str, ...],
) -> MatchModel:
    """Give the model its own prior for the pairs only a weak key found.

    Among the pairs only the neighbours key or a weak key found (mostly
    look-alikes, or strangers sharing a birthday) matches are rarer than among
    the pairs the model's prior comes from, so their share is estimated from
    those pairs with the model's m and u (:meth:`MatchModel.prior_among`),
    whichever pairs the model learned from. ``alone_keys`` (see
    :func:`weak_keys`) travel with the model, so later batches decided with
    it treat the same keys' lone pairs alike.
    """
    alone_prior = model.prior_among(plan.labels, table)
    fit["alone_prior"] = round(alone_prior, 6)
    if alone_keys != (NEIGHBOURS_KEY,):
        fit["alone_keys"] = list(alone_keys)
    return dataclasses.replace(model, alone_prior=alone_prior, alone_keys=alone_keys)


def _learned_from_other_keys(
    plan: ScorePlan,
    levels: dict[str, npt.NDArray[np.intp]],
    combined: npt.NDArray[np.float64],
    left_out: npt.NDArray[np.bool_],
    positions: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    assigned: bool,
) -> tuple[MatchModel, dict[str, Any] | None, float] | None:
    """Learn the model again without the ``left_out`` pairs; return it and its cut.

    Steps 1-3 of ``"auto"`` on the other pairs: their provisional cut (or the
    one-to-one assignment, when the link learns from it) and the model learned
    from that split; None when there is nothing to learn.
    """
    spread = ScoreSpread.of(combined[~left_out])
    cut = spread.cut()
    if assigned:
        kept = np.flatnonzero(~left_out)
        split = np.zeros(len(combined), dtype=bool)
        split[kept] = assignment_split(
            positions[0][kept], positions[1][kept], combined[kept]
        )
    else:
        split = provisional_matches(plan, combined, cut)
    model, fit = learn_model(
        plan.labels,
        LevelTable.of(without(levels, left_out), split[~left_out]),
        plan.field_cuts,
        assigned or spread.clear,
    )
    return None if model is None else (model, fit, cut)
