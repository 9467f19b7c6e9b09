"""MinHash over token sets stored as CSR (``tokens``, ``offsets``).

The work is ``tokens × num_perm`` hash evaluations, so the layout decides the
speed. Records are sorted by token count and cut into tiles of similar length;
a tile is a dense ``(length, records)`` matrix, padded with each record's own
first token (which cannot change a minimum). Then, slot by slot, a
``(num_perm, records)`` block of permuted values is computed and folded into a
running minimum. Every numpy call works on contiguous same-shape operands that
fit in the L2 cache — numpy's vectorised loops skip broadcast operands, so
constants are pre-broadcast once — and releases the GIL, so chunks of rows run
in parallel threads.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

MERSENNE_61 = np.uint64((1 << 61) - 1)
_LOW32 = np.uint64(0xFFFFFFFF)
_LOW29 = np.uint64((1 << 29) - 1)

#: Records per tile: four (num_perm, tile) uint32 blocks of 128 rows fill 1 MiB,
#: which stays in a typical L2 cache.
TILE_RECORDS = 512
#: Upper bound on padded cells (records × length) gathered for one tile.
TILE_CELLS = 1 << 16
#: A single record longer than this is reduced in blocks instead of slot by slot.
LONG_RECORD = 512

Permute = Callable[[npt.NDArray, npt.NDArray], npt.NDArray]


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


def affine32_permute(a: npt.NDArray[np.uint32], b: npt.NDArray[np.uint32]) -> Permute:
    """Return ``permute(x, out)``: ``out[j, i] = (a[j] * x[i] + b[j]) mod 2**32``."""
    a_block = np.ascontiguousarray(np.broadcast_to(a[:, None], (a.size, TILE_RECORDS)))
    b_block = np.ascontiguousarray(np.broadcast_to(b[:, None], (b.size, TILE_RECORDS)))

    def permute(x: npt.NDArray, out: npt.NDArray) -> npt.NDArray:
        width = x.size
        np.copyto(out, x[None, :])
        np.multiply(out, a_block[:, :width], out=out)
        np.add(out, b_block[:, :width], out=out)
        return out

    return permute


def mersenne61_permute(a: npt.NDArray[np.uint64], b: npt.NDArray[np.uint64]) -> Permute:
    """Return ``permute(x, out)``: ``out[j, i] = (a[j] * x[i] + b[j]) mod p``.

    The 122-bit product is split into 32-bit halves; powers of two fold back
    because ``2**61 ≡ 1 (mod p)``. Inputs must already be below ``p``.
    """
    a_high, a_low = (a >> np.uint64(32))[:, None], (a & _LOW32)[:, None]
    b_column = b[:, None]

    def permute(x: npt.NDArray, out: npt.NDArray) -> npt.NDArray:
        x_high = (x >> np.uint64(32))[None, :]
        x_low = (x & _LOW32)[None, :]
        low = a_low * x_low  # < 2**64
        middle = a_high * x_low + a_low * x_high  # < 2**62
        high = a_high * x_high  # < 2**58, weight 2**64 ≡ 2**3
        total = (high << np.uint64(3)) + ((middle & _LOW29) << np.uint64(32))
        total += middle >> np.uint64(29)
        total += (low & MERSENNE_61) + (low >> np.uint64(61))
        total += b_column
        out[...] = reduce_mersenne61(total)
        return out

    return permute


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
    nonempty = np.flatnonzero(lengths > 0)
    order = nonempty[np.argsort(lengths[nonempty], kind="stable")]
    sorted_lengths = lengths[order]
    num_perm = out.shape[1]
    running = np.empty((num_perm, TILE_RECORDS), dtype=out.dtype)
    scratch = np.empty_like(running)
    start, count = 0, order.size
    while start < count:
        stop = min(start + TILE_RECORDS, count)
        length = int(sorted_lengths[stop - 1])
        if length * (stop - start) > TILE_CELLS:
            stop = start + max(1, TILE_CELLS // length)
            length = int(sorted_lengths[stop - 1])
        records = order[start:stop]
        if stop - start == 1 and length > LONG_RECORD:
            begin = offsets[records[0]]
            out[records[0]] = _long_record(
                tokens[begin : begin + length], permute, scratch
            )
        else:
            size = stop - start
            slot = np.arange(length)[:, None]
            padded = np.where(slot < sorted_lengths[start:stop][None, :], slot, 0)
            tile = tokens[offsets[records][None, :] + padded]
            acc, buffer = running[:, :size], scratch[:, :size]
            permute(tile[0], acc)
            for position in range(1, length):
                np.minimum(acc, permute(tile[position], buffer), out=acc)
            out[records] = acc.T
        start = stop


def _long_record(
    tokens: npt.NDArray, permute: Permute, buffer: npt.NDArray
) -> npt.NDArray:
    """Signature of one long record, reduced over blocks of its tokens."""
    width = buffer.shape[1]
    result = permute(tokens[:width], buffer[:, : min(width, tokens.size)]).min(axis=1)
    for begin in range(width, tokens.size, width):
        block = tokens[begin : begin + width]
        values = permute(block, buffer[:, : block.size])
        np.minimum(result, values.min(axis=1), out=result)
    return result
