"""MinHash over token sets stored as CSR (``tokens``, ``offsets``).

The work is ``tokens × num_perm`` hash evaluations, so the layout decides the
speed. Short records are sorted by token count and cut into tiles of similar
length; a tile is a dense ``(length, records)`` matrix, padded with each
record's own first token (which cannot change a minimum). The family folds a
tile into its ``(num_perm, records)`` minima: affine32 a few permutations at
a time over the whole tile (a multiply and an add, then one minimum down the
tile's rows: two and a half passes over the tile per permutation, in calls
long enough for threads to overlap), mersenne61 one token position at a time
(a ``(num_perm, records)`` block of permuted values folded into a running
minimum). Long records would get tiles
of few records, so that every call works on a narrow block and the cost per
token grows with the length; instead their tokens are taken as one stream,
cut into full-width blocks, and each block's ``(num_perm, width)`` values are
reduced per record piece. When all the records' tokens fit one block (a batch
of a few new records), that one block is the whole work: a tile would take
one narrow pass per token position of the longest record. Every numpy call
works on contiguous operands (or scalars) that fit in the L2 cache — numpy's
vectorised loops skip broadcast operands, so the blocks' constants are
pre-broadcast once — and releases the GIL, so chunks of rows run in parallel
threads.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

MERSENNE_61 = np.uint64((1 << 61) - 1)
_LOW32 = np.uint64(0xFFFFFFFF)
_LOW29 = np.uint64((1 << 29) - 1)

#: Width of a permutation block (tokens permuted at once by ``permute``): four
#: (num_perm, width) uint32 blocks of 128 rows fill 1 MiB, which stays in a
#: typical L2 cache.
BLOCK_WIDTH = 512
#: Records longer than this are reduced in blocks of their tokens instead of slot
#: by slot (see :func:`_long_records`). Tiles of longer records hold fewer than
#: ``tile_cells // LONG_RECORD`` records, and their narrow blocks cost more per
#: token than the blocks (measured: the same per token up to 128 tokens, twice as
#: much from 256; see benchmarks/README.md, "Long values").
LONG_RECORD = 128
#: Records whose tokens number at most this many in all are signed in one
#: block (see :func:`_one_block`; at most a permutation block's width): one
#: record of 64 tokens took 64 tile passes of four numpy calls each (0.35 ms),
#: one block takes five calls (0.013 ms).
ONE_BLOCK_TOKENS = BLOCK_WIDTH


class Permute(Protocol):
    """A hash family's permutations over blocks of tokens and over tiles."""

    #: Records per tile, and the most padded cells (records × length) a tile
    #: holds; ``fold`` takes ``group`` scratch cells per tile cell.
    tile_records: int
    tile_cells: int
    group: int

    def __call__(self, x: npt.NDArray, out: npt.NDArray) -> npt.NDArray:
        """Write ``out[j, i] = h_j(x[i])`` (``out`` is ``(num_perm, x.size)``)."""
        ...

    def fold(self, tile: npt.NDArray, out: npt.NDArray, scratch: npt.NDArray) -> None:
        """Write ``out[j, i] = min_p h_j(tile[p, i])``.

        ``out`` is ``(num_perm, records)``; ``scratch`` holds at least
        ``group * tile.size`` and ``out.size`` values of ``out``'s dtype.
        """
        ...


def affine32_parameters(
    seed: int, num_perm: int
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32]]:
    """Odd multipliers ``a`` and offsets ``b`` of the affine32 family."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 1 << 32, size=num_perm, dtype=np.uint64) | np.uint64(1)
    b = rng.integers(0, 1 << 32, size=num_perm, dtype=np.uint64)
    return a.astype(np.uint32), b.astype(np.uint32)


def mersenne61_parameters(
    seed: int, num_perm: int
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """Multipliers ``a`` in [1, p) and offsets ``b`` in [0, p), p = 2**61 - 1."""
    rng = np.random.default_rng(seed)
    a = rng.integers(1, int(MERSENNE_61), size=num_perm, dtype=np.uint64)
    b = rng.integers(0, int(MERSENNE_61), size=num_perm, dtype=np.uint64)
    return a, b


def fold32(token_hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint32]:
    """Keep the high 32 bits of well mixed 64-bit token hashes."""
    return (token_hashes >> np.uint64(32)).astype(np.uint32)


def reduce_mersenne61(values: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """Reduce any uint64 values modulo 2**61 - 1."""
    reduced = (values & MERSENNE_61) + (values >> np.uint64(61))
    return np.where(reduced >= MERSENNE_61, reduced - MERSENNE_61, reduced)


class Affine32:
    """``h_j(x) = (a[j] * x + b[j]) mod 2**32`` on uint32 tokens."""

    #: A tile is folded a group of permutations at a time, three numpy calls
    #: per group. Each call must be long for threads to overlap: a thread gives
    #: the GIL up for the call and must win it back for the next, so calls of
    #: ~10 us ran no faster on two threads than on one. A group's values (4 x
    #: 64 Ki uint32 cells, 1 MiB) stay in L2, and short values (8-token phone
    #: numbers) fill a tile of 8,192 records. 1M make_customers records on the
    #: 2-core Intel VM, ``sign_array`` on two threads, best of 3, two rounds:
    #:
    #: - token position by position, 512-record tiles: record text 2.3 s;
    #: - one permutation at a time, 4,096 records and 128 Ki cells a tile:
    #:   record text 1.81-1.94 s, phone 0.62-0.63 s, email 1.07-1.13 s;
    #: - groups of 4 over 64 Ki cells: record text 1.71-1.86 s, phone
    #:   0.37-0.44 s, email 0.92-0.94 s (groups of 2, or 128 Ki cells, were
    #:   no better).
    group = 4
    tile_records = 1 << 15
    tile_cells = 1 << 16

    def __init__(self, a: npt.NDArray[np.uint32], b: npt.NDArray[np.uint32]) -> None:
        self._a_block = np.ascontiguousarray(
            np.broadcast_to(a[:, None], (a.size, BLOCK_WIDTH))
        )
        self._b_block = np.ascontiguousarray(
            np.broadcast_to(b[:, None], (b.size, BLOCK_WIDTH))
        )
        self._a_tiles, self._b_tiles = a[:, None, None], b[:, None, None]

    def __call__(self, x: npt.NDArray, out: npt.NDArray) -> npt.NDArray:
        width = x.size
        np.copyto(out, x[None, :])
        np.multiply(out, self._a_block[:, :width], out=out)
        np.add(out, self._b_block[:, :width], out=out)
        return out

    def fold(self, tile: npt.NDArray, out: npt.NDArray, scratch: npt.NDArray) -> None:
        num_perm = out.shape[0]
        for j in range(0, num_perm, self.group):
            stop = min(j + self.group, num_perm)
            values = scratch[: (stop - j) * tile.size].reshape(stop - j, *tile.shape)
            np.multiply(tile[None], self._a_tiles[j:stop], out=values)
            np.add(values, self._b_tiles[j:stop], out=values)
            np.minimum.reduce(values, axis=1, out=out[j:stop])


def affine32_permute(a: npt.NDArray[np.uint32], b: npt.NDArray[np.uint32]) -> Affine32:
    """Return the affine32 family: ``out[j, i] = (a[j] * x[i] + b[j]) mod 2**32``."""
    return Affine32(a, b)


class Mersenne61:
    """``h_j(x) = (a[j] * x + b[j]) mod p``, ``p = 2**61 - 1``, on tokens below ``p``.

    The 122-bit product is split into 32-bit halves; powers of two fold back
    because ``2**61 ≡ 1 (mod p)``. A tile is folded one token position at a
    time: the arithmetic makes a dozen temporaries of a block, which must stay
    narrow.
    """

    tile_records = BLOCK_WIDTH
    tile_cells = 1 << 16
    group = 1

    def __init__(self, a: npt.NDArray[np.uint64], b: npt.NDArray[np.uint64]) -> None:
        self._a_high = (a >> np.uint64(32))[:, None]
        self._a_low = (a & _LOW32)[:, None]
        self._b_column = b[:, None]

    def __call__(self, x: npt.NDArray, out: npt.NDArray) -> npt.NDArray:
        a_high, a_low = self._a_high, self._a_low
        x_high = (x >> np.uint64(32))[None, :]
        x_low = (x & _LOW32)[None, :]
        low = a_low * x_low  # < 2**64
        middle = a_high * x_low + a_low * x_high  # < 2**62
        high = a_high * x_high  # < 2**58, weight 2**64 ≡ 2**3
        total = (high << np.uint64(3)) + ((middle & _LOW29) << np.uint64(32))
        total += middle >> np.uint64(29)
        total += (low & MERSENNE_61) + (low >> np.uint64(61))
        total += self._b_column
        out[...] = reduce_mersenne61(total)
        return out

    def fold(self, tile: npt.NDArray, out: npt.NDArray, scratch: npt.NDArray) -> None:
        buffer = scratch[: out.size].reshape(out.shape)
        self(tile[0], out)
        for position in range(1, tile.shape[0]):
            np.minimum(out, self(tile[position], buffer), out=out)


def mersenne61_permute(
    a: npt.NDArray[np.uint64], b: npt.NDArray[np.uint64]
) -> Mersenne61:
    """Return the mersenne61 family: ``out[j, i] = (a[j] * x[i] + b[j]) mod p``."""
    return Mersenne61(a, b)


def minhash(
    tokens: npt.NDArray,
    offsets: npt.NDArray[np.int64],
    permute: Permute,
    out: npt.NDArray,
) -> None:
    """Write the MinHash signature of every non-empty record into ``out``.

    Parameters
    ----------
    tokens : ndarray
        Token values of all records back to back (uint32 for affine32, uint64
        below 2**61 - 1 for mersenne61).
    offsets : ndarray of int64
        ``n + 1`` offsets into ``tokens``.
    permute : callable
        From :func:`affine32_permute` or :func:`mersenne61_permute`.
    out : ndarray, shape (n, num_perm)
        Receives the signatures; rows of empty records are left untouched.
    """
    lengths = np.diff(offsets)
    if offsets[-1] - offsets[0] <= ONE_BLOCK_TOKENS:
        _one_block(tokens, offsets, lengths, permute, out)
        return
    short = np.flatnonzero((lengths > 0) & (lengths <= LONG_RECORD))
    order = short[np.argsort(lengths[short], kind="stable")]
    sorted_lengths = lengths[order]
    num_perm = out.shape[1]
    tile_records, tile_cells = permute.tile_records, permute.tile_cells
    # The widest tile: of the shortest records, as many as tile_cells allows.
    shortest = int(sorted_lengths[0]) if order.size else 1
    widest = min(tile_records, order.size, max(1, tile_cells // shortest))
    running = np.empty((num_perm, widest), dtype=out.dtype)
    # A tile holds at most tile_cells values, or one record of at most
    # LONG_RECORD; a block (long records, mersenne61's fold) num_perm rows.
    longest = int(sorted_lengths[-1]) if order.size else 0
    tile_most = min(max(tile_cells, LONG_RECORD), longest * order.size)
    cells = max(
        permute.group * tile_most,
        num_perm * widest,
        num_perm * BLOCK_WIDTH,
    )
    scratch = np.empty(cells, dtype=out.dtype)
    start, count = 0, order.size
    while start < count:
        stop = min(start + tile_records, count)
        length = int(sorted_lengths[stop - 1])
        if length * (stop - start) > tile_cells:
            stop = start + max(1, tile_cells // length)
            length = int(sorted_lengths[stop - 1])
        records = order[start:stop]
        size = stop - start
        slot = np.arange(length)[:, None]
        padded = np.where(slot < sorted_lengths[start:stop][None, :], slot, 0)
        tile = tokens[offsets[records][None, :] + padded]
        acc = running[:, :size]
        permute.fold(tile, acc, scratch)
        out[records] = acc.T
        start = stop
    long = np.flatnonzero(lengths > LONG_RECORD)
    if long.size:
        buffer = scratch[: num_perm * BLOCK_WIDTH].reshape(num_perm, BLOCK_WIDTH)
        _long_records(tokens, offsets[long], lengths[long], long, permute, buffer, out)


def _one_block(
    tokens: npt.NDArray,
    offsets: npt.NDArray[np.int64],
    lengths: npt.NDArray[np.int64],
    permute: Permute,
    out: npt.NDArray,
) -> None:
    """Signatures of records whose tokens all fit one block, in one pass.

    The records' tokens lie back to back, so the block is one slice of
    ``tokens``; its permuted values are reduced per record (the minima are the
    ones the tiles find: the same values, compared in another order).
    """
    filled = np.flatnonzero(lengths > 0)
    if not filled.size:
        return
    block = tokens[offsets[0] : offsets[-1]]
    values = permute(block, np.empty((out.shape[1], block.size), dtype=out.dtype))
    minima = np.minimum.reduceat(values, offsets[filled] - offsets[0], axis=1)
    out[filled] = minima.T


def _long_records(
    tokens: npt.NDArray,
    starts: npt.NDArray[np.int64],
    lengths: npt.NDArray[np.int64],
    rows: npt.NDArray[np.int64],
    permute: Permute,
    buffer: npt.NDArray,
    out: npt.NDArray,
) -> None:
    """Signatures of long records, from their tokens in blocks of one width.

    The records' tokens are taken as one stream and cut into blocks of
    ``buffer``'s width, whatever the records' lengths: a block's permuted
    ``(num_perm, width)`` values are reduced to one minimum per record piece
    (``np.minimum.reduceat``), and a record that runs on from the block before
    folds its piece into the minimum it has so far. So the cost per token is
    that of full-width blocks, and memory stays at one block.
    """
    width = buffer.shape[1]
    ends = np.cumsum(lengths)
    begins = ends - lengths
    total = int(ends[-1])
    first = 0  # the first record that reaches into the current block
    for block_start in range(0, total, width):
        block_stop = min(block_start + width, total)
        while ends[first] <= block_start:
            first += 1
        last = first + int(np.searchsorted(begins[first:], block_stop))
        piece_begins = np.maximum(begins[first:last], block_start)
        piece_ends = np.minimum(ends[first:last], block_stop)
        token_begins = starts[first:last] + (piece_begins - begins[first:last])
        if last - first == 1:
            block = tokens[token_begins[0] : token_begins[0] + block_stop - block_start]
        else:
            block = np.concatenate(
                [
                    tokens[begin : begin + size]
                    for begin, size in zip(
                        token_begins.tolist(),
                        (piece_ends - piece_begins).tolist(),
                        strict=True,
                    )
                ]
            )
        values = permute(block, buffer[:, : block.size])
        minima = np.minimum.reduceat(values, piece_begins - block_start, axis=1)
        targets = rows[first:last]
        if begins[first] < block_start:  # runs on from the block before
            np.minimum(out[targets[0]], minima[:, 0], out=out[targets[0]])
            out[targets[1:]] = minima[:, 1:].T
        else:
            out[targets] = minima.T
