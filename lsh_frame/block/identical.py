"""Identical records: large groups of rows whose compared values are all the same.

Blocking drops any bucket with more than ``max_bucket`` records, so a hundred
thousand copies of one record would never be paired. Deduplication therefore
collapses each *large* group of identical rows before blocking: the group is
represented by its row with the smallest index label, only representatives
are signed, keyed and scored against other records, and every other member
is paired with its representative by the ``"identical"`` key. Such a pair is
a match by definition (probability 1), left out of ``"auto"``'s cut and of
the model's learning.

A group is large when it has more than :data:`COLLAPSE_ABOVE` rows. Smaller
groups are keyed, paired and scored row by row as any other records: their
own pairs are few, and every pair of copies is then found and scored, as
pair-level results expect.

Two rows are identical when every compared column (the columns the fields
name) holds the same raw value in both, a missing value being equal to a
missing value. Values are compared through
:func:`pandas.util.hash_pandas_object` (two independent 64-bit hashes, so the
chance that two different rows collide is about n² / 2¹²⁹): a value and its
text in an object column of mixed types (``1`` and ``"1"``) hash alike, and
they are compared as that text anyway. Values that only become equal after
normalisation (``"Smith"`` and ``"smith "``) are not identical: blocking and
scoring find them as before. Rows whose compared values are all missing or
blank are never collapsed: they hold nothing to be identical in. Values
pandas cannot hash (stored MinHash signature columns, lists) turn collapsing
off for the call: such rows are keyed row by row.

Everything here but the group sizes is row-local (a row's hash depends on its
values only), so the Dask engine hashes its partitions with the same
functions and groups the whole table's hashes at once.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = [
    "COLLAPSE_ABOVE",
    "IDENTICAL",
    "IdenticalRows",
    "found_identical",
    "group_rows",
    "row_hashes",
]

#: The ``found_by`` label of the pairs that join a member to its representative.
IDENTICAL = "identical"

#: Groups of identical rows larger than this are collapsed to one representative.
#: A group of g rows keyed row by row builds g(g-1)/2 pairs of its own (2,016 at
#: 64, 500,000 at 1,000) and puts g rows in each of its buckets, so beyond a few
#: dozen it crowds out the buckets' other records and, past ``max_bucket``
#: (default 1,000), has all its buckets dropped. Well below that, collapsing
#: changes nothing for ordinary data, whose copies come in twos and threes.
COLLAPSE_ABOVE = 64


def found_identical(pairs: pd.DataFrame) -> npt.NDArray[np.bool_]:
    """Which pairs join a collapsed group's member to its representative.

    Those whose ``found_by`` is :data:`IDENTICAL` (none without the column;
    a missing ``found_by`` is no such pair).
    """
    if "found_by" not in pairs.columns:
        return np.zeros(len(pairs), dtype=bool)
    return np.asarray(
        pairs["found_by"].eq(IDENTICAL).to_numpy(dtype=bool, na_value=False)
    )


# Two fixed, independent 16-byte keys: a 128-bit fingerprint per row.
_HASH_KEYS = ("lsh-frame-ident1", "lsh-frame-ident2")


def filled_cells(frame: pd.DataFrame) -> npt.NDArray[np.int64]:
    """Per row, how many cells hold a value (neither missing nor blank text)."""
    filled = np.zeros(len(frame), dtype=np.int64)
    for position in range(frame.shape[1]):
        column = frame.iloc[:, position]
        present = column.notna().to_numpy(dtype=bool).copy()
        if (
            column.dtype == object
            or pd.api.types.is_string_dtype(column.dtype)
            or isinstance(column.dtype, pd.CategoricalDtype)
        ):
            length = column.astype("string").str.strip().str.len()
            present &= length.fillna(0).to_numpy(dtype=np.int64) > 0
        filled += present
    return filled


def row_hashes(
    frame: pd.DataFrame, columns: Sequence[Hashable]
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """Each row's 128-bit fingerprint of ``columns`` (n × 2) and whether it is filled.

    Row-local: the same row gives the same fingerprint in any frame or
    partition. A row that is not filled (every compared value missing or
    blank) is never identical to another.
    """
    values = frame[list(columns)]
    if len(values) == 0:
        return np.empty((0, 2), np.uint64), np.empty(0, bool)
    try:
        hashes = np.column_stack(
            [
                pd.util.hash_pandas_object(values, index=False, hash_key=key).to_numpy(
                    np.uint64
                )
                for key in _HASH_KEYS
            ]
        )
    except (TypeError, UnicodeEncodeError):
        # Values pandas cannot hash (lists, dicts, MinHash signatures, text
        # with lone surrogates): no row counts as identical, and the stages
        # report such values themselves.
        return np.zeros((len(values), 2), np.uint64), np.zeros(len(values), bool)
    return hashes, filled_cells(values) > 0


@dataclass(frozen=True)
class IdenticalRows:
    """Groups of identical rows, by position.

    ``representative[i]`` is the position of the row that stands for row
    ``i``'s group (``i`` itself for a representative or a row without a copy).
    """

    representative: npt.NDArray[np.int64]

    @property
    def representatives(self) -> npt.NDArray[np.int64]:
        """Positions of the rows that stand for their group, ascending."""
        return np.flatnonzero(
            self.representative == np.arange(self.representative.size)
        )

    def pairs(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Each member with its representative, as (earlier, later) positions."""
        members = self.members
        heads = self.representative[members]
        return np.minimum(heads, members), np.maximum(heads, members)

    @property
    def members(self) -> npt.NDArray[np.int64]:
        """Positions of the rows represented by an earlier row, ascending."""
        return np.flatnonzero(
            self.representative != np.arange(self.representative.size)
        )

    @property
    def collapsed(self) -> int:
        """Number of rows represented by another (the identical pairs)."""
        return int(self.members.size)


def group_rows(
    hashes: npt.NDArray[np.uint64],
    filled: npt.NDArray[np.bool_],
    rank: npt.NDArray[np.int64] | None = None,
    *,
    collapse_above: int = COLLAPSE_ABOVE,
) -> IdenticalRows:
    """Group rows with equal fingerprints; the lowest-ranked row represents each.

    Only groups of more than ``collapse_above`` rows are collapsed; the rows
    of smaller groups represent themselves. ``rank`` orders the rows (by
    default their positions); ranking them by their index labels makes the
    groups' representatives, and so the pairs and entities, independent of
    the rows' order.

    Examples
    --------
    >>> hashes = np.array([[1, 2], [3, 4], [1, 2], [1, 2]], dtype=np.uint64)
    >>> filled = np.array([True, True, True, False])
    >>> group_rows(hashes, filled, collapse_above=1).representative
    array([0, 1, 0, 3])
    >>> ranks = np.array([3, 2, 1, 0])
    >>> group_rows(hashes, np.ones(4, bool), ranks, collapse_above=1).representative
    array([3, 1, 3, 3])
    >>> group_rows(hashes, np.ones(4, bool), collapse_above=3).representative
    array([0, 1, 2, 3])
    """
    rows = hashes.shape[0]
    representative = np.arange(rows, dtype=np.int64)
    candidates = np.flatnonzero(filled)
    if candidates.size < 2:
        return IdenticalRows(representative)
    first, second = hashes[candidates, 0], hashes[candidates, 1]
    ranks = candidates if rank is None else rank[candidates]
    # Ties keep ascending ranks, so each run starts with its lowest-ranked row.
    order = np.lexsort((ranks, second, first))
    starts = np.ones(order.size, dtype=bool)
    starts[1:] = (first[order[1:]] != first[order[:-1]]) | (
        second[order[1:]] != second[order[:-1]]
    )
    run = np.cumsum(starts) - 1
    heads = candidates[order[starts]]
    sizes = np.diff(np.append(np.flatnonzero(starts), order.size))
    large = sizes[run] > collapse_above
    representative[candidates[order[large]]] = heads[run[large]]
    return IdenticalRows(representative)
