"""Text as integer arrays: UTF-8 bytes to Unicode code points, whitespace."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from lsh_frame._kernels import native

#: Every code point for which Python's ``str.isspace()`` is true, so that word
#: boundaries here agree with ``str.split()``.
WHITESPACE = np.array(
    [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x1C, 0x1D, 0x1E, 0x1F, 0x20, 0x85, 0xA0,
     0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000],
    dtype=np.uint32,
)  # fmt: skip


def utf8_to_codepoints(
    data: npt.NDArray[np.uint8],
    offsets: npt.NDArray[np.int64],
    *,
    ascii_bytes: bool = False,
) -> tuple[npt.NDArray[Any], npt.NDArray[np.int64]]:
    """Decode concatenated, valid UTF-8 strings into one array of code points.

    Parameters
    ----------
    data : ndarray of uint8
        The bytes of all strings, back to back, starting at ``offsets[0]``.
    offsets : ndarray of int64
        ``n + 1`` byte offsets into ``data``; string ``i`` is
        ``data[offsets[i]:offsets[i + 1]]``.

    Returns
    -------
    codepoints : ndarray of uint32
        The code points of all strings, back to back.
    cp_offsets : ndarray of int64
        ``n + 1`` offsets into ``codepoints``, starting at 0.

    With ``ascii_bytes=True``, ASCII text comes back as its uint8 bytes (which
    are its code points) without a copy; the word kernels read them faster.
    """
    data = data[offsets[0] : offsets[-1]]
    offsets = offsets - offsets[0]
    if data.size == 0 or int(data.max()) < 0x80:
        units = data if ascii_bytes else data.astype(np.uint32)
        return units, offsets.astype(np.int64, copy=False)
    if native.compiled is not None:
        return native.utf8_to_codepoints(data, offsets)
    # Continuation bytes look like 10xxxxxx; every other byte starts a character.
    is_lead = (data & 0xC0) != 0x80
    lead = np.flatnonzero(is_lead)
    padded = np.concatenate([data, np.zeros(3, dtype=np.uint8)]).astype(np.uint32)
    byte0 = padded[lead]
    byte1 = padded[lead + 1] & 0x3F
    byte2 = padded[lead + 2] & 0x3F
    byte3 = padded[lead + 3] & 0x3F
    codepoints = np.where(
        byte0 < 0x80,
        byte0,
        np.where(
            byte0 < 0xE0,
            ((byte0 & 0x1F) << 6) | byte1,
            np.where(
                byte0 < 0xF0,
                ((byte0 & 0x0F) << 12) | (byte1 << 6) | byte2,
                ((byte0 & 0x07) << 18) | (byte1 << 12) | (byte2 << 6) | byte3,
            ),
        ),
    ).astype(np.uint32)
    starts_before = np.concatenate([[0], np.cumsum(is_lead, dtype=np.int64)])
    return codepoints, starts_before[offsets]


_WHITESPACE_TABLE = np.zeros(int(WHITESPACE.max()) + 2, dtype=bool)
_WHITESPACE_TABLE[WHITESPACE] = True
_BEYOND_WHITESPACE = np.uint32(_WHITESPACE_TABLE.size - 1)


def is_whitespace(codepoints: npt.NDArray[np.uint32]) -> npt.NDArray[np.bool_]:
    """Return a mask of the code points Python's ``str.isspace()`` accepts."""
    return _WHITESPACE_TABLE[np.minimum(codepoints, _BEYOND_WHITESPACE)]


_ASCII_WHITESPACE = np.zeros(0x100, dtype=bool)
_ASCII_WHITESPACE[:0x80] = _WHITESPACE_TABLE[:0x80]
#: ASCII punctuation and symbols: ``[!-/:-@\[-`{-~]``.
_ASCII_PUNCTUATION = np.zeros(0x100, dtype=bool)
for _low, _high in ((0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)):
    _ASCII_PUNCTUATION[_low : _high + 1] = True


def whitespace_positions(units: npt.NDArray[Any]) -> npt.NDArray[np.intp]:
    """Positions of whitespace in code points, or in the bytes of ASCII text.

    ``units`` is uint32 code points, or uint8 bytes when the text is ASCII
    (its bytes are then its code points).
    """
    if units.dtype == np.uint8:
        if not bool((units < 0x20).any()):  # only the space is whitespace
            return np.flatnonzero(units == 0x20)
        return np.flatnonzero(_ASCII_WHITESPACE[units])
    candidates = np.flatnonzero((units <= 0x20) | (units >= 0x85))
    return candidates[is_whitespace(units[candidates])]


def _already_collapsed(
    codepoints: npt.NDArray[np.uint32],
    offsets: npt.NDArray[np.int64],
    spaces: npt.NDArray[np.intp],
) -> bool:
    """Tell whether every whitespace is one ASCII space between two texts."""
    if not bool((codepoints[spaces] == 0x20).all()):
        return False
    boundary = np.zeros(codepoints.size + 1, dtype=bool)
    boundary[offsets] = True  # record starts, and the end of the last record
    inside = ~boundary[spaces] & ~boundary[spaces + 1]
    if not bool(inside.all()):
        return False
    # No space directly follows another (record boundaries were ruled out).
    return bool((np.diff(spaces) > 1).all())


def collapse_whitespace(
    codepoints: npt.NDArray[np.uint32],
    offsets: npt.NDArray[np.int64],
    *,
    punctuation: bool = False,
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    r"""Replace each whitespace run with one space and trim both ends, per record.

    Equivalent to ``" ".join(s.split())`` on every record. With
    ``punctuation`` (the bytes of ASCII text only), ASCII punctuation and
    symbols count as whitespace: the same as replacing each run of them with
    a space first (``[!-/:-@\[-`{-~]+``, ``ASCII_PUNCTUATION_CHARACTER``).
    """
    if punctuation and codepoints.dtype != np.uint8:
        raise ValueError("Punctuation is taken as whitespace in bytes only.")
    if native.compiled is not None:
        done = native.collapse_whitespace(codepoints, offsets, punctuation=punctuation)
        if done is not None:
            return done
    if punctuation:
        codepoints = np.where(_ASCII_PUNCTUATION[codepoints], np.uint8(32), codepoints)
    spaces = whitespace_positions(codepoints)
    if spaces.size == 0 or _already_collapsed(codepoints, offsets, spaces):
        return codepoints, offsets
    lengths = np.diff(offsets)
    nonempty = np.flatnonzero(lengths > 0)
    # Last non-space position of every record (-1 when it has none).
    text_position = np.arange(codepoints.size, dtype=np.int64)
    text_position[spaces] = -1
    last_text = np.full(lengths.size, -1, dtype=np.int64)
    if nonempty.size:
        last_text[nonempty] = np.maximum.reduceat(text_position, offsets[nonempty])
    record = np.searchsorted(offsets, spaces, side="right") - 1
    # A space survives when it starts a run after some text of its record and
    # more text follows it in the same record (so it is not trailing).
    previous = spaces - 1
    starts_run = spaces > offsets[record]
    starts_run[starts_run] = text_position[previous[starts_run]] >= 0
    kept = starts_run & (spaces < last_text[record])
    removed = spaces[~kept]
    keep = np.ones(codepoints.size, dtype=bool)
    keep[removed] = False
    collapsed = codepoints.copy()
    collapsed[spaces] = 0x20
    new_offsets = offsets - np.searchsorted(removed, offsets)
    return collapsed[keep], new_offsets
