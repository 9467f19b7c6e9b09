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

import functools
import sys
from typing import Any

import numpy as np
import numpy.typing as npt

from lsh_frame._kernels import native
from lsh_frame._kernels.text import whitespace_positions

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


# Asked for per column of every batch (6 us of numpy calls each): a batch of
# one new record asks for the same few tags again and again.
@functools.lru_cache(maxsize=4096)
def token_tag(kind: str, k: int, salt: int = 0) -> np.uint64:
    """Tag that makes equal text hash differently per kind, length and salt."""
    tag = (KIND_CODES[kind] << 32 | k) ^ (salt & 0xFFFFFFFFFFFFFFFF)
    return U64(splitmix64(np.array([tag], dtype=U64))[0])


def char_shingles(
    codepoints: npt.NDArray[np.uint32],
    offsets: npt.NDArray[np.int64],
    k: int,
    tag: np.uint64 | npt.NDArray[np.uint64],
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Hash every window of ``k`` code points that lies inside one record.

    Returns the hashes in record order and the ``n + 1`` CSR offsets. Records
    shorter than ``k`` get no shingles. ``tag`` is one tag, or one per record.
    """
    if native.compiled is not None:
        done = native.char_shingles(codepoints, offsets, k, tag)
        if done is not None:
            return done
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
    if np.ndim(tag):  # one tag per record
        values ^= np.repeat(np.asarray(tag, dtype=U64), counts)
    else:
        values ^= tag
    return splitmix64(values), token_offsets


def word_spans(
    units: npt.NDArray[np.integer], offsets: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Start, end (exclusive) and record of every maximal non-whitespace run.

    ``units`` is uint32 code points, or the uint8 bytes of ASCII text.
    """
    if native.compiled is not None and len(offsets):
        found = native.word_spans(units, offsets)
        if found is not None:
            return found
    _, starts, ends, word_offsets = separated_words(units, offsets)
    counts = np.diff(word_offsets)
    records = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    # Record r's text moved r places right in the separated text, which starts
    # at offsets[0] of units.
    shift = records - int(offsets[0]) if len(offsets) else records
    return starts - shift, ends - shift, records


def separated_words(
    units: npt.NDArray[np.integer], offsets: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[Any], npt.NDArray[np.int64], npt.NDArray[np.int64], Any]:
    """Join the records' text with spaces and find every record's words.

    One space put between records means words never run across a record
    boundary, so every word is a gap between two whitespace positions of one
    array. Returns the joined text, the words' starts and ends in it, and the
    ``n + 1`` offsets of each record's words.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    joined = np.insert(units[offsets[0] : offsets[-1]], offsets[1:-1] - offsets[0], 32)
    record_starts = offsets - offsets[0] + np.arange(offsets.size)
    record_starts[-1] = joined.size
    return (joined, *gap_words(joined, record_starts))


def gap_words(
    units: npt.NDArray[np.integer], offsets: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Words of records that are separated by whitespace, like ``"a b c ", "d "``.

    Every record but the last must end in whitespace (or be empty), so that
    each word is a gap between two whitespace positions. Returns the words'
    starts, ends and the ``n + 1`` offsets of each record's words.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    size = int(offsets[-1])
    spaces = whitespace_positions(units[offsets[0] : size]) + offsets[0]
    starts = np.empty(spaces.size + 1, dtype=np.int64)
    starts[0] = offsets[0]
    np.add(spaces, 1, out=starts[1:])
    ends = np.empty(spaces.size + 1, dtype=np.int64)
    ends[:-1] = spaces
    ends[-1] = size
    filled = ends > starts
    if not bool(filled.all()):  # runs of spaces, empty records
        starts, ends = starts[filled], ends[filled]
    word_offsets = np.searchsorted(starts, offsets)
    word_offsets[-1] = starts.size
    return starts, ends, word_offsets.astype(np.int64, copy=False)


class _Powers:
    """``M**j`` and ``M**-j`` for ``j`` up to a size, grown on demand, shared.

    Tables up to ``_POWERS_KEPT`` entries are kept for the next call (a chunk
    of text is usually smaller); larger ones are made for the call and freed.
    """

    def __init__(self) -> None:
        self._tables = (np.ones(1, dtype=U64), np.ones(1, dtype=U64))

    def __call__(
        self, size: int
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
        if size > _POWERS_KEPT:
            return (
                _power_table(MULTIPLIER, size),
                _power_table(_MULTIPLIER_INVERSE, size),
            )
        tables = self._tables  # one read: another thread may replace it
        if tables[0].size < size:
            grown = min(max(size, 2 * tables[0].size), _POWERS_KEPT)
            tables = (
                _power_table(MULTIPLIER, grown),
                _power_table(_MULTIPLIER_INVERSE, grown),
            )
            self._tables = tables
        return tables[0][:size], tables[1][:size]


def _power_table(base: np.uint64, size: int) -> npt.NDArray[np.uint64]:
    powers = np.full(size, base, dtype=U64)
    powers[0] = 1
    np.cumprod(powers, out=powers)
    return powers


#: Power-table entries kept between calls (two tables of 16 MiB).
_POWERS_KEPT = 1 << 21
_powers = _Powers()


def word_hashes(
    units: npt.NDArray[np.integer],
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
) -> npt.NDArray[np.uint64]:
    """Hash spans of code points: ``splitmix64(sum(cp[s + j] * M**j) ^ mix(len))``.

    ``units`` is uint32 code points, or the uint8 bytes of ASCII text (the
    same hashes, faster: see :func:`_ascii_word_values`). Code points go
    through polynomial prefix sums: the value of span ``[s, e)`` is the
    difference of two prefix sums scaled by ``M**-s`` (``M`` is odd, so it is
    invertible modulo 2**64).
    """
    if native.compiled is not None:
        done = native.word_hashes(units, starts, ends)
        if done is not None:
            return done
    if starts.size == 0:
        return np.empty(0, dtype=U64)
    lengths = ends - starts
    if units.dtype == np.uint8 and sys.byteorder == "little":
        values = _ascii_word_values(units, starts, lengths)
    else:
        values = _prefix_word_values(units, starts, ends)
    values ^= lengths.astype(U64) * _LENGTH_MIX
    return splitmix64(values)


def _prefix_word_values(
    units: npt.NDArray[np.integer],
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
) -> npt.NDArray[np.uint64]:
    total = units.size
    powers, inverse_powers = _powers(total + 1)
    prefix = np.zeros(total + 1, dtype=U64)
    np.cumsum(units.astype(U64) * powers[:total], out=prefix[1:])
    return (prefix[ends] - prefix[starts]) * inverse_powers[starts]


#: ``_PAIR_VALUES[x] = (x & 0xFF) + (x >> 8) * M``: two bytes' share of a word.
_PAIR = np.arange(1 << 16, dtype=U64)
_PAIR_VALUES = (_PAIR & U64(0xFF)) + (_PAIR >> U64(8)) * MULTIPLIER
del _PAIR
#: ``_LOW_BYTES[n]`` keeps the low ``n`` bytes of a uint64.
_LOW_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [2**64 - 1], dtype=U64)
#: Words longer than this (rare) are hashed by prefix sums instead.
_SHORT_WORD = 64


def _ascii_word_values(
    data: npt.NDArray[Any],
    starts: npt.NDArray[np.int64],
    lengths: npt.NDArray[np.int64],
) -> npt.NDArray[np.uint64]:
    """Compute the polynomial of every word of ASCII bytes, eight at a time.

    A word's next eight bytes are read as one little-endian uint64 (two
    aligned loads and shifts), cut to the word's length, and turned into
    ``sum(b[j] * M**j)`` by four lookups in a table of byte pairs. Trailing
    zero bytes add nothing, so no padding changes the value.
    """
    with np.errstate(over="ignore"):
        packed = np.zeros(data.size // 8 + 2, dtype=U64)
        packed.view(np.uint8)[: data.size] = data
        values = _eight_byte_values(packed, starts, lengths)
        rows = np.flatnonzero(lengths > 8)
        position, left = starts[rows] + 8, lengths[rows] - 8
        scale = step = MULTIPLIER**8
        while rows.size:
            long = left > _SHORT_WORD
            if long.any():  # rare: the rest of very long words in one go
                which = rows[long]
                rest = _prefix_word_values(
                    data, position[long], position[long] + left[long]
                )
                values[which] += rest * scale
                rows, position, left = rows[~long], position[~long], left[~long]
            values[rows] += _eight_byte_values(packed, position, left) * scale
            more = left > 8
            rows, position, left = rows[more], position[more] + 8, left[more] - 8
            scale *= step
    return values


def _eight_byte_values(
    packed: npt.NDArray[np.uint64],
    position: npt.NDArray[np.int64],
    left: npt.NDArray[np.int64],
) -> npt.NDArray[np.uint64]:
    """``sum(b[j] * M**j)`` over the up to eight bytes from each ``position``."""
    chunk = _eight_bytes(packed, position)
    chunk &= _LOW_BYTES.take(np.minimum(left, 8))
    pairs = chunk.view(np.uint16).reshape(-1, 4)
    value = _PAIR_VALUES.take(pairs[:, 0])
    pair_scale = MULTIPLIER * MULTIPLIER
    for column in range(1, 4):
        part = _PAIR_VALUES.take(pairs[:, column])
        part *= pair_scale
        value += part
        pair_scale *= MULTIPLIER * MULTIPLIER
    return value


def _eight_bytes(
    packed: npt.NDArray[np.uint64], position: npt.NDArray[np.int64]
) -> npt.NDArray[np.uint64]:
    """Read the eight bytes from each byte ``position`` of ``packed`` as uint64."""
    word = position >> 3
    shift = ((position & 7) << 3).astype(U64)
    low = packed.take(word)
    low >>= shift
    high = packed.take(word + 1)
    np.subtract(U64(63), shift, out=shift)
    high <<= shift
    high <<= U64(1)  # shift by 64 - s in two steps: s = 0 gives 0
    low |= high
    return low


def word_shingles(
    codepoints: npt.NDArray[np.uint32],
    offsets: npt.NDArray[np.int64],
    k: int,
    tag: np.uint64,
    stopword_hashes: npt.NDArray[np.uint64] | None = None,
    *,
    separated: bool = False,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Hash every run of ``k`` consecutive words that lies inside one record.

    With ``stopword_hashes``, only runs whose first word is a stop word are
    kept (the stop-word shingles of Theobald et al., SpotSigs). With
    ``separated=True`` every record ends in whitespace (see :func:`gap_words`),
    which spares joining the records with spaces here.
    """
    n_records = offsets.size - 1
    if separated:
        starts, ends, word_offsets = gap_words(codepoints, offsets)
        words = word_hashes(codepoints, starts, ends)
    else:
        joined, starts, ends, word_offsets = separated_words(codepoints, offsets)
        words = word_hashes(joined, starts, ends)
        del joined
    if k == 1 and stopword_hashes is None:  # every word is a shingle
        words ^= tag
        return splitmix64(words), word_offsets
    counts = np.diff(word_offsets)
    records = np.repeat(np.arange(n_records, dtype=np.int64), counts)
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
