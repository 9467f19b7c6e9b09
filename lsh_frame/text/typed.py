"""The canonical text of a column of any supported dtype, vectorised.

Every stage shingles, keys and compares text; this module is where numbers,
dates, booleans and categoricals become that text, so no caller has to convert
a column first. Each value's text depends on that value alone (never on the
rest of its column), so a partition, a single row or the other table of a link
gives the same text for the same value. Missing values (None, NaN, NaT, NA)
stay missing: never the text ``"nan"``.

- integers: plain decimal (``1999``); floats holding a whole number the same
  (``1999.0`` → ``1999``, as for a year read by ``read_csv`` with gaps); other
  floats the shortest decimal that reads back as the same float (Arrow's
  double-conversion, the same on every platform: ``12.5``, ``0.1``, ``1e-7``);
- text of digits only: without its leading zeros (``"0800"`` → ``800``,
  ``"0774674346"`` → ``774674346``), as a reader of numbers drops them: a
  postcode, phone or id reads the same whether ``pd.read_csv`` made it a
  number or it stayed text (``"0"`` and ``"000"`` → ``0``);
- decimals: their digits without trailing zeros (``12.50`` → ``12.5``);
- dates ``YYYY-MM-DD``; date-times at midnight the same, other date-times
  ``YYYY-MM-DD HH:MM:SS`` (whole seconds), tz-aware ones in their own
  time zone's wall time;
- durations: their length in seconds, as a number;
- booleans ``true`` / ``false``;
- categoricals: their categories' text, by these same rules;
- object columns: each value by its own type, so strings mixed with numbers
  (common in ``read_csv`` output) work; lists, dicts, bytes and other objects
  raise :class:`~lsh_frame.ColumnTypeError`.
"""

from __future__ import annotations

import datetime
import decimal
import numbers
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lsh_frame.errors import ColumnTypeError

__all__ = ["canonical_text"]

#: Largest magnitude below which a whole float converts exactly to int64.
_INT64_LIMIT = 2.0**63
_UNITS_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_ALLOWED = "text, numbers, dates, durations, booleans and categoricals"


def canonical_text(values: pd.Series, *, owner: str) -> pa.Array:
    """Return a column's canonical text as one ``large_string`` array, nulls kept.

    Raises
    ------
    ColumnTypeError
        If the column holds values that have no canonical text (lists, dicts,
        bytes, other objects).

    Examples
    --------
    >>> import pandas as pd
    >>> canonical_text(pd.Series([1999.0, None, 12.5]), owner="shingles").to_pylist()
    ['1999', None, '12.5']
    """
    try:
        return _canonical_text(values, owner=owner)
    except UnicodeEncodeError as error:
        # Looked for only now: good text converts without a pass in Python.
        raise _not_unicode(values, owner) from error


def _canonical_text(values: pd.Series, *, owner: str) -> pa.Array:
    label = f"Column {values.name!r}" if values.name is not None else "The values"
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        # Only the categories some row holds: an unused one (bytes, a tuple)
        # is no value of the column and must not refuse it.
        codes = values.cat.codes.to_numpy().astype(np.int64)
        missing = codes < 0
        used, local = np.unique(codes[~missing], return_inverse=True)
        categories = _canonical_text(
            pd.Series(dtype.categories[used], name=values.name), owner=owner
        )
        indices = np.zeros(codes.size, dtype=np.int64)
        indices[~missing] = local.ravel()
        return categories.take(pa.array(indices, mask=missing, type=pa.int64()))
    if pd.api.types.is_object_dtype(dtype):
        kind = pd.api.types.infer_dtype(values, skipna=True)
        if kind in ("string", "empty"):
            array = pa.array(values, from_pandas=True, type=pa.large_string())
        else:
            return _object_text(values.to_numpy(dtype=object), label, owner, dtype)
    else:
        values = _wall_time(values)
        # pa.array takes an Arrow-backed column's data through its
        # __arrow_array__ either way; handed the array, not the Series, it
        # skips its checks of a Series: most of the cost for a few rows (a
        # batch of new records), 7 of 11 µs a column.
        data = values.array
        try:
            array = pa.array(
                data if isinstance(data, pd.arrays.ArrowExtensionArray) else values,
                from_pandas=True,
            )
        except (pa.ArrowException, TypeError, ValueError) as error:
            raise _refusal(label, owner, dtype) from error
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    return _arrow_text(array, label, owner, dtype)


#: A lone surrogate: what decoding bytes with errors="surrogateescape" leaves.
_SURROGATE = "[\ud800-\udfff]"


def _not_unicode(values: pd.Series, owner: str) -> ColumnTypeError:
    """Return the error for text holding lone surrogates, naming the first bad row."""
    label = f"Column {values.name!r}" if values.name is not None else "The values"
    text = pd.Series(values.to_numpy(dtype=object), index=values.index, dtype=object)
    is_text = np.frompyfunc(lambda value: isinstance(value, str), 1, 1)(text)
    bad = text[is_text.astype(bool)].str.contains(_SURROGATE, regex=True)
    where = ""
    if bad.any():
        row = bad.index[bad.to_numpy(dtype=bool)].tolist()[0]
        where = f" The first is at row label {row!r}: {_short(text[row])}."
    verb = "hold" if label == "The values" else "holds"
    return ColumnTypeError(
        f"{label} passed to {owner} {verb} text that is not valid Unicode: lone "
        "surrogates, as left by decoding bytes with errors='surrogateescape' "
        f"(os.fsdecode, some file readers).{where} Allowed is text that encodes "
        "to UTF-8. Decode the bytes properly first, for example with "
        ".str.encode('utf-8', 'surrogateescape').str.decode('latin-1') if they "
        "are Latin-1, or .str.encode('utf-8', 'surrogateescape')"
        ".str.decode('utf-8', errors='replace') to replace what is not UTF-8."
    )


def _wall_time(values: pd.Series) -> pd.Series:
    """Drop a tz-aware column's time zone, keeping the wall times it shows.

    pandas does it with its own time-zone data, so no platform needs Arrow's.
    """
    dtype = values.dtype
    arrow_type = getattr(dtype, "pyarrow_dtype", None)
    if (
        arrow_type is not None
        and pa.types.is_timestamp(arrow_type)
        and arrow_type.tz is not None
    ):
        # pandas' tz_localize(None) on an Arrow column keeps UTC, not wall time.
        values = values.astype(pd.DatetimeTZDtype(arrow_type.unit, arrow_type.tz))
        dtype = values.dtype
    if isinstance(dtype, pd.DatetimeTZDtype):
        return values.dt.tz_localize(None)
    return values


def _refusal(label: str, owner: str, dtype: Any, detail: str = "") -> ColumnTypeError:
    verb = "have" if label == "The values" else "has"
    return ColumnTypeError(
        f"{label} passed to {owner} {verb} dtype {dtype}{detail}, which has no "
        f"text form to shingle. Allowed are {_ALLOWED}. Convert it first, for "
        "example with .astype('str'), or join list values into one string."
    )


def _arrow_text(array: pa.Array, label: str, owner: str, dtype: Any) -> pa.Array:
    """Return the canonical text of an Arrow array (see the module's rules)."""
    kind = array.type
    if pa.types.is_dictionary(kind):
        dictionary = _arrow_text(array.dictionary, label, owner, dtype)
        return dictionary.take(array.indices)
    if (
        pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or pa.types.is_string_view(kind)
    ):
        return _without_leading_zeros(array.cast(pa.large_string()))
    if pa.types.is_null(kind):
        return pa.nulls(len(array), pa.large_string())
    if pa.types.is_boolean(kind) or pa.types.is_integer(kind):
        return array.cast(pa.large_string())
    if pa.types.is_floating(kind):
        return _float_text(array)
    if pa.types.is_decimal(kind):
        text = array.cast(pa.large_string())
        # "12.50" → "12.5", "100.00" → "100"; integers have no point to trim at.
        trimmed = pc.replace_substring_regex(text, r"(\.\d*?)0+$", r"\1")
        return pc.replace_substring_regex(trimmed, r"\.$", "")
    if pa.types.is_date(kind):
        return array.cast(pa.date32()).cast(pa.large_string())
    if pa.types.is_timestamp(kind):
        return _timestamp_text(array)
    if pa.types.is_duration(kind):
        per_second = float(_UNITS_PER_SECOND[kind.unit])
        count = array.cast(pa.int64()).cast(pa.float64())
        return _float_text(pc.divide(count, per_second))
    raise _refusal(label, owner, dtype, f" (Arrow type {kind})")


#: A value of digits only, its leading zeros apart (at least one digit kept).
_LEADING_ZEROS = r"^0+([0-9]+)$"


def _without_leading_zeros(array: pa.Array) -> pa.Array:
    """Return text whose digit-only values lose their leading zeros.

    A number read from ``"0800"`` is 800 and its text ``800``: digit-only text
    reads as a reader of numbers reads it, so the two readings of a column
    agree. Nothing is scanned twice when no value starts with a zero.

    Examples
    --------
    >>> _without_leading_zeros(
    ...     pa.array(["0800", "0774 674", "000", "0x7", "4870", None])
    ... ).to_pylist()
    ['800', '0774 674', '0', '0x7', '4870', None]
    """
    if not pc.any(pc.starts_with(array, "0")).as_py():
        return array
    return pc.replace_substring_regex(array, _LEADING_ZEROS, r"\1")


def _float_text(array: pa.Array) -> pa.Array:
    """Whole numbers as integers, others as the shortest round-trip decimal."""
    if pa.types.is_float16(array.type):
        array = array.cast(pa.float32())
    # Arrow-backed floats can hold NaN beside null: both are missing values.
    array = pc.if_else(pc.is_nan(array), pa.scalar(None, array.type), array)
    whole = pc.and_(
        pc.equal(array, pc.floor(array)),
        pc.less(pc.abs(array), pa.scalar(_INT64_LIMIT, array.type)),
    )
    integers = pc.if_else(whole, array, pa.scalar(0, array.type)).cast(pa.int64())
    return pc.if_else(
        whole,
        integers.cast(pa.large_string()),
        array.cast(pa.large_string()),
    )


def _timestamp_text(array: pa.Array) -> pa.Array:
    """``YYYY-MM-DD`` at midnight, else ``YYYY-MM-DD HH:MM:SS``, in wall time."""
    if array.type.tz is not None:  # columns reach here without; dictionaries may not
        array = pc.local_timestamp(array)
    # floor_temporal floors before 1970 too (a cast would round towards 1970).
    day = pc.floor_temporal(array, unit="day")
    midnight = pc.equal(array, day)
    seconds = pc.floor_temporal(array, unit="second").cast(pa.timestamp("s"))
    return pc.if_else(
        midnight,
        day.cast(pa.date32()).cast(pa.large_string()),
        seconds.cast(pa.large_string()),
    )


def _object_text(values: np.ndarray, label: str, owner: str, dtype: Any) -> pa.Array:
    """Return the text of an object column, each value converted by its type.

    Values are grouped by type (a handful of groups) and each group converted
    as one typed Arrow array, so strings mixed with numbers cost no Python per
    row beyond finding each value's type.
    """
    present = ~pd.isna(values)
    # Codes, not the types themselves: numpy compares its scalar types oddly.
    type_codes, types = pd.factorize(np.frompyfunc(type, 1, 1)(values))
    type_codes[~present] = -1
    result = np.full(len(values), None, dtype=object)
    groups: dict[str, np.ndarray] = {}
    for code, value_type in enumerate(types):
        mask = type_codes == code
        if not mask.any():
            continue
        group = _group_of(value_type)
        if group is None:
            raise _refusal(
                label,
                owner,
                dtype,
                f" holding {value_type.__name__} values (for example "
                f"{_short(values[mask][0])})",
            )
        groups[group] = groups[group] | mask if group in groups else mask
    for group, mask in groups.items():
        result[mask] = _group_text(group, values[mask], label, owner, dtype).to_numpy(
            zero_copy_only=False
        )
    return pa.array(result, type=pa.large_string(), from_pandas=True)


def _group_of(value_type: type) -> str | None:
    """Which conversion a Python value type takes, or None if it has none."""
    if issubclass(value_type, str):
        return "text"
    if issubclass(value_type, (bool, np.bool_)):
        return "boolean"
    if issubclass(value_type, (numbers.Integral, np.integer)):
        return "integer"
    if issubclass(value_type, (decimal.Decimal,)):
        return "decimal"
    if issubclass(value_type, (np.float32, np.float16)):
        # Written as they are in a float32 column ("0.1"), not as the float64
        # they widen to ("0.10000000149011612").
        return "float32"
    if issubclass(value_type, (numbers.Real, np.floating)):
        return "float"
    if issubclass(value_type, (datetime.datetime, np.datetime64)):
        return "datetime"
    if issubclass(value_type, datetime.date):
        return "date"
    if issubclass(value_type, (datetime.timedelta, np.timedelta64)):
        return "duration"
    return None


def _group_text(
    group: str, values: np.ndarray, label: str, owner: str, dtype: Any
) -> pa.Array:
    try:
        if group == "text":
            return pa.array(values, type=pa.large_string())
        if group == "integer":
            try:
                array = pa.array(values, type=pa.int64())
            except OverflowError:  # Python ints beyond 64 bits
                array = pa.array(values.astype(str), type=pa.large_string())
        elif group == "float":
            array = pa.array(values.astype(np.float64), type=pa.float64())
        elif group == "float32":
            array = pa.array(values.astype(np.float32), type=pa.float32())
        elif group == "datetime":
            times = pd.to_datetime(pd.Series(values, dtype=object))
            array = pa.array(_wall_time(times))
        elif group == "duration":
            array = pa.array(pd.to_timedelta(pd.Series(values, dtype=object)))
        else:
            array = pa.array(values)
    except UnicodeEncodeError:
        raise  # a ValueError, but canonical_text names the row it is in
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as error:
        raise _refusal(
            label, owner, dtype, f" holding {group} values Arrow cannot read ({error})"
        ) from error
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    return _arrow_text(array, label, owner, dtype)


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
