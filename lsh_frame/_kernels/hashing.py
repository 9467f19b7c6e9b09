"""Stable 64-bit token hashes for character and word shingles.

Everything is unsigned 64-bit integer arithmetic that wraps modulo 2**64, which
numpy does identically on every platform, so a shingle hashes to the same value
in every process, on every machine and under every Python version. Python's
``hash()`` is never used.

The hash of a token is ``splitmix64(polynomial ^ tag)``: a polynomial over the
token's code points (or word hashes) with the odd multiplier ``MULTIPLIER``,
XOR-ed with a tag that separates kinds, lengths and salts, then the splitmix64
finaliser, which turns structured inputs into well mixed bits.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from lsh_frame._kernels.text import is_whitespace

U64 = np.uint64
MULTIPLIER = U64(0x9E3779B97F4A7C15)
_MULTIPLIER_INVERSE = U64(pow(0x9E3779B97F4A7C15, -1, 2**64))
_MIX1 = U64(0xBF58476D1CE4E5B9)
_MIX2 = U64(0x94D049BB133111EB)
_LENGTH_MIX = U64(0xD6E8FEB86659FD93)
KIND_CODES = {"char": 1, "word": 2, "stopword": 3}


def splitmix64(values: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """Apply the splitmix64 finaliser element-wise (returns a new array)."""
    z = values >> U64(30)
    z ^= values
    z *= _MIX1
    shifted = z >> U64(27)
    z ^= shifted
    z *= _MIX2
    np.right_shift(z, U64(31), out=shifted)
    z ^= shifted
    return z


def token_tag(kind: str, k: int, salt: int = 0) -> np.uint64:
    """Tag that makes equal text hash differently per kind, length and salt."""
    tag = (KIND_CODES[kind] << 32 | k) ^ (salt & 0xFFFFFFFFFFFFFFFF)
    return U64(splitmix64(np.array([tag], dtype=U64))[0])


def char_shingles(
    codepoints: npt.NDArray[np.uint32],
    offsets: npt.NDArray[np.int64],
    k: int,
    tag: np.uint64,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Hash every window of ``k`` code points that lies inside one record.

    Returns the hashes in record order and the ``n + 1`` CSR offsets. Records
    shorter than ``k`` get no shingles.
    """
    total = codepoints.size
    lengths = np.diff(offsets)
    counts = np.maximum(lengths - k + 1, 0)
    token_offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    if total < k:
        return np.empty(0, dtype=U64), token_offsets
    windows = total - k + 1
    values = codepoints[:windows].astype(U64)
    for shift in range(1, k):
        values *= MULTIPLIER
        values += codepoints[shift : windows + shift]
    # A window is valid when it ends inside its own record: mark the last k-1
    # start positions of every record invalid.
    invalid = np.zeros(total, dtype=bool)
    starts, ends = offsets[:-1], offsets[1:]
    for back in range(1, k):
        position = ends - back
        invalid[position[position >= starts]] = True
    values = values[~invalid[:windows]]
    values ^= tag
    return splitmix64(values), token_offsets


def word_spans(
    codepoints: npt.NDArray[np.uint32], offsets: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Start, end (exclusive) and record of every maximal non-whitespace run."""
    total = codepoints.size
    if total == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty, empty
    word = ~is_whitespace(codepoints)
    record_start = np.zeros(total, dtype=bool)
    record_end = np.zeros(total, dtype=bool)
    nonempty = offsets[1:] > offsets[:-1]
    record_start[offsets[:-1][nonempty]] = True
    record_end[offsets[1:][nonempty] - 1] = True
    previous_word = np.concatenate([[False], word[:-1]])
    next_word = np.concatenate([word[1:], [False]])
    starts = np.flatnonzero(word & (record_start | ~previous_word))
    ends = np.flatnonzero(word & (record_end | ~next_word)) + 1
    records = np.searchsorted(offsets, starts, side="right") - 1
    return starts, ends, records


def word_hashes(
    codepoints: npt.NDArray[np.uint32],
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
) -> npt.NDArray[np.uint64]:
    """Hash spans of code points, vectorised with polynomial prefix sums.

    The value of span ``[s, e)`` is ``sum(cp[s + j] * M**j)``, computed as the
    difference of two prefix sums scaled by ``M**-s`` (``M`` is odd, so it is
    invertible modulo 2**64), then mixed with the span's length.
    """
    total = codepoints.size
    if starts.size == 0:
        return np.empty(0, dtype=U64)
    powers = np.full(total + 1, MULTIPLIER, dtype=U64)
    powers[0] = 1
    np.cumprod(powers, out=powers)
    inverse_powers = np.full(total + 1, _MULTIPLIER_INVERSE, dtype=U64)
    inverse_powers[0] = 1
    np.cumprod(inverse_powers, out=inverse_powers)
    prefix = np.zeros(total + 1, dtype=U64)
    np.cumsum(codepoints.astype(U64) * powers[:total], out=prefix[1:])
    values = (prefix[ends] - prefix[starts]) * inverse_powers[starts]
    values ^= (ends - starts).astype(U64) * _LENGTH_MIX
    return splitmix64(values)


def word_shingles(
    codepoints: npt.NDArray[np.uint32],
    offsets: npt.NDArray[np.int64],
    k: int,
    tag: np.uint64,
    stopword_hashes: npt.NDArray[np.uint64] | None = None,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Hash every run of ``k`` consecutive words that lies inside one record.

    With ``stopword_hashes``, only runs whose first word is a stop word are
    kept (the stop-word shingles of Theobald et al., SpotSigs).
    """
    n_records = offsets.size - 1
    starts, ends, records = word_spans(codepoints, offsets)
    words = word_hashes(codepoints, starts, ends)
    grams = words.size - k + 1
    if grams <= 0:
        return np.empty(0, dtype=U64), np.zeros(n_records + 1, dtype=np.int64)
    values = words[:grams].copy()
    for shift in range(1, k):
        values *= MULTIPLIER
        values += words[shift : grams + shift]
    keep = records[:grams] == records[k - 1 :]
    if stopword_hashes is not None:
        keep &= np.isin(words[:grams], stopword_hashes)
    values = values[keep]
    values ^= tag
    counts = np.bincount(records[:grams][keep], minlength=n_records)
    token_offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return splitmix64(values), token_offsets
