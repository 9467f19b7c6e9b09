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

from lsh_frame.blocking import Field, _field_text
from lsh_frame.shingle import normalize

#: Fields are swapped when their crossed rows are at least this share of their
#: repeated rows (see the module's docstring for the measured shares).
SWAP_RATIO = 0.02
#: ... and at least this many rows are crossed (one reversed record is a pair
#: of crossed rows).
MIN_CROSSED_ROWS = 2

#: Per pair of field labels: the distinct (first, second) values and their rows.
Counts = dict[tuple[str, str], pa.Table]


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
    """Rows per distinct pair of values of each pair of fields, in one table.

    ``values`` are the table's :func:`normalised` values. Rows where either
    value is missing, or both are equal, are not counted.
    """
    labels = list(dict.fromkeys(spec.label for pair in pairs for spec in pair))
    if not labels:
        return {}
    encoded = pa.concat_arrays([values[label] for label in labels]).dictionary_encode()
    codes = pc.fill_null(encoded.indices, -1).to_numpy().astype(np.int64)
    size = np.int64(max(len(encoded.dictionary), 1))
    rows = len(values[labels[0]])
    at = {
        label: codes[number * rows : (number + 1) * rows]
        for number, label in enumerate(labels)
    }
    counts: Counts = {}
    for first, second in pairs:
        one, other = at[first.label], at[second.label]
        kept = (one >= 0) & (other >= 0) & (one != other)
        keys, numbers = np.unique(one[kept] * size + other[kept], return_counts=True)
        first_codes, second_codes = np.divmod(keys, size)
        counts[(first.label, second.label)] = pa.table(
            {
                "first": encoded.dictionary.take(pa.array(first_codes)),
                "second": encoded.dictionary.take(pa.array(second_codes)),
                "rows": pa.array(numbers.astype(np.int64)),
            }
        )
    return counts


def merge_counts(parts: list[Counts]) -> Counts:
    """Add up the counts of several tables or partitions."""
    if len(parts) == 1:
        return parts[0]
    merged: Counts = {}
    for key in dict.fromkeys(key for part in parts for key in part):
        stacked = pa.concat_tables([part[key] for part in parts if key in part])
        merged[key] = (
            stacked.group_by(["first", "second"])
            .aggregate([("rows", "sum")])
            .rename_columns(["first", "second", "rows"])
        )
    return merged


def check(counts: Counts) -> list[SwapCheck]:
    """Return the statistic of every counted pair of fields."""
    checks = []
    for (first, second), table in counts.items():
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
