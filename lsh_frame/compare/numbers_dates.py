"""Numbers and dates compared as quantities: scoring kernels.

Values come parsed from :mod:`lsh_frame.compare.typed_values`; each distinct
pair of values is scored once.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from rapidfuzz import distance, process

from lsh_frame.compare.typed_values import _YEAR, DateValues, NumberValues

__all__ = ["date_scores", "equal_scores", "number_scores"]


#: Score of a date whose day and month are swapped.
SWAPPED_SCORE = 0.9

#: Score of two whole dates that differ in one digit of ``yyyymmdd`` (a typo:
#: ``1980-01-02`` and ``1950-01-02``), or in their year by one on the same day
#: of the year (``1979-05-03`` and ``1980-05-03``): what ``"ratio"`` gives one
#: wrong digit of eight.
TYPO_SCORE = 0.875

#: Two whole dates this many years apart or more (decades) are far unless one
#: digit of ``yyyymmdd`` is wrong (``1980-01-02`` and ``1950-01-02``: a typo,
#: which keeps its ratios as closer dates do): the ratios of their digits and
#: text lift them to FAR_SCORE at most (``1980-01-02`` and ``1908-01-02``, or
#: ``1939-05-02``, share digits by chance). Closer dates keep the ratios: a
#: typo in the digits reads as ``"ratio"`` reads it, and records of one
#: person ten years apart with a day or two changed (fake_1000's dates of
#: birth, ``1974-10-05`` and ``1984-10-03``: 0.8) still nearly agree — read
#: as far from ten years on, fake_1000's pair F1 fell 0.9577 -> 0.9515.
FAR_YEARS = 20

#: The most the ratios give two whole dates FAR_YEARS apart or more: far
#: below any cut, yet not 0, as digits they share by chance are not nothing
#: to a combined score (read as 0, decades-apart dates moved the provisional
#: split of RLdata10000 with dates of birth: pair F1 0.82 -> 0.38).
FAR_SCORE = 0.5

#: Score of two values whose years agree where one at least is known only to
#: its year (a year alone, or a date on a placeholder day).
YEAR_SCORE = 0.985

#: Level cuts of a date field that holds values known only to their year: the
#: four classic levels, and "the years agree" (YEAR_SCORE) between 0.98 and
#: 0.99, a level of its own, whose weight the model learns. Nothing else scores
#: there: two whole dates one day apart score 0.92, a typo in their digits at
#: most 0.875. (historical_50k, whose dates of birth put 40% on 1 January: pair
#: F1 0.8485 with those read as whole dates, 0.8502 so; with two placeholder
#: dates of different years compared as years alone too, losing the ratio of
#: their text that forgives a typo in the year, 0.8455.)
YEAR_CUTS: tuple[float, ...] = (0.99, 0.98, 0.9, 0.8)


#: Days at which the proximity of two dates reaches 0 (ten years).
PROXIMITY_DAYS = 3652

_DAYS_PER_YEAR = 365


def number_scores(
    numbers: NumberValues,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
) -> npt.NDArray[np.float64]:
    """``1 − |a − b| / max(|a|, |b|)`` clipped at 0; 1 when equal; NaN if missing.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from lsh_frame.compare.typed_values import parse_numbers
    >>> numbers = parse_numbers(pa.array(["$399.00", "389", "-5", "x"]))
    >>> number_scores(numbers, np.array([0, 0, 0]), np.array([1, 2, 3])).round(3)
    array([0.975, 0.   ,   nan])
    """
    left, right = numbers.value[first], numbers.value[second]
    scale = np.maximum(np.abs(left), np.abs(right))
    with np.errstate(invalid="ignore", divide="ignore"):
        result = 1.0 - np.abs(left - right) / scale
    result = np.clip(result, 0.0, 1.0)
    result[left == right] = 1.0
    result[np.isnan(left) | np.isnan(right)] = np.nan
    return np.asarray(result, dtype=np.float64)


def proximity(days: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
    """``max(0, 1 − ln(1 + Δ) / ln(1 + 3652))`` of day differences ``Δ``."""
    return np.asarray(
        np.clip(1.0 - np.log1p(days) / np.log1p(PROXIMITY_DAYS), 0.0, 1.0),
        dtype=np.float64,
    )


def date_scores(
    dates: DateValues,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    text: pa.Array | None = None,
    placeholders: tuple[int, ...] | None = (),
) -> npt.NDArray[np.float64]:
    """Scores of pairs of dates (see the module docstring for the formula).

    ``text``, when given, is each value's normalised text: a score is never
    below the ``"ratio"`` of the two texts either, but where the two agree
    only on their year (:data:`YEAR_SCORE`). ``placeholders`` are the field's
    placeholder days (``month * 100 + day``); None reads no value as known
    only to its year (a year alone agreeing with its year scores 1, as models
    saved before the year level read it).

    Examples
    --------
    >>> import pyarrow as pa
    >>> from lsh_frame.compare.typed_values import parse_dates
    >>> dates = parse_dates(pa.array(["19210205", "19210502", "19220205", "1921"]))
    >>> date_scores(dates, np.array([0, 0, 0]), np.array([1, 2, 3])).round(3)
    array([0.9  , 0.875, 0.985])
    """
    left, right = dates.take(first), dates.take(second)
    result = np.full(first.size, np.nan)
    both = left.present & right.present
    yearly = both & ((left.kind == _YEAR) | (right.kind == _YEAR))
    by_digits = both & ~yearly
    full = by_digits & left.full & right.full

    year_gap = np.abs(left.year - right.year)
    result[yearly] = proximity(year_gap[yearly] * _DAYS_PER_YEAR)
    result[yearly & (year_gap == 0)] = 1.0

    gap = np.abs(left.days - right.days)
    result[by_digits] = 0.0
    result[full] = proximity(gap[full])
    swapped = (
        full
        & (gap > 0)
        & (year_gap == 0)
        & (left.month == right.day)
        & (left.day == right.month)
    )
    result[swapped] = np.maximum(result[swapped], SWAPPED_SCORE)
    typo = np.zeros(first.size, dtype=bool)
    if full.any():
        rows = np.flatnonzero(full)
        typos = _typo_scores(left.take(rows), right.take(rows))
        typo[rows] = typos > 0
        result[rows] = np.maximum(result[rows], typos)

    same = (full & (gap == 0)) | (yearly & (year_gap == 0))
    compared = both & ~same
    if compared.any():
        # The digits of each distinct value once, shared by its pairs.
        compared_first, compared_second = first[compared], second[compared]
        needed = np.unique(np.concatenate([compared_first, compared_second]))
        at = np.empty(dates.kind.size, dtype=np.int64)
        at[needed] = np.arange(needed.size)
        at_first, at_second = at[compared_first], at[compared_second]
        subset = dates.take(needed)
        digits = subset.digits()
        use_years = yearly[compared]
        if use_years.any():
            year_digits = subset.year_digits()
            first_digits = np.where(use_years, year_digits[at_first], digits[at_first])
            second_digits = np.where(
                use_years, year_digits[at_second], digits[at_second]
            )
        else:
            first_digits, second_digits = digits[at_first], digits[at_second]
        ratio = _ratio(first_digits, second_digits)
        if text is not None:
            written = np.asarray(
                text.take(pa.array(needed)).to_numpy(zero_copy_only=False),
                dtype=object,
            )
            # Two values written as the digits compared (yyyymmdd, or yyyy
            # with yyyy) have that ratio already: only the others compare text.
            as_digits = written == digits
            other = use_years | ~(as_digits[at_first] & as_digits[at_second])
            if other.any():
                ratio[other] = np.maximum(
                    ratio[other],
                    _ratio(written[at_first[other]], written[at_second[other]]),
                )
        # Two whole dates decades apart: one digit wrong, or sharing digits
        # by chance (see FAR_YEARS).
        far = (full & (year_gap >= FAR_YEARS) & ~typo)[compared]
        ratio[far] = np.minimum(ratio[far], FAR_SCORE)
        result[compared] = np.maximum(result[compared], ratio)
    result[same] = 1.0
    if placeholders is not None:
        years_only = left.year_level(placeholders) | right.year_level(placeholders)
        result[both & years_only & (year_gap == 0)] = YEAR_SCORE
    return result


def _typo_scores(left: DateValues, right: DateValues) -> npt.NDArray[np.float64]:
    """:data:`TYPO_SCORE` for the typos a person reads in two whole dates, else 0.

    One digit of ``yyyymmdd`` wrong, or the year off by one on the same day
    of the year.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from lsh_frame.compare.typed_values import parse_dates
    >>> first = parse_dates(pa.array(["1980-01-02"] * 3))
    >>> second = parse_dates(pa.array(["1950-01-02", "1979-01-02", "1939-01-02"]))
    >>> _typo_scores(first, second).tolist()
    [0.875, 0.875, 0.0]
    """
    places = 10 ** np.arange(7, -1, -1, dtype=np.int64)
    first = (left.year * 10_000 + left.month * 100 + left.day)[:, None]
    second = (right.year * 10_000 + right.month * 100 + right.day)[:, None]
    wrong = (first // places % 10 != second // places % 10).sum(axis=1)
    one_year = (
        (np.abs(left.year - right.year) == 1)
        & (left.month == right.month)
        & (left.day == right.day)
    )
    return np.where((wrong == 1) | one_year, TYPO_SCORE, 0.0).astype(np.float64)


def equal_scores(
    values: NumberValues | DateValues,
    codes: npt.NDArray[np.int64],
    placeholders: tuple[int, ...] | None = (),
) -> npt.NDArray[np.float64]:
    """Scores of pairs of two equal values (their dictionary codes).

    1, NaN where the value does not parse, :data:`YEAR_SCORE` for a date known
    only to its year (a year alone or on one of ``placeholders``; none when
    ``placeholders`` is None).

    Examples
    --------
    >>> import pyarrow as pa
    >>> from lsh_frame.compare.typed_values import parse_dates
    >>> dates = parse_dates(pa.array(["1921-02-05", "1921", "1921-01-01", "x"]))
    >>> equal_scores(dates, np.array([0, 1, 2, 3]), placeholders=(101,))
    array([1.   , 0.985, 0.985,   nan])
    """
    result = np.where(values.present[codes], 1.0, np.nan)
    if isinstance(values, DateValues) and placeholders is not None:
        result[values.year_level(placeholders)[codes]] = YEAR_SCORE
    return np.asarray(result, dtype=np.float64)


#: Pairs from which rapidfuzz compares on every core: starting its threads
#: costs about a millisecond, more than a few thousand comparisons.
THREADED_FUZZY_PAIRS = 5_000


def fuzzy_workers(pairs: int) -> int:
    """Return rapidfuzz's ``workers`` for this many pairs: one thread for a few."""
    return -1 if pairs >= THREADED_FUZZY_PAIRS else 1


def _ratio(
    first: npt.NDArray[np.object_], second: npt.NDArray[np.object_]
) -> npt.NDArray[np.float64]:
    """Indel normalised similarity (``compare="ratio"``) of pairs of strings."""
    return np.asarray(
        process.cpdist(
            first,
            second,
            scorer=distance.Indel.normalized_similarity,
            workers=fuzzy_workers(len(first)),
            dtype=np.float64,
        ),
        dtype=np.float64,
    )


def typed_scores(
    comparison: str,
    values: NumberValues | DateValues,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    text: pa.Array,
    placeholders: tuple[int, ...] | None = (),
) -> npt.NDArray[np.float64]:
    """Scores of value pairs (dictionary codes) by ``"number"`` or ``"date"``.

    ``text`` is the normalised text of the values (a floor of date scores),
    ``placeholders`` a date field's placeholder days (None: no year level).
    """
    if comparison == "number":
        assert isinstance(values, NumberValues)
        return number_scores(values, first, second)
    assert isinstance(values, DateValues)
    return date_scores(values, first, second, text, placeholders)
