"""``make_customers`` and ``true_pairs``: synthetic people, and which are one.

The people come from :mod:`lsh_frame.datasets.population`, their duplicates'
corruptions from :mod:`lsh_frame.datasets.corruption`.
"""

from __future__ import annotations

import numbers
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lsh_frame._validation import check_int
from lsh_frame.datasets.corruption import (
    _choose_corruptions,
    _corrupt_codes,
    _corrupt_text,
    _duplicate_sources,
    _present,
)
from lsh_frame.datasets.population import _emails, _format, _population, _Random
from lsh_frame.errors import ConfigError, ConfigTypeError

__all__ = ["make_customers", "true_pairs"]


COLUMNS: Final = (
    "entity_id",
    "given_name",
    "surname",
    "street_address",
    "city",
    "postcode",
    "phone",
    "date_of_birth",
    "email",
)

TEXT_COLUMNS: Final = COLUMNS[1:]


# Fraction of records whose field is blank already in the entity's first record.
_MISSING_IN_ORIGINALS: Final = {
    "email": 0.08,
    "phone": 0.05,
    "date_of_birth": 0.02,
    "postcode": 0.02,
    "street_address": 0.01,
    "city": 0.005,
}


def _check_rate(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ConfigTypeError(
            "The 'duplicate_rate' parameter of make_customers must be a number in "
            f"[0, 1). Got {value!r} of type {type(value).__name__} instead."
        )
    rate = float(value)
    if not 0.0 <= rate < 1.0:
        raise ConfigError(
            "The 'duplicate_rate' parameter of make_customers must be in [0, 1). "
            f"Got {value!r} instead."
        )
    return rate


def _string_series(values: pa.Array, index: pd.Index) -> pd.Series:
    """Wrap an Arrow string array as a Series of pandas' default string dtype."""
    if isinstance(pd.Series([], dtype="str").dtype, pd.StringDtype):
        return pd.Series(values, index=index, dtype="str")
    # pandas 2 without the string option: object dtype with None for missing.
    return pd.Series(values.to_numpy(zero_copy_only=False), index=index, dtype="str")


def _first_appearance(entity: np.ndarray) -> np.ndarray:
    """Relabel entities 0, 1, 2, ... in the order they first appear."""
    _, first = np.unique(entity, return_index=True)
    label = np.empty(first.size, dtype=np.int64)
    label[np.argsort(first, kind="stable")] = np.arange(first.size)
    return label[entity]


def make_customers(
    n: int, /, *, seed: int = 1, duplicate_rate: float = 0.2
) -> pd.DataFrame:
    """Make synthetic customer records with known duplicates.

    People are drawn from built-in word lists with realistic frequencies (common
    names are common), live in households (family members share a surname, an
    address and sometimes a phone number, but not a given name or, twins aside, a
    birthday), and about ``duplicate_rate`` of the rows are corrupted copies of
    another row's person. ``entity_id`` says which rows are the same person.

    Parameters
    ----------
    n : int
        Number of rows, ``>= 0``.
    seed : int, default 1
        Seed of the random generator, ``>= 0``. The same seed gives the same frame
        in any process, on any platform.
    duplicate_rate : float, default 0.2
        Fraction of rows that are extra records of a person who already has a row,
        in ``[0, 1)``. A duplicated person has 1-3 extra records (more only at rates
        above about 0.6, where that is not enough).

    Returns
    -------
    pandas.DataFrame
        Exactly ``n`` rows in random order, indexed by a RangeIndex named
        ``record_id``, with columns ``entity_id`` (int64, the ground truth),
        ``given_name``, ``surname``, ``street_address``, ``city``, ``postcode``,
        ``phone``, ``date_of_birth`` (``YYYY-MM-DD``) and ``email``, the text
        columns of pandas' default string dtype. Missing fields are missing values,
        never empty strings. Entities are numbered in order of first appearance.

    Raises
    ------
    ConfigTypeError
        If ``n`` or ``seed`` is not an int, or ``duplicate_rate`` is not a number.
    ConfigError
        If a value is out of range.

    See Also
    --------
    true_pairs : The pairs of rows that share an ``entity_id``.

    Notes
    -----
    Matching is made hard on purpose: given names and surnames follow a Zipf-like
    frequency (Smith and John are common), about half the people share a household
    with others (same surname, address and town, sometimes the same landline or
    e-mail address, different given name and birthday; twins share a birthday),
    and birthdays recur across unrelated people.

    Each duplicate carries one to three corruptions, each drawn from:

    - a keyboard typo in the given name, surname, street address, city or e-mail:
      a QWERTY-neighbour substitution, a deleted, inserted or transposed letter;
    - a nickname (William -> Bill) or, for names without one, an initial;
    - the given name cut to an initial ("J");
    - given name and surname swapped;
    - the street type abbreviated or spelled out (Street <-> St);
    - a field blanked (e-mail, phone, date of birth, address, postcode, city or
      given name);
    - a changed or transposed phone digit (the 0X prefix is kept);
    - day and month of the date of birth swapped when the day is 12 or less, else
      the date moved by one day;
    - a changed or transposed postcode digit;
    - a new address (the person moved).

    Examples
    --------
    >>> from lsh_frame.datasets import make_customers
    >>> customers = make_customers(1_000, seed=7)
    >>> customers.shape
    (1000, 9)
    >>> customers.index.name
    'record_id'
    >>> int(customers["entity_id"].duplicated().sum())
    200
    """
    n = check_int(n, "n", "make_customers", minimum=0)
    seed = check_int(seed, "seed", "make_customers", minimum=0)
    rate = _check_rate(duplicate_rate)
    random = _Random(seed)

    # Keep at least one original row so every duplicate has someone to copy.
    duplicates = min(int(n * rate + 0.5), max(n - 1, 0))
    people = n - duplicates
    source = _duplicate_sources(people, duplicates, random)
    originals, head = _population(people, random)
    original_text = _format(originals)
    original_text["email"] = _emails(originals, original_text, head, random)
    for column, rate_missing in _MISSING_IN_ORIGINALS.items():
        blank = pa.array(random.bernoulli(rate_missing, people))
        original_text[column] = pc.if_else(
            blank, pa.scalar(None, pa.string()), original_text[column]
        )

    kinds = _choose_corruptions(duplicates, random)
    copies = _corrupt_codes(originals.take(source), kinds, random)
    copy_text = _format(copies)
    # Copies keep the original's e-mail and blanks unless a corruption changes them.
    copy_text["email"] = original_text["email"].take(source)
    for column in _MISSING_IN_ORIGINALS:
        present = pa.array(_present(original_text[column])[source])
        copy_text[column] = pc.if_else(
            present, copy_text[column], pa.scalar(None, pa.string())
        )
    copy_text = _corrupt_text(copy_text, kinds, random)

    order = random.permutation(n)
    index = pd.RangeIndex(n, name="record_id")
    entity = _first_appearance(np.concatenate([np.arange(people), source])[order])
    columns: dict[str, pd.Series] = {
        "entity_id": pd.Series(entity.astype(np.int64), index=index)
    }
    for column in TEXT_COLUMNS:
        values = pa.concat_arrays([original_text[column], copy_text[column]])
        columns[column] = _string_series(values.take(order), index)
    return pd.DataFrame(columns, index=index)


def true_pairs(entity_ids: pd.Series | np.ndarray, /) -> pd.DataFrame:
    """List every pair of records that are the same entity.

    Parameters
    ----------
    entity_ids : pandas.Series or array-like
        The ground-truth entity of each record, such as the ``entity_id`` column of
        :func:`make_customers`. A Series names records by its index labels, which
        must be unique; an array by its positions. Missing ids pair with nothing.

    Returns
    -------
    pandas.DataFrame
        Columns ``left`` and ``right`` holding record labels, one row per unordered
        pair, ``left < right`` in label order, sorted by (``left``, ``right``).

    Raises
    ------
    ConfigTypeError
        If ``entity_ids`` is a DataFrame.
    ConfigError
        If ``entity_ids`` is not one-dimensional or its index has duplicate labels.

    See Also
    --------
    make_customers : Synthetic records with an ``entity_id`` column.

    Examples
    --------
    >>> import pandas as pd
    >>> from lsh_frame.datasets import true_pairs
    >>> ids = pd.Series([7, 3, 7, 7, 3], index=[10, 11, 12, 13, 14])
    >>> true_pairs(ids)
       left  right
    0    10     12
    1    10     13
    2    11     14
    3    12     13
    """
    if isinstance(entity_ids, pd.DataFrame):
        raise ConfigTypeError(
            "The 'entity_ids' parameter of true_pairs must be a Series or a 1-D "
            "array. Got a DataFrame instead. Pass one column, e.g. "
            "true_pairs(frame['entity_id'])."
        )
    if isinstance(entity_ids, pd.Series):
        labels = entity_ids.index
        codes, _ = pd.factorize(entity_ids)
    else:
        values = np.asarray(entity_ids)
        if values.ndim != 1:
            raise ConfigError(
                "The 'entity_ids' parameter of true_pairs must be one-dimensional. "
                f"Got an array of shape {values.shape} instead."
            )
        labels = pd.RangeIndex(values.size)
        codes, _ = pd.factorize(values)
    if not labels.is_unique:
        repeated = labels[labels.duplicated()].tolist()[0]
        raise ConfigError(
            "The index of the 'entity_ids' parameter of true_pairs must have unique "
            f"labels. Got label {repeated!r} more than once. Call reset_index() "
            "first."
        )

    rank = np.empty(labels.size, dtype=np.int64)
    rank[labels.argsort()] = np.arange(labels.size)
    known = np.flatnonzero(codes >= 0)
    # Sort by entity, then label: each run is one entity, already in label order.
    ordered = known[np.lexsort((rank[known], codes[known]))]
    entity = codes[ordered]
    run_start = np.ones(entity.size, dtype=bool)
    run_start[1:] = entity[1:] != entity[:-1]
    run_end = np.append(np.flatnonzero(run_start)[1:], entity.size)
    # How many later members of its run each record pairs with.
    later = run_end[np.cumsum(run_start) - 1] - np.arange(entity.size) - 1
    left = np.repeat(np.arange(entity.size), later)
    first_pair = np.cumsum(later) - later
    right = left + np.arange(left.size) - np.repeat(first_pair, later) + 1
    left, right = ordered[left], ordered[right]
    pair_order = np.lexsort((rank[right], rank[left]))
    left, right = left[pair_order], right[pair_order]
    return pd.DataFrame({"left": labels.take(left), "right": labels.take(right)})
