"""Sorted token sets in CSR form and their intersections, for many pairs at once.

A collection of sets is ``(ids, offsets)``: set ``i`` is the sorted, distinct
``ids[offsets[i]:offsets[i + 1]]``. Token hashes are first renamed to dense
32-bit ids so that a (pair, token) couple fits one 64-bit integer; the tokens of
all pairs are then merged by one sort and intersections are runs of two equal
couples. Nothing loops over sets or pairs in Python.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from lsh_frame._kernels import native

#: Couples (pair, token) merged per sort: bounds the temporary arrays.
_MERGE_TOKENS = 8_000_000


def unique_inverse(
    values: npt.NDArray,
) -> tuple[npt.NDArray, npt.NDArray[np.int64]]:
    """Return the sorted distinct values and each value's position among them.

    Examples
    --------
    >>> unique_inverse(np.array([30, 10, 30, 20]))
    (array([10, 20, 30]), array([2, 0, 2, 1]))
    """
    order = np.argsort(values)
    ordered = values[order]
    first = np.empty(ordered.size, dtype=bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    inverse = np.empty(ordered.size, dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    return ordered[first], inverse


def token_sets(
    hashes: npt.NDArray[np.uint64], offsets: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Turn per-record token hashes (repeats allowed) into sorted sets of dense ids.

    Examples
    --------
    >>> hashes = np.array([9, 5, 9, 5], np.uint64)
    >>> ids, offsets = token_sets(hashes, np.array([0, 3, 4]))
    >>> ids.tolist(), offsets.tolist()
    ([0, 1, 0], [0, 2, 3])
    """
    counts = np.diff(offsets)
    _, ids = unique_inverse(hashes)
    owner = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    couples = np.sort((owner << np.int64(32)) | ids)
    keep = np.empty(couples.size, dtype=bool)
    keep[:1] = True
    np.not_equal(couples[1:], couples[:-1], out=keep[1:])
    couples = couples[keep]
    sizes = np.bincount(couples >> np.int64(32), minlength=counts.size)
    set_offsets = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(sizes, out=set_offsets[1:])
    return couples & np.int64(0xFFFFFFFF), set_offsets


def gather(
    offsets: npt.NDArray[np.int64], rows: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Positions of the elements of ``rows`` (in order) in a CSR value array.

    Examples
    --------
    >>> gather(np.array([0, 2, 5]), np.array([1, 0])).tolist()
    [2, 3, 4, 0, 1]
    """
    lengths = offsets[rows + 1] - offsets[rows]
    total = int(lengths.sum())
    ends = np.cumsum(lengths)
    shift = np.repeat(offsets[rows] - (ends - lengths), lengths)
    return np.arange(total, dtype=np.int64) + shift


def intersection_sizes(
    ids: npt.NDArray[np.int64],
    offsets: npt.NDArray[np.int64],
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
) -> npt.NDArray[np.int64]:
    """``|set[first[p]] ∩ set[second[p]]|`` for every pair ``p``.

    Pairs are processed in slices of about ``_MERGE_TOKENS`` tokens; within a
    slice each token becomes the couple ``p << 32 | id`` and one sort brings
    equal couples together.

    Examples
    --------
    >>> ids, offsets = np.array([1, 2, 3, 2, 3, 4]), np.array([0, 3, 6])
    >>> intersection_sizes(ids, offsets, np.array([0, 0]), np.array([1, 0])).tolist()
    [2, 3]
    """
    result = np.zeros(first.size, dtype=np.int64)
    for start, stop, shared in _shared_tokens(ids, offsets, first, second):
        result[start:stop] = np.bincount(shared >> np.int64(32), minlength=stop - start)
    return result


def _shared_tokens(
    ids: npt.NDArray[np.int64],
    offsets: npt.NDArray[np.int64],
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
) -> Iterator[tuple[int, int, npt.NDArray[np.int64]]]:
    """Yield ``start, stop`` and the tokens the pairs ``start:stop`` share.

    Pairs go in pieces of about :data:`_MERGE_TOKENS` tokens; a shared token
    reads ``pair << 32 | token``, sorted (each pair's shared tokens are one
    run), ``pair`` counted from ``start``.
    """
    sizes = np.diff(offsets)
    tokens = np.cumsum(sizes[first] + sizes[second])
    start = 0
    while start < first.size:
        done = tokens[start - 1] if start else 0
        stop = int(np.searchsorted(tokens, done + _MERGE_TOKENS, side="right"))
        stop = max(stop, start + 1)
        pair = np.arange(stop - start, dtype=np.int64)
        couples = []
        for rows in (first[start:stop], second[start:stop]):
            lengths = sizes[rows]
            couples.append(
                (np.repeat(pair, lengths) << np.int64(32)) | ids[gather(offsets, rows)]
            )
        merged = np.sort(np.concatenate(couples))
        equal = merged[1:] == merged[:-1]
        yield start, stop, merged[1:][equal]
        start = stop


#: Padding of :func:`padded_sets` rows; sorts after every real token.
_PAD = np.uint64(np.iinfo(np.uint64).max)
#: Padding of the right-hand rows, so padding never equals padding.
_RIGHT_PAD = np.uint64(np.iinfo(np.uint64).max - 1)


def padded_sets(
    hashes: npt.NDArray[np.uint64], offsets: npt.NDArray[np.int64], width: int
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """Lay short token sets out as sorted rows of a ``(sets, width)`` matrix.

    Row ``i`` holds set ``i``'s tokens in ascending order, then padding;
    ``valid`` marks the first occurrence of each token, so repeats and padding
    never count. Validity is by position, not by value: a token that happens to
    equal the padding value still counts. Every set must have at most
    ``width`` tokens.

    Examples
    --------
    >>> hashes = np.array([9, 5, 9], np.uint64)
    >>> matrix, valid = padded_sets(hashes, np.array([0, 3]), 4)
    >>> matrix[0, :3].tolist(), valid[0].tolist()
    ([5, 9, 9], [True, True, False, False])
    """
    counts = np.diff(offsets)
    matrix = np.full((counts.size, width), _PAD, dtype=np.uint64)
    rows = np.repeat(np.arange(counts.size), counts)
    columns = np.arange(hashes.size) - np.repeat(offsets[:-1], counts)
    matrix[rows, columns] = hashes
    matrix.sort(axis=1)
    valid = np.arange(width) < counts[:, None]
    valid[:, 1:] &= matrix[:, 1:] != matrix[:, :-1]
    return matrix, valid


def padded_intersection_sizes(
    left_rows: npt.NDArray[np.uint64], right_rows: npt.NDArray[np.uint64]
) -> npt.NDArray[np.int64]:
    """``|left_rows[p] ∩ right_rows[p]|`` for padded rows of one width.

    The rows' invalid slots hold two different padding values that no token
    takes, so a plain equality test counts exactly the shared tokens. Every
    token of one row is compared with every token of the other (``width``²
    comparisons per pair): for short sets this beats sorting. A count never
    exceeds the width (sets have no repeats), so it is summed in bytes.

    Examples
    --------
    >>> left = np.array([[1, 2, 3, _PAD]], np.uint64)
    >>> right = np.array([[2, 3, 4, _RIGHT_PAD]], np.uint64)
    >>> padded_intersection_sizes(left, right)
    array([2])
    """
    width = left_rows.shape[1]
    equal = left_rows[:, :, None] == right_rows[:, None, :]
    counts = equal.reshape(left_rows.shape[0], width * width).view(np.uint8)
    return counts.sum(axis=1, dtype=np.uint8).astype(np.int64)


#: Sets with more tokens than this are intersected by sorting, not padded.
PADDED_WIDTH = 64
_WIDTHS = (4, 8, 16, 32, 64)
#: Up to this many sets (the values of a batch of new records), the short
#: ones all take the widest class any of them needs: one padded matrix and
#: one comparison pass, not one per class (20 values: 0.1 -> 0.03 ms).
FEW_SETS = 256


@dataclass(frozen=True)
class SetTable:
    """Token sets of many values, ready for intersections with any pairing.

    Short sets (at most ``PADDED_WIDTH`` tokens, repeats included) are kept as
    sorted, padded rows in width classes 4, 8, ... 64 (each set in the
    narrowest class that holds it, so memory stays proportional to the
    tokens; up to ``FEW_SETS`` sets, all in one) and intersected by direct
    comparison at the wider width of the two; pairs involving a longer set
    fall back to the sort-merge of dense token ids (so does everything in the
    one-in-10^13 case that a token hashes to a padding value).
    """

    hashes: npt.NDArray[np.uint64]
    offsets: npt.NDArray[np.int64]
    #: Per width class: (left-padded rows, right-padded rows).
    classes: list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]]
    #: Each set's width class (index into the widths; -1: long) and row in it.
    row_class: npt.NDArray[np.int64]
    row_slot: npt.NDArray[np.int64]
    sizes: npt.NDArray[np.int64]
    padded: bool
    #: With the compiled kernels: ``hashes`` and ``offsets`` hold each set
    #: sorted and distinct, and pairs are intersected by merging them.
    merged: bool = False

    @classmethod
    def build(
        cls, hashes: npt.NDArray[np.uint64], offsets: npt.NDArray[np.int64]
    ) -> SetTable:
        """Build the table from per-value token hashes in CSR form."""
        if native.compiled is not None and offsets.size:
            values, value_offsets = native.sorted_sets(hashes, offsets)
            count = offsets.size - 1
            return cls(
                values,
                value_offsets,
                [],
                np.full(count, -1, dtype=np.int64),
                np.zeros(count, dtype=np.int64),
                np.diff(value_offsets),
                padded=False,
                merged=True,
            )
        raw = np.diff(offsets)
        row_class = np.searchsorted(np.array(_WIDTHS), raw).astype(np.int64)
        row_class[raw > PADDED_WIDTH] = -1
        short = row_class >= 0
        if raw.size <= FEW_SETS and short.any():
            row_class[short] = row_class[short].max()
        row_slot = np.zeros(raw.size, dtype=np.int64)
        sizes = np.zeros(raw.size, dtype=np.int64)
        classes = []
        padded = True
        for index, width in enumerate(_WIDTHS):
            rows = np.flatnonzero(row_class == index)
            if not rows.size:  # few values (a batch of new records) fill few
                empty = np.empty((0, width), dtype=np.uint64)
                classes.append((empty, empty))
                continue
            row_slot[rows] = np.arange(rows.size)
            matrix, valid = padded_sets(
                hashes[gather(offsets, rows)],
                np.concatenate([[0], np.cumsum(raw[rows])]).astype(np.int64),
                width,
            )
            sizes[rows] = valid.sum(axis=1)
            padded = padded and not (matrix[valid] >= _RIGHT_PAD).any()
            classes.append(
                (np.where(valid, matrix, _PAD), np.where(valid, matrix, _RIGHT_PAD))
            )
        long_rows = np.flatnonzero(row_class < 0)
        if long_rows.size:
            _, long_offsets = token_sets(
                hashes[gather(offsets, long_rows)],
                np.concatenate([[0], np.cumsum(raw[long_rows])]).astype(np.int64),
            )
            sizes[long_rows] = np.diff(long_offsets)
        return cls(hashes, offsets, classes, row_class, row_slot, sizes, padded)

    def _rows(
        self, rows: npt.NDArray[np.int64], width_class: int, side: int
    ) -> npt.NDArray[np.uint64]:
        """Return padded rows of some sets, widened to one class's width."""
        classes = self.row_class[rows]
        if (classes == width_class).all():
            return self.classes[width_class][side][self.row_slot[rows]]
        width = _WIDTHS[width_class]
        result = np.full((rows.size, width), (_PAD, _RIGHT_PAD)[side], np.uint64)
        for index in range(width_class + 1):
            chosen = np.flatnonzero(classes == index)
            if chosen.size:
                matrix = self.classes[index][side]
                result[chosen, : _WIDTHS[index]] = matrix[self.row_slot[rows[chosen]]]
        return result

    def intersection_sizes(
        self, first: npt.NDArray[np.int64], second: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        """``|set[first[p]] ∩ set[second[p]]|`` for every pair ``p``.

        Examples
        --------
        >>> hashes = np.arange(100, dtype=np.uint64)
        >>> table = SetTable.build(hashes, np.array([0, 3, 6, 100]))
        >>> table.intersection_sizes(np.array([0, 2]), np.array([0, 2])).tolist()
        [3, 94]
        """
        if self.merged and native.compiled is not None:
            return native.intersection_sizes(self.hashes, self.offsets, first, second)
        result = np.zeros(first.size, dtype=np.int64)
        pair_class = np.maximum(self.row_class[first], self.row_class[second])
        long = (self.row_class[first] < 0) | (self.row_class[second] < 0)
        if self.padded:
            for index, width in enumerate(_WIDTHS):
                chosen = np.flatnonzero((pair_class == index) & ~long)
                step = max(1, _MERGE_TOKENS // (width * width))
                for start in range(0, chosen.size, step):
                    part = chosen[start : start + step]
                    result[part] = padded_intersection_sizes(
                        self._rows(first[part], index, 0),
                        self._rows(second[part], index, 1),
                    )
        else:
            long[:] = True
        chosen = np.flatnonzero(long)
        if chosen.size:
            raw = np.diff(self.offsets)
            rows, local = np.unique(
                np.concatenate([first[chosen], second[chosen]]), return_inverse=True
            )
            ids, offsets = token_sets(
                self.hashes[gather(self.offsets, rows)],
                np.concatenate([[0], np.cumsum(raw[rows])]).astype(np.int64),
            )
            result[chosen] = intersection_sizes(
                ids, offsets, local[: chosen.size], local[chosen.size :]
            )
        return result


def intersection_minimum(
    ids: npt.NDArray[np.int64],
    offsets: npt.NDArray[np.int64],
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    values: npt.NDArray[np.int64],
) -> npt.NDArray[np.int64]:
    """``min(values[t] for t in set[first[p]] ∩ set[second[p]])`` for every pair.

    -1 where the two sets share nothing. ``values`` holds one non-negative
    value per id; the sets' ids must fit 32 bits (as :func:`token_sets` makes).

    Examples
    --------
    >>> ids, offsets = np.array([1, 2, 3, 2, 3, 4]), np.array([0, 3, 6, 6])
    >>> values = np.array([0, 7, 5, 9, 1])
    >>> intersection_minimum(ids, offsets, np.array([0, 0, 2]), np.array([1, 0, 1]),
    ...                      values).tolist()
    [5, 5, -1]
    """
    result = np.full(first.size, -1, dtype=np.int64)
    for start, _, shared in _shared_tokens(ids, offsets, first, second):
        owner = shared >> np.int64(32)
        found = values[shared & np.int64(0xFFFFFFFF)]
        if owner.size:
            # The couples are sorted, so each pair's shared tokens are one run.
            starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
            result[start + owner[starts]] = np.minimum.reduceat(found, starts)
    return result
