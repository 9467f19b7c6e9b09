"""compare="number" and "date": parsing rules, scores, auto detection, engines."""

import collections
import datetime
import json
import math
import re
import statistics

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rapidfuzz import distance

import lsh_frame as lf
import lsh_frame.dask  # registers ddf.lsh
from lsh_frame.compare import auto, numbers_dates, typed_values
from lsh_frame.compare import plan as compare_plan
from lsh_frame.decide import model as decide_model
from lsh_frame.text.shingle import text_array

# ----------------------------------------------------------------------------
# Plain-Python references of the documented formulas, one pair at a time


def reference_number_score(first, second):
    if first is None or second is None:
        return math.nan
    if first == second:
        return 1.0
    return max(0.0, 1.0 - abs(first - second) / max(abs(first), abs(second)))


def ratio(first, second):
    return distance.Indel.normalized_similarity(first, second)


def proximity(days):
    return max(0.0, 1.0 - math.log(1 + days) / math.log(1 + 3652))


def reference_placeholders(values):
    """The placeholder days ((month, day): >= 10 dates, >= 5% of them, >= 20 times
    the median day's), or None when fewer than 10 values are known only to their
    year (no year level)."""
    days = collections.Counter(
        (value.month, value.day) for value in values if isinstance(value, datetime.date)
    )
    total = sum(days.values())
    median = statistics.median(days.values()) if days else 0
    held = {
        day
        for day, count in days.items()
        if count >= 10 and count >= 0.05 * total and count >= 20 * median
    }
    years = sum(isinstance(value, int) for value in values)
    if years + sum(days[day] for day in held) < 10:
        return None
    return held


def reference_date_score(first, second, first_text, second_text, placeholders=None):
    """``first``/``second``: a datetime.date, an int year, or None.

    A date on one of ``placeholders`` ((month, day)) is known only to its year;
    None: the field has no year level (a year alone agrees at 1).
    """
    if first is None or second is None:
        return math.nan

    def year_alone(value):
        return isinstance(value, int) or (value.month, value.day) in placeholders

    def year_of(value):
        return value if isinstance(value, int) else value.year

    if (
        placeholders is not None
        and (year_alone(first) or year_alone(second))
        and year_of(first) == year_of(second)
    ):
        return 0.985
    if isinstance(first, int) or isinstance(second, int):
        first_year = first if isinstance(first, int) else first.year
        second_year = second if isinstance(second, int) else second.year
        if first_year == second_year:
            return 1.0
        by_date = proximity(365 * abs(first_year - second_year))
        digits = ratio(f"{first_year:04d}", f"{second_year:04d}")
    else:
        if first == second:
            return 1.0
        by_date = proximity(abs((first - second).days))
        if (first.year, first.month, first.day) == (
            second.year,
            second.day,
            second.month,
        ):
            by_date = max(by_date, 0.9)
        digits = ratio(first.strftime("%Y%m%d"), second.strftime("%Y%m%d"))
        typo = reference_typo(first, second)
        if abs(first.year - second.year) >= 20:
            # Decades apart: far, but for a one-digit typo.
            text_ratio = max(digits, ratio(first_text, second_text))
            if typo:
                return max(by_date, typo, text_ratio)
            return max(by_date, min(text_ratio, 0.5))
        by_date = max(by_date, typo)
    return max(by_date, digits, ratio(first_text, second_text))


def reference_typo(first, second):
    """0.875 for one digit of yyyymmdd wrong, or the year off by one on the same
    day of the year; else 0."""
    a, b = first.strftime("%Y%m%d"), second.strftime("%Y%m%d")
    if sum(x != y for x, y in zip(a, b, strict=True)) == 1:
        return 0.875
    if abs(first.year - second.year) == 1 and (first.month, first.day) == (
        second.month,
        second.day,
    ):
        return 0.875
    return 0.0


def all_pairs(size):
    left, right = np.triu_indices(size, k=1)
    return pd.DataFrame({"left": left, "right": right})


def field_scores(frame, field, pairs=None):
    pairs = all_pairs(len(frame)) if pairs is None else pairs
    scored = lf.score(frame, pairs, [field], min_score=0.5)
    label = field if isinstance(field, str) else field.label
    return scored, scored[f"{label}_score"].to_numpy()


# ----------------------------------------------------------------------------
# Reading numbers


@pytest.mark.parametrize(
    "text, number",
    [
        ("399", 399.0),
        ("$399.00", 399.0),
        ("$1,299.99", 1299.99),
        ("1,299", 1299.0),  # one comma before three digits: thousands
        ("1,234,567", 1234567.0),
        ("12,50", 12.5),  # any other single comma: a decimal comma
        ("0,125", 0.125),  # a leading 0 is no thousands group
        ("€ 12,50", 12.5),
        ("12,50 €", 12.5),
        ("399 USD", 399.0),
        ("USD399", 399.0),
        ("1.299", 1.299),  # a single dot is always a decimal point
        ("1.234.567", 1234567.0),
        ("1.234,56", 1234.56),
        ("1 234,56", 1234.56),
        ("1\u00a0234,56", 1234.56),  # no-break space
        ("1'234.56", 1234.56),
        ("-$5", -5.0),
        ("$-5", -5.0),
        ("−7.5", -7.5),  # the minus sign
        ("+3", 3.0),
        ("1e-07", 1e-07),
        ("  42  ", 42.0),
        ("\uff11\uff12\uff13", 123.0),  # full-width digits (NFKC)
        ("007", 7.0),
    ],
)
def test_numbers_parse_by_the_documented_rules(text, number):
    parsed = typed_values.parse_numbers(pa.array([text]))
    assert parsed.value[0] == pytest.approx(number, rel=1e-12)


@pytest.mark.parametrize(
    "text",
    [
        None,
        "",
        "n/a",
        "12 50",  # a group of two digits
        "1,2345,6",
        "1.23.4",
        ".5",
        "50%",
        "-$-5",  # two signs
        "1,5e3",  # an exponent after separators
        "1e999",  # infinite
        "12.5 eur",  # currency codes are upper case
        "apt 12",
        "12-14",
    ],
)
def test_values_that_are_not_numbers_read_as_nan(text):
    parsed = typed_values.parse_numbers(pa.array([text], pa.large_string()))
    assert np.isnan(parsed.value[0])
    assert not parsed.marked[0]


def test_marked_numbers_carry_a_decimal_separator_or_a_currency():
    parsed = typed_values.parse_numbers(
        pa.array(["399", "1,299", "1.234.567", "12.5", "12,50", "$5", "5 EUR"])
    )
    assert parsed.marked.tolist() == [False, False, False, True, True, True, True]


# ----------------------------------------------------------------------------
# Reading dates


@pytest.mark.parametrize(
    "text, shown",
    [
        ("1921-02-22", "1921-02-22"),
        ("1921/02/22", "1921-02-22"),
        ("1921-2-5", "1921-02-05"),
        ("1921-02-22T10:30:00", "1921-02-22"),
        ("1921-02-22 23:59:59.123+05:30", "1921-02-22"),
        ("2020-01-02T00:00Z", "2020-01-02"),
        ("19210222", "1921-02-22"),
        ("22/02/1921", "1921-02-22"),
        ("22.02.1921", "1921-02-22"),
        ("05/02/1921", "1921-02-05"),  # day first when both could be the month
        ("12/25/2020", "2020-12-25"),  # only mm/dd/yyyy fits
        ("1921", "year 1921"),
        ("(1993).", "year 1993"),  # punctuation at either end is ignored
        ("2000-02-29", "2000-02-29"),
        ("1999-02-29", "misspelt date 1999-02-29"),
        ("19450493", "misspelt date 1945-04-93"),
        ("1856-86-18", "misspelt date 1856-86-18"),
        ("0000-01-01", "not a date"),
        ("21/02/22", "not a date"),  # two-digit years are not read
        ("1234567", "not a date"),
        ("921", "not a date"),
        ("yesterday", "not a date"),
        ("", "not a date"),
        (None, "not a date"),
    ],
)
def test_dates_parse_by_the_documented_rules(text, shown):
    parsed = typed_values.parse_dates(pa.array([text], pa.large_string()))
    assert typed_values.describe(parsed) == [shown]


@given(
    st.dates(min_value=datetime.date(1, 1, 1), max_value=datetime.date(9999, 12, 31))
)
def test_every_date_reads_back_as_itself_in_every_format(day):
    formats = [
        day.isoformat(),
        f"{day.year:04d}{day.month:02d}{day.day:02d}",
        f"{day.day:02d}/{day.month:02d}/{day.year:04d}",
    ]
    if day.day > 12:
        formats.append(f"{day.month}/{day.day}/{day.year:04d}")
    parsed = typed_values.parse_dates(pa.array(formats))
    epoch = (day - datetime.date(1970, 1, 1)).days
    assert parsed.full.all()
    assert parsed.days.tolist() == [epoch] * len(formats)


@given(
    st.lists(
        st.one_of(
            st.none(),
            st.from_regex(r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}\Z"),
            st.sampled_from(["1921-2-5", "19210222", "1921-02-22 ", "x921-02-22"]),
        ),
        min_size=1,
        max_size=8,
    ),
    st.integers(0, 2),
)
def test_iso_dates_read_from_their_bytes_as_by_the_patterns(texts, cut):
    # Values all written yyyy-mm-dd (of any digits) are read from their bytes;
    # an empty value, which is not, sends every value through the patterns.
    array = pa.array(["0000-00-00"] * cut + texts, pa.large_string())[cut:]
    iso = [text for text in texts if text is not None]
    from_bytes = all(re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text) for text in iso)
    assert (typed_values._iso_dates(array) is not None) == (bool(iso) and from_bytes)
    read = typed_values.parse_dates(array)
    by_patterns = typed_values.parse_dates(pa.array([*texts, ""], pa.large_string()))
    for name in ("kind", "year", "month", "day", "days"):
        assert getattr(read, name).tolist() == getattr(by_patterns, name)[:-1].tolist()


# ----------------------------------------------------------------------------
# Scores against the references

NUMBER_STYLES = [
    lambda value: f"{value:.2f}",
    lambda value: f"${value:,.2f}",
    lambda value: f"{value:,.2f} USD",
    lambda value: f"€ {value:,.2f}".replace(",", " ").replace(".", ","),
    repr,
]


@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.integers(-(10**8), 10**8)),
            st.integers(0, len(NUMBER_STYLES) - 1),
        ),
        min_size=2,
        max_size=12,
    )
)
def test_number_scores_equal_the_reference(rows):
    # Amounts in cents, written in any accepted style.
    numbers = [None if cents is None else cents / 100 for cents, _ in rows]
    texts = [
        None if number is None else NUMBER_STYLES[style](number)
        for number, (_, style) in zip(numbers, rows, strict=True)
    ]
    frame = pd.DataFrame({"amount": pd.array(texts, dtype=object)})
    read = [
        None
        if text is None
        else float(typed_values.parse_numbers(pa.array([text])).value[0])
        for text in texts
    ]
    pairs = all_pairs(len(frame))
    _, got = field_scores(frame, lf.Field("amount", compare="number"), pairs)
    want = [
        reference_number_score(read[left], read[right])
        for left, right in zip(pairs["left"], pairs["right"], strict=True)
    ]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    # And the text was read as the number it was written from.
    for number, value in zip(numbers, read, strict=True):
        assert (number is None and value is None) or value == pytest.approx(
            number, abs=1e-9
        )


def test_number_scores_by_relative_difference():
    frame = pd.DataFrame(
        {"price": ["$399.00", "389", "399", "-5", "0", "0.00", "x", None]}
    )
    pairs = pd.DataFrame(
        {"left": [0, 0, 0, 4, 0, 0, 6], "right": [1, 2, 3, 5, 4, 6, 7]}
    )
    _, got = field_scores(frame, lf.Field("price", compare="number"), pairs)
    np.testing.assert_allclose(
        got, [1 - 10 / 399, 1.0, 0.0, 1.0, 0.0, np.nan, np.nan], rtol=1e-12
    )


DATE_STYLES = [
    lambda day: day.isoformat(),
    lambda day: day.strftime("%Y%m%d"),
    lambda day: day.strftime("%d/%m/%Y"),
    lambda day: day.year,  # a year alone
]


@given(
    st.lists(
        st.tuples(
            st.one_of(
                st.none(),
                st.dates(datetime.date(1890, 1, 1), datetime.date(2030, 12, 31)),
            ),
            st.integers(0, len(DATE_STYLES) - 1),
        ),
        min_size=2,
        max_size=12,
    )
)
def test_date_scores_equal_the_reference(rows):
    values, texts = [], []
    for day, style in rows:
        written = None if day is None else DATE_STYLES[style](day)
        values.append(written if isinstance(written, int) or day is None else day)
        texts.append(None if written is None else str(written))
    frame = pd.DataFrame({"born": pd.array(texts, dtype=object)})
    pairs = all_pairs(len(frame))
    _, got = field_scores(frame, lf.Field("born", compare="date"), pairs)
    placeholders = reference_placeholders(values)
    want = [
        reference_date_score(
            values[left], values[right], texts[left], texts[right], placeholders
        )
        for left, right in zip(pairs["left"], pairs["right"], strict=True)
    ]
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_date_scores_of_typical_differences():
    frame = pd.DataFrame(
        {
            "born": [
                "1921-02-05",
                "1921-05-02",  # day and month swapped
                "1921-02-06",  # a day later
                "1921-03-05",  # a month later
                "1931-02-05",  # ten years later
                "1921",  # the year alone
                "19210205",  # the same day, written otherwise
                "not a date",
            ]
        }
    )
    pairs = pd.DataFrame({"left": [0] * 7, "right": [1, 2, 3, 4, 5, 6, 7]})
    _, got = field_scores(frame, lf.Field("born", compare="date"), pairs)
    assert got[0] == 0.9
    assert got[1] == pytest.approx(proximity(1))
    assert got[2] == pytest.approx(max(proximity(28), 0.9))  # text ratio: 1 digit
    # Ten years apart: far, but for the one digit wrong (its text ratio).
    assert got[3] == pytest.approx(ratio("1921-02-05", "1931-02-05"))
    # One year alone: no year level (tests/test_placeholder_dates.py).
    assert got[4:6].tolist() == [1.0, 1.0]
    assert np.isnan(got[6])


@given(
    st.lists(
        st.text(alphabet="0123456789", min_size=7, max_size=9),
        min_size=2,
        max_size=15,
    )
)
def test_a_misspelt_date_never_scores_below_ratio_on_digit_text(values):
    # FEBRL's dates of birth: 8-digit text with typos, some not real dates.
    frame = pd.DataFrame({"dob": values})
    pairs = all_pairs(len(frame))
    _, by_date = field_scores(frame, lf.Field("dob", compare="date"), pairs)
    _, by_ratio = field_scores(frame, lf.Field("dob", compare="ratio"), pairs)
    # As every stage reads them: digit-only text without its leading zeros.
    parsed = typed_values.parse_dates(text_array(frame["dob"], owner="test"))
    both = parsed.present[pairs["left"]] & parsed.present[pairs["right"]]
    # Two whole dates decades apart are compared as dates (below); others by
    # their digits too, except where the years are all that agree (ten equal
    # days of the year among these values make a placeholder day).
    whole = parsed.full[pairs["left"]] & parsed.full[pairs["right"]]
    years = np.abs(parsed.year[pairs["left"]] - parsed.year[pairs["right"]])
    far = whole & (years >= numbers_dates.FAR_YEARS)
    checked = both & ~far & (by_date != numbers_dates.YEAR_SCORE)
    assert (by_date[checked] >= by_ratio[checked] - 1e-12).all()
    assert np.isnan(by_date[~both]).all()


@pytest.mark.parametrize(
    "other, near",
    [
        ("1980-01-07", True),  # one digit wrong
        ("1980-02-01", True),  # day and month swapped
        ("1981-01-02", True),  # the year off by one (one digit)
        ("1979-01-02", True),  # the year off by one (two digits)
        ("1980-01-03", True),  # a day apart
        ("1980-10-02", True),  # two digits of the month traded
        ("1950-01-02", True),  # one digit wrong, even thirty years apart
        ("1908-01-02", False),  # two digits traded, but 72 years apart
        ("1990-09-09", False),  # three digits and a decade apart: not near
        ("1970-05-06", False),
        ("1952-01-20", False),  # decades apart: far
        ("1960-01-20", False),
        ("1939-05-02", False),
    ],
)
def test_dates_are_near_as_a_person_reads_them(other, near):
    # A one-digit typo, a swapped day and month, a year off by one: near
    # (at least 0.8, "nearly agrees"); dates decades apart: far (at most 0.5,
    # where a combined score of 0.7 could not lean on them); a decade apart:
    # not near.
    frame = pd.DataFrame({"born": ["1980-01-02", other]})
    _, got = field_scores(frame, lf.Field("born", compare="date"))
    assert bool(got[0] >= 0.8) is near, got[0]
    if not near and abs(int(other[:4]) - 1980) >= numbers_dates.FAR_YEARS:
        assert got[0] <= numbers_dates.FAR_SCORE


def test_a_one_digit_typo_in_a_febrl_date_scores_as_ratio_does():
    frame = pd.DataFrame({"dob": ["19210222", "19220222", "19450493", "19450423"]})
    pairs = pd.DataFrame({"left": [0, 2], "right": [1, 3]})
    _, got = field_scores(frame, lf.Field("dob", compare="date"), pairs)
    np.testing.assert_allclose(got, [0.875, 0.875])


def test_missing_and_unparsable_values_give_nan_and_equal_values_one():
    frame = pd.DataFrame(
        {
            "amount": ["12.5", "12.5", "n/a", "n/a", None, "  "],
            "born": ["1921-02-22", "1921-02-22", "soon", "soon", None, ""],
        }
    )
    pairs = pd.DataFrame({"left": [0, 2, 0, 0, 0], "right": [1, 3, 2, 4, 5]})
    for field in (
        lf.Field("amount", compare="number"),
        lf.Field("born", compare="date"),
    ):
        _, got = field_scores(frame, field, pairs)
        assert got[0] == 1.0
        assert np.isnan(got[1:]).all(), field.label


# ----------------------------------------------------------------------------
# Typed columns, read directly


def test_numeric_columns_are_read_directly():
    values = [1e-07, 2e-07, 1.5e20, 1.4e20, 12.5, np.nan, 1e300, -1e300]
    floats = pd.DataFrame({"x": values})
    pairs = pd.DataFrame({"left": [0, 2, 4, 0, 6], "right": [1, 3, 5, 4, 7]})
    _, got = field_scores(floats, lf.Field("x", compare="number"), pairs)
    want = [
        reference_number_score(
            None if np.isnan(values[a]) else values[a],
            None if np.isnan(values[b]) else values[b],
        )
        for a, b in zip(pairs["left"], pairs["right"], strict=True)
    ]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    for dtype in ("Float64", "float32", "Int64", pd.ArrowDtype(pa.decimal128(12, 2))):
        typed = pd.DataFrame({"x": pd.array([10, 12, None], dtype=dtype)})
        _, got = field_scores(typed, lf.Field("x", compare="number"))
        np.testing.assert_allclose(
            got, [1 - 2 / 12, np.nan, np.nan], err_msg=str(dtype)
        )
    categories = pd.DataFrame({"x": pd.Categorical([10.0, 12.0, None, 10.0])})
    _, got = field_scores(categories, lf.Field("x", compare="number"))
    np.testing.assert_allclose(
        got, [1 - 2 / 12, np.nan, 1.0, np.nan, 1 - 2 / 12, np.nan]
    )


DAYS = ["2020-01-01 08:00", "2020-01-02 23:59", None, "2020-02-01 00:00"]


@pytest.mark.parametrize(
    "column",
    [
        pd.to_datetime(pd.Series(DAYS)),
        pd.to_datetime(pd.Series(DAYS)).astype("datetime64[s]"),
        pd.to_datetime(pd.Series(DAYS)).dt.tz_localize("America/New_York"),
        pd.to_datetime(pd.Series(DAYS)).astype(pd.ArrowDtype(pa.timestamp("us"))),
        pd.Series([None if d is None else pd.Timestamp(d).date() for d in DAYS]),
        pd.to_datetime(pd.Series(DAYS)).dt.date.astype(pd.ArrowDtype(pa.date32())),
        pd.to_datetime(pd.Series(DAYS)).astype("category"),
    ],
    ids=["ns", "s", "tz", "arrow-timestamp", "date-objects", "arrow-date", "category"],
)
def test_date_columns_are_read_by_their_calendar_day(column):
    frame = pd.DataFrame({"when": column})
    scored, got = field_scores(frame, "when")
    assert scored.attrs["lsh_frame"]["compare"] == {"when": "date"}
    # 0-1: one day apart; 0-3: a month; 1-3: 30 days; 2: missing.
    text = ["2020-01-01", "2020-01-02", None, "2020-02-01"]
    want = []
    for left, right in zip(*np.triu_indices(4, k=1), strict=True):
        if text[left] is None or text[right] is None:
            want.append(math.nan)
            continue
        first = datetime.date.fromisoformat(text[left])
        second = datetime.date.fromisoformat(text[right])
        shown = [column.astype(object).iloc[i] for i in (left, right)]
        written = [
            lf.text.shingle.text_array(pd.Series([value]), owner="test")[0].as_py()
            for value in shown
        ]
        want.append(reference_date_score(first, second, *written))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_a_tz_aware_column_counts_the_day_of_its_wall_time():
    late = pd.Series(pd.to_datetime(["2020-01-01 23:30", "2020-01-01 00:10"]))
    frame = pd.DataFrame({"when": late.dt.tz_localize("Asia/Tokyo")})
    _, got = field_scores(frame, lf.Field("when", compare="date"))
    assert got.tolist() == [1.0]  # in UTC they would be different days


def test_typed_values_replace_the_reading_of_their_text():
    # The dictionary's text says nothing here: the column's values decide.
    codes = np.array([1, 0, -1, 1])
    numbers = typed_values.typed_values(
        "number",
        pa.array(["x", "y"]),
        [typed_values.TypedColumn(pd.Series([2.5, 1.5, np.nan, 2.5]), codes)],
    )
    assert numbers.value.tolist() == [1.5, 2.5]
    days = pd.Series(pd.to_datetime(["2020-03-04", "1999-12-31", None, "2020-03-04"]))
    dates = typed_values.typed_values(
        "date", pa.array(["x", "y"]), [typed_values.TypedColumn(days, codes)]
    )
    assert typed_values.describe(dates) == ["1999-12-31", "2020-03-04"]
    text = typed_values.typed_values(
        "date",
        pa.array(["x", "2001-02-03"]),
        [typed_values.TypedColumn(pd.Series(["x", "2001-02-03"]), np.array([0, 1]))],
    )
    assert typed_values.describe(text) == ["not a date", "2001-02-03"]


def test_typed_and_text_columns_score_alike():
    people = lf.datasets.make_customers(600, seed=4)
    born = pd.to_datetime(people["date_of_birth"], errors="coerce")
    amount = np.round(people["entity_id"].to_numpy() * 7.3 % 900, 2)
    typed = pd.DataFrame({"born": born, "amount": amount})
    written = pd.DataFrame(
        {
            "born": born.dt.strftime("%Y-%m-%d"),
            "amount": [f"${value:,.2f}" for value in amount],
        }
    )
    pairs = lf.candidates(people, ["given_name", "surname", "date_of_birth"])[
        ["left", "right"]
    ]
    from_types = lf.score(typed, pairs, ["born", "amount"], min_score=0.5)
    from_text = lf.score(written, pairs, ["born", "amount"], min_score=0.5)
    assert from_types.attrs["lsh_frame"]["compare"] == {
        "born": "date",
        "amount": "number",
    }
    assert from_text.attrs["lsh_frame"]["compare"] == {
        "born": "date",
        "amount": "number",
    }
    np.testing.assert_allclose(from_types["born_score"], from_text["born_score"])
    np.testing.assert_allclose(from_types["amount_score"], from_text["amount_score"])
    assert from_types["amount_score"].between(0, 0.999).any()


# ----------------------------------------------------------------------------
# compare="auto"


def resolved(frame, fields=None, other=None):
    fields = list(frame.columns) if fields is None else fields
    tables = [frame] if other is None else [frame, other]
    plan = compare_plan.plan_score(
        tables,
        [compare_plan.comparison_rows(table) for table in tables],
        fields,
        min_score=0.5,
        values=False,
        estimate=False,
        num_perm=128,
        seed=1,
        owner="test",
    )
    return plan.comparisons


def test_auto_on_typed_columns():
    size = 40
    rng = np.random.default_rng(1)
    days = pd.Series(pd.date_range("1950-01-01", periods=size, freq="17D"))
    frame = pd.DataFrame(
        {
            "datetime": days,
            "tz": days.dt.tz_localize("UTC"),
            "dates": days.dt.date,
            "date_category": days.astype("category"),
            "price": rng.random(size) * 100,
            # Mostly whole, as prices are: the dtype says quantity; its text
            # alone ("10", "20", "12.5") would stay text.
            "mostly_whole_floats": np.where(
                np.arange(size) % 10 == 0, 12.5, 10.0 * np.arange(size)
            ),
            "whole_floats": np.where(
                np.arange(size) % 5 == 0, np.nan, 2000.0 + np.arange(size)
            ),
            "integers": np.arange(size) + 2000,
            "yyyymmdd_integers": days.dt.strftime("%Y%m%d").astype(int),
            "booleans": np.arange(size) % 2 == 0,
            "float_category": pd.Categorical(rng.random(size).round(2)),
        }
    )
    assert resolved(frame) == {
        "datetime": "date",
        "tz": "date",
        "dates": "date",
        "date_category": "date",
        "price": "number",
        "mostly_whole_floats": "number",
        "whole_floats": "ratio",  # integers with gaps, as read_csv gives them
        "integers": "ratio",
        "yyyymmdd_integers": "date",
        "booleans": "ratio",
        "float_category": "number",
    }


def test_auto_on_text_columns():
    size = 100
    index = np.arange(size)
    days = pd.Series(pd.date_range("1920-01-01", periods=size, freq="101D"))
    frame = pd.DataFrame(
        {
            "iso": days.dt.strftime("%Y-%m-%d"),
            "febrl_dob": days.dt.strftime("%Y%m%d"),
            "european": days.dt.strftime("%d/%m/%Y"),
            "iso_with_some_blanks": days.dt.strftime("%Y-%m-%d").where(
                index % 3 > 0, ""
            ),
            "mostly_dates": days.dt.strftime("%Y-%m-%d").where(
                index % 7 > 0, "unknown"
            ),
            "years": (1900 + index).astype(str),
            "prices": [f"${value},{value % 10}99.00" for value in index],
            "decimals": [
                f"{value}.5" if value % 3 == 0 else str(value) for value in index
            ],
            "few_decimals": [
                f"{value}.5" if value % 5 == 0 else str(value) for value in index
            ],
            "postcodes": (2000 + index * 17).astype(str),
            "phones": [f"04{value:08d}" for value in index * 7919],
            "ids": (10_000_000 + index * 12_345).astype(str),
            "names": [f"name {value}" for value in index],
            "codes": [f"a{value}" for value in index],
        }
    )
    assert resolved(frame) == {
        "iso": "date",
        "febrl_dob": "date",
        "european": "date",
        "iso_with_some_blanks": "date",
        "mostly_dates": "ratio",  # 86% dates: below 90%
        "years": "ratio",  # a year alone is not a full date
        "prices": "number",
        "decimals": "number",  # 34% carry a decimal point
        "few_decimals": "ratio",  # 20% do: bare integers stay text
        "postcodes": "ratio",
        "phones": "digits",
        "ids": "digits",  # 8 digits, but not dates: codes of digits
        "names": "token_sort_ratio",
        "codes": "ratio",
    }


VALUE_KINDS = st.one_of(
    st.dates(datetime.date(1900, 1, 1), datetime.date(2030, 1, 1)).map(
        lambda day: day.strftime("%Y%m%d")
    ),
    st.dates(datetime.date(1900, 1, 1), datetime.date(2030, 1, 1)).map(str),
    st.integers(0, 10**9).map(str),
    st.integers(0, 10**6).map(lambda value: f"${value / 100:,.2f}"),
    st.integers(0, 10**6).map(lambda value: f"{value / 10}"),
    st.integers(0, 10**5).map(lambda value: f"{value // 100},{value % 100:02d}"),
    st.sampled_from(["", " ", "n/a", "ann lee", "1921", "19450493", "12,50 €"]),
)


@given(st.lists(VALUE_KINDS, min_size=1, max_size=40))
def test_auto_on_text_follows_its_rule_value_by_value(values):
    # The documented rule, counted one value at a time.
    present = [value.strip() for value in values if value.strip()]
    dates = [typed_values.parse_dates(pa.array([value])).full[0] for value in present]
    numbers = [typed_values.parse_numbers(pa.array([value])) for value in present]
    parsed = [not np.isnan(number.value[0]) for number in numbers]
    marked = [bool(number.marked[0]) for number in numbers]
    if present and sum(dates) >= 0.9 * len(present):
        want = "date"
    elif (
        present
        and sum(parsed) >= 0.9 * len(present)
        and sum(marked) >= 0.3 * sum(parsed)
    ):
        want = "number"
    else:
        want = None
    text = pc.utf8_trim_whitespace(pa.array(values, pa.large_string()))
    assert auto.auto_typed_comparison(None, text) == want


def test_auto_links_a_date_column_with_date_text():
    days = pd.Series(pd.date_range("1960-01-01", periods=30, freq="45D"))
    left = pd.DataFrame({"born": days})
    right = pd.DataFrame({"born": days.dt.strftime("%d/%m/%Y")})
    assert resolved(left, other=right) == {"born": "date"}
    assert resolved(left, other=pd.DataFrame({"born": ["x"] * 30})) == {"born": "ratio"}


def test_auto_never_looks_at_column_names():
    values = [f"{value}" for value in range(100, 200)]
    for name in ("date_of_birth", "price", "amount", "dob"):
        assert resolved(pd.DataFrame({name: values})) == {name: "ratio"}


def test_a_field_of_several_columns_is_compared_as_text():
    frame = pd.DataFrame(
        {"year": [1921, 1922, 1923], "month": [2, 2, 3], "day": [1, 2, 3]}
    )
    assert resolved(frame, [lf.Field(["year", "month", "day"])]) == {
        "year+month+day": "token_sort_ratio"
    }


# ----------------------------------------------------------------------------
# Configuration, saved models, explain, Dask


def test_field_accepts_the_new_comparisons_and_rejects_others():
    assert lf.Field("x", compare="number").compare == "number"
    assert lf.Field("x", compare="date").compare == "date"
    with pytest.raises(lf.ConfigError, match="'compare'"):
        lf.Field("x", compare="numbers")


@pytest.fixture(scope="module")
def shop():
    """Customers with a date of birth and a price, plus their true entities."""
    people = lf.datasets.make_customers(3_000, seed=7)
    cents = (people["entity_id"].to_numpy() * 7919 % 100_000).astype(float)
    cents[people.index.to_numpy() % 11 == 0] += 100  # a price changed by a dollar
    return people.assign(
        price=[f"${value / 100:,.2f}" for value in cents],
        born=pd.to_datetime(people["date_of_birth"]),
    )


SHOP_COLUMNS = ["given_name", "surname", "born", "price", "email"]


def test_a_saved_model_keeps_the_comparisons(shop):
    saved, batch = shop.iloc[:2_500], shop.iloc[2_500:2_560]
    learned = lf.pairs(saved[SHOP_COLUMNS], SHOP_COLUMNS)
    model = learned.attrs["lsh_frame"]["model"]
    assert learned.attrs["lsh_frame"]["compare"]["born"] == "date"
    assert model["compare"]["born"] == "date"
    assert model["compare"]["price"] == "number"
    stored = json.loads(json.dumps(model))
    again = decide_model.MatchModel.from_dict(stored)
    assert again.compare == model["compare"]
    # A batch too small to tell decides with the saved comparisons and model.
    # The saved records hold duplicates of the batch's: every match counts (a
    # batch of 60 is too few for one_to_one="auto" to tell either way).
    found = lf.pairs(
        saved[SHOP_COLUMNS],
        SHOP_COLUMNS,
        other=batch[SHOP_COLUMNS],
        min_score=stored,
        one_to_one=False,
    )
    assert found.attrs["lsh_frame"]["compare"]["born"] == "date"
    assert found.attrs["lsh_frame"]["min_score_rule"] == "model"
    quality = lf.evaluate(
        found, (shop["entity_id"].iloc[:2_500], shop["entity_id"].iloc[2_500:2_560])
    )
    assert quality.recall > 0.9 and quality.precision > 0.9
    # A batch whose prices happen to be bare integers still scores as learned.
    plain = batch.assign(price=[str(i) for i in range(len(batch))])
    kept = lf.pairs(
        saved[SHOP_COLUMNS], SHOP_COLUMNS, other=plain[SHOP_COLUMNS], min_score=stored
    )
    assert kept.attrs["lsh_frame"]["compare"]["price"] == "number"


def test_a_model_with_an_unknown_comparison_is_refused(shop):
    model = lf.pairs(shop[SHOP_COLUMNS], SHOP_COLUMNS).attrs["lsh_frame"]["model"]
    broken = {**model, "compare": {**model["compare"], "born": "dates"}}
    with pytest.raises(lf.ConfigError, match="compare"):
        decide_model.MatchModel.from_dict(broken)


def test_explain_shows_how_values_were_read():
    frame = pd.DataFrame(
        {
            "price": ["$1,299.99", "1299.99", "n/a"],
            "born": ["1921-02-22", "22/02/1921", "1921"],
        }
    )
    fields = [lf.Field("price", compare="number"), lf.Field("born", compare="date")]
    explanation = lf.explain(frame, (0, 1), fields, min_score=0.5)
    text = str(explanation)
    assert "number 1.000" in text and "read as: 1299.99 vs 1299.99" in text
    assert "date 1.000" in text and "read as: 1921-02-22 vs 1921-02-22" in text
    other = lf.explain(frame, (0, 2), fields, min_score=0.5)
    assert other.fields[0].read_as == ("1299.99", "not a number")
    assert other.fields[1].read_as == ("1921-02-22", "year 1921")
    assert math.isnan(other.fields[0].score) and other.fields[1].score == 1.0
    # "auto" that resolves to a typed comparison shows it too; text does not.
    two = frame.iloc[:2].assign(name=["ann lee", "anne lee"])
    by_name = lf.explain(two, (0, 1), ["price", "name"], min_score=0.5)
    assert [field.comparison for field in by_name.fields] == [
        "number",
        "token_sort_ratio",
    ]
    assert by_name.fields[0].read_as == ("1299.99", "1299.99")
    assert by_name.fields[1].read_as is None


@pytest.mark.parametrize("partitions", [1, 3])
def test_dask_scores_equal_pandas(shop, partitions):
    frame = shop[SHOP_COLUMNS].iloc[:1_200]
    ddf = dd.from_pandas(frame, npartitions=partitions, sort=False)
    df = ddf.compute()
    with dask.config.set(scheduler="synchronous"):
        got = ddf.lsh.pairs(SHOP_COLUMNS).compute()
    want = df.lsh.pairs(SHOP_COLUMNS)
    assert want.attrs["lsh_frame"]["compare"]["price"] == "number"
    assert want.attrs["lsh_frame"]["compare"]["born"] == "date"
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.attrs == want.attrs
