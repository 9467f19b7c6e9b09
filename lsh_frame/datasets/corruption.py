"""How duplicates of a record are corrupted: typos, nicknames, blanks, swaps."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lsh_frame.datasets import wordlists as _wordlists
from lsh_frame.datasets.population import (
    _EPOCH,
    _INITIAL_OF,
    _NICKNAME_CODES,
    _NICKNAME_COUNT,
    _NICKNAME_START,
    _draw_addresses,
)

if TYPE_CHECKING:
    from lsh_frame.datasets.population import _Random, _Records


# Duplicates per duplicated entity: 1, 2 or 3 with these weights (geometric-like).
_DUPLICATE_COUNT_WEIGHTS: Final = np.array([60.0, 28.0, 12.0])


# (kind, relative frequency). A duplicate draws 1-3 distinct kinds.
_CORRUPTIONS: Final = (
    ("typo_given_name", 12.0),
    ("typo_surname", 12.0),
    ("typo_street_address", 10.0),
    ("typo_city", 3.0),
    ("typo_email", 5.0),
    ("nickname", 8.0),
    ("initial", 4.0),
    ("swap_names", 4.0),
    ("street_type", 8.0),
    ("missing_field", 12.0),
    ("phone_digit", 7.0),
    ("date_of_birth", 6.0),
    ("postcode_digit", 3.0),
    ("moved", 3.0),
)

_CORRUPTION_KINDS: Final = tuple(kind for kind, _ in _CORRUPTIONS)

_CORRUPTION_WEIGHTS: Final = np.array([weight for _, weight in _CORRUPTIONS])

_CORRUPTION_COUNT_WEIGHTS: Final = np.array([50.0, 35.0, 15.0])


# Fields a "missing_field" corruption can blank, repeated to weight them.
_BLANKABLE: Final = (
    "email",
    "email",
    "phone",
    "phone",
    "date_of_birth",
    "street_address",
    "postcode",
    "city",
    "given_name",
)


# Character edits, as codes.
_SUBSTITUTE, _DELETE, _INSERT, _TRANSPOSE = 0, 1, 2, 3

_TYPO_WEIGHTS: Final = np.array([35.0, 20.0, 20.0, 25.0])

_DIGIT_TRANSPOSE: Final = 0.3


def _keyboard_table() -> tuple[np.ndarray, np.ndarray]:
    """Return (neighbours, degree): code point -> QWERTY neighbour code points."""
    width = max(len(keys) for keys in _wordlists.KEYBOARD_NEIGHBOURS.values())
    neighbours = np.zeros((128, width), dtype=np.uint32)
    degree = np.zeros(128, dtype=np.int64)
    for key, keys in _wordlists.KEYBOARD_NEIGHBOURS.items():
        neighbours[ord(key), : len(keys)] = [ord(near) for near in keys]
        degree[ord(key)] = len(keys)
    return neighbours, degree


_NEIGHBOURS, _NEIGHBOUR_DEGREE = _keyboard_table()


def _duplicate_sources(people: int, duplicates: int, random: _Random) -> np.ndarray:
    """Return, for each duplicate row, the person it duplicates.

    A duplicated person gets 1-3 duplicates (geometric-like weights). Rates too high
    for that (above about two duplicates per person) spread the rest at random.
    """
    if duplicates == 0:
        return np.zeros(0, dtype=np.int64)
    counts = 1 + random.choice(_DUPLICATE_COUNT_WEIGHTS, people)
    ends = np.cumsum(counts)
    if ends[-1] < duplicates:
        extra = random.integers(people, int(duplicates - ends[-1]))
        counts = counts + np.bincount(extra, minlength=people)
    else:
        used = int(np.searchsorted(ends, duplicates)) + 1
        counts = counts[:used]
        counts[-1] -= ends[used - 1] - duplicates
    chosen = random.permutation(people)[: counts.size]
    return np.repeat(chosen, counts)


def _choose_corruptions(size: int, random: _Random) -> dict[str, np.ndarray]:
    """Pick 1-3 distinct corruption kinds per duplicate: kind -> row mask."""
    count = 1 + random.choice(_CORRUPTION_COUNT_WEIGHTS, size)
    slots = len(_CORRUPTION_COUNT_WEIGHTS)
    drawn = random.choice(_CORRUPTION_WEIGHTS, size * slots).reshape(size, slots)
    for slot in range(1, slots):
        for _ in range(32):
            clash = (drawn[:, :slot] == drawn[:, slot : slot + 1]).any(axis=1)
            if not clash.any():
                break
            rows = np.flatnonzero(clash)
            drawn[rows, slot] = random.choice(_CORRUPTION_WEIGHTS, rows.size)
    chosen = np.zeros((size, len(_CORRUPTION_KINDS)), dtype=bool)
    for slot in range(slots):
        rows = np.flatnonzero(count > slot)
        chosen[rows, drawn[rows, slot]] = True
    return {kind: chosen[:, index] for index, kind in enumerate(_CORRUPTION_KINDS)}


def _shift_birth_days(days: np.ndarray, random: _Random) -> np.ndarray:
    """Swap day and month where that gives another valid date; else move one day."""
    dates = (_EPOCH + days).astype("datetime64[D]")
    month_start = dates.astype("datetime64[M]")
    year_start = dates.astype("datetime64[Y]").astype("datetime64[M]")
    month = (month_start - year_start).astype(np.int64) + 1
    day = (dates - month_start.astype("datetime64[D]")).astype(np.int64) + 1
    swapped = (year_start + (day - 1)).astype("datetime64[D]") + (month - 1)
    swapped_days = (swapped - _EPOCH).astype(np.int64)
    step = np.where(random.bernoulli(0.5, days.size), 1, -1)
    return np.where((day <= 12) & (day != month), swapped_days, days + step)


def _corrupt_codes(
    copies: _Records, kinds: dict[str, np.ndarray], random: _Random
) -> _Records:
    """Apply the corruptions that act on codes: moves, street types, names, dates."""
    moved = np.flatnonzero(kinds["moved"])
    changes: dict[str, np.ndarray] = {}
    for key, value in _draw_addresses(moved.size, random).items():
        column = getattr(copies, key).copy()
        column[moved] = value
        changes[key] = column
    changes["abbreviated"] = changes["abbreviated"] ^ kinds["street_type"]

    given = copies.given.copy()
    rows = np.flatnonzero(kinds["nickname"])
    names = given[rows]
    count = _NICKNAME_COUNT[names]
    pick = _NICKNAME_START[names] + random.integers(np.maximum(count, 1), rows.size)
    nickname = _NICKNAME_CODES[np.minimum(pick, _NICKNAME_CODES.size - 1)]
    # A name without a short form is shortened to its initial instead.
    given[rows] = np.where(count > 0, nickname, _INITIAL_OF[names])
    rows = np.flatnonzero(kinds["initial"])
    given[rows] = _INITIAL_OF[given[rows]]
    changes["given"] = given

    birth_day = copies.birth_day.copy()
    rows = np.flatnonzero(kinds["date_of_birth"])
    birth_day[rows] = _shift_birth_days(birth_day[rows], random)
    changes["birth_day"] = birth_day
    return replace(copies, **changes)


def _code_matrix(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """View strings as a (rows, width + 1) matrix of code points, zero padded."""
    values = np.asarray(values, dtype=np.str_)
    width = values.dtype.itemsize // 4
    codes = np.zeros((values.size, width + 1), dtype=np.uint32)
    if width:
        codes[:, :width] = values.view(np.uint32).reshape(values.size, width)
    return codes, np.count_nonzero(codes, axis=1)


def _from_code_matrix(codes: np.ndarray) -> np.ndarray:
    """Turn a code-point matrix back into a fixed-width string array."""
    codes = np.ascontiguousarray(codes, dtype=np.uint32)
    return codes.view(np.dtype((np.str_, codes.shape[1]))).reshape(-1)


def _apply_edits(
    codes: np.ndarray, operation: np.ndarray, position: np.ndarray, key: np.ndarray
) -> np.ndarray:
    """Apply one character edit per row of a code-point matrix.

    Each row gets ``operation`` at ``position``: substitute or insert ``key``, delete,
    or swap with the next character. The last column must be padding so an insertion
    has room.
    """
    columns = np.arange(codes.shape[1])[None, :]
    at = position[:, None]
    edit = operation[:, None]
    source = np.where(edit == _DELETE, columns + (columns >= at), columns)
    source = np.where(edit == _INSERT, columns - (columns > at), source)
    source = np.where((edit == _TRANSPOSE) & (columns == at), columns + 1, source)
    source = np.where((edit == _TRANSPOSE) & (columns == at + 1), columns - 1, source)
    edited = np.take_along_axis(codes, np.minimum(source, codes.shape[1] - 1), axis=1)
    put = np.flatnonzero((operation == _SUBSTITUTE) | (operation == _INSERT))
    edited[put, position[put]] = key[put]
    return edited


def _near_keys(current: np.ndarray, random: _Random) -> np.ndarray:
    """Draw a QWERTY neighbour of each character, keeping capitals capital.

    Characters without neighbours in the table (spaces, punctuation, non-ASCII) get
    a random letter.
    """
    current = current.astype(np.int64)
    capital = (current >= ord("A")) & (current <= ord("Z"))
    lower = np.where(capital, current + 32, current)
    lower = np.where(lower < 128, lower, 0)
    degree = _NEIGHBOUR_DEGREE[lower]
    pick = random.integers(np.maximum(degree, 1), current.size)
    letter = ord("a") + random.integers(26, current.size)
    key = np.where(degree > 0, _NEIGHBOURS[lower, pick].astype(np.int64), letter)
    key = np.where(capital & (key >= ord("a")) & (key <= ord("z")), key - 32, key)
    return key.astype(np.uint32)


def _keyboard_typos(values: np.ndarray, random: _Random) -> np.ndarray:
    """Make one typo per string: a neighbour key, a dropped, extra or swapped letter."""
    codes, lengths = _code_matrix(values)
    size = lengths.size
    operation = random.choice(_TYPO_WEIGHTS, size)
    too_short = (lengths < 2) & ((operation == _DELETE) | (operation == _TRANSPOSE))
    operation = np.where(too_short, _SUBSTITUTE, operation)
    span = np.where(operation == _TRANSPOSE, lengths - 1, lengths)
    position = random.integers(span, size)
    rows = np.arange(size)
    current = codes[rows, position]
    following = codes[rows, position + 1]
    # Swapping two equal letters changes nothing; dropping one of them is the typo.
    same = (operation == _TRANSPOSE) & (current == following)
    operation = np.where(same, _DELETE, operation)
    key = _near_keys(current, random)
    return _from_code_matrix(_apply_edits(codes, operation, position, key))


def _digit_errors(values: np.ndarray, random: _Random, *, keep: int) -> np.ndarray:
    """Change one digit or swap two neighbouring digits, after the first ``keep``."""
    codes, lengths = _code_matrix(values)
    size = lengths.size
    keep_row = np.minimum(keep, lengths - 1)
    free = lengths - keep_row
    transpose = random.bernoulli(_DIGIT_TRANSPOSE, size) & (free >= 2)
    position = keep_row + random.integers(np.where(transpose, free - 1, free), size)
    rows = np.arange(size)
    current = codes[rows, position].astype(np.int64)
    transpose &= current != codes[rows, position + 1]
    digit = (current - ord("0")) % 10
    new_digit = ord("0") + (digit + 1 + random.integers(9, size)) % 10
    operation = np.where(transpose, _TRANSPOSE, _SUBSTITUTE)
    return _from_code_matrix(
        _apply_edits(codes, operation, position, new_digit.astype(np.uint32))
    )


def _present(values: pa.Array) -> np.ndarray:
    """Return a boolean mask of the non-missing values."""
    return ~values.is_null().to_numpy(zero_copy_only=False)


def _edit_column(
    values: pa.Array,
    rows: np.ndarray,
    edit: Callable[[np.ndarray, _Random], np.ndarray],
    random: _Random,
) -> pa.Array:
    """Apply ``edit`` (a string-array function) to the present values at ``rows``."""
    mask = rows & _present(values)
    chosen = np.flatnonzero(mask)
    if chosen.size == 0:
        return values
    subset = np.asarray(values.take(chosen).to_numpy(zero_copy_only=False), np.str_)
    return pc.replace_with_mask(
        values, pa.array(mask), pa.array(edit(subset, random), type=pa.string())
    )


def _blank_fields(
    text: dict[str, pa.Array], rows: np.ndarray, random: _Random
) -> dict[str, pa.Array]:
    """Blank one present field per chosen row (weighted by ``_BLANKABLE``)."""
    chosen = np.flatnonzero(rows)
    present = np.stack([_present(text[name])[chosen] for name in _BLANKABLE], axis=1)
    start = random.integers(len(_BLANKABLE), chosen.size)
    order = (start[:, None] + np.arange(len(_BLANKABLE))[None, :]) % len(_BLANKABLE)
    rotated = np.take_along_axis(present, order, axis=1)
    target = order[np.arange(chosen.size), np.argmax(rotated, axis=1)]
    target = np.where(rotated.any(axis=1), target, -1)
    names = np.array(_BLANKABLE)
    text = dict(text)
    for name in dict.fromkeys(_BLANKABLE):
        mask = np.zeros(rows.size, dtype=bool)
        mask[chosen[(target >= 0) & (names[np.maximum(target, 0)] == name)]] = True
        text[name] = pc.if_else(
            pa.array(mask), pa.scalar(None, pa.string()), text[name]
        )
    return text


def _corrupt_text(
    text: dict[str, pa.Array], kinds: dict[str, np.ndarray], random: _Random
) -> dict[str, pa.Array]:
    """Apply the corruptions that act on strings: swaps, blanks, typos, digits."""
    text = dict(text)
    swap = pa.array(kinds["swap_names"])
    given, surname = text["given_name"], text["surname"]
    text["given_name"] = pc.if_else(swap, surname, given)
    text["surname"] = pc.if_else(swap, given, surname)

    text = _blank_fields(text, kinds["missing_field"], random)

    for column in ("given_name", "surname", "street_address", "city", "email"):
        text[column] = _edit_column(
            text[column], kinds[f"typo_{column}"], _keyboard_typos, random
        )
    text["phone"] = _edit_column(
        text["phone"],
        kinds["phone_digit"],
        partial(_digit_errors, keep=2),
        random,
    )
    text["postcode"] = _edit_column(
        text["postcode"],
        kinds["postcode_digit"],
        partial(_digit_errors, keep=1),
        random,
    )
    return text
