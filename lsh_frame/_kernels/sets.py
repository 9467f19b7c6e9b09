"""Sorted token sets in CSR form and their intersections, for many pairs at once.

A collection of sets is ``(ids, offsets)``: set ``i`` is the sorted, distinct
``ids[offsets[i]:offsets[i + 1]]``. Token hashes are first renamed to dense
32-bit ids so that a (pair, token) couple fits one 64-bit integer; the tokens of
all pairs are then merged by one sort and intersections are runs of two equal
couples. Nothing loops over sets or pairs in Python.
"""

from __future__ import annotations

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
