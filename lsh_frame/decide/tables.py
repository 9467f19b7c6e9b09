"""What the match model learns from and reads with.

:class:`LevelTable` (the distinct level patterns of the pairs and their counts,
which add up over parts of the pairs), :class:`Evidence` (a pair's weights in
bits) and :class:`Together` (fields that differ together, read as one fact).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["Evidence", "LevelTable", "Together"]


#: ``"auto"`` learns ``min_score`` only from at least this many scored pairs.
_AUTO_MIN_PAIRS = 100


#: A :class:`Together` cell kind: two or more of a group's fields differ while
#: another present one does not (a move that kept the phone number).
_PART_DIFFERS = "differ among more"


#: The joint observations of a :class:`Together` group: all its fields present
#: differ (a move), all agree (a household sharing an address and phone), or
#: some differ (above).
_TOGETHER_KINDS = ("differ", "agree", _PART_DIFFERS)


def _level_patterns(
    columns: list[npt.NDArray[np.intp]],
) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.int64]]:
    """Distinct rows of the (pairs × fields) level matrix, and their counts."""
    base = max((int(level.max()) + 1 for level in columns if level.size), default=1)
    base = max(base, 2)
    if base ** len(columns) > np.iinfo(np.int64).max:  # many fields: rows as keys
        matrix = np.stack(columns, axis=1).astype(np.uint8)
        rows, row_counts = np.unique(matrix, axis=0, return_counts=True)
        return rows.astype(np.intp), row_counts.astype(np.int64)
    # One integer per pair (its levels as digits): a flat unique is fast.
    code = np.zeros(columns[0].size if columns else 0, dtype=np.int64)
    for level in columns:
        code = code * base + level
    distinct, counts = np.unique(code, return_counts=True)
    patterns = np.empty((distinct.size, len(columns)), dtype=np.intp)
    for column in range(len(columns) - 1, -1, -1):
        distinct, patterns[:, column] = np.divmod(distinct, base)
    return patterns, counts.astype(np.int64)


@dataclass(frozen=True)
class LevelTable:
    """Distinct (level of each counted field, provisional match) rows and counts.

    All the match model learns from; tables of parts of the pairs merge into
    the table of all of them (rows in ascending order, counts summed).
    """

    rows: npt.NDArray[np.uint8]
    counts: npt.NDArray[np.int64]

    @classmethod
    def of(
        cls, levels: dict[str, npt.NDArray[np.intp]], match: npt.NDArray[np.bool_]
    ) -> LevelTable:
        """Table of some pairs' levels and provisional split."""
        patterns, counts = _level_patterns([*levels.values(), match.astype(np.intp)])
        return cls(patterns.astype(np.uint8), counts)

    @classmethod
    def merge(cls, parts: list[LevelTable]) -> LevelTable:
        """Table of the union of parts."""
        rows = np.concatenate([part.rows for part in parts])
        counts = np.concatenate([part.counts for part in parts])
        return cls(*_summed_rows(rows, counts))

    @property
    def pairs(self) -> int:
        """Number of pairs counted."""
        return int(self.counts.sum())

    def fields(self) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.int64]]:
        """Distinct field patterns (the split left out) and their counts."""
        rows, counts = _summed_rows(self.rows[:, :-1], self.counts)
        return rows.astype(np.intp), counts


def _summed_rows(
    rows: npt.NDArray[np.uint8], counts: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]:
    """Distinct rows in ascending order, with the counts of equal rows summed."""
    if rows.shape[0] == 0:
        return rows, counts.astype(np.int64)
    distinct, inverse = np.unique(rows, axis=0, return_inverse=True)
    summed = np.zeros(distinct.shape[0], dtype=np.int64)
    np.add.at(summed, inverse.reshape(-1), counts)
    return distinct, summed


@dataclass(frozen=True)
class Evidence:
    """How a model reaches each pair's match probability, in bits.

    A pair's log2 odds of being a match start at its prior's, ``start``, and
    each field adds its ``weights``: log2(m / u) of the pair's level on it
    (``levels``; a missing value is the last index and weighs 0). The sum is
    ``log_odds``, and ``probability`` the pair's ``match_probability`` (pairs
    forced to 1, the identical ones, aside). Built by :meth:`MatchModel.evidence`.
    """

    start: npt.NDArray[np.float64]
    levels: dict[str, npt.NDArray[np.intp]]
    weights: dict[str, npt.NDArray[np.float64]]

    @property
    def log_odds(self) -> npt.NDArray[np.float64]:
        """Log2 odds of a match of each pair: ``start`` plus every field's weight."""
        total = self.start.copy()
        for weights in self.weights.values():
            total += weights
        return total

    @property
    def probability(self) -> npt.NDArray[np.float64]:
        """Match probability of each pair."""
        return np.asarray(1 / (1 + np.exp2(-self.log_odds)), dtype=np.float64)


@dataclass(frozen=True)
class _GroupCells:
    """Each pair's fields of a group: present, differing (bit masks), cell kinds."""

    present: npt.NDArray[np.int64]
    differing: npt.NDArray[np.int64]
    #: Whether each pair falls in a cell of each kind.
    alike: dict[str, npt.NDArray[np.bool_]]


@dataclass(frozen=True)
class Together:
    """Fields that differ together, and how often all of them differ or agree.

    Naive Bayes adds each field's weight as if the fields were independent,
    but a person who moved differs on street, city and postcode at once: three
    strong "differs" for one fact, which out-vote a name, date of birth, phone
    and e-mail that agree. Likewise a household shares all of its address at
    once: three "agrees" for one fact. For fields that differ together
    (:func:`_differ_together`), a pair whose fields present in both records
    (at least two of the group) *all* differ, or all agree (top level), takes
    the weight of that one observation instead: log(m / u) of "all of these
    differ" (or agree) among matches and among non-matches with the same
    fields present. ``cells`` maps ``(kind, present-field bit mask over
    fields)`` to ``(m, u)``, kind ``"differ"`` or ``"agree"``. When the fields
    are in fact independent this equals the sum it replaces (up to noise).

    A pair where two or more of the group's fields differ and another present
    one does not (a person who moved and kept the phone number) reads the
    differing fields as one fact too: cells of kind ``"differ among more"``,
    keyed by the differing fields ``D``, whose m and u are the shares of pairs
    with all of ``D`` present in which all of ``D`` differ; the other fields
    keep their own weights. (make_customers 1M, seed 7: of 3,185 true pairs
    undecided, 452 agreed on name, phone, date of birth and e-mail but for a
    move, which cost -7.9 bits as three facts.) Other pairs keep the per-field
    weights.

    On make_customers (eight columns) the groups found are street, city,
    postcode and phone (1M rows) or surname, street, city and postcode
    (5,000-20,000 rows); pair F1 of a dedupe: 1M records 0.9733 -> 0.9862
    (seed 7) and 0.9869 -> 0.9900 (seed 1); 20,000 records 0.9937 -> 0.9948;
    the first 20,000 rows of make_customers(100,000) without the e-mail
    column 0.9202 -> 0.9750.
    """

    fields: tuple[str, ...]
    cells: dict[tuple[str, int], tuple[float, float]]

    def to_dict(self) -> dict[str, Any]:
        """Return the group as JSON-ready data (``MatchModel.from_dict`` reads it)."""
        return {
            "fields": list(self.fields),
            "cells": [
                {
                    "all": kind,
                    "present": [
                        label
                        for bit, label in enumerate(self.fields)
                        if mask >> bit & 1
                    ],
                    "m": m,
                    "u": u,
                }
                for (kind, mask), (m, u) in sorted(self.cells.items())
            ],
        }
