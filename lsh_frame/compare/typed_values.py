"""Numbers and dates read as quantities: the parsing rules, and how they score.

``compare="number"`` and ``compare="date"`` read each *distinct* value of a
field once (typed columns directly, text by the rules below, with
pyarrow.compute regular expressions and numpy) and score each distinct pair of
values once, like the text comparisons of :mod:`lsh_frame.compare`. A value's
reading depends on that value alone, never on the rest of its column, so a
partition, one row or the other table of a link read a value alike.

Numbers
-------
Numeric columns (integers, floats, decimals, and categoricals of them) are read
as they are. Text is read after NFKC normalisation and trimming:

- an optional sign (``-``, ``+`` or ``−``), and an optional currency before or
  after the number: a currency symbol (Unicode category Sc: ``$ € £ ¥``…) or a
  three-letter upper-case code (``USD``, ``EUR``);
- digits with separators, read by the first rule that fits:

  1. ``1299``, ``1299.99``, ``1.5``: a single dot is always a decimal point
     (``1.299`` is 1.299); an exponent is allowed here (``1e-07``);
  2. ``1,299`` and ``1,299.99``: commas between groups of three digits
     (first group 1 to 3 digits, not starting with 0) are thousands separators;
  3. ``1.299,99`` and ``1.234.567``: dots between groups of three digits are
     thousands separators when there are several of them or a decimal comma
     follows;
  4. ``1 299,99``, ``1'299.99``: spaces or apostrophes between groups of three
     digits are thousands separators; a final ``,`` or ``.`` is the decimal
     separator;
  5. ``12,50``, ``0,125``: any other single comma is a decimal comma.

Anything else (words, ``.5``, ``50%``, ranges, two-digit groups) does not parse.
Infinite values are treated as missing.

Score: 1 when the two numbers are equal, else ``1 − |a − b| / max(|a|, |b|)``
clipped at 0 (the relative difference: 399 vs 389 scores 0.975, numbers of
opposite signs 0).

Dates
-----
Date and date-time columns (numpy, tz-aware in their own wall time, Arrow,
``datetime.date`` objects, and categoricals of them) are read as calendar days.
Text is read, after trimming spaces and punctuation at either end, as:

- ``yyyy-mm-dd`` (also ``/`` or ``.`` as separators), optionally followed by a
  time (``T`` or a space, ``hh:mm[:ss[.fff]]``, optional ``Z`` or offset), which
  is ignored: a date-time is compared by the day it shows;
- ``yyyymmdd``: eight digits;
- ``a/b/yyyy`` (also ``.`` or ``-``; one or two digits each): day first
  (``dd/mm/yyyy``), unless ``b`` is above 12 and ``a`` is not, which can only be
  ``mm/dd/yyyy`` (``12/25/2020``); a day and month read the wrong way round
  still "nearly agree" (below);
- ``yyyy`` alone: a year-only value.

Years run from 0001 to 9999; two-digit years are not read. A value of one of
these shapes whose month or day is out of range (``19450493``, a typo) is a
*misspelt date*: it is compared by its digits alone (below). Other values do
not parse.

Score of two dates ``a`` and ``b`` whose days differ by ``Δ`` (in days)::

    1                                                     when Δ = 0
    max(S, T, proximity(Δ), R)     R = max(ratio(digits a, digits b),
                                            ratio(text a, text b))
    max(S, T, proximity(Δ), min(R, 0.5))  20 years apart or more, unless
                                          one digit of yyyymmdd is wrong
    proximity(Δ) = max(0, 1 − ln(1 + Δ) / ln(1 + 3652))

where ``S`` is 0.9 when the two are the same date with day and month swapped
(``1921-02-05`` vs ``1921-05-02``) and 0 otherwise, ``T`` is 0.875 for a typo
a person reads (one digit of ``yyyymmdd`` wrong, or the year off by one on the
same day of the year) and 0 otherwise, ``ratio`` is the Indel normalised
similarity (``compare="ratio"``), ``digits`` the date written ``yyyymmdd``
and ``text`` the value's normalised text (what ``"ratio"`` compares).
Proximity is 0.92 at one day, 0.83 at three, 0.58 at a month, 0.28 at a year
and 0 from ten years on; the ratios make a typo (``19210222``
vs ``19220222``: 0.875) score at least what ``"ratio"`` gives it, whether on
the text or on the digits of two differently written dates. Dates decades
apart are far unless one digit of ``yyyymmdd`` is wrong: ``1980-01-02``
and ``1908-01-02`` or ``1939-05-02`` score 0.5 at most (the digits they share
by chance count no more), and ``1950-01-02`` keeps its ratios (0.9). With a
year-only value on either side the years are compared: 1 when equal (0.985:
below), else ``max(proximity(365 · |Δ years|), ratio(yyyy a, yyyy b),
ratio(text a, text b))``. A misspelt date scores the two ratios against a
date or another misspelt date, and compares its year against a year-only
value.

In a field holding at least ten values known only to their year, two values
whose years agree, one of them at least so known, score 0.985
(:data:`YEAR_SCORE`): the years agree, which says less than two whole dates
agreeing, and the match model reads it as a level of its own
(:data:`YEAR_CUTS`); elsewhere (and for models saved before it) they score 1.
A value is known only to its year when it is a year alone or a date on one of
the field's *placeholder days*: a day of the year on which far more of its
dates fall than a calendar, or the field's usual day, can explain (1 January
holds 40% of historical_50k's dates of birth: an unknown day written as the
first), found from every record of the tables by :func:`check_days`. Two such
dates of different years are compared as dates.

Either comparison is NaN when either value is missing or does not parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lsh_frame.text.shingle import (
    ASCII_NOT_ALPHANUMERIC,
    NOT_ALPHANUMERIC,
    character_class,
)
from lsh_frame.text.typed import _wall_time

__all__ = [
    "DateValues",
    "NumberValues",
    "TypedColumn",
    "describe",
    "parse_dates",
    "parse_numbers",
    "typed_values",
]


# Kinds of date values.
_NONE, _YEAR, _FULL, _MISSPELT = 0, 1, 2, 3


_SIGN = "[-+−]"

_CURRENCY = r"\p{Sc}|[A-Z]{3}"

_NUMBER = (
    rf"^(?P<sign>{_SIGN}?)\s*(?:{_CURRENCY})?\s*(?P<sign2>{_SIGN}?)\s*"
    r"(?P<body>\d(?:[\d.,' ]*\d)?)(?P<exponent>[eE][-+]?\d+)?\s*"
    rf"(?P<suffix>{_CURRENCY})?$"
)

_CURRENCY_ANYWHERE = rf"^\s*{_SIGN}?\s*(?:{_CURRENCY})|(?:{_CURRENCY})\s*$"

#: Digit bodies by rule (see the module docstring), in order of precedence:
#: (pattern, characters removed, whether a comma is the decimal separator).
_BODIES: tuple[tuple[str, str, bool], ...] = (
    (r"^\d+(?:\.\d+)?$", "", False),
    (r"^[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?$", ",", False),
    (r"^[1-9]\d{0,2}(?:\.\d{3})+(?:,\d+)?$", r"\.", True),
    (r"^[1-9]\d{0,2}(?:['\s]\d{3})+(?:[.,]\d+)?$", r"['\s]", True),
    (r"^\d+,\d+$", "", True),
)


_TIME = (
    r"(?:[Tt ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\s*(?:[Zz]|[-+]\d{2}(?::?\d{2})?)?)?"
)

_YEAR_FIRST = (
    rf"^(?P<year>\d{{4}})[-/.](?P<month>\d{{1,2}})[-/.](?P<day>\d{{1,2}}){_TIME}$"
)

_COMPACT = r"^(?P<year>\d{4})(?P<month>\d{2})(?P<day>\d{2})$"

_YEAR_LAST = (
    rf"^(?P<first>\d{{1,2}})[-/.](?P<second>\d{{1,2}})[-/.](?P<year>\d{{4}}){_TIME}$"
)

_YEAR_ONLY = r"^(?P<year>\d{4})$"

#: The date shapes in order, their fields, and one expression for all of them
#: (each shape's groups numbered by its place: ``year0``, ``month0``, ...).
_DATE_SHAPES = (_YEAR_FIRST, _COMPACT, _YEAR_LAST, _YEAR_ONLY)

_DATE_FIELDS = {
    pattern: re.findall(r"\(\?P<(\w+)>", pattern) for pattern in _DATE_SHAPES
}

_ANY_DATE = "^(?:{})$".format(
    "|".join(
        re.sub(r"\(\?P<(\w+)>", rf"(?P<\g<1>{number}>", pattern[1:-1])
        for number, pattern in enumerate(_DATE_SHAPES)
    )
)

_EMPTY = pa.scalar("", pa.large_string())


@dataclass(frozen=True)
class NumberValues:
    """Numbers read from some values (one entry per value).

    ``value`` is NaN where a value is missing or does not parse; ``marked``
    says whether its text carried a decimal separator or a currency (what
    ``compare="auto"`` looks for).
    """

    value: npt.NDArray[np.float64]
    marked: npt.NDArray[np.bool_]

    @property
    def present(self) -> npt.NDArray[np.bool_]:
        """Whether each value is a number."""
        return np.asarray(~np.isnan(self.value))

    def placed(self, rows: npt.NDArray[np.int64], size: int) -> NumberValues:
        """Return these values at ``rows`` of ``size`` values (the others missing)."""
        value = np.full(size, np.nan)
        marked = np.zeros(size, dtype=bool)
        value[rows], marked[rows] = self.value, self.marked
        return NumberValues(value, marked)


@dataclass(frozen=True)
class DateValues:
    """Dates read from some values (one entry per value).

    ``kind`` is 0 (missing or not a date), 1 (a year alone), 2 (a date) or 3 (a
    misspelt date: the shape of one, with a month or day out of range);
    ``year``, ``month`` and ``day`` are as written (0 where not known) and
    ``days`` counts from 1970-01-01 (dates only).
    """

    kind: npt.NDArray[np.int8]
    year: npt.NDArray[np.int64]
    month: npt.NDArray[np.int64]
    day: npt.NDArray[np.int64]
    days: npt.NDArray[np.int64]

    @property
    def present(self) -> npt.NDArray[np.bool_]:
        """Whether each value reads as a date, a year or a misspelt date."""
        return np.asarray(self.kind != _NONE)

    @property
    def full(self) -> npt.NDArray[np.bool_]:
        """Whether each value is a (valid) date."""
        return np.asarray(self.kind == _FULL)

    def digits(self) -> npt.NDArray[np.object_]:
        """``yyyymmdd`` of dates and misspelt dates, ``yyyy`` of years."""
        year_only = self.kind == _YEAR
        # Month and day are at most two digits each (the patterns say so).
        number = np.where(
            year_only, self.year, self.year * 10_000 + self.month * 100 + self.day
        )
        return _padded(number, np.where(year_only, 4, 8))

    def year_level(self, placeholders: tuple[int, ...] = ()) -> npt.NDArray[np.bool_]:
        """Whether each value is known only to its year.

        A year alone, or a date on one of ``placeholders`` (days written
        ``month * 100 + day``).
        """
        level = self.kind == _YEAR
        if placeholders:
            level = level | (
                (self.kind == _FULL)
                & np.isin(self.month * 100 + self.day, np.asarray(placeholders))
            )
        return np.asarray(level)

    def year_digits(self) -> npt.NDArray[np.object_]:
        """``yyyy`` of every value."""
        return _padded(self.year, np.full(self.year.size, 4))

    def take(self, rows: npt.NDArray[np.int64]) -> DateValues:
        """Return the values at some rows."""
        return DateValues(
            self.kind[rows], self.year[rows], self.month[rows], self.day[rows],
            self.days[rows],
        )  # fmt: skip

    def placed(self, rows: npt.NDArray[np.int64], size: int) -> DateValues:
        """Return these values at ``rows`` of ``size`` values (the others missing)."""
        kind = np.full(size, _NONE, dtype=np.int8)
        kind[rows] = self.kind
        parts = []
        for values in (self.year, self.month, self.day, self.days):
            part = np.zeros(size, dtype=np.int64)
            part[rows] = values
            parts.append(part)
        return DateValues(kind, *parts)


def _padded(
    values: npt.NDArray[np.int64], width: npt.NDArray[np.int64]
) -> npt.NDArray[np.object_]:
    """Non-negative integers written with leading zeros up to ``width`` digits."""
    text = np.asarray(
        pa.array(values).cast(pa.string()).to_numpy(zero_copy_only=False),
        dtype=object,
    )
    short = np.flatnonzero(np.char.str_len(text.astype(str)) < width)
    if short.size:
        # Rare (years before 1000): a Python call per such value.
        text[short] = [
            value.zfill(int(size))
            for value, size in zip(text[short], width[short], strict=True)
        ]
    return text


def parse_numbers(text: pa.Array) -> NumberValues:
    """Read numbers from text by the rules of the module docstring.

    Examples
    --------
    >>> import pyarrow as pa
    >>> parse_numbers(pa.array(["$1,299.99", "€ 12,50", "399 USD", "n/a"])).value
    array([1299.99,   12.5 ,  399.  ,     nan])
    """
    text = pc.utf8_trim_whitespace(pc.utf8_normalize(_as_string(text), "NFKC"))
    parts = pc.extract_regex(text, _NUMBER)
    matched = parts.is_valid()
    body, sign, sign2, exponent = (
        pc.fill_null(parts.field(name), "")
        for name in ("body", "sign", "sign2", "exponent")
    )
    canonical = pa.nulls(len(text), pa.large_string())
    decimal = pa.nulls(len(text), pa.bool_())
    for pattern, removed, comma_decimal in _BODIES:
        fits = pc.and_(pc.is_null(canonical), pc.match_substring_regex(body, pattern))
        plain = pc.replace_substring_regex(body, removed, "") if removed else body
        if comma_decimal:
            plain = pc.replace_substring(plain, ",", ".")
        canonical = pc.if_else(fits, plain, canonical)
        decimal = pc.if_else(fits, pc.match_substring(plain, "."), decimal)
    # An exponent only follows a plain number; one sign at most.
    exponent_ok = pc.or_(
        pc.equal(exponent, ""), pc.match_substring_regex(body, _BODIES[0][0])
    )
    one_sign = pc.or_(pc.equal(sign, ""), pc.equal(sign2, ""))
    valid = pc.fill_null(
        pc.and_(
            pc.and_(matched, exponent_ok), pc.and_(one_sign, pc.is_valid(canonical))
        ),
        False,
    )
    negative = pc.match_substring_regex(
        pc.binary_join_element_wise(sign, sign2, _EMPTY), "[-−]"
    )
    number = pc.binary_join_element_wise(
        pc.if_else(negative, pa.scalar("-", pa.large_string()), _EMPTY),
        pc.fill_null(canonical, "0"),
        exponent,
        _EMPTY,
    )
    value = pc.if_else(valid, number, pa.scalar(None, pa.large_string()))
    values = value.cast(pa.float64()).to_numpy(zero_copy_only=False)
    values = np.array(values, dtype=np.float64)
    values[~np.isfinite(values)] = np.nan
    currency = pc.fill_null(pc.match_substring_regex(text, _CURRENCY_ANYWHERE), False)
    marked = pc.and_(valid, pc.or_(pc.fill_null(decimal, False), currency))
    return NumberValues(values, _bools(marked))


def parse_dates(text: pa.Array) -> DateValues:
    """Read dates from text by the rules of the module docstring.

    Examples
    --------
    >>> import pyarrow as pa
    >>> parsed = parse_dates(pa.array(["1921-02-22", "22/02/1921", "19210222"]))
    >>> parsed.days.tolist(), parsed.kind.tolist()
    ([-17845, -17845, -17845], [2, 2, 2])
    """
    text = _as_string(text)
    iso = _iso_dates(text)
    if iso is not None:
        year, month, day, shaped = iso
        year_only = np.zeros(len(text), dtype=bool)
    else:
        year, month, day, shaped, year_only = _shaped_dates(text)
    in_range = (year >= 1) & (year <= 9999)
    year_only &= in_range
    shaped &= in_range
    valid, days = _calendar_days(year, month, day, shaped)
    kind = np.full(len(text), _NONE, dtype=np.int8)
    kind[year_only] = _YEAR
    kind[shaped] = _MISSPELT
    kind[valid] = _FULL
    known = kind != _NONE
    return DateValues(
        kind=kind,
        year=np.where(known, year, 0),
        month=np.where(shaped, month, 0),
        day=np.where(shaped, day, 0),
        days=np.where(valid, days, 0),
    )


#: Byte positions of ``yyyy-mm-dd``: its digits, and its dashes.
_ISO_DIGITS = np.array([0, 1, 2, 3, 5, 6, 8, 9])

_ISO_DASHES = np.array([4, 7])

#: What each digit of ``yyyy-mm-dd`` is worth in the year, month and day.
_ISO_PLACES = np.array(
    [
        [1000, 100, 10, 1, 0, 0, 0, 0],
        [0, 0, 0, 0, 10, 1, 0, 0],
        [0, 0, 0, 0, 0, 0, 10, 1],
    ],
    dtype=np.int64,
).T


def _iso_dates(
    text: pa.Array,
) -> (
    tuple[
        npt.NDArray[np.int64],
        npt.NDArray[np.int64],
        npt.NDArray[np.int64],
        npt.NDArray[np.bool_],
    ]
    | None
):
    """Year, month, day and shape of values all written ``yyyy-mm-dd``, else None.

    The usual date column (ISO dates as text) read straight from its bytes:
    such a value is itself after NFKC and trimming, and only the first shape
    fits it, so the regular expressions would read the same numbers. They
    cost far more for a few values (a batch of new records) — each call
    compiles its expression — and are kept for any other writing.
    """
    _, offsets_buffer, data_buffer = text.buffers()
    present = _bools(text.is_valid())
    if data_buffer is None or not present.any():
        return None
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64)
    offsets = offsets[text.offset : text.offset + len(text) + 1]
    starts = offsets[:-1][present]
    if not (offsets[1:][present] - starts == 10).all():
        return None
    data = np.frombuffer(data_buffer, dtype=np.uint8)
    characters = data[starts[:, None] + np.arange(10)]
    digits = characters[:, _ISO_DIGITS].astype(np.int64) - ord("0")
    if not (
        ((digits >= 0) & (digits <= 9)).all()
        and (characters[:, _ISO_DASHES] == ord("-")).all()
    ):
        return None
    parts = np.zeros((len(text), 3), dtype=np.int64)
    parts[present] = digits @ _ISO_PLACES
    return parts[:, 0], parts[:, 1], parts[:, 2], present


def _shaped_dates(
    text: pa.Array,
) -> tuple[
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.bool_],
    npt.NDArray[np.bool_],
]:
    """Year, month, day, shape and year-only of any writing, by the patterns."""
    text = pc.utf8_normalize(text, "NFKC")
    edge = character_class(text, NOT_ALPHANUMERIC, ASCII_NOT_ALPHANUMERIC)
    text = pc.replace_substring_regex(text, f"^{edge}+|{edge}+$", "")
    size = len(text)
    year = np.zeros(size, dtype=np.int64)
    month = np.zeros(size, dtype=np.int64)
    day = np.zeros(size, dtype=np.int64)
    shaped = np.zeros(size, dtype=bool)
    year_only = np.zeros(size, dtype=bool)
    # The shapes exclude each other (each pattern is anchored at both ends),
    # so one expression with an alternative per shape reads them all: one
    # regular expression to compile, not four.
    parts = pc.extract_regex(text, _ANY_DATE)
    matched = _bools(parts.is_valid())
    for number, pattern in enumerate(_DATE_SHAPES):
        fields = {
            name: parts.field(f"{name}{number}") for name in _DATE_FIELDS[pattern]
        }
        found = matched & _bools(pc.not_equal(fields["year"], ""))
        if not found.any():
            continue
        values = {name: _integers(field) for name, field in fields.items()}
        year[found] = values["year"][found]
        if pattern == _YEAR_ONLY:
            year_only |= found
            continue
        if pattern == _YEAR_LAST:
            first, second = values["first"], values["second"]
            month_first = (second > 12) & (first <= 12)
            values["month"] = np.where(month_first, first, second)
            values["day"] = np.where(month_first, second, first)
        month[found] = values["month"][found]
        day[found] = values["day"][found]
        shaped |= found
    return year, month, day, shaped, year_only


def _calendar_days(
    year: npt.NDArray[np.int64],
    month: npt.NDArray[np.int64],
    day: npt.NDArray[np.int64],
    shaped: npt.NDArray[np.bool_],
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64]]:
    """Which (year, month, day) are real dates, and their days since 1970-01-01."""
    month_ok = shaped & (month >= 1) & (month <= 12)
    months = np.where(month_ok, (year - 1970) * 12 + month - 1, 0)
    start = months.astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)
    end = (months + 1).astype("datetime64[M]").astype("datetime64[D]").astype(np.int64)
    valid = month_ok & (day >= 1) & (day <= end - start)
    return valid, np.where(valid, start + day - 1, 0)


def _dates_of_days(
    days: npt.NDArray[np.int64], valid: npt.NDArray[np.bool_]
) -> DateValues:
    stamps = np.where(valid, days, 0).astype("datetime64[D]")
    year_start = stamps.astype("datetime64[Y]")
    month_start = stamps.astype("datetime64[M]")
    year = year_start.astype(np.int64) + 1970
    month = (month_start - year_start.astype("datetime64[M]")).astype(np.int64) + 1
    day = (stamps - month_start.astype("datetime64[D]")).astype(np.int64) + 1
    return DateValues(
        kind=np.where(valid, _FULL, _NONE).astype(np.int8),
        year=np.where(valid, year, 0),
        month=np.where(valid, month, 0),
        day=np.where(valid, day, 0),
        days=np.where(valid, days, 0).astype(np.int64),
    )


def _as_string(text: pa.Array) -> pa.Array:
    if isinstance(text, pa.ChunkedArray):
        text = text.combine_chunks()
    return text.cast(pa.large_string())


def _names(struct: pa.StructArray) -> list[str]:
    return [struct.type.field(index).name for index in range(struct.type.num_fields)]


def _integers(text: pa.Array) -> npt.NDArray[np.int64]:
    filled = pc.if_else(pc.equal(pc.fill_null(text, ""), ""), "0", text)
    return np.asarray(
        pc.fill_null(filled, "0").cast(pa.int64()).to_numpy(zero_copy_only=False),
        dtype=np.int64,
    )


def _bools(mask: pa.Array) -> npt.NDArray[np.bool_]:
    return np.asarray(
        pc.fill_null(mask, False).to_numpy(zero_copy_only=False), dtype=bool
    )


def column_numbers(values: pd.Series) -> npt.NDArray[np.float64] | None:
    """Return a numeric column's numbers (NaN where missing); None for other dtypes."""
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        categories = column_numbers(pd.Series(dtype.categories))
        if categories is None:
            return None
        codes = values.cat.codes.to_numpy()
        return np.where(codes >= 0, categories[np.maximum(codes, 0)], np.nan)
    if (
        not pd.api.types.is_numeric_dtype(dtype)
        or pd.api.types.is_bool_dtype(dtype)
        or pd.api.types.is_complex_dtype(dtype)
    ):
        return None
    numbers = values.to_numpy(dtype=np.float64, na_value=np.nan, copy=True)
    numbers[~np.isfinite(numbers)] = np.nan
    return numbers


def column_dates(values: pd.Series) -> DateValues | None:
    """Return the calendar days of a date or date-time column; None for other dtypes.

    Date-times count by the day of their wall time (tz-aware ones in their own
    time zone).
    """
    days = _column_days(values)
    if days is None:
        return None
    return _dates_of_days(*days)


def _column_days(
    values: pd.Series,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]] | None:
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        categories = _column_days(pd.Series(dtype.categories))
        if categories is None:
            return None
        codes = values.cat.codes.to_numpy()
        at = np.maximum(codes, 0)
        return categories[0][at], categories[1][at] & (codes >= 0)
    if not is_temporal(values):
        return None
    try:
        array = pa.array(_wall_time(values), from_pandas=True)
    except (pa.ArrowException, TypeError, ValueError):
        return None
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if pa.types.is_timestamp(array.type):
        # _wall_time left no time zone: the day is the one the value shows.
        array = pc.floor_temporal(array, unit="day").cast(pa.timestamp("s"))
        array = pc.divide(array.cast(pa.int64()), 86_400)
    elif pa.types.is_date(array.type):
        array = array.cast(pa.date32()).cast(pa.int32())
    else:
        return None
    valid = _bools(array.is_valid())
    days = np.asarray(
        pc.fill_null(array, 0).cast(pa.int64()).to_numpy(zero_copy_only=False),
        dtype=np.int64,
    )
    return days, valid


def is_temporal(values: pd.Series) -> bool:
    """Whether a column holds dates or date-times (not text, not a categorical)."""
    dtype = values.dtype
    arrow_type = getattr(dtype, "pyarrow_dtype", None)
    if arrow_type is not None:
        return bool(pa.types.is_timestamp(arrow_type) or pa.types.is_date(arrow_type))
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return True
    if pd.api.types.is_object_dtype(dtype):
        kind = pd.api.types.infer_dtype(values, skipna=True)
        return kind in ("date", "datetime", "datetime64")
    return False


@dataclass(frozen=True)
class TypedColumn:
    """A column of one table and its records' codes in the field's dictionary."""

    values: pd.Series
    codes: npt.NDArray[np.int64]


def typed_values(
    comparison: str,
    raw: pa.Array,
    columns: list[TypedColumn] | None,
    *,
    entries: npt.NDArray[np.int64] | None = None,
) -> NumberValues | DateValues:
    """Read every dictionary value of a field once.

    ``raw`` is the field's distinct raw text (its dictionary); ``columns``, for
    a field of one column, that column in each table with its records' codes:
    numeric or date columns are read directly and their values replace the
    reading of their text. ``entries``, when given, are the only entries of
    ``raw`` read (a dictionary shared with other fields' values): the others
    read as missing.
    """
    text = raw if entries is None else raw.take(pa.array(entries, pa.int64()))
    if comparison == "number":
        numbers = parse_numbers(text)
        if entries is not None:
            numbers = numbers.placed(entries, len(raw))
        for column in columns or []:
            direct = column_numbers(column.values)
            if direct is not None:
                _scatter(numbers.value, column.codes, direct)
        return numbers
    dates = parse_dates(text)
    if entries is not None:
        dates = dates.placed(entries, len(raw))
    for column in columns or []:
        direct_dates = column_dates(column.values)
        if direct_dates is not None:
            for name in ("kind", "year", "month", "day", "days"):
                _scatter(
                    getattr(dates, name), column.codes, getattr(direct_dates, name)
                )
    return dates


def describe(values: NumberValues | DateValues) -> list[str]:
    """How each value was read, for display (``lsh_frame.explain``).

    Examples
    --------
    >>> import pyarrow as pa
    >>> describe(parse_dates(pa.array(["22/02/1921", "1921", "19450493", "x"])))
    ['1921-02-22', 'year 1921', 'misspelt date 1945-04-93', 'not a date']
    >>> describe(parse_numbers(pa.array(["$1,299.99", "n/a"])))
    ['1299.99', 'not a number']
    """
    if isinstance(values, NumberValues):
        return [
            "not a number" if np.isnan(value) else f"{value:.15g}"
            for value in values.value.tolist()
        ]
    shown = []
    for kind, year, month, day in zip(
        values.kind.tolist(),
        values.year.tolist(),
        values.month.tolist(),
        values.day.tolist(),
        strict=True,
    ):
        date = f"{year:04d}-{month:02d}-{day:02d}"
        shown.append(
            {
                _NONE: "not a date",
                _YEAR: f"year {year:04d}",
                _FULL: date,
                _MISSPELT: f"misspelt date {date}",
            }[kind]
        )
    return shown


def _scatter(
    target: np.ndarray, codes: npt.NDArray[np.int64], values: np.ndarray
) -> None:
    # Records with one code hold one value (the code is of its canonical text,
    # which pins the number and the day), so which record is written last does
    # not matter.
    known = codes >= 0
    target[codes[known]] = values[known]
