"""Typed columns (numbers, dates, booleans, categoricals) work wherever text does.

Each value becomes a canonical text of its own; the oracle here writes that
text with plain Python, value by value, and every stage must give on the typed
frame exactly what it gives on the frame of those strings.
"""

from __future__ import annotations

import datetime
import decimal
import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import lsh_frame as lf
from lsh_frame.text.shingle import text_array


def text_of(values: pd.Series) -> list[str | None]:
    return text_array(values, owner="test").to_pylist()


# ----------------------------------------------------------------------------
# The canonical text of each dtype


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param(pd.Series([1999, -7, 0]), ["1999", "-7", "0"], id="int64"),
        pytest.param(pd.Series([3, 250], dtype=np.uint8), ["3", "250"], id="uint8"),
        pytest.param(
            pd.Series([1999, None], dtype="Int64"), ["1999", None], id="Int64"
        ),
        pytest.param(
            pd.Series([1999.0, np.nan, 2001.0]),
            ["1999", None, "2001"],
            id="whole-float64-with-gaps",
        ),
        pytest.param(
            pd.Series([399.0, 12.5, 0.1, 0.1 + 0.2, -0.0, 1e-7, 1e22]),
            ["399", "12.5", "0.1", "0.30000000000000004", "0", "1e-7", "1e+22"],
            id="float64",
        ),
        pytest.param(
            pd.Series([0.1, 2.0, None], dtype=np.float32),
            ["0.1", "2", None],
            id="float32-shortest-of-its-own-width",
        ),
        pytest.param(
            pd.Series([12.5, None, 3.0], dtype="Float64"),
            ["12.5", None, "3"],
            id="Float64",
        ),
        pytest.param(pd.Series([np.nan, np.nan]), [None, None], id="all-nan-float64"),
        pytest.param(pd.Series([True, False]), ["true", "false"], id="bool"),
        pytest.param(
            pd.Series([True, None], dtype="boolean"), ["true", None], id="boolean"
        ),
        pytest.param(
            pd.Series(pd.to_datetime(["1860-09-24", None, "2020-01-01"])),
            ["1860-09-24", None, "2020-01-01"],
            id="datetime64-midnight",
        ),
        pytest.param(
            pd.Series(
                pd.to_datetime(
                    ["1860-09-24", "1969-12-31 23:59:59.75", None], format="ISO8601"
                )
            ),
            ["1860-09-24", "1969-12-31 23:59:59", None],
            id="datetime64-with-times",
        ),
        pytest.param(
            pd.Series(pd.to_datetime(["2001-02-03 04:05:06"])).astype("datetime64[s]"),
            ["2001-02-03 04:05:06"],
            id="datetime64-seconds-unit",
        ),
        pytest.param(
            pd.Series(
                pd.to_datetime(["2020-01-01 23:30", "2020-01-02 00:00"])
            ).dt.tz_localize("America/New_York"),
            ["2020-01-01 23:30:00", "2020-01-02"],
            id="tz-aware-wall-time",
        ),
        pytest.param(
            pd.Series([datetime.date(1860, 9, 24), None, datetime.date(1, 1, 2)]),
            ["1860-09-24", None, "0001-01-02"],
            id="object-dates",
        ),
        pytest.param(
            pd.Series(pd.to_timedelta(["1h", None, "1.5s"])),
            ["3600", None, "1.5"],
            id="timedelta-seconds",
        ),
        pytest.param(
            pd.Series(pd.Categorical([2.0, None, 1.5, 2.0])),
            ["2", None, "1.5", "2"],
            id="categorical-floats",
        ),
        pytest.param(
            pd.Series(pd.Categorical(pd.to_datetime(["2020-01-01", None]))),
            ["2020-01-01", None],
            id="categorical-dates",
        ),
        pytest.param(
            pd.Series(pd.Categorical(["Ann", None, "Ann"])),
            ["Ann", None, "Ann"],
            id="categorical-text",
        ),
        pytest.param(
            pd.Series([decimal.Decimal("12.50"), decimal.Decimal("100"), None]),
            ["12.5", "100", None],
            id="decimal",
        ),
        pytest.param(
            pd.Series(["02134", 12345, 2.5, 7.0, None, np.nan, pd.NA, pd.NaT]),
            ["02134", "12345", "2.5", "7", None, None, None, None],
            id="object-text-mixed-with-numbers",
        ),
        pytest.param(
            pd.Series(
                [True, datetime.date(2020, 1, 2), pd.Timestamp("2020-01-02 10:00")],
                dtype=object,
            ),
            ["true", "2020-01-02", "2020-01-02 10:00:00"],
            id="object-bool-and-dates",
        ),
        pytest.param(
            pd.Series([pd.Timestamp("2020-01-01 23:30", tz="Asia/Tokyo"), "a"]),
            ["2020-01-01 23:30:00", "a"],
            id="object-tz-aware-wall-time",
        ),
        pytest.param(
            pd.Series([2**70, np.int64(5)], dtype=object),
            [str(2**70), "5"],
            id="object-big-ints",
        ),
    ],
)
def test_canonical_text_of_each_dtype(values, expected):
    assert text_of(values) == expected


@pytest.mark.parametrize(
    ("arrow_type", "values", "expected"),
    [
        (pa.int32(), [7, None], ["7", None]),
        (pa.float64(), [2.0, float("nan"), None, 0.5], ["2", None, None, "0.5"]),
        (pa.bool_(), [False, None], ["false", None]),
        (pa.date32(), [datetime.date(1999, 1, 31), None], ["1999-01-31", None]),
        (
            pa.timestamp("us", "Europe/Berlin"),
            [
                pd.Timestamp("2020-06-01 00:00", tz="Europe/Berlin"),
                pd.Timestamp("2020-06-01 23:15", tz="Europe/Berlin"),
                None,
            ],
            ["2020-06-01", "2020-06-01 23:15:00", None],
        ),
        (pa.dictionary(pa.int8(), pa.int64()), [3, None, 3], ["3", None, "3"]),
        (pa.string(), ["x", None], ["x", None]),
    ],
)
def test_pyarrow_backed_columns(arrow_type, values, expected):
    if pa.types.is_dictionary(arrow_type):
        array = pa.array(values, arrow_type.value_type).dictionary_encode()
    else:
        array = pa.array(values, arrow_type, from_pandas=False)
    series = pd.Series(pd.arrays.ArrowExtensionArray(array))
    assert text_of(series) == expected


def test_text_of_a_value_does_not_depend_on_its_neighbours():
    # Partitions (Dask), single rows (explain) and the other table of a link
    # must all give the same text for the same value.
    values = pd.Series(
        pd.to_datetime(
            ["2020-01-01", "2020-01-01 10:00", "1999-12-31", None], format="ISO8601"
        )
    )
    whole = text_of(values)
    assert whole == [*text_of(values[:1]), *text_of(values[1:])]
    assert whole[0] == "2020-01-01"
    floats = pd.Series([1999.0, 12.5, np.nan])
    assert text_of(floats) == [*text_of(floats[:1]), *text_of(floats[1:])]


def test_read_csv_columns_need_no_conversion():
    csv = "name,year,price,empty,zip\nann,1999,399.0,,02134\nbob,,12.5,,x1\n"
    frame = pd.read_csv(io.StringIO(csv))
    assert frame["year"].dtype == np.float64
    assert frame["empty"].isna().all()
    assert text_of(frame["year"]) == ["1999", None]
    assert text_of(frame["price"]) == ["399", "12.5"]
    assert text_of(frame["empty"]) == [None, None]
    # An empty column gives no keys and no error.
    pairs = frame.lsh.candidates(["name", "year", "empty"])
    assert list(pairs.columns[:2]) == ["left", "right"]


@pytest.mark.parametrize(
    ("values", "named"),
    [
        (pd.Series([["a"], None], name="tags"), "list"),
        (pd.Series([1, {"a": 1}], name="attributes"), "dict"),
        (pd.Series([b"ab"], name="raw"), "bytes"),
    ],
)
def test_values_without_text_are_refused_with_column_dtype_and_fix(values, named):
    frame = pd.DataFrame({values.name: values, "name": "x"})
    with pytest.raises(lf.ColumnTypeError) as info:
        frame.lsh.candidates(["name", values.name])
    message = str(info.value)
    assert f"Column {values.name!r}" in message
    assert "dtype object" in message
    assert f"holding {named} values" in message
    assert ".astype('str')" in message


# ----------------------------------------------------------------------------
# Every stage on a typed frame


@pytest.fixture(scope="module")
def typed() -> pd.DataFrame:
    """Customers with typed columns, on a non-default index."""
    people = lf.datasets.make_customers(400, seed=5)
    dob = pd.to_datetime(people["date_of_birth"], errors="coerce")
    rng = np.random.default_rng(5)
    entity = people["entity_id"].to_numpy()
    price = np.round(entity * 1.5 % 500, 1)  # whole and half prices, per entity
    price[rng.random(price.size) < 0.1] = np.nan
    frame = pd.DataFrame(
        {
            "given_name": people["given_name"],
            "surname": people["surname"],
            "price": price,
            "dob": dob,
            "year": dob.dt.year.astype("Int64"),
            "month": dob.dt.month.astype("Int64"),
            "day": dob.dt.day.astype("Int64"),
            "member": (entity % 3 == 0),
            "city": people["city"].astype("category"),
            "band": pd.Categorical(entity % 7 * 10),
        }
    )
    frame.index = pd.Index(people.index.to_numpy() * 10 + 3, name="record")
    return frame


def as_written(frame: pd.DataFrame) -> pd.DataFrame:
    """The canonical text of each typed value, written value by value in Python."""

    def number(value: float) -> str:
        return str(int(value)) if float(value).is_integer() else repr(float(value))

    def date(value: pd.Timestamp) -> str:
        return value.strftime("%Y-%m-%d")

    def cell(value, convert):
        return None if pd.isna(value) else convert(value)

    return pd.DataFrame(
        {
            # Text stays text; a missing name is None whatever the string dtype
            # (pandas 3's str dtype gives NaN from tolist()).
            "given_name": [cell(v, str) for v in frame["given_name"]],
            "surname": [cell(v, str) for v in frame["surname"]],
            "price": [cell(v, number) for v in frame["price"]],
            "dob": [cell(v, date) for v in frame["dob"]],
            "year": [cell(v, str) for v in frame["year"]],
            "month": [cell(v, str) for v in frame["month"]],
            "day": [cell(v, str) for v in frame["day"]],
            "member": ["true" if v else "false" for v in frame["member"]],
            "city": [cell(v, str) for v in frame["city"]],
            "band": [str(v) for v in frame["band"]],
        },
        index=frame.index,
        dtype=object,
    )


FIELDS = [
    "given_name",
    "surname",
    "price",
    "dob",
    "member",
    "city",
    "band",
    lf.Field(["year", "month", "day"]),
]


def test_oracle_is_what_text_array_gives(typed):
    written = as_written(typed)
    for column in written.columns:
        assert text_of(typed[column]) == written[column].tolist(), column


def test_candidates_pairs_and_report_equal_those_of_the_text(typed):
    written = as_written(typed)
    pairs = typed.lsh.candidates(FIELDS)
    assert len(pairs) > 0
    pd.testing.assert_frame_equal(pairs, written.lsh.candidates(FIELDS))
    scored = typed.lsh.pairs(FIELDS)
    pd.testing.assert_frame_equal(scored, written.lsh.pairs(FIELDS))
    # Values shown beside the scores keep the user's dtypes; a field over
    # several columns shows their joined text.
    shown = typed.lsh.pairs(FIELDS, values=True)
    assert shown["price_left"].dtype == np.float64
    assert shown["dob_right"].dtype == typed["dob"].dtype
    np.testing.assert_array_equal(
        shown["price_left"], typed.loc[shown["left"], "price"]
    )
    joined = shown["year+month+day_left"].dropna()
    assert len(joined) > 0
    assert joined.str.fullmatch(r"\d{4} \d{1,2} \d{1,2}").all()
    report = typed.lsh.blocking_report(FIELDS)
    want = written.lsh.blocking_report(FIELDS)
    pd.testing.assert_frame_equal(report.table, want.table)
    assert report.decisions == want.decisions
    assert report.largest_buckets == want.largest_buckets


def test_dedupe_and_drop_duplicates_keep_the_frames_dtypes(typed):
    before = typed.copy(deep=True)
    deduped = typed.lsh.dedupe(FIELDS)
    written = as_written(typed).lsh.dedupe(FIELDS)
    np.testing.assert_array_equal(deduped["cluster_id"], written["cluster_id"])
    assert (deduped["cluster_id"].value_counts() > 1).any()
    pd.testing.assert_frame_equal(deduped[typed.columns], typed)
    kept = typed.lsh.drop_duplicates(FIELDS)
    assert len(kept) < len(typed)
    pd.testing.assert_frame_equal(kept, typed.loc[kept.index])
    assert kept.dtypes.equals(typed.dtypes)
    pd.testing.assert_frame_equal(typed, before)


def test_link_and_merge_on_typed_columns(typed):
    left, right = typed.iloc[::2], typed.iloc[1::2]
    before = (left.copy(deep=True), right.copy(deep=True))
    fields = ["given_name", "surname", "dob", "price"]
    linked = left.lsh.link(right, fields)
    written = as_written(typed)
    pd.testing.assert_frame_equal(
        linked, written.iloc[::2].lsh.link(written.iloc[1::2], fields)
    )
    merged = left.lsh.merge(right, fields, how="inner")
    assert len(merged) > 0
    assert merged["dob_x"].dtype == typed["dob"].dtype
    assert merged["price_y"].dtype == np.float64
    assert isinstance(merged["city_x"].dtype, pd.CategoricalDtype)
    pd.testing.assert_frame_equal(left, before[0])
    pd.testing.assert_frame_equal(right, before[1])


def test_minhash_shingles_and_score_take_typed_columns(typed):
    written = as_written(typed)
    pd.testing.assert_series_equal(
        typed.lsh.minhash("dob", num_perm=32), written.lsh.minhash("dob", num_perm=32)
    )
    pd.testing.assert_series_equal(
        typed.lsh.shingles("price"), written.lsh.shingles("price")
    )
    pairs = written.lsh.candidates(FIELDS)[["left", "right"]]
    pd.testing.assert_frame_equal(
        typed.lsh.score(pairs, FIELDS), written.lsh.score(pairs, FIELDS)
    )


def test_split_date_parts_find_the_same_birthday():
    frame = pd.DataFrame(
        {
            "first": ["Mary", "Marie", "John"],
            "middle": ["Ann", None, "Paul"],
            "year": [1860, 1860, 1950],
            "month": [9, 9, 1],
            "day": [24, 24, 2],
        }
    )
    birthday = lf.Field(["year", "month", "day"], blocking="exact", compare="exact")
    pairs = frame.lsh.pairs([birthday, lf.Field(["first", "middle"])], values=True)
    found = pairs.set_index(["left", "right"])
    assert (0, 1) in found.index
    assert found.loc[(0, 1), "year+month+day_left"] == "1860 9 24"
    assert found.loc[(0, 1), "year+month+day_score"] == 1.0
    assert found.loc[(0, 1), "first+middle_left"] == "Mary Ann"
    # Plain names work too, and a float year with a gap reads as the int.
    columns = ["first", "year", "month", "day"]
    floats = frame.assign(year=[1860.0, 1860.0, np.nan])
    integers = frame.assign(year=pd.array([1860, 1860, None], dtype="Int64"))
    plain = floats.lsh.pairs(columns)
    pd.testing.assert_frame_equal(plain, integers.lsh.pairs(columns))
    assert plain.set_index(["left", "right"]).loc[(0, 1), "year_score"] == 1.0


def test_explain_shows_the_canonical_text(typed):
    pair = typed.lsh.pairs(FIELDS).iloc[0]
    text = str(typed.lsh.explain(pair, ["dob", "price", "member"]))
    left, right = pair["left"], pair["right"]
    for column in ("dob", "member"):
        value = as_written(typed.loc[[left, right]])[column]
        for cell in value.dropna():
            assert repr(cell) in text
    assert "'nan'" not in text
    assert "'NaT'" not in text


def test_a_float32_value_reads_the_same_in_any_column():
    # A float32 scalar in an object column is written as in a float32 column,
    # not as the float64 it widens to ("0.10000000149011612").
    in_object = pd.Series([np.float32(0.1), "x", np.float32(2.5)], dtype=object)
    in_float32 = pd.Series([0.1, 2.5], dtype=np.float32)
    assert text_of(in_object) == ["0.1", "x", "2.5"]
    assert text_of(in_float32) == ["0.1", "2.5"]


@pytest.mark.parametrize("unused", [b"unused", ("a", "tuple"), object()])
def test_an_unused_category_of_any_type_is_no_value_of_the_column(unused):
    """Issue 38, defect 14: an unused bytes category refused the column."""
    city = pd.Categorical(
        ["leeds", "york", None, "leeds"], categories=["leeds", unused, "york"]
    )
    values = pd.Series(city, name="city")
    assert text_of(values) == ["leeds", "york", None, "leeds"]
    frame = pd.DataFrame(
        {"name": ["john smith", "mary jones", "ann lee", "jon smith"], "city": city}
    )
    plain = frame.assign(city=frame["city"].astype(object))
    got = frame.lsh.dedupe(["name", "city"], min_score=0.5)
    pd.testing.assert_frame_equal(
        got.drop(columns="city"), plain.lsh.dedupe(["name", "city"], min_score=0.5)
        .drop(columns="city"),
    )  # fmt: skip
    # A category some row holds is still refused, naming it.
    held = pd.Series(pd.Categorical([b"york", "leeds"]), name="city")
    with pytest.raises(lf.ColumnTypeError, match="b'york'"):
        text_of(held)


# ----------------------------------------------------------------------------
# Digit codes read the same as text or as numbers


@pytest.mark.parametrize(
    ("as_text", "as_number"),
    [
        ("0800", 800.0),  # a Darwin postcode through pd.read_csv
        ("0774674346", 774674346.0),  # a phone number
        ("000", 0),
        ("4870", 4870),
    ],
)
def test_digit_text_reads_as_the_number_a_reader_makes_of_it(as_text, as_number):
    text = pd.Series([as_text, None], dtype=object)
    number = pd.Series([as_number, np.nan])
    assert text_of(text) == text_of(number)


def test_only_digit_text_loses_its_leading_zeros():
    values = pd.Series(["0774 674 346", "0x7", "07a", "0.5", " 07", "0"])
    assert text_of(values) == ["0774 674 346", "0x7", "07a", "0.5", " 07", "0"]


def test_a_file_read_as_text_or_as_numbers_dedupes_alike():
    # pd.read_csv makes postcodes and phones floats (NaN where missing, the
    # leading zero of a phone and of 08xx postcodes dropped); read as text
    # they keep them. The pairs, their scores and the entities are the same.
    people = lf.datasets.make_customers(1_500, seed=2).drop(columns="entity_id")
    written = people.to_csv()
    as_text = pd.read_csv(io.StringIO(written), dtype=str, index_col="record_id")
    as_text.index = as_text.index.astype(np.int64)
    defaults = pd.read_csv(io.StringIO(written), index_col="record_id")
    assert defaults["phone"].dtype == np.float64
    assert (as_text["phone"].dropna().str.startswith("0")).all()
    columns = list(people.columns)
    text_pairs = as_text.lsh.pairs(columns)
    number_pairs = defaults.lsh.pairs(columns)
    assert text_pairs.attrs["lsh_frame"]["compare"]["phone"] == "digits"
    assert number_pairs.attrs["lsh_frame"]["compare"]["phone"] == "digits"
    scores = [column for column in text_pairs.columns if column.endswith("_score")]
    pd.testing.assert_frame_equal(
        text_pairs[["left", "right", *scores, "match"]],
        number_pairs[["left", "right", *scores, "match"]],
    )
