"""SimHash fingerprints and Hamming-distance search, numpy only.

Fingerprints (Charikar 2002): every token's 64-bit hash is a random ±1 vector
(bit set = +1); a record's fingerprint has bit ``b`` set when the weighted sum
of its tokens' bit ``b`` is positive, i.e. when more than half of the token
weight has that bit set. Two fingerprints differ in a bit with probability
``θ / π``, ``θ`` the angle between the records' weighted token vectors.

Search (Manku, Jain and Das Sarma 2007): split the ``D`` bits into ``B > k``
blocks. Two fingerprints within Hamming distance ``k`` differ in at most ``k``
blocks, so they agree exactly on some ``B - k`` of them (pigeonhole). One sorted
table per choice of ``B - k`` blocks, probed on equal keys, therefore finds
every pair within ``k``: the search is exact by construction. Each pair is kept
only in the table of its first ``B - k`` agreeing blocks, so no pair is emitted
twice and no global de-duplication is needed.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from lsh_frame._kernels.hashing import splitmix64

U64 = np.uint64
#: Lane width of unweighted counts (see :func:`lane_sums`).
LANE_BITS = 8
_SECOND_WORD = U64(0x6A09E667F3BCC909)


def token_features(
    hashes: npt.NDArray[np.uint64], seed_tag: np.uint64, words: int
) -> list[npt.NDArray[np.uint64]]:
    """Seeded 64-bit feature vectors of tokens, ``words`` words each."""
    first = splitmix64(hashes ^ seed_tag)
    result = [first]
    for word in range(1, words):
        result.append(splitmix64(first ^ (_SECOND_WORD * U64(word))))
    return result


def _segments(
    offsets: npt.NDArray[np.int64], limit: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Split records into runs of at most ``limit`` tokens.

    Returns the start of every run and the index of each record's first run
    (for the records that have tokens; records without tokens have no run).
    """
    counts = np.diff(offsets)
    pieces = -(-counts // limit)
    first_run = np.cumsum(pieces) - pieces
    record = np.repeat(np.arange(counts.size, dtype=np.int64), pieces)
    within = np.arange(record.size, dtype=np.int64) - first_run[record]
    return offsets[:-1][record] + within * limit, first_run[pieces > 0]


def lane_sums(
    features: npt.NDArray[np.uint64],
    offsets: npt.NDArray[np.int64],
    weights: npt.NDArray[np.uint64] | None = None,
) -> npt.NDArray[np.int64]:
    """Per record, the total weight of its tokens that have each bit set.

    Column ``b`` of the ``(n, 64)`` result sums bit ``b`` (bit 0 the least
    significant); without ``weights`` every token weighs 1.

    SWAR: one shift and one mask put bits ``j, j + w, j + 2w, ...`` of a hash
    into the ``w``-bit lanes of a uint64, and one 1-D ``reduceat`` adds every
    lane of a run of tokens at once. Lanes never carry into each other because
    runs are short enough: 8-bit lanes and runs of 255 tokens for counts (8
    passes), 16-bit lanes and runs of 257 tokens for weights up to 255 (16
    passes). The runs of long records are added up afterwards.
    """
    n = offsets.size - 1
    result = np.zeros((n, 64), dtype=np.int64)
    if features.size == 0:
        return result
    if weights is None:
        lane_bits, limit = LANE_BITS, (1 << LANE_BITS) - 1
    else:
        lane_bits, limit = 16, 65_535 // 255
    lanes_per_word = 64 // lane_bits
    lane_mask = U64(sum(1 << (lane * lane_bits) for lane in range(lanes_per_word)))
    starts, first_runs = _segments(offsets, limit)
    buffer = np.empty(features.size, dtype=U64)
    # per_run[:, j, lane] sums bit lane * lane_bits + j.
    per_run = np.empty((starts.size, lane_bits, lanes_per_word), dtype=np.int64)
    lane_shifts = (np.arange(lanes_per_word) * lane_bits).astype(U64)
    lane_values = U64((1 << lane_bits) - 1)
    for bit in range(lane_bits):
        np.right_shift(features, U64(bit), out=buffer)
        np.bitwise_and(buffer, lane_mask, out=buffer)
        if weights is not None:
            np.multiply(buffer, weights, out=buffer)
        sums = np.add.reduceat(buffer, starts)
        per_run[:, bit, :] = (sums[:, None] >> lane_shifts) & lane_values
    by_run = per_run.transpose(0, 2, 1).reshape(-1, 64)
    filled = np.diff(offsets) > 0
    if starts.size == first_runs.size:
        result[filled] = by_run
    else:
        by_bit = np.ascontiguousarray(by_run.T)
        result[filled] = np.add.reduceat(by_bit, first_runs, axis=1).T
    return result


def pack_bits(bits: npt.NDArray[np.bool_]) -> npt.NDArray[np.uint64]:
    """Pack an ``(n, 64)`` boolean matrix into uint64 (column ``b`` → bit ``b``)."""
    packed = np.packbits(bits, axis=1, bitorder="little")
    return np.ascontiguousarray(packed).view("<u8").reshape(-1).astype(U64)


def unpack_bits(values: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint8]:
    """Unpack uint64 values into an ``(n, 64)`` 0/1 matrix (bit ``b`` → column)."""
    raw = np.ascontiguousarray(values, dtype=U64).astype("<u8").view(np.uint8)
    return np.unpackbits(raw.reshape(-1, 8), axis=1, bitorder="little")


def quantize_weights(weights: npt.NDArray[np.float64]) -> npt.NDArray[np.uint64]:
    """Token weights as integers 1 to 255, proportional to the largest weight.

    Integer weights let the weighted sums use the lane arithmetic of
    :func:`lane_sums`; the rounding (at most half of 1/255 of the largest
    weight) rarely moves a sum across zero.
    """
    if weights.size == 0:
        return np.empty(0, dtype=U64)
    top = float(weights.max())
    if not top > 0:
        return np.ones(weights.size, dtype=U64)
    scaled = np.rint(weights * (255.0 / top))
    return np.clip(scaled, 1, 255).astype(U64)


def fingerprints(
    hashes: npt.NDArray[np.uint64],
    offsets: npt.NDArray[np.int64],
    *,
    bits: int,
    seed_tag: np.uint64,
    weights: npt.NDArray[np.uint64] | None = None,
) -> npt.NDArray[np.uint64]:
    """SimHash fingerprints of records given as CSR token hashes.

    Returns an ``(n, words)`` uint64 matrix, ``words = max(1, bits // 64)``; a
    32-bit fingerprint is the low half of the 64-bit one. With ``weights``
    (integers 1 to 255, one per token occurrence, see
    :func:`quantize_weights`) the sums are weighted; otherwise every occurrence
    counts once. Ties (exactly half the weight) give a clear bit.
    """
    words = max(1, bits // 64)
    n = offsets.size - 1
    result = np.zeros((n, words), dtype=U64)
    if weights is None:
        total = np.diff(offsets)
    else:
        cumulative = np.concatenate([[0], np.cumsum(weights, dtype=np.int64)])
        total = cumulative[offsets[1:]] - cumulative[offsets[:-1]]
    for word, features in enumerate(token_features(hashes, seed_tag, words)):
        set_bits = 2 * lane_sums(features, offsets, weights) > total[:, None]
        result[:, word] = pack_bits(set_bits)
    if bits == 32:
        result &= U64(0xFFFFFFFF)
    return result


# ----------------------------------------------------------------------------
# Hamming distance


def popcount(values: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint8]:
    """Count the set bits of every value."""
    return np.bitwise_count(values)


def hamming(
    left: npt.NDArray[np.uint64], right: npt.NDArray[np.uint64]
) -> npt.NDArray[np.int64]:
    """Row-wise Hamming distance of two ``(n, words)`` matrices."""
    return popcount(left ^ right).sum(axis=1, dtype=np.int64)


# ----------------------------------------------------------------------------
# Permuted tables


@dataclass(frozen=True)
class SearchPlan:
    """How the bits are cut into blocks and which blocks key each table."""

    bits: int
    distance: int
    blocks: tuple[tuple[int, int], ...]  # (first bit, length) of each block
    tables: tuple[tuple[int, ...], ...]  # the blocks that key each table

    @property
    def key_bits(self) -> int:
        """Fewest bits a table's key holds."""
        return min(sum(self.blocks[b][1] for b in table) for table in self.tables)

    def expected_candidates(self, n_left: int, n_right: int | None) -> float:
        """Estimate the random candidate pairs of all tables (uniform codes)."""
        pairs = n_left * (n_left - 1) / 2 if n_right is None else n_left * n_right
        return sum(
            pairs * 2.0 ** -sum(self.blocks[b][1] for b in table)
            for table in self.tables
        )


def _cut(bits: int, count: int) -> tuple[tuple[int, int], ...]:
    base, extra = divmod(bits, count)
    blocks, start = [], 0
    for index in range(count):
        length = base + (1 if index < extra else 0)
        blocks.append((start, length))
        start += length
    return tuple(blocks)


#: Relative cost of one table (a sort of all records) against one verified
#: candidate pair, per record: measured on this code, roughly.
_SORT_COST_PER_RECORD = 3.0
#: At most this many tables are considered (C(B, k) grows fast).
_MAX_TABLES = 64


def search_plan(
    bits: int, distance: int, n_left: int, n_right: int | None, blocks: int | None
) -> SearchPlan:
    """Choose the number of blocks for ``distance`` and the table sizes.

    More blocks mean more tables (``C(B, distance)``) but longer keys and so
    fewer random candidates; the choice minimises ``tables × records × sort
    cost + expected random candidates``.
    """
    if blocks is not None:
        options = [blocks]
    else:
        options = [
            count
            for count in range(distance + 1, min(bits, distance + 16) + 1)
            if math.comb(count, distance) <= _MAX_TABLES
        ] or [distance + 1]
    best: tuple[float, SearchPlan] | None = None
    records = n_left + (n_right or 0)
    for count in options:
        cut = _cut(bits, count)
        tables = tuple(itertools.combinations(range(count), count - distance))
        plan = SearchPlan(bits, distance, cut, tables)
        cost = len(tables) * records * _SORT_COST_PER_RECORD + plan.expected_candidates(
            n_left, n_right
        )
        if best is None or cost < best[0]:
            best = (cost, plan)
    assert best is not None
    return best[1]


def _block_masks(
    plan: SearchPlan, words: int
) -> npt.NDArray[np.uint64]:  # (blocks, words)
    masks = np.zeros((len(plan.blocks), words), dtype=U64)
    for index, (start, length) in enumerate(plan.blocks):
        for bit in range(start, start + length):
            masks[index, bit // 64] |= U64(1) << U64(bit % 64)
    return masks


def _table_keys(
    codes: npt.NDArray[np.uint64], table: tuple[int, ...], plan: SearchPlan
) -> tuple[npt.NDArray[np.uint64], int]:
    """Return the table's key of every fingerprint and how many bits it holds.

    Chosen blocks are shifted together into the low bits when they fit in 64
    bits (exact); otherwise the masked words are mixed into one 64-bit hash
    (a collision only adds a candidate, which verification rejects).
    """
    width = sum(plan.blocks[b][1] for b in table)
    words = codes.shape[1]
    if width <= 64 and all(
        plan.blocks[b][0] // 64 == (plan.blocks[b][0] + plan.blocks[b][1] - 1) // 64
        for b in table
    ):
        key = np.zeros(codes.shape[0], dtype=U64)
        offset = 0
        for b in table:
            start, length = plan.blocks[b]
            part = codes[:, start // 64] >> U64(start % 64)
            if length < 64:
                part = part & U64((1 << length) - 1)
            if offset:
                part = part << U64(offset)
            key |= part
            offset += length
        return key, width
    masks = _block_masks(plan, words)[list(table)].reshape(len(table), words)
    mask = np.bitwise_or.reduce(masks, axis=0)
    key = np.zeros(codes.shape[0], dtype=U64)
    for word in range(words):
        key = splitmix64(key ^ (codes[:, word] & mask[word]))
    return key, 64


def _sorted_table(
    keys: npt.NDArray[np.uint64], key_bits: int
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Keys in ascending order and the record of each.

    When key and record number fit in 64 bits together, one value sort of the
    packed numbers replaces the slower argsort.
    """
    n = keys.size
    index_bits = max(1, int(n - 1).bit_length())
    if key_bits + index_bits <= 64:
        packed = (keys << U64(index_bits)) | np.arange(n, dtype=U64)
        packed.sort()
        return packed >> U64(index_bits), (packed & U64((1 << index_bits) - 1)).astype(
            np.int64
        )
    order = np.argsort(keys, kind="stable")
    return keys[order], order.astype(np.int64)


def table_candidates(
    sorted_keys: npt.NDArray[np.uint64],
    chunk: int,
) -> Iterator[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]]:
    """Positions ``(p, p + lag)`` of the sorted table with equal keys.

    Pairs come lag by lag (all pairs one apart, then two apart, ...), each step
    cut into pieces of at most ``chunk`` pairs, so memory stays bounded however
    large a run of equal keys is.
    """
    n = sorted_keys.size
    if n < 2:
        return
    active = np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])
    lag = 1
    while active.size:
        for start in range(0, active.size, chunk):
            part = active[start : start + chunk]
            yield part, part + lag
        lag += 1
        active = active[active + lag < n]
        active = active[sorted_keys[active + lag] == sorted_keys[active]]


def candidate_count(sorted_keys: npt.NDArray[np.uint64]) -> int:
    """Pairs with equal keys in a sorted table: Σ m (m − 1) / 2 over runs."""
    if sorted_keys.size < 2:
        return 0
    boundary = np.flatnonzero(sorted_keys[1:] != sorted_keys[:-1]) + 1
    sizes = np.diff(np.concatenate([[0], boundary, [sorted_keys.size]]))
    return int((sizes * (sizes - 1) // 2).sum())


class PairLimitExceeded(Exception):
    """Raised inside the search when more pairs are found than allowed."""

    def __init__(self, found: int) -> None:
        super().__init__(found)
        self.found = found


@dataclass(frozen=True)
class Groups:
    """Records grouped by identical fingerprint (CSR over distinct codes)."""

    codes: npt.NDArray[np.uint64]  # (distinct, words)
    members: npt.NDArray[np.int64]  # record numbers, grouped
    starts: npt.NDArray[np.int64]
    sizes: npt.NDArray[np.int64]


def group_identical(codes: npt.NDArray[np.uint64]) -> Groups:
    """Group records with identical fingerprints (searching each code once)."""
    n = codes.shape[0]
    if codes.shape[1] == 1:
        order = np.argsort(codes[:, 0], kind="stable")
    else:
        order = np.lexsort(codes.T[::-1])
    ordered = codes[order]
    first = np.ones(n, dtype=bool)
    if n > 1:
        first[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    starts = np.flatnonzero(first).astype(np.int64)
    sizes = np.diff(np.append(starts, n)).astype(np.int64)
    return Groups(ordered[first], order.astype(np.int64), starts, sizes)


def _cross(
    left_groups: Groups,
    right_groups: Groups,
    a: npt.NDArray[np.int64],
    b: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Every (member of group a, member of group b) for each group pair."""
    left_sizes, right_sizes = left_groups.sizes[a], right_groups.sizes[b]
    per_left = np.repeat(right_sizes, left_sizes)
    total = int(per_left.sum())
    if total == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    left_within = np.arange(int(left_sizes.sum())) - np.repeat(
        np.cumsum(left_sizes) - left_sizes, left_sizes
    )
    left_position = np.repeat(left_groups.starts[a], left_sizes) + left_within
    left_records = np.repeat(left_groups.members[left_position], per_left)
    right_start = np.repeat(np.repeat(right_groups.starts[b], left_sizes), per_left)
    step = np.arange(total) - np.repeat(np.cumsum(per_left) - per_left, per_left)
    right_records = right_groups.members[right_start + step]
    return left_records, right_records


def _within(groups: Groups) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Every pair of records inside the same group (identical fingerprints)."""
    big = np.flatnonzero(groups.sizes > 1)
    sizes, starts = groups.sizes[big], groups.starts[big]
    within = np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    first = np.repeat(starts, sizes) + within
    later = np.repeat(sizes, sizes) - 1 - within
    left_position = np.repeat(first, later)
    total = int(later.sum())
    step = np.arange(total) - np.repeat(np.cumsum(later) - later, later)
    return groups.members[left_position], groups.members[left_position + 1 + step]


def _search_table(
    codes: npt.NDArray[np.uint64],
    n_left: int,
    link: bool,
    table: tuple[int, ...],
    plan: SearchPlan,
    block_masks: npt.NDArray[np.uint64],
    chunk: int,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Pairs within the distance whose first agreeing blocks key this table."""
    keys, key_bits = _table_keys(codes, table, plan)
    sorted_keys, records = _sorted_table(keys, key_bits)
    del keys
    # Blocks before the table's last block that it leaves out: a pair kept here
    # must differ on all of them (else an earlier table holds it).
    skipped = [b for b in range(max(table)) if b not in table]
    firsts, seconds, distances = [], [], []
    for p, q in table_candidates(sorted_keys, chunk):
        a, b = records[p], records[q]
        if link:
            cross = (a < n_left) != (b < n_left)
            a, b = a[cross], b[cross]
            a, b = np.minimum(a, b), np.maximum(a, b)
        difference = codes[a] ^ codes[b]
        distance = popcount(difference).sum(axis=1, dtype=np.int64)
        keep = distance <= plan.distance
        for block in table:
            keep &= ~(difference & block_masks[block]).any(axis=1)
        for block in skipped:
            keep &= (difference & block_masks[block]).any(axis=1)
        firsts.append(a[keep])
        seconds.append(b[keep])
        distances.append(distance[keep])
    if not firsts:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    return np.concatenate(firsts), np.concatenate(seconds), np.concatenate(distances)


def search(
    left: npt.NDArray[np.uint64],
    right: npt.NDArray[np.uint64] | None,
    *,
    bits: int,
    distance: int,
    max_pairs: int,
    blocks: int | None = None,
    chunk: int = 1 << 20,
    workers: int = 1,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """All pairs of fingerprints within Hamming ``distance``, exactly.

    ``left`` and ``right`` are ``(n, words)`` uint64 matrices. Without
    ``right`` (dedupe) the pairs are ``(i, j)`` with ``i < j``; with it
    (link) ``i`` is a row of ``left`` and ``j`` of ``right``. Identical
    fingerprints are searched once and their records paired afterwards.

    Raises
    ------
    PairLimitExceeded
        As soon as more than ``max_pairs`` pairs are certain.
    """
    from concurrent.futures import ThreadPoolExecutor

    link = right is not None
    left_groups = group_identical(left)
    right_groups = group_identical(right) if right is not None else left_groups
    n_left = left_groups.codes.shape[0]
    if link:
        codes = np.concatenate([left_groups.codes, right_groups.codes])
        n_right: int | None = right_groups.codes.shape[0]
    else:
        codes = left_groups.codes
        n_right = None
        identical = int((left_groups.sizes * (left_groups.sizes - 1) // 2).sum())
        if identical > max_pairs:
            raise PairLimitExceeded(identical)
    plan = search_plan(bits, distance, n_left, n_right, blocks)
    masks = _block_masks(plan, codes.shape[1])

    def run(table: tuple[int, ...]) -> tuple[npt.NDArray[np.int64], ...]:
        return _search_table(codes, n_left, link, table, plan, masks, chunk)

    if workers > 1 and len(plan.tables) > 1:
        with ThreadPoolExecutor(workers) as pool:
            found = list(pool.map(run, plan.tables))
    else:
        found = [run(table) for table in plan.tables]
    a = np.concatenate([part[0] for part in found])
    b = np.concatenate([part[1] for part in found])
    d = np.concatenate([part[2] for part in found])
    if link:
        b = b - n_left
    expanded = int((left_groups.sizes[a] * right_groups.sizes[b]).sum())
    if not link:
        expanded += identical
    if expanded > max_pairs:
        raise PairLimitExceeded(expanded)
    first, second = _cross(left_groups, right_groups, a, b)
    lengths = left_groups.sizes[a] * right_groups.sizes[b]
    dist = np.repeat(d, lengths)
    if not link:
        same_first, same_second = _within(left_groups)
        first = np.concatenate([first, same_first])
        second = np.concatenate([second, same_second])
        dist = np.concatenate([dist, np.zeros(same_first.size, dtype=np.int64)])
        first, second = np.minimum(first, second), np.maximum(first, second)
    order = np.lexsort((second, first))
    return first[order], second[order], dist[order]
