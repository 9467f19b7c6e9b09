"""Scores of swapped and shifted fields: a pair read crossed when that reads better.

Used only for the field pairs :mod:`lsh_frame.compare.swaps` found swapped or
shifted in the tables.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from lsh_frame.compare import swaps as _swaps
from lsh_frame.compare.text import _encode_together, _fuzzy, _ValuePairs

if TYPE_CHECKING:
    from lsh_frame.compare.plan import ScorePlan
    from lsh_frame.compare.text import _Encoded


def _crossed_score(
    encoded: dict[str, _Encoded],
    one: str,
    other: str,
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
    comparison: str,
    floor: float,
) -> npt.NDArray[np.float64]:
    """Scores of the left ``one`` values against the right ``other`` values."""
    return _codes_score(
        encoded[one].dictionary,
        encoded[one].left[left_positions],
        encoded[other].right[right_positions],
        comparison,
        floor,
    )


def _codes_score(
    dictionary: pa.Array,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    comparison: str,
    floor: float,
) -> npt.NDArray[np.float64]:
    """Scores of pairs of codes of one dictionary, NaN where either is missing.

    Below ``floor`` a score only says "below" (0): it cannot make a pair read
    crossed or shifted.
    """
    pairs = _ValuePairs.of(first, second, len(dictionary))
    return pairs.spread(
        1.0,
        _fuzzy(dictionary, pairs.low, pairs.high, comparison, score_cutoff=floor),
    )


def _score_crossed(
    plan: ScorePlan,
    scored: dict[str, dict[str, Any]],
    shared: dict[str, _Encoded],
    left: pd.DataFrame,
    right: pd.DataFrame | None,
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
    owner: str,
) -> tuple[dict[str, npt.NDArray[np.bool_]], dict[str, npt.NDArray[np.float64]]]:
    """Score crossed the pairs of swapped fields that match better so.

    Updates the fields' ``_score`` columns in ``scored`` (by label); returns
    the ``<first>_<second>_swapped`` column of each swapped pair of fields and
    the straight ``_score`` columns they replaced (see :func:`learning_view`).
    ``shared`` holds fields already encoded in one dictionary, if any; the
    pairs of fields encoded here are added to it. Then reads shifted fields
    (see :func:`_score_shifted`).
    """
    marks: dict[str, npt.NDArray[np.bool_]] = {}
    straight_columns: dict[str, npt.NDArray[np.float64]] = {}
    cuts = plan.field_cuts
    by_label = {spec.label: spec for spec in plan.specs}

    def encoded_pair(first: str, second: str) -> dict[str, _Encoded]:
        if (
            first in shared
            and second in shared
            and shared[first].dictionary is shared[second].dictionary
        ):
            return shared
        together = _encode_together(
            [by_label[first], by_label[second]], left, right, owner
        )
        # Kept for the readings after this one (familiar forms, initials): a
        # field is encoded once however many of them read it.
        shared.update(together)
        return together

    for first, second in plan.swaps:
        straight = (scored[first][f"{first}_score"], scored[second][f"{second}_score"])
        floors = (min(cuts[first]), min(cuts[second]))
        encoded = encoded_pair(first, second)
        comparison = plan.comparisons[first]
        crossed = (
            np.full(left_positions.size, np.nan),
            np.full(left_positions.size, np.nan),
        )
        # Crossed scores can only beat straight ones below 1 (a missing one
        # leaves a crossed score missing too), and the second way round only
        # matters where the first already crosses.
        with np.errstate(invalid="ignore"):
            rows = np.flatnonzero((straight[0] < 1) & (straight[1] < 1))
        if rows.size:
            crossed[0][rows] = _crossed_score(
                encoded,
                first,
                second,
                left_positions[rows],
                right_positions[rows],
                comparison,
                floors[0],
            )
            with np.errstate(invalid="ignore"):
                rows = rows[
                    (crossed[0][rows] >= floors[0])
                    & (crossed[0][rows] > np.nan_to_num(straight[0][rows], nan=0.0))
                ]
        if rows.size:
            crossed[1][rows] = _crossed_score(
                encoded,
                second,
                first,
                left_positions[rows],
                right_positions[rows],
                comparison,
                floors[1],
            )
        better = _swaps.crossed_better(straight, crossed, floors)
        for label, values in zip((first, second), crossed, strict=True):
            column = f"{label}_score"
            straight_columns.setdefault(column, scored[label][column])
            scored[label][column] = np.where(better, values, scored[label][column])
        marks[f"{first}_{second}_swapped"] = better
    read = np.zeros(left_positions.size, dtype=bool)
    for mark in marks.values():
        read |= mark
    for field_label, into in plan.shifts:
        for label in (field_label, into):
            column = f"{label}_score"
            straight_columns.setdefault(column, scored[label][column])
        better = _score_shifted(
            plan,
            scored,
            encoded_pair(field_label, into),
            (field_label, into),
            left_positions,
            right_positions,
            ~read,
        )
        marks[f"{field_label}_as_{into}"] = better
        read |= better
    return marks, straight_columns


def _score_shifted(
    plan: ScorePlan,
    scored: dict[str, dict[str, Any]],
    encoded: dict[str, _Encoded],
    shift: tuple[str, str],
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
    open_rows: npt.NDArray[np.bool_],
) -> npt.NDArray[np.bool_]:
    """Read a shifting field's value as the field it shifts into.

    Where one record of a pair lacks ``into`` but has ``field``, and the other
    has ``into``, the first's ``field`` is scored against the other's
    ``into``; a pair matching better so (:func:`lsh_frame.compare.swaps.shifted_better`)
    gets that score as ``into``'s and ``field`` missing (the record has none of
    its own). Only ``open_rows`` (not read crossed already) are read. Updates
    ``scored``; returns which pairs were read so.
    """
    field_label, into = shift
    floor = min(plan.field_cuts[into])
    codes = {
        label: (
            encoded[label].left[left_positions],
            encoded[label].right[right_positions],
        )
        for label in shift
    }
    shifted = np.full(left_positions.size, np.nan)
    dictionary = encoded[field_label].dictionary
    # The record without ``into`` is the right one, then the left one.
    for lacking, having in ((1, 0), (0, 1)):
        rows = np.flatnonzero(
            open_rows
            & (codes[into][lacking] < 0)
            & (codes[field_label][lacking] >= 0)
            & (codes[into][having] >= 0)
        )
        if not rows.size:
            continue
        shifted[rows] = _codes_score(
            dictionary,
            codes[field_label][lacking][rows],
            codes[into][having][rows],
            plan.comparisons[into],
            floor,
        )
    straight = scored[field_label][f"{field_label}_score"]
    better = _swaps.shifted_better(straight, shifted, floor)
    scored[into][f"{into}_score"] = np.where(
        better, shifted, scored[into][f"{into}_score"]
    )
    scored[field_label][f"{field_label}_score"] = np.where(better, np.nan, straight)
    return better
