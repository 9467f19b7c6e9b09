"""Which comparison a field gets when none is given: read off its values.

A column of numbers, or of text that parses as numbers or amounts for at least
``AUTO_PARSED_SHARE`` of its values, is compared as numbers; dates likewise.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lsh_frame.compare.typed_values import (
    _CURRENCY,
    _as_string,
    _bools,
    column_numbers,
    is_temporal,
    parse_dates,
    parse_numbers,
)

__all__ = ["TYPED_COMPARISONS", "auto_typed_comparison"]


#: The comparisons of this module.
TYPED_COMPARISONS = ("number", "date")


#: ``compare="auto"`` picks ``"date"`` when at least this share of the
#: non-blank sampled values are full dates, ``"number"`` when at least this
#: share parse as numbers (and enough of those are marked, below).
AUTO_PARSED_SHARE = 0.9

#: Share of the parsed numbers that must carry a decimal separator or a
#: currency for ``"number"``: bare integers (ids, postcodes, phone numbers,
#: years, street numbers) are compared as text, where typos show.
AUTO_MARKED_SHARE = 0.3


def auto_typed_comparison(
    columns: list[pd.Series] | None, text: pa.Array
) -> str | None:
    """Return ``"number"`` or ``"date"`` when the sampled values call for it.

    ``columns`` are the sampled column of each table (None for a field of
    several columns), ``text`` the sampled raw text of every table, trimmed.
    The rules, from the values only (never from the column's name):

    - every table's column holds dates or date-times → ``"date"``;
    - every table's column holds floats or decimals, not all whole numbers →
      ``"number"`` (whole floats are integers with gaps, as ``read_csv`` gives
      them: ids, postcodes, years);
    - otherwise (text, integers, booleans, mixed dtypes), on the text of the
      non-blank values: ``"date"`` when at least 90% are full dates in an
      accepted format (a year alone or a misspelt date does not count, and
      bare integers count only as eight-digit ``yyyymmdd``); ``"number"`` when
      at least 90% parse as numbers and at least 30% of those carry a decimal
      separator or a currency, so bare integers stay text;
    - else None: a text comparison.
    """
    if columns:
        kinds = {_typed_kind(values) for values in columns}
        if len(kinds) == 1 and None not in kinds:
            return kinds.pop()
    present = pc.fill_null(pc.not_equal(text, ""), False)
    # Each distinct value is read once and counts as often as it occurs.
    counted = pc.value_counts(pc.filter(_as_string(text), present))
    values = pc.utf8_normalize(counted.field("values"), "NFKC")
    counts = np.asarray(counted.field("counts").to_numpy(), dtype=np.int64)
    total = int(counts.sum())
    if total == 0:
        return None

    def share(mask: npt.NDArray[np.bool_]) -> float:
        return float(counts[mask].sum()) / total

    # Cheap necessary conditions first, so columns of names, addresses or
    # ids cost a regular expression or two, not a parse: a date or a number
    # holds a digit; a bare integer is a full date only when eight digits wide;
    # a marked number holds a separator or a currency.
    if share(_bools(pc.match_substring_regex(values, r"\d"))) < AUTO_PARSED_SHARE:
        return None
    bare = _bools(pc.match_substring_regex(values, r"^\d+$"))
    eight = np.asarray(pc.utf8_length(values).to_numpy(zero_copy_only=False)) == 8
    if (
        share(bare & ~eight) <= 1 - AUTO_PARSED_SHARE + 1e-9
        and share(parse_dates(values).full) >= AUTO_PARSED_SHARE
    ):
        return "date"
    maybe_marked = _bools(pc.match_substring_regex(values, rf"[.,]|{_CURRENCY}"))
    if share(maybe_marked) >= AUTO_PARSED_SHARE * AUTO_MARKED_SHARE - 1e-9:
        numbers = parse_numbers(values)
        parsed = share(numbers.present)
        if (
            parsed >= AUTO_PARSED_SHARE
            and share(numbers.marked) >= AUTO_MARKED_SHARE * parsed
        ):
            return "number"
    return None


def _typed_kind(values: pd.Series) -> str | None:
    dtype = values.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return _typed_kind(pd.Series(dtype.categories))
    if is_temporal(values):
        return "date"
    numbers = column_numbers(values)
    if numbers is None or pd.api.types.is_integer_dtype(dtype):
        return None
    present = numbers[~np.isnan(numbers)]
    if present.size and (present != np.floor(present)).any():
        return "number"
    return None
