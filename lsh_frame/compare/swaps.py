"""Fields whose values trade places: a given name typed in the surname column.

Two text fields are *swapped* in a table when records hold each other's pair
of values the other way round — ``("jacob", "campbell")`` in one record and
``("campbell", "jacob")`` in another — far more often than chance gives. Once
a pair of fields is found swapped, a candidate pair whose values match better
crossed than straight (see :func:`crossed_better`) is scored crossed: both
fields agree, as they do for the same person written either way.

Whether two fields are swapped is a statistic of the tables, never of the
candidate pairs, so that any part of the pairs (a Dask partition, a batch of
new records against a saved index) scores exactly as all of them:

- *crossed rows*: rows (both values present and different) whose reversed
  pair of values is some row's pair;
- *repeated rows*: rows whose pair of values another row repeats.

The fields are swapped when the crossed rows are at least ``SWAP_RATIO`` of the
repeated rows (and at least ``MIN_CROSSED_ROWS``). Measured on the development
sets: 7.3-58% where names (or two address lines) are swapped by the data's own
corruption (FEBRL 1-4, Splink's fake_1000, ``make_customers``), 0.35% for the
first names and surnames of historical_50k, which shares names between the two
columns but has no swaps, and 0-0.01% for every other pair of fields on every
set. The cut sits between: 3.6 times below the least swapped share, 5.7 times
above historical_50k's.

A field can also hold another's value where that one is missing: a record
with only one name, written in the given-name column, its surname empty
(``("egginton", None)`` for John Egginton). The field *shifts into* the other
when, among rows whose other field is missing, the share whose value is one of
the other field's (held more often by it than by this field, in rows where
both are present) exceeds the same share among rows where both are present by
at least ``SHIFT_EXCESS`` (and at least ``MIN_SHIFTED_ROWS`` rows). Measured on
the development sets: historical_50k's first names where the surname is
missing 0.435 against 0.027 (excess 0.41, 1,936 rows); every other pair of
fields of every set at most 0.063 (make_customers' surnames where the given
name is missing: 9 rows of 20,000 records, 0.058 and 42 rows of 100,000), most
below zero. A candidate pair where one record's other field is missing and its
value matches better as the other record's other field (see
:func:`shifted_better`) is read so: the other field agrees, this one is
missing.

The counts of any parts of the tables add up (:func:`merge_counts`), so the
Dask engine decides as pandas does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lsh_frame.block.fields import Field
from lsh_frame.block.keys import _field_text
from lsh_frame.text.shingle import normalize

#: Fields are swapped when their crossed rows are at least this share of their
#: repeated rows (see the module's docstring for the measured shares).
SWAP_RATIO = 0.02
#: ... and at least this many rows are crossed (one reversed record is a pair
#: of crossed rows).
MIN_CROSSED_ROWS = 2

#: A field shifts into another when the share of its values that are the
#: other's, where the other is missing, exceeds that share where both are
#: present by at least this (see the module's docstring).
SHIFT_EXCESS = 0.2
#: ... and at least this many rows hold the other field's value.
MIN_SHIFTED_ROWS = 10


@dataclass(frozen=True)
class Counts:
    """The counts of one table (or several, merged), per pair of field labels.

    ``pairs``: the distinct (first, second) values of rows where both are
    present and differ, and their rows. ``values``: per distinct value, its
    rows in each field where both fields are present (``first_both``,
    ``second_both``) and where only this field is (``first_alone``,
    ``second_alone``).
    """

    pairs: dict[tuple[str, str], pa.Table]
    values: dict[tuple[str, str], pa.Table]


@dataclass(frozen=True)
class SwapCheck:
    """The statistic of one pair of fields."""

    first: str
    second: str
    crossed: int
    repeated: int

    @property
    def swapped(self) -> bool:
        """Whether the two fields are read as swapped."""
        return (
            self.crossed >= MIN_CROSSED_ROWS
            and self.crossed >= SWAP_RATIO * self.repeated
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the counts, for ``attrs["lsh_frame"]["swaps"]``."""
        return {
            "fields": [self.first, self.second],
            "crossed_rows": self.crossed,
            "repeated_rows": self.repeated,
            "swapped": self.swapped,
        }


@dataclass(frozen=True)
class ShiftCheck:
    """Whether one field holds another's value where that one is missing."""

    field: str
    into: str
    #: Rows with ``into`` missing whose ``field`` value is an ``into`` value.
    shifted: int
    #: Rows with ``into`` missing and ``field`` present.
    alone: int
    #: Rows with both present whose ``field`` value is an ``into`` value.
    usual: int
    #: Rows with both present.
    both: int

    @property
    def excess(self) -> float:
        """The share of ``into`` values where ``into`` is missing, above usual."""
        return self.shifted / max(self.alone, 1) - self.usual / max(self.both, 1)

    @property
    def shifts(self) -> bool:
        """Whether ``field`` is read as ``into`` where ``into`` is missing."""
        return self.shifted >= MIN_SHIFTED_ROWS and self.excess >= SHIFT_EXCESS

    def to_dict(self) -> dict[str, Any]:
        """Return the counts, for ``attrs["lsh_frame"]["shifts"]``."""
        return {
            "field": self.field,
            "into": self.into,
            "shifted_rows": self.shifted,
            "rows_without_into": self.alone,
            "share": round(self.shifted / max(self.alone, 1), 4),
            "usual_share": round(self.usual / max(self.both, 1), 4),
            "shifts": self.shifts,
        }


def field_pairs(
    specs: list[Field], comparisons: dict[str, str], scorers: tuple[str, ...]
) -> list[tuple[Field, Field]]:
    """Return the pairs of fields that could be swapped.

    Both counted, compared by the same fuzzy scorer and normalised alike: a
    swapped pair is then scored crossed by that scorer.
    """
    alike = [
        spec for spec in specs if spec.weight > 0 and comparisons[spec.label] in scorers
    ]
    return [
        (first, second)
        for number, first in enumerate(alike)
        for second in alike[number + 1 :]
        if comparisons[first.label] == comparisons[second.label]
        and first.shingle_config == second.shingle_config
    ]


def field_values(table: pd.DataFrame, spec: Field, owner: str) -> pa.Array:
    """Return a field's normalised values, blanks as missing."""
    text = normalize(_field_text(table, spec, owner=owner), spec.shingle_config)
    return pc.if_else(pc.equal(text, ""), pa.scalar(None, text.type), text)


def normalised(
    table: pd.DataFrame, pairs: list[tuple[Field, Field]], owner: str
) -> dict[str, pa.Array]:
    """Return the normalised values of each field of the pairs, blanks missing."""
    specs = {spec.label: spec for pair in pairs for spec in pair}
    return {label: field_values(table, spec, owner) for label, spec in specs.items()}


def vocabularies(values: dict[str, pa.Array]) -> dict[str, pa.Array]:
    """Return the distinct values of each field (from :func:`normalised`)."""
    return {label: pc.drop_null(pc.unique(array)) for label, array in values.items()}


def sharing(
    pairs: list[tuple[Field, Field]], parts: list[dict[str, pa.Array]]
) -> list[tuple[Field, Field]]:
    """Return the pairs of fields that share a value in the tables.

    Only they can have crossed rows: their rows are counted, the others' not.
    ``parts`` are the :func:`vocabularies` of each table or partition.
    """
    labels = list(parts[0]) if parts else []
    if not labels:
        return []
    pieces = [
        (number, part[label]) for part in parts for number, label in enumerate(labels)
    ]
    encoded = pa.concat_arrays([array for _, array in pieces]).dictionary_encode()
    codes = encoded.indices.to_numpy().astype(np.int64)
    owner = np.repeat(
        np.array([number for number, _ in pieces], dtype=np.int64),
        [len(array) for _, array in pieces],
    )
    # Which fields hold each distinct value, one column a field.
    held = np.zeros((len(encoded.dictionary), len(labels)), dtype=bool)
    held[codes, owner] = True
    at = {label: number for number, label in enumerate(labels)}
    return [
        (first, second)
        for first, second in pairs
        if (held[:, at[first.label]] & held[:, at[second.label]]).any()
    ]


def count_values(
    values: dict[str, pa.Array], pairs: list[tuple[Field, Field]]
) -> Counts:
    """Count the rows of each pair of fields in one table.

    ``values`` are the table's :func:`normalised` values. Value pairs count
    rows where both values are present and differ; values count every row
    where the field is present (see :class:`Counts`).
    """
    labels = list(dict.fromkeys(spec.label for pair in pairs for spec in pair))
    if not labels:
        return Counts({}, {})
    encoded = pa.concat_arrays([values[label] for label in labels]).dictionary_encode()
    codes = pc.fill_null(encoded.indices, -1).to_numpy().astype(np.int64)
    size = np.int64(max(len(encoded.dictionary), 1))
    rows = len(values[labels[0]])
    at = {
        label: codes[number * rows : (number + 1) * rows]
        for number, label in enumerate(labels)
    }
    value_pairs: dict[tuple[str, str], pa.Table] = {}
    value_rows: dict[tuple[str, str], pa.Table] = {}
    for first, second in pairs:
        one, other = at[first.label], at[second.label]
        kept = (one >= 0) & (other >= 0) & (one != other)
        keys, numbers = np.unique(one[kept] * size + other[kept], return_counts=True)
        first_codes, second_codes = np.divmod(keys, size)
        value_pairs[(first.label, second.label)] = pa.table(
            {
                "first": encoded.dictionary.take(pa.array(first_codes)),
                "second": encoded.dictionary.take(pa.array(second_codes)),
                "rows": pa.array(numbers.astype(np.int64)),
            }
        )
        both = (one >= 0) & (other >= 0)
        counted = {
            "first_both": one[both],
            "second_both": other[both],
            "first_alone": one[(one >= 0) & (other < 0)],
            "second_alone": other[(other >= 0) & (one < 0)],
        }
        table = {
            name: np.bincount(found, minlength=int(size)).astype(np.int64)
            for name, found in counted.items()
        }
        seen = np.flatnonzero(np.sum(list(table.values()), axis=0))
        value_rows[(first.label, second.label)] = pa.table(
            {
                "value": encoded.dictionary.take(pa.array(seen)),
                **{name: pa.array(numbers[seen]) for name, numbers in table.items()},
            }
        )
    return Counts(value_pairs, value_rows)


def merge_counts(parts: list[Counts]) -> Counts:
    """Add up the counts of several tables or partitions."""
    if len(parts) == 1:
        return parts[0]
    return Counts(
        _merged([part.pairs for part in parts], ["first", "second"]),
        _merged([part.values for part in parts], ["value"]),
    )


def _merged(
    parts: list[dict[tuple[str, str], pa.Table]], keys: list[str]
) -> dict[tuple[str, str], pa.Table]:
    """Sum the count columns of tables of the same pair, grouped by ``keys``."""
    merged = {}
    for pair in dict.fromkeys(pair for part in parts for pair in part):
        stacked = pa.concat_tables([part[pair] for part in parts if pair in part])
        numbers = [name for name in stacked.column_names if name not in keys]
        summed = stacked.group_by(keys).aggregate([(name, "sum") for name in numbers])
        # By name: pyarrow versions differ in the order of keys and sums.
        merged[pair] = pa.table(
            {
                **{key: summed[key] for key in keys},
                **{name: summed[f"{name}_sum"] for name in numbers},
            }
        )
    return merged


def check(counts: Counts) -> list[SwapCheck]:
    """Return the statistic of every counted pair of fields."""
    checks = []
    for (first, second), table in counts.pairs.items():
        rows = table["rows"].to_numpy().astype(np.int64)
        crossed = 0
        if table.num_rows:
            joined = pa.concat_arrays(
                [
                    table["first"].combine_chunks().cast(pa.large_string()),
                    table["second"].combine_chunks().cast(pa.large_string()),
                ]
            ).dictionary_encode()
            codes = joined.indices.to_numpy().astype(np.int64)
            size = np.int64(len(joined.dictionary))
            one, other = codes[: table.num_rows], codes[table.num_rows :]
            reversed_found = np.isin(other * size + one, one * size + other)
            crossed = int(rows[reversed_found].sum())
        checks.append(SwapCheck(first, second, crossed, int(rows[rows > 1].sum())))
    return checks


def check_shifts(counts: Counts) -> list[ShiftCheck]:
    """Return the statistic of every counted pair of fields, both ways round."""
    checks = []
    for (first, second), table in counts.values.items():
        numbers = {
            name: table[name].to_numpy().astype(np.int64)
            for name in ("first_both", "second_both", "first_alone", "second_alone")
        }
        for field, into, mine, theirs in (
            (first, second, "first", "second"),
            (second, first, "second", "first"),
        ):
            held = numbers[f"{mine}_both"]
            theirs_more = numbers[f"{theirs}_both"] > held
            alone = numbers[f"{mine}_alone"]
            checks.append(
                ShiftCheck(
                    field,
                    into,
                    shifted=int(alone[theirs_more].sum()),
                    alone=int(alone.sum()),
                    usual=int(held[theirs_more].sum()),
                    both=int(held.sum()),
                )
            )
    return checks


def shifted_better(
    straight: npt.NDArray[np.float64],
    shifted: npt.NDArray[np.float64],
    floor: float,
) -> npt.NDArray[np.bool_]:
    """Pairs read shifted: the shifted score agrees and beats the straight one.

    ``shifted`` scores one record's value of the shifting field against the
    other record's value of the field it shifts into (NaN where the reading
    does not apply); it must reach ``floor`` (the lowest score the match model
    reads as agreeing) and beat the straight score of the shifting field (a
    missing one counts as 0).
    """
    with np.errstate(invalid="ignore"):
        return (shifted >= floor) & (shifted > np.nan_to_num(straight, nan=0.0))


def crossed_better(
    straight: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]],
    crossed: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]],
    floors: tuple[float, float],
) -> npt.NDArray[np.bool_]:
    """Pairs that score crossed: both crossed scores agree and each is higher.

    Each crossed score must reach its field's ``floor`` (the lowest score the
    match model reads as agreeing: below it two names differ, whichever way
    round) and beat the straight score of its field (a missing straight score
    counts as 0). So a pair only moves to a better reading of both fields,
    never trades one field's agreement for the other's, and two different
    names do not gain from chance likeness of the crossed values.
    """
    better = ~np.isnan(crossed[0]) & ~np.isnan(crossed[1])
    for values, was, floor in zip(crossed, straight, floors, strict=True):
        with np.errstate(invalid="ignore"):
            better &= (values >= floor) & (values > np.nan_to_num(was, nan=0.0))
    return better
