"""Candidate pairs from buckets of equal keys, counted before they are built.

Keys are sorted once; each run of equal keys is a bucket. In a dedupe bucket of
``m`` records every one of the ``m (m - 1) / 2`` pairs is a candidate; in a link
bucket with ``a`` left and ``b`` right records, the ``a * b`` cross pairs. All
pairs of all buckets are emitted with ``repeat`` and ``arange`` arithmetic: no
Python loop over buckets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lsh_frame._kernels import native


@dataclass(frozen=True)
class Buckets:
    """Runs of equal keys.

    ``members`` holds record positions sorted by (key, side, position); bucket
    ``i`` is ``members[starts[i]:starts[i] + sizes[i]]``; in link mode its first
    ``left_sizes[i]`` members come from the left table.
    """

    members: npt.NDArray[np.int64]
    keys: npt.NDArray[np.uint64]
    starts: npt.NDArray[np.int64]
    sizes: npt.NDArray[np.int64]
    left_sizes: npt.NDArray[np.int64] | None

    def pair_counts(self) -> npt.NDArray[np.int64]:
        """Pairs each bucket yields."""
        if self.left_sizes is None:
            return self.sizes * (self.sizes - 1) // 2
        return self.left_sizes * (self.sizes - self.left_sizes)

    def chunks(self, max_pairs: int) -> list[Buckets]:
        """Split into runs of whole buckets yielding at most ``max_pairs`` each.

        A bucket is never split, so a chunk exceeds ``max_pairs`` only when one
        bucket alone does. The loop runs once per chunk, not per bucket.
        """
        counts = np.cumsum(self.pair_counts())
        if counts.size == 0 or counts[-1] <= max_pairs:
            return [self]
        result, start = [], 0
        while start < counts.size:
            done = counts[start - 1] if start else 0
            stop = int(np.searchsorted(counts, done + max_pairs, side="right"))
            stop = max(stop, start + 1)
            result.append(self.select(np.arange(start, stop)))
            start = stop
        return result

    def select(self, keep: npt.NDArray[Any]) -> Buckets:
        """Buckets picked by a boolean mask or an index array."""
        return Buckets(
            self.members,
            self.keys[keep],
            self.starts[keep],
            self.sizes[keep],
            None if self.left_sizes is None else self.left_sizes[keep],
        )


def sorted_unique(values: npt.NDArray, *, return_counts: bool = False) -> Any:
    """Distinct values in ascending order (and how often each occurs).

    Sort-based: on large integer arrays it is many times faster than
    ``np.unique``, whose hash-based path numpy 2 may choose.
    """
    ordered = np.sort(values)
    if ordered.size == 0:
        return (ordered, np.empty(0, dtype=np.int64)) if return_counts else ordered
    first = np.empty(ordered.size, dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    distinct = ordered[first]
    if not return_counts:
        return distinct
    starts = np.flatnonzero(first)
    return distinct, np.diff(np.append(starts, ordered.size)).astype(np.int64)


def group(
    keys: npt.NDArray[np.uint64],
    positions: npt.NDArray[np.int64],
    sides: npt.NDArray[np.bool_] | None = None,
) -> Buckets:
    """Group record positions by key; ``sides`` (True = right table) for link.

    Buckets that cannot yield a pair (one record, or one side only) are dropped.
    For link the side is stored in the key's lowest bit, so one unstable sort
    puts each bucket's left members before its right members; the bit is not
    part of the bucket identity (keys are 63-bit hashes then).
    """
    if sides is not None:
        keys = (keys & ~np.uint64(1)) | sides.astype(np.uint64)
    order = np.argsort(keys)
    sorted_keys = keys[order]
    members = positions[order]
    identity = sorted_keys >> np.uint64(1) if sides is not None else sorted_keys
    if identity.size == 0:
        empty = np.empty(0, dtype=np.int64)
        return Buckets(
            members, identity, empty, empty, None if sides is None else empty
        )
    boundary = np.flatnonzero(identity[1:] != identity[:-1]) + 1
    starts = np.concatenate([[0], boundary]).astype(np.int64)
    sizes = np.diff(np.concatenate([starts, [identity.size]])).astype(np.int64)
    left_sizes = None
    if sides is not None:
        is_right = (sorted_keys & np.uint64(1)).astype(bool)
        right_before = np.concatenate([[0], np.cumsum(is_right, dtype=np.int64)])
        left_sizes = sizes - (right_before[starts + sizes] - right_before[starts])
    buckets = Buckets(members, identity[starts], starts, sizes, left_sizes)
    return buckets.select(buckets.pair_counts() > 0)


def concatenate(parts: list[Buckets]) -> Buckets:
    """Merge buckets grouped separately (for example one band at a time)."""
    if len(parts) == 1:
        return parts[0]
    offsets = np.cumsum([0] + [part.members.size for part in parts[:-1]])
    left_sizes = [part.left_sizes for part in parts if part.left_sizes is not None]
    return Buckets(
        np.concatenate([part.members for part in parts]),
        np.concatenate([part.keys for part in parts]),
        np.concatenate(
            [part.starts + offset for part, offset in zip(parts, offsets, strict=True)]
        ),
        np.concatenate([part.sizes for part in parts]),
        np.concatenate(left_sizes) if left_sizes else None,
    )


def emit_pairs(
    buckets: Buckets,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """All candidate pairs of the buckets as (left, right) record positions.

    Dedupe pairs have ``left < right``; link pairs are (left table, right table).
    """
    counts = buckets.pair_counts()
    total = int(counts.sum())
    if total == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    if native.compiled is not None:
        return native.emit_pairs(
            buckets.members,
            buckets.starts,
            buckets.sizes,
            buckets.left_sizes,
            total,
        )
    if buckets.left_sizes is None:
        # Each member pairs with every later member of its bucket.
        sizes = buckets.sizes
        member_bucket = np.repeat(np.arange(sizes.size), sizes)
        within = np.arange(int(sizes.sum())) - np.repeat(
            np.cumsum(sizes) - sizes, sizes
        )
        first = np.repeat(buckets.starts, sizes) + within
        later = sizes[member_bucket] - 1 - within
        left_index = np.repeat(first, later)
        step = np.arange(total) - np.repeat(np.cumsum(later) - later, later)
        right_index = left_index + 1 + step
    else:
        # Each left member pairs with every right member of its bucket.
        lefts = buckets.left_sizes
        rights = buckets.sizes - lefts
        within = np.arange(int(lefts.sum())) - np.repeat(
            np.cumsum(lefts) - lefts, lefts
        )
        first = np.repeat(buckets.starts, lefts) + within
        partners = np.repeat(rights, lefts)
        left_index = np.repeat(first, partners)
        right_start = np.repeat(np.repeat(buckets.starts + lefts, lefts), partners)
        step = np.arange(total) - np.repeat(np.cumsum(partners) - partners, partners)
        right_index = right_start + step
    left, right = buckets.members[left_index], buckets.members[right_index]
    if buckets.left_sizes is None:
        # Members are not ordered within a bucket: put each pair in canonical order.
        return np.minimum(left, right), np.maximum(left, right)
    return left, right
