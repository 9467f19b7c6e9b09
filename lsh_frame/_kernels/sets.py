"""Sorted token sets in CSR form and their intersections, for many pairs at once.

A collection of sets is ``(ids, offsets)``: set ``i`` is the sorted, distinct
``ids[offsets[i]:offsets[i + 1]]``. Token hashes are first renamed to dense
32-bit ids so that a (pair, token) couple fits one 64-bit integer; the tokens of
all pairs are then merged by one sort and intersections are runs of two equal
couples. Nothing loops over sets or pairs in Python.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

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
    sizes = np.diff(offsets)
    result = np.zeros(first.size, dtype=np.int64)
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
        result[start:stop] = np.bincount(
            merged[1:][equal] >> np.int64(32), minlength=stop - start
        )
        start = stop
    return result


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
    left_rows: npt.NDArray[np.uint64],
    right_rows: npt.NDArray[np.uint64],
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    width: int,
) -> npt.NDArray[np.int64]:
    """``|set[first[p]] ∩ set[second[p]]|`` for sets of at most ``width`` tokens.

    ``left_rows`` and ``right_rows`` are the padded sets with their invalid
    slots set to two different padding values that no token takes, so a plain
    equality test counts exactly the shared tokens. Every token of one row is
    compared with every token of the other (``width``² comparisons per pair,
    in chunks): for short sets this beats sorting. A count never exceeds
    ``width`` (sets have no repeats), so it is summed in bytes.

    Examples
    --------
    >>> hashes = np.array([1, 2, 3, 2, 3, 4], np.uint64)
    >>> table = SetTable.build(hashes, np.array([0, 3, 6]))
    >>> rows = (table.left_rows, table.right_rows)
    >>> padded_intersection_sizes(*rows, np.array([0]), np.array([1]), 4)
    array([2])
    """
    result = np.empty(first.size, dtype=np.int64)
    chunk = max(1, _MERGE_TOKENS // (width * width))
    for start in range(0, first.size, chunk):
        left = left_rows[first[start : start + chunk], :width, None]
        right = right_rows[second[start : start + chunk], None, :width]
        equal = (left == right).reshape(left.shape[0], width * width)
        result[start : start + chunk] = equal.view(np.uint8).sum(axis=1, dtype=np.uint8)
    return result


#: Sets with more tokens than this are intersected by sorting, not padded.
PADDED_WIDTH = 64
_WIDTHS = (4, 8, 16, 32, 64)


@dataclass(frozen=True)
class SetTable:
    """Token sets of many values, ready for intersections with any pairing.

    Short sets (at most ``PADDED_WIDTH`` tokens, repeats included) are laid out
    as padded rows and intersected by direct comparison, in classes of width
    4, 8, ... 64 so a pair of short sets pays for its own width only; pairs
    involving a longer set fall back to the sort-merge of dense token ids (so
    does everything in the one-in-10^13 case that a token hashes to a padding
    value).
    """

    hashes: npt.NDArray[np.uint64]
    offsets: npt.NDArray[np.int64]
    left_rows: npt.NDArray[np.uint64]
    right_rows: npt.NDArray[np.uint64]
    sizes: npt.NDArray[np.int64]
    padded: bool

    @classmethod
    def build(
        cls, hashes: npt.NDArray[np.uint64], offsets: npt.NDArray[np.int64]
    ) -> SetTable:
        """Build the table from per-value token hashes in CSR form."""
        raw = np.diff(offsets)
        short = raw <= PADDED_WIDTH
        widest = int(raw[short].max()) if short.any() else 0
        width = next(width for width in _WIDTHS if width >= widest)
        keep = np.repeat(short, raw)
        short_offsets = np.zeros(raw.size + 1, dtype=np.int64)
        np.cumsum(np.where(short, raw, 0), out=short_offsets[1:])
        matrix, valid = padded_sets(hashes[keep], short_offsets, width)
        sizes = valid.sum(axis=1)
        padded = not (matrix[valid] >= _RIGHT_PAD).any()
        left_rows = np.where(valid, matrix, _PAD)
        right_rows = np.where(valid, matrix, _RIGHT_PAD)
        long_rows = np.flatnonzero(~short)
        if long_rows.size:
            _, long_offsets = token_sets(
                hashes[gather(offsets, long_rows)],
                np.concatenate([[0], np.cumsum(raw[long_rows])]).astype(np.int64),
            )
            sizes[long_rows] = np.diff(long_offsets)
        return cls(hashes, offsets, left_rows, right_rows, sizes, padded)

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
        raw = np.diff(self.offsets)
        longest = np.maximum(raw[first], raw[second])
        result = np.zeros(first.size, dtype=np.int64)
        merged = longest > PADDED_WIDTH if self.padded else longest >= 0
        narrower = 0
        for width in _WIDTHS if self.padded else ():
            chosen = np.flatnonzero((longest > narrower) & (longest <= width))
            narrower = width
            if chosen.size:
                result[chosen] = padded_intersection_sizes(
                    self.left_rows,
                    self.right_rows,
                    first[chosen],
                    second[chosen],
                    width,
                )
        chosen = np.flatnonzero(merged)
        if chosen.size:
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
