"""MinHash over token sets stored as CSR (``tokens``, ``offsets``).

The work is ``tokens × num_perm`` hash evaluations, so the layout decides the
speed. Short records are sorted by token count and cut into tiles of similar
length; a tile is a dense ``(length, records)`` matrix, padded with each
record's own first token (which cannot change a minimum). The family folds a
tile into its ``(num_perm, records)`` minima: affine32 a group of permutations
at a time over the whole tile (a multiply and an add, then one minimum down
the tile's rows), mersenne61 one token position at a time (a
``(num_perm, records)`` block of permuted values folded into a running
minimum). Long records would get tiles of few records, so that every call
works on a narrow block and the cost per token grows with the length;
instead they are cut into pieces of at most one block, reduced side by side
as the rows of a padded matrix (:func:`_long_records`). When a few short
records hold few tokens in all (a batch of new records), they are reduced
that way too, in one block (:func:`_one_block`).

Every numpy call works on operands that fit in the L2 cache and releases the
GIL, so chunks of rows run in parallel threads; and the calls are long, since
a thread must win the GIL back after each one (calls of ~10 us ran no faster
on two threads than on one). ``np.minimum.reduceat`` is not used: on 2-D
arrays it holds the GIL.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
import numpy.typing as npt

from lsh_frame._kernels.ranges import expand

MERSENNE_61 = np.uint64((1 << 61) - 1)
_LOW32 = np.uint64(0xFFFFFFFF)
_LOW29 = np.uint64((1 << 29) - 1)

#: mersenne61's block width and tile width: its (num_perm, width) uint64
#: temporaries of 128 rows stay in a typical L2 cache.
BLOCK_WIDTH = 512
#: mersenne61 signs records longer than this in blocks of their tokens instead
#: of slot by slot (see :func:`_long_records`): tiles of longer records hold
#: fewer than ``tile_cells // LONG_RECORD`` records, and their narrow blocks
#: cost more per token than the blocks (measured: the same per token up to 128
#: tokens, twice as much from 256; see benchmarks/HISTORY.md, "Long values").
LONG_RECORD = 128
#: Records whose tokens number at most this many in all, and whose padded
#: rows (records × the longest) hold at most ``ONE_BLOCK_CELLS``, are signed in
#: one block (see :func:`_one_block`): for mersenne61 one record of 64 tokens
#: took 64 tile passes of four numpy calls each (0.35 ms), one block takes
#: five calls (0.013 ms). Rows padded further (one long record among many of
#: one token) would cost more than the tiles.
ONE_BLOCK_TOKENS = 512
ONE_BLOCK_CELLS = 2048
#: affine32 computes at most about this many values a call: a group of
#: permutations over a tile or block (4 × 64 Ki), more permutations at once
#: over a smaller one, so that a batch of one record of 64 tokens is signed
#: in three calls, not 96.
GROUP_VALUES = 1 << 18


class Permute(Protocol):
    """A hash family's permutations over blocks of tokens and over tiles."""

    #: Records per tile, and the most padded cells (records × length) a tile
    #: holds. Records of more than ``long_record`` tokens are signed in pieces
    #: of at most ``block_width`` tokens (see :func:`_long_records`).
    tile_records: int
    tile_cells: int
    long_record: int
    block_width: int

    def fold(self, tile: npt.NDArray, out: npt.NDArray) -> None:
        """Write ``out[j, i] = min_p h_j(tile[p, i])`` (``out``: num_perm × records)."""
        ...

    def reduce(self, rows: npt.NDArray, dtype: npt.DTypeLike) -> npt.NDArray:
        """Return ``out[j, k] = min_p h_j(rows[k, p])``, shape ``(num_perm, pieces)``.

        ``rows`` is ``(pieces, length)``: each piece's tokens padded with its
        first (see :func:`padded_rows`).
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
    #:
    #: Tiles of shorter values hold more permutations a call (GROUP_VALUES).
    tile_records = 1 << 13
    tile_cells = 1 << 16
    #: Records longer than this are signed in pieces (:func:`_long_records`):
    #: a tile of 64 Ki cells holds too few of them for the minimum down its
    #: rows to run over wide rows. Word-like text, 30M characters in values of
    #: 150 to 10,000 characters, ``lf.minhash`` on two threads: 1.0-1.1 s for
    #: every length with this cut; 1.2-1.3 s at 150-300 characters with a cut
    #: at 128 tokens; 1.2-1.4 s at 600-1,200 with a cut at 2,048. Before, with
    #: narrow blocks reduced by ``np.minimum.reduceat`` (which holds the GIL),
    #: values over 128 tokens took 3.0-3.6 s, more than on one thread.
    long_record = 512
    #: Pieces of long records hold at most this many tokens, and a block of
    #: pieces about this many cells.
    block_width = 1 << 15

    def __init__(self, a: npt.NDArray[np.uint32], b: npt.NDArray[np.uint32]) -> None:
        self._a = a[:, None, None]
        self._b = b[:, None, None]

    def fold(self, tile: npt.NDArray, out: npt.NDArray) -> None:
        self._minima(tile, 1, out)

    def reduce(self, rows: npt.NDArray, dtype: npt.DTypeLike) -> npt.NDArray:
        minima = np.empty((self._a.shape[0], rows.shape[0]), dtype=dtype)
        self._minima(rows, 2, minima)
        return minima

    def _minima(self, cells: npt.NDArray, axis: int, out: npt.NDArray) -> None:
        """Permute ``cells`` (2-D) and write the minima along ``axis`` into ``out``.

        A group of permutations per call: as many as GROUP_VALUES allows, at
        least four.
        """
        num_perm = self._a.shape[0]
        group = min(num_perm, max(4, GROUP_VALUES // max(cells.size, 1)))
        values = np.empty(group * cells.size, dtype=out.dtype)
        for j in range(0, num_perm, group):
            stop = min(j + group, num_perm)
            block = values[: (stop - j) * cells.size].reshape(stop - j, *cells.shape)
            np.multiply(cells[None], self._a[j:stop], out=block)
            np.add(block, self._b[j:stop], out=block)
            np.minimum.reduce(block, axis=axis, out=out[j:stop])


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
    long_record = LONG_RECORD
    block_width = BLOCK_WIDTH

    def __init__(self, a: npt.NDArray[np.uint64], b: npt.NDArray[np.uint64]) -> None:
        self._a_high = (a >> np.uint64(32))[:, None]
        self._a_low = (a & _LOW32)[:, None]
        self._b_column = b[:, None]

    def __call__(self, x: npt.NDArray, out: npt.NDArray) -> npt.NDArray:
        """Write ``out[j, i] = h_j(x[i])`` (``out`` is ``(num_perm, x.size)``)."""
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

    def fold(self, tile: npt.NDArray, out: npt.NDArray) -> None:
        buffer = np.empty(out.shape, dtype=out.dtype)
        self(tile[0], out)
        for position in range(1, tile.shape[0]):
            np.minimum(out, self(tile[position], buffer), out=out)

    def reduce(self, rows: npt.NDArray, dtype: npt.DTypeLike) -> npt.NDArray:
        num_perm = self._a_low.shape[0]
        values = self(rows.reshape(-1), np.empty((num_perm, rows.size), dtype=dtype))
        return np.minimum.reduce(values.reshape(num_perm, *rows.shape), axis=2)


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
    permute : Permute
        From :func:`affine32_permute` or :func:`mersenne61_permute`.
    out : ndarray, shape (n, num_perm)
        Receives the signatures; rows of empty records are left untouched.
    """
    lengths = np.diff(offsets)
    if offsets[-1] - offsets[0] <= ONE_BLOCK_TOKENS and (
        np.count_nonzero(lengths) * lengths.max(initial=0) <= ONE_BLOCK_CELLS
    ):
        _one_block(tokens, offsets, lengths, permute, out)
        return
    long_record = permute.long_record
    short = np.flatnonzero((lengths > 0) & (lengths <= long_record))
    order = short[np.argsort(lengths[short], kind="stable")]
    sorted_lengths = lengths[order]
    num_perm = out.shape[1]
    tile_records, tile_cells = permute.tile_records, permute.tile_cells
    # The widest tile: of the shortest records, as many as tile_cells allows.
    shortest = int(sorted_lengths[0]) if order.size else 1
    widest = min(tile_records, order.size, max(1, tile_cells // shortest))
    running = np.empty((num_perm, widest), dtype=out.dtype)
    start = 0
    while start < order.size:
        stop = start + _fitting(sorted_lengths[start:], tile_records, tile_cells)
        records = order[start:stop]
        tile = padded_rows(
            tokens, offsets[records], sorted_lengths[start:stop], columns=True
        )
        acc = running[:, : stop - start]
        permute.fold(tile, acc)
        out[records] = acc.T
        start = stop
    long = np.flatnonzero(lengths > long_record)
    if long.size:
        _long_records(tokens, offsets[long], lengths[long], long, permute, out)


def _fitting(sizes: npt.NDArray[np.int64], most: int, cells: int) -> int:
    """How many of the first ``sizes`` (ascending) make one tile or block.

    At most ``most`` of them, and they fill at most ``cells`` cells padded to
    the longest (at least one, however long): the largest count ``c`` with
    ``c * sizes[c - 1] <= cells``, by bisection (the product grows with ``c``).
    """
    low, high = 1, min(most, sizes.size)  # low always fits
    while low < high:
        middle = (low + high + 1) // 2
        if middle * int(sizes[middle - 1]) <= cells:
            low = middle
        else:
            high = middle - 1
    return low


def _one_block(
    tokens: npt.NDArray,
    offsets: npt.NDArray[np.int64],
    lengths: npt.NDArray[np.int64],
    permute: Permute,
    out: npt.NDArray,
) -> None:
    """Signatures of records whose tokens all fit one block, in one pass.

    The records' tokens, padded to the longest, are permuted and reduced per
    record (the minima are the ones the tiles find: the same values, compared
    in another order).
    """
    filled = np.flatnonzero(lengths > 0)
    if not filled.size:
        return
    rows = padded_rows(tokens, offsets[filled], lengths[filled])
    out[filled] = permute.reduce(rows, out.dtype).T


def padded_rows(
    tokens: npt.NDArray,
    begins: npt.NDArray[np.int64],
    sizes: npt.NDArray[np.int64],
    *,
    columns: bool = False,
) -> npt.NDArray:
    """Return the pieces ``tokens[begin : begin + size]`` as rows of one matrix.

    Each row is padded to the longest with its piece's first token, which
    cannot change a minimum. Sizes must be positive. With ``columns`` the
    pieces are the columns instead (a tile: ``(length, pieces)``, contiguous).
    """
    slot = np.arange(int(sizes.max()))
    if columns:
        slot, begins, sizes = slot[:, None], begins[None, :], sizes[None, :]
    else:
        slot, begins, sizes = slot[None, :], begins[:, None], sizes[:, None]
    return tokens[begins + np.where(slot < sizes, slot, 0)]


def _long_records(
    tokens: npt.NDArray,
    starts: npt.NDArray[np.int64],
    lengths: npt.NDArray[np.int64],
    rows: npt.NDArray[np.int64],
    permute: Permute,
    out: npt.NDArray,
) -> None:
    """Signatures of long records, from pieces of at most one block's width.

    Each record is cut into pieces of the family's ``block_width`` tokens (the
    last one shorter). The pieces, sorted by size, go in blocks of about
    ``block_width`` cells: one full piece, or many short ones side by side as
    the rows of a matrix padded to the longest (a minimum along rows reduces
    them: ``np.minimum.reduceat`` over a flat stream would hold the GIL). A
    record's pieces fold into one running minimum. So the cost per token is
    that of full-width blocks, whatever the records' lengths, and memory stays
    at about one block. A block never holds two pieces of one record: pieces
    of one record are full but for the last.
    """
    width = permute.block_width
    record, piece = expand(np.zeros_like(lengths), -(-lengths // width))
    offset = piece * width
    begins = starts[record] + offset
    sizes = np.minimum(lengths[record] - offset, width)
    order = np.argsort(sizes, kind="stable")
    signed = np.full((lengths.size, out.shape[1]), np.iinfo(out.dtype).max, out.dtype)
    sorted_sizes = sizes[order]
    start = 0
    while start < order.size:
        stop = start + _fitting(sorted_sizes[start:], order.size, width)
        chosen = order[start:stop]
        minima = permute.reduce(
            padded_rows(tokens, begins[chosen], sizes[chosen]), out.dtype
        )
        held = record[chosen]
        signed[held] = np.minimum(signed[held], minima.T)
        start = stop
    out[rows] = signed
