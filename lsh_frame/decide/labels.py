"""A person's answers about pairs: the ``labels=`` frame, checked and placed.

``labels`` is a frame with columns ``left`` and ``right`` (the two records'
index labels, as in a pair frame) and ``match``: True (the same entity),
False (not), or missing (unsure: kept in the file, learned from by nothing).
:func:`check_labels` reads it; :func:`labelled_rows` finds the answered pairs
among candidate pairs; :func:`unfound_pairs` lists the answered pairs that
blocking did not find, which :func:`lsh_frame.pairs` adds to the candidates
(``found_by`` ``"labels"``) so every answer is learned from and honoured.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame._validation import Answers, check_labels
from lsh_frame.errors import ColumnError, ConfigError

__all__ = [
    "LABELS_KEY",
    "Answers",
    "Placed",
    "check_labels",
    "labelled_rows",
    "pair_codes",
    "place_answers",
    "unfound_pairs",
]

#: ``found_by`` of the answered pairs that blocking did not find.
LABELS_KEY = "labels"


@dataclass(frozen=True)
class Placed:
    """Answers placed in the tables: record positions, one row per pair."""

    left: npt.NDArray[np.int64]
    right: npt.NDArray[np.int64]
    #: 1.0 (match), 0.0 (no match) or NaN (unsure).
    match: npt.NDArray[np.float64]
    link: bool

    @property
    def answered(self) -> Placed:
        """The pairs answered yes or no (not unsure)."""
        keep = ~np.isnan(self.match)
        return Placed(self.left[keep], self.right[keep], self.match[keep], self.link)

    def codes(self, right_size: int) -> npt.NDArray[np.int64]:
        """One number per pair (a dedupe's pair in either order alike)."""
        return pair_codes(self.left, self.right, right_size, self.link)


def pair_codes(
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    right_size: int,
    link: bool,
) -> npt.NDArray[np.int64]:
    """``left * right_size + right``; a dedupe's pair by its lower position first."""
    if not link:
        left, right = np.minimum(left, right), np.maximum(left, right)
    return left.astype(np.int64) * np.int64(max(right_size, 1)) + right


def place_answers(
    answers: Answers, frame: pd.DataFrame, other: pd.DataFrame | None, owner: str
) -> Placed:
    """Find the answered records in the tables; keep each pair's last answer.

    Without ``other`` (a dedupe), the pair (a, b) is the pair (b, a). A pair
    answered twice keeps its last answer (a person changed their mind).
    Labels naming a record that is not in its table are an error, and so is a
    dedupe's record paired with itself.

    Examples
    --------
    >>> frame = pd.DataFrame({"name": ["a", "b", "c"]}, index=[10, 11, 12])
    >>> labels = pd.DataFrame({"left": [11, 10], "right": [10, 12],
    ...                        "match": [True, False]})
    >>> placed = place_answers(check_labels(labels, "pairs"), frame, None, "pairs")
    >>> placed.left.tolist(), placed.right.tolist(), placed.match.tolist()
    ([1, 0], [0, 2], [1.0, 0.0])
    """
    link = other is not None
    right_frame = frame if other is None else other
    left = np.asarray(frame.index.get_indexer_for(answers.left), dtype=np.int64)
    right = np.asarray(right_frame.index.get_indexer_for(answers.right), dtype=np.int64)
    for at, labels, role in zip(
        (left, right), (answers.left, answers.right), ("left", "right"), strict=True
    ):
        if (at < 0).any():
            unknown = list(labels[at < 0][:3])
            table = "the other table" if role == "right" and link else "the frame"
            index = right_frame.index if role == "right" else frame.index
            raise ColumnError(
                f"The labels passed to {owner} name records in their {role!r} column "
                f"that are not in {table} (for example {unknown}). "
                + _type_hint(labels[at < 0], index)
                + "Label pairs of the records being matched."
            )
    if not link and (left == right).any():
        example = answers.left[np.flatnonzero(left == right)[0]]
        raise ConfigError(
            f"The labels passed to {owner} pair record {example!r} with itself. "
            "Answer pairs of two different records."
        )
    codes = pair_codes(left, right, len(right_frame), link)
    # The last answer of each pair: the first in reversed order.
    _, first = np.unique(codes[::-1], return_index=True)
    last = np.sort(codes.size - 1 - first)
    return Placed(left[last], right[last], answers.match[last], link)


def _type_hint(unknown: pd.Index, index: pd.Index) -> str:
    """Say so when labels not found are found as text (ids read as numbers)."""
    as_text = pd.Index(unknown, tupleize_cols=False).astype(str)
    if not as_text.isin(pd.Index(index, tupleize_cols=False).astype(str)).all():
        return ""
    return (
        "They are there as text: the labels and the index differ in type (read an "
        "answers file with dtype={'left': str, 'right': str} when the ids are text). "
    )


def labelled_rows(
    placed: Placed,
    pair_left: npt.NDArray[np.int64],
    pair_right: npt.NDArray[np.int64],
    right_size: int,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Rows of the pairs (record positions) answered yes or no, and the answers.

    Examples
    --------
    >>> placed = Placed(np.array([0, 2]), np.array([1, 0]), np.array([1.0, 0.0]), False)
    >>> labelled_rows(placed, np.array([0, 0, 1]), np.array([1, 2, 2]), 3)
    (array([0, 1]), array([1., 0.]))
    """
    answered = placed.answered
    if not answered.match.size or not pair_left.size:
        return np.empty(0, dtype=np.int64), np.empty(0)
    pair_keys = pair_codes(pair_left, pair_right, right_size, placed.link)
    unique, first = np.unique(pair_keys, return_index=True)
    wanted = answered.codes(right_size)
    at = np.minimum(np.searchsorted(unique, wanted), unique.size - 1)
    found = unique[at] == wanted
    rows = first[at[found]].astype(np.int64)
    order = np.argsort(rows, kind="stable")
    return rows[order], answered.match[found][order]


def unfound_pairs(
    placed: Placed,
    pair_left: npt.NDArray[np.int64],
    pair_right: npt.NDArray[np.int64],
    frame: pd.DataFrame,
    other: pd.DataFrame | None,
) -> pd.DataFrame:
    """Return the answered pairs that are not among the pairs, as candidate rows.

    Their ``found_by`` is :data:`LABELS_KEY`; a dedupe's pair is written with
    the record that comes first in ``frame`` on the left, as candidates are.
    """
    right_frame = frame if other is None else other
    answered = placed.answered
    known = pair_codes(pair_left, pair_right, len(right_frame), placed.link)
    missing = ~np.isin(answered.codes(len(right_frame)), known)
    left, right = answered.left[missing], answered.right[missing]
    if not placed.link:
        left, right = np.minimum(left, right), np.maximum(left, right)
    return pd.DataFrame(
        {
            "left": frame.index[left],
            "right": right_frame.index[right],
            "found_by": LABELS_KEY,
        }
    )
