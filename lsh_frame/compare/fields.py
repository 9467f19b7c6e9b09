"""Every field of every candidate pair scored, and the scores combined.

Per compared field a pair gets:

- ``<field>_jaccard``: the exact Jaccard similarity of the two values' shingle
  sets (the field's :class:`~lsh_frame.ShingleConfig`);
- ``<field>_estimate`` (on request): the MinHash estimate of that similarity;
- ``<field>_score``: the field's comparison (a rapidfuzz scorer, the Jaccard
  similarity, exact equality, or a comparison of numbers, dates or vectors)
  in [0, 1].

Every score is NaN when either value is missing or blank. ``score`` is the
weighted mean of the field scores over the fields present in both records
(:func:`_combine`). Deciding which pairs match is the next stage's work
(:mod:`lsh_frame.decide`).

Work is proportional to the distinct *value pairs*, not the record pairs: the
values of a field are normalised and dictionary-encoded once; a pair whose two
values are equal scores 1 without any comparison, and each distinct pair of
unequal values is compared once, with rapidfuzz's ``process.cpdist`` on all
cores and the set kernels of ``_kernels.sets`` for Jaccard; fields are scored
concurrently.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from lsh_frame import _progress
from lsh_frame.block.identical import found_identical
from lsh_frame.block.keys import _field_text
from lsh_frame.compare.codes import RecordCodes, code_scores
from lsh_frame.compare.crossed import _score_crossed
from lsh_frame.compare.nicknames import _read_nicknames
from lsh_frame.compare.text import (
    _TOGETHER,
    _encode_together,
    _score_fields_together,
    _score_signature_field,
    _score_text_field,
)
from lsh_frame.compare.vectors import vector_scores
from lsh_frame.config import MinHashConfig
from lsh_frame.sketch.vectors import VECTOR_KINDS

if TYPE_CHECKING:
    from lsh_frame.block.fields import Field
    from lsh_frame.compare.plan import ScorePlan
    from lsh_frame.compare.text import _Encoded
    from lsh_frame.text.shingle import ColumnTexts


#: The key of :func:`score_fields`' columns that holds the straight scores of
#: fields read otherwise — crossed, shifted, familiar forms and initials of
#: given names (a dict, not a column: see :func:`learning_view`).
STRAIGHT = "_straight"


def learning_view(columns: dict[str, Any]) -> dict[str, Any]:
    """Return the columns a match model learns from: swapped fields straight.

    :func:`score_fields` scores a pair of swapped fields crossed when that
    matches better, and the decision reads them so; the model learns from the
    straight scores, so whether a table's fields trade places cannot change
    what it learns about agreeing and differing fields.
    """
    straight = columns.get(STRAIGHT)
    if straight is None:
        return columns
    return {**without_straight(columns), **straight}


def without_straight(columns: dict[str, Any]) -> dict[str, Any]:
    """Return the columns without the straight scores kept for learning."""
    return {name: values for name, values in columns.items() if name != STRAIGHT}


#: Pairs from which :func:`score_fields` scores the fields on several threads.
THREADED_PAIRS = 2_000


def score_fields(
    plan: ScorePlan,
    left: pd.DataFrame,
    right: pd.DataFrame | None,
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
    owner: str,
    *,
    texts: ColumnTexts | None = None,
) -> dict[str, Any]:
    """Field columns (and values, when asked) and ``score`` of some pairs.

    ``right`` is None when both positions index ``left``. Every column is
    computed pair by pair, so parts of the pairs score exactly as all of them.
    ``texts`` holds the text of columns of ``left`` or ``right`` when already
    converted (a batch of new records keyed first).
    """
    right_frame = left if right is None else right

    def score_field(spec: Field) -> dict[str, Any]:
        if plan.comparisons[spec.label] in VECTOR_KINDS:
            (column,) = spec.columns
            vector_score = vector_scores(
                left[column], right_frame[column], left_positions, right_positions,
                plan.comparisons[spec.label], column=column, owner=owner,
            )  # fmt: skip
            return {f"{spec.label}_score": vector_score}
        if plan.comparisons[spec.label] == "estimate":
            return _score_signature_field(
                spec, left, right, left_positions, right_positions
            )[0]
        if spec.label in together:
            return together[spec.label]
        return _score_text_field(
            spec,
            left,
            right,
            left_positions,
            right_positions,
            comparison=plan.comparisons[spec.label],
            estimate_config=MinHashConfig(
                num_perm=plan.estimate[0],
                seed=plan.estimate[1],
                shingle=spec.shingle_config,
            )
            if plan.estimate is not None
            else None,
            owner=owner,
            frequencies=plan.frequencies.get(spec.label),
            encoded=shared.get(spec.label),
            placeholders=plan.placeholders_of(spec.label),
        )

    specs = plan.specs
    shared: dict[str, _Encoded] = {}
    together: dict[str, dict[str, Any]] = {}
    if len(left_positions) < THREADED_PAIRS:
        # A few pairs: the fields of one shingle configuration in one pass
        # (numbers and dates read only their own entries of the dictionary),
        # and those of rapidfuzz and Jaccard scored together.
        groups: dict[Any, list[Field]] = {}
        for spec in specs:
            comparison = plan.comparisons[spec.label]
            if comparison not in (*VECTOR_KINDS, "estimate"):
                groups.setdefault(spec.shingle_config, []).append(spec)
        for group in groups.values():
            if len(group) > 1:
                encoded = _encode_together(group, left, right, owner, texts)
                shared.update(encoded)
                alike = [
                    spec for spec in group if plan.comparisons[spec.label] in _TOGETHER
                ]
                if plan.estimate is None and alike:
                    together.update(
                        _score_fields_together(
                            alike,
                            encoded,
                            left_positions,
                            right_positions,
                            plan.comparisons,
                        )
                    )
    _progress.step(
        f"scoring {len(specs)} field{'s' if len(specs) != 1 else ''}",
        total=len(specs) * len(left_positions),
    )
    # Fields are independent and their numpy, pyarrow and rapidfuzz work
    # releases the GIL: score them on all cores. Results keep the fields' order
    # and are reported done on this thread.
    scored_fields = []
    if len(left_positions) < THREADED_PAIRS:
        # Starting threads costs more than a few pairs' scores (a batch of
        # new records against a saved index).
        for spec in specs:
            scored_fields.append(score_field(spec))
            _progress.advance(len(left_positions))
    else:
        workers = min(len(specs), os.cpu_count() or 1)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for field_columns in pool.map(score_field, specs):
                scored_fields.append(field_columns)
                _progress.advance(len(left_positions))

    by_label = dict(zip([spec.label for spec in specs], scored_fields, strict=True))
    swapped, straight = _score_crossed(
        plan, by_label, shared, left, right, left_positions, right_positions, owner
    )
    familiar, before_names = _read_nicknames(
        plan,
        by_label,
        swapped,
        shared,
        left,
        right,
        left_positions,
        right_positions,
        owner,
    )
    for column, values in before_names.items():
        straight.setdefault(column, values)
    columns: dict[str, Any] = {}
    for spec, field_columns in zip(specs, scored_fields, strict=True):
        if plan.values:
            for side, table, positions in (
                ("left", left, left_positions),
                ("right", right_frame, right_positions),
            ):
                if len(spec.columns) == 1:
                    # The column's own dtype (text, category, signatures).
                    shown = table[spec.columns[0]].iloc[positions].array
                else:
                    text = _field_text(table, spec, owner=owner)
                    shown = pd.arrays.ArrowExtensionArray(
                        text.take(pa.array(positions))
                    )
                columns[f"{spec.label}_{side}"] = shown
        columns.update(field_columns)
    columns.update(swapped)
    columns.update(familiar)
    if plan.codes is not None:
        columns[f"{plan.codes.label}_score"] = _code_scores(
            plan, left, right, left_positions, right_positions, owner
        )
    weights = [spec.weight for spec in specs]
    columns["score"] = _combine(
        [columns[f"{spec.label}_score"] for spec in specs],
        weights,
        len(left_positions),
    )
    if straight:
        straight["score"] = _combine(
            [
                straight.get(f"{spec.label}_score", columns[f"{spec.label}_score"])
                for spec in specs
            ],
            weights,
            len(left_positions),
        )
        columns[STRAIGHT] = straight
    return columns


def _code_scores(
    plan: ScorePlan,
    left: pd.DataFrame,
    right: pd.DataFrame | None,
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
    owner: str,
) -> npt.NDArray[np.float64]:
    """Return each pair's identifier-codes score (``lsh_frame.compare.codes``)."""
    reading = plan.codes
    assert reading is not None and reading.frequencies is not None
    specs = reading.specs(plan)
    left_codes = RecordCodes.of_table(left, specs, owner)
    right_codes = (
        left_codes if right is None else RecordCodes.of_table(right, specs, owner)
    )
    return code_scores(
        left_codes, right_codes, reading.frequencies, left_positions, right_positions
    )


def identical_mask(plan: ScorePlan, pairs: pd.DataFrame) -> npt.NDArray[np.bool_]:
    """Which pairs join a collapsed group's member to its representative.

    Those are the pairs deduplication's candidates found by ``"identical"``
    (see :mod:`lsh_frame.block.identical`): two records with the same raw value in
    every compared column. Such a pair is a match by definition: it is left
    out of the choice of ``"auto"``'s cut and of the model's learning (a
    hundred thousand copies would otherwise teach the model that everything
    agrees), and gets ``match`` true and ``match_probability`` 1.
    """
    if plan.link:
        return np.zeros(len(pairs), dtype=bool)
    return found_identical(pairs)


def without(
    levels: dict[str, npt.NDArray[np.intp]], identical: npt.NDArray[np.bool_]
) -> dict[str, npt.NDArray[np.intp]]:
    """Return the levels of the pairs that are not identical (the model learns from)."""
    if not identical.any():
        return levels
    kept = ~identical
    return {label: values[kept] for label, values in levels.items()}


def force_identical(
    probability: npt.NDArray[np.float64] | None,
    match: npt.NDArray[np.bool_],
    identical: npt.NDArray[np.bool_],
) -> tuple[npt.NDArray[np.float64] | None, npt.NDArray[np.bool_]]:
    """Identical pairs are matches, with probability 1."""
    if not identical.any():
        return probability, match
    match = match.copy()
    match[identical] = True
    if probability is not None:
        probability = probability.copy()
        probability[identical] = 1.0
    return probability, match


def _combine(
    field_scores: list[npt.NDArray[np.float64]], weights: list[float], size: int
) -> npt.NDArray[np.float64]:
    """Weighted mean over the fields present (not NaN) in both records."""
    total = np.zeros(size)
    weight_present = np.zeros(size)
    for values, weight in zip(field_scores, weights, strict=True):
        present = ~np.isnan(values)
        total += np.where(present, values, 0.0) * weight
        weight_present += present * weight
    with np.errstate(invalid="ignore", divide="ignore"):
        combined = total / weight_present
    combined[weight_present == 0] = np.nan
    return np.clip(combined, 0.0, 1.0)
