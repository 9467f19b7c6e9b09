"""Seeded synthetic customer records with ground truth.

:func:`make_customers` builds a table of people in which some rows are corrupted
copies of others (typos, nicknames, abbreviations, missing fields, swapped digits,
...) and which also holds look-alikes that are *not* the same person (family members
at one address, very common names, shared birthdays). The ``entity_id`` column is the
ground truth; :func:`true_pairs` turns it into the pairs a perfect deduplication
would find. Demos, tests and benchmarks all draw on it.

Every random draw comes from the raw 64-bit output of ``np.random.default_rng(seed)``
(PCG64) and is turned into numbers with exact integer and IEEE arithmetic only, so a
seed gives the same table on every platform and numpy version.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from functools import partial
from typing import Any, Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lsh_frame import _wordlists
from lsh_frame._validation import check_int
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

# --------------------------------------------------------------------------------------
# Randomness
# --------------------------------------------------------------------------------------

_TWO_TO_MINUS_53: Final = 2.0**-53


class _Random:
    """Draws built from raw PCG64 output with exact arithmetic only.

    ``Generator`` methods may change their algorithms between numpy releases; the
    raw stream of a seeded PCG64 does not. Floats here come from the top 53 bits of a
    raw word, and integers and categories from comparisons and floors of those
    floats, never from ``log``/``pow``, which may round differently on another
    machine.
    """

    def __init__(self, seed: int) -> None:
        self._bits = np.random.default_rng(seed).bit_generator

    def uniform(self, size: int) -> np.ndarray:
        """Floats in [0, 1) on the grid of multiples of 2**-53."""
        raw = self._bits.random_raw(size)
        return (raw >> np.uint64(11)).astype(np.float64) * _TWO_TO_MINUS_53

    def integers(self, high: Any, size: int) -> np.ndarray:
        """Integers in [0, high); ``high`` may be an array (one bound per draw)."""
        high = np.asarray(high, dtype=np.int64)
        drawn = np.floor(self.uniform(size) * high).astype(np.int64)
        return np.minimum(drawn, np.maximum(high - 1, 0))

    def bernoulli(self, probability: float, size: int) -> np.ndarray:
        """Booleans that are True with the given probability."""
        return self.uniform(size) < probability

    def choice(self, weights: np.ndarray, size: int) -> np.ndarray:
        """Category indices drawn with the given (unnormalised) weights."""
        cumulative = np.cumsum(np.asarray(weights, dtype=np.float64))
        cumulative /= cumulative[-1]
        drawn = np.searchsorted(cumulative, self.uniform(size), side="right")
        return np.minimum(drawn, len(cumulative) - 1)

    def permutation(self, size: int) -> np.ndarray:
        """Return a uniformly random permutation of ``range(size)``."""
        return np.argsort(self._bits.random_raw(size), kind="stable")


def _zipf_weights(count: int, offset: float) -> np.ndarray:
    """Weights proportional to ``1 / (rank + offset)`` for ranks 1..count.

    Exponent 1 keeps the weights to one exact division each. The offset flattens the
    head: with 400 surnames and an offset of 10, the first one gets about 2.5%.
    """
    return 1.0 / (np.arange(1, count + 1, dtype=np.float64) + offset)


# --------------------------------------------------------------------------------------
# Vocabularies (built once at import, from the tuples in _wordlists)
# --------------------------------------------------------------------------------------

_MALE: Final = _wordlists.MALE_GIVEN_NAMES
_FEMALE: Final = _wordlists.FEMALE_GIVEN_NAMES
_INITIALS: Final = tuple(chr(code) for code in range(ord("A"), ord("Z") + 1))
_FULL_NAMES: Final = _MALE + _FEMALE
_NICKNAME_FORMS: Final = tuple(
    sorted(
        {form for forms in _wordlists.NICKNAMES.values() for form in forms}
        - set(_FULL_NAMES)
    )
)
# One vocabulary for everything a given_name cell can hold, so corruptions that
# change a name (nickname, initial) are integer look-ups.
_GIVEN_VOCABULARY: Final = _FULL_NAMES + _NICKNAME_FORMS + _INITIALS
_GIVEN_INDEX: Final = {name: index for index, name in enumerate(_GIVEN_VOCABULARY)}
_INITIAL_OFFSET: Final = len(_FULL_NAMES) + len(_NICKNAME_FORMS)
_INITIAL_OF: Final = np.array(
    [_INITIAL_OFFSET + ord(name[0]) - ord("A") for name in _GIVEN_VOCABULARY],
    dtype=np.int32,
)


def _nickname_table() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return CSR arrays (start, count, codes) of each given name's nicknames."""
    counts = np.zeros(len(_GIVEN_VOCABULARY), dtype=np.int64)
    codes: list[int] = []
    starts = np.zeros(len(_GIVEN_VOCABULARY), dtype=np.int64)
    for index, name in enumerate(_GIVEN_VOCABULARY):
        forms = _wordlists.NICKNAMES.get(name, ())
        starts[index] = len(codes)
        counts[index] = len(forms)
        codes.extend(_GIVEN_INDEX[form] for form in forms)
    return starts, counts, np.array(codes, dtype=np.int32)


_NICKNAME_START, _NICKNAME_COUNT, _NICKNAME_CODES = _nickname_table()

_SURNAMES: Final = _wordlists.SURNAMES
_STREET_NAMES: Final = _wordlists.STREET_NAMES
_STREET_TYPES_FULL: Final = tuple(full for full, _, _ in _wordlists.STREET_TYPES)
_STREET_TYPES_SHORT: Final = tuple(short for _, short, _ in _wordlists.STREET_TYPES)
_STREET_TYPE_WEIGHTS: Final = np.array(
    [weight for _, _, weight in _wordlists.STREET_TYPES], dtype=np.float64
)
_CITY_NAMES: Final = tuple(city for city, _ in _wordlists.CITIES)
_POSTCODES: Final = tuple(postcode for _, postcode in _wordlists.CITIES)
# Landline area code from the first postcode digit (NSW/ACT 02, VIC/TAS 03, QLD 07,
# SA/WA/NT 08); mobiles start 04.
_AREA_BY_FIRST_DIGIT: Final = {"0": 8, "2": 2, "3": 3, "4": 7, "5": 8, "6": 8, "7": 3}
_CITY_AREA_CODE: Final = np.array(
    [_AREA_BY_FIRST_DIGIT[postcode[0]] for postcode in _POSTCODES], dtype=np.int64
)
_EMAIL_DOMAINS: Final = tuple(domain for domain, _ in _wordlists.EMAIL_DOMAINS)
_EMAIL_DOMAIN_WEIGHTS: Final = np.array(
    [weight for _, weight in _wordlists.EMAIL_DOMAINS], dtype=np.float64
)

# --------------------------------------------------------------------------------------
# Population parameters
# --------------------------------------------------------------------------------------

# Households of 1..5 people (relative frequency of each size); members share a
# surname and an address and sometimes a landline: the family hard negatives.
_HOUSEHOLD_SIZE_WEIGHTS: Final = np.array([45.0, 30.0, 13.0, 9.0, 3.0])
_MAX_HOUSEHOLD: Final = len(_HOUSEHOLD_SIZE_WEIGHTS)
_PARTNER_OWN_SURNAME: Final = 0.2
_PARTNER_OPPOSITE_SEX: Final = 0.9
_TWIN: Final = 0.1
_DOUBLE_BARRELLED: Final = 0.02
_USES_LANDLINE: Final = 0.3
_FAMILY_EMAIL: Final = 0.1
_HAS_UNIT: Final = 0.15
_ABBREVIATED_TYPE: Final = 0.15
_MAX_HOUSE_NUMBER: Final = 300
_EMAIL_NUMBER: Final = 0.35
_EMAIL_BIRTH_YEAR: Final = 0.1

_EPOCH: Final = np.datetime64("1970-01-01", "D")
_OLDEST_BIRTH: Final = int((np.datetime64("1935-01-01", "D") - _EPOCH).astype(int))
_YOUNGEST_BIRTH: Final = int((np.datetime64("2007-12-31", "D") - _EPOCH).astype(int))
_YEAR: Final = 365

# Fraction of records whose field is blank already in the entity's first record.
_MISSING_IN_ORIGINALS: Final = {
    "email": 0.08,
    "phone": 0.05,
    "date_of_birth": 0.02,
    "postcode": 0.02,
    "street_address": 0.01,
    "city": 0.005,
}

# Duplicates per duplicated entity: 1, 2 or 3 with these weights (geometric-like).
_DUPLICATE_COUNT_WEIGHTS: Final = np.array([60.0, 28.0, 12.0])

# --------------------------------------------------------------------------------------
# Corruptions
# --------------------------------------------------------------------------------------

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

# --------------------------------------------------------------------------------------
# Records as integer codes
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Records:
    """People as integer codes into the vocabularies; one array per attribute.

    Working in codes keeps generation and most corruptions in plain numpy; strings
    are built once, in :func:`_format`.
    """

    given: np.ndarray
    surname: np.ndarray
    second_surname: np.ndarray  # -1 when the surname is not double-barrelled
    unit: np.ndarray  # 0 when there is no unit number
    house_number: np.ndarray
    street: np.ndarray
    street_type: np.ndarray
    abbreviated: np.ndarray
    city: np.ndarray
    phone: np.ndarray  # ten-digit number without its leading 0
    birth_day: np.ndarray  # days since 1970-01-01

    def take(self, rows: np.ndarray) -> _Records:
        """Return the records at ``rows``."""
        return _Records(
            **{field.name: getattr(self, field.name)[rows] for field in fields(self)}
        )


def _households(size: int, random: _Random) -> tuple[np.ndarray, np.ndarray]:
    """Group ``size`` people into households: (household id, position in it)."""
    if size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    sizes = 1 + random.choice(_HOUSEHOLD_SIZE_WEIGHTS, size)
    ends = np.cumsum(sizes)
    count = int(np.searchsorted(ends, size)) + 1
    household = np.repeat(np.arange(count), sizes[:count])[:size]
    starts = ends[:count] - sizes[:count]
    return household, np.arange(size) - starts[household]


def _draw_given(female: np.ndarray, random: _Random) -> np.ndarray:
    """Draw given-name codes, Zipf-like within each sex."""
    male = random.choice(_zipf_weights(len(_MALE), 8.0), female.size)
    woman = len(_MALE) + random.choice(_zipf_weights(len(_FEMALE), 8.0), female.size)
    return np.where(female, woman, male).astype(np.int32)


def _draw_addresses(size: int, random: _Random) -> dict[str, np.ndarray]:
    """Draw street addresses and towns for ``size`` households."""
    spread = random.uniform(size)
    has_unit = random.bernoulli(_HAS_UNIT, size)
    return {
        "unit": np.where(has_unit, 1 + random.integers(24, size), 0).astype(np.int32),
        # Squaring skews house numbers low, as on real streets.
        "house_number": (1 + np.floor(spread * spread * _MAX_HOUSE_NUMBER)).astype(
            np.int32
        ),
        "street": random.integers(len(_STREET_NAMES), size).astype(np.int32),
        "street_type": random.choice(_STREET_TYPE_WEIGHTS, size).astype(np.int32),
        "abbreviated": random.bernoulli(_ABBREVIATED_TYPE, size),
        "city": random.choice(_zipf_weights(len(_CITY_NAMES), 5.0), size).astype(
            np.int32
        ),
    }


def _population(size: int, random: _Random) -> tuple[_Records, np.ndarray]:
    """Draw ``size`` distinct people living in households.

    Returns the records and, for each person, the row of their household's first
    member (used to share a family e-mail address).
    """
    household, position = _households(size, random)
    households = int(household.max()) + 1 if size else 0
    head = np.flatnonzero(position == 0)[household]
    partner = position == 1

    female = random.bernoulli(0.5, size)
    opposite = random.bernoulli(_PARTNER_OPPOSITE_SEX, size)
    female = np.where(partner & opposite, ~female[head], female)

    # Different people in one household get different given names.
    given = _draw_given(female, random)
    for _ in range(8):
        clash = np.zeros(size, dtype=bool)
        for gap in range(1, _MAX_HOUSEHOLD):
            later = np.flatnonzero(position >= gap)
            clash[later[given[later] == given[later - gap]]] = True
        if not clash.any():
            break
        rows = np.flatnonzero(clash)
        given[rows] = _draw_given(female[rows], random)

    surname_weights = _zipf_weights(len(_SURNAMES), 10.0)
    surname = random.choice(surname_weights, households)[household]
    second = np.where(
        random.bernoulli(_DOUBLE_BARRELLED, households),
        random.choice(surname_weights, households),
        -1,
    )[household]
    own_surname = partner & random.bernoulli(_PARTNER_OWN_SURNAME, size)
    surname = np.where(own_surname, random.choice(surname_weights, size), surname)
    second = np.where(own_surname, -1, second)

    # Partners are of an age with the first member; later members are a generation
    # younger (or, when that would be too young, older), so family members share a
    # birthday only as the occasional twins.
    birth = (
        _OLDEST_BIRTH
        + random.integers(_YOUNGEST_BIRTH - _OLDEST_BIRTH + 1, households)[household]
    )
    partner_birth = birth - 6 * _YEAR + random.integers(12 * _YEAR, size)
    child_birth = birth + 18 * _YEAR + random.integers(22 * _YEAR, size)
    child_birth = np.where(
        child_birth > _YOUNGEST_BIRTH, child_birth - 50 * _YEAR, child_birth
    )
    birth = np.where(
        partner, partner_birth, np.where(position >= 2, child_birth, birth)
    )
    birth = np.clip(birth, _OLDEST_BIRTH, _YOUNGEST_BIRTH)
    # A twin shares the birthday of the child listed just before them.
    twin = (position >= 3) & random.bernoulli(_TWIN, size)
    for member in range(3, _MAX_HOUSEHOLD):
        rows = np.flatnonzero(twin & (position == member))
        birth[rows] = birth[rows - 1]

    address = _draw_addresses(households, random)
    landline = _CITY_AREA_CODE[address["city"]] * 10**8 + random.integers(
        10**8, households
    )
    mobile = 4 * 10**8 + random.integers(10**8, size)
    phone = np.where(
        random.bernoulli(_USES_LANDLINE, size), landline[household], mobile
    )

    records = _Records(
        given=given,
        surname=surname.astype(np.int32),
        second_surname=second.astype(np.int32),
        phone=phone.astype(np.int64),
        birth_day=birth.astype(np.int64),
        **{key: value[household] for key, value in address.items()},
    )
    return records, head


def _format(records: _Records) -> dict[str, pa.Array]:
    """Build the text columns (all but e-mail) from coded records."""
    surnames = pa.array(_SURNAMES)
    surname = surnames.take(records.surname)
    double = records.second_surname >= 0
    if double.any():
        second = surnames.take(np.maximum(records.second_surname, 0))
        surname = pc.if_else(
            pa.array(double), pc.binary_join_element_wise(surname, second, "-"), surname
        )

    number = pc.cast(pa.array(records.house_number), pa.string())
    with_unit = pc.binary_join_element_wise(
        pc.cast(pa.array(records.unit), pa.string()), number, "/"
    )
    number = pc.if_else(pa.array(records.unit > 0), with_unit, number)
    street_type = pc.if_else(
        pa.array(records.abbreviated),
        pa.array(_STREET_TYPES_SHORT).take(records.street_type),
        pa.array(_STREET_TYPES_FULL).take(records.street_type),
    )
    street_address = pc.binary_join_element_wise(
        number, pa.array(_STREET_NAMES).take(records.street), street_type, " "
    )

    phone_digits = pc.cast(pa.array(records.phone), pa.string())
    phone = pc.binary_join_element_wise("0", pc.utf8_lpad(phone_digits, 9, "0"), "")
    birth = pa.array(records.birth_day.astype(np.int32), type=pa.date32())
    return {
        "given_name": pa.array(_GIVEN_VOCABULARY).take(records.given),
        "surname": surname,
        "street_address": street_address,
        "city": pa.array(_CITY_NAMES).take(records.city),
        "postcode": pa.array(_POSTCODES).take(records.city),
        "phone": phone,
        "date_of_birth": pc.cast(birth, pa.string()),
    }


def _letters(words: tuple[str, ...]) -> pa.Array:
    """Lower-case each word and keep only the letters a-z (for e-mail addresses)."""
    return pc.replace_substring_regex(pc.utf8_lower(pa.array(words)), "[^a-z]", "")


# Local-part shapes: (weight, use the initial, surname first, separator).
_EMAIL_SHAPES: Final = (
    (30.0, False, False, "."),  # john.smith
    (15.0, False, False, ""),  # johnsmith
    (10.0, True, False, "."),  # j.smith
    (8.0, True, False, ""),  # jsmith
    (8.0, False, False, "_"),  # john_smith
    (6.0, False, True, "."),  # smith.john
)


def _emails(
    people: _Records, text: dict[str, pa.Array], head: np.ndarray, random: _Random
) -> pa.Array:
    """Build one distinct e-mail address per person from their name and birth year.

    Some family members share the address of their household's first member.
    """
    size = len(head)
    first = _letters(_GIVEN_VOCABULARY).take(people.given)
    surnames = _letters(_SURNAMES)
    last = surnames.take(people.surname)
    double = people.second_surname >= 0
    if double.any():
        second = surnames.take(np.maximum(people.second_surname, 0))
        last = pc.if_else(
            pa.array(double), pc.binary_join_element_wise(last, second, ""), last
        )
    shape = random.choice(np.array([weight for weight, *_ in _EMAIL_SHAPES]), size)
    use_initial = np.array([initial for _, initial, _, _ in _EMAIL_SHAPES])[shape]
    surname_first = np.array([flip for _, _, flip, _ in _EMAIL_SHAPES])[shape]
    separator = pa.array([sep for *_, sep in _EMAIL_SHAPES]).take(shape)
    lead = pc.if_else(
        pa.array(use_initial), pc.utf8_slice_codeunits(first, 0, 1), first
    )
    flip = pa.array(surname_first)
    suffix_kind = random.choice(
        np.array(
            [1.0 - _EMAIL_NUMBER - _EMAIL_BIRTH_YEAR, _EMAIL_NUMBER, _EMAIL_BIRTH_YEAR]
        ),
        size,
    )
    number = pc.cast(pa.array(1 + random.integers(99, size)), pa.string())
    year = pc.utf8_slice_codeunits(text["date_of_birth"], 0, 4)
    suffix = pc.if_else(
        pa.array(suffix_kind == 1),
        number,
        pc.if_else(pa.array(suffix_kind == 2), year, ""),
    )
    local = pc.binary_join_element_wise(
        pc.if_else(flip, last, lead),
        separator,
        pc.if_else(flip, first, last),
        suffix,
        "",
    )
    domain = pa.array(_EMAIL_DOMAINS).take(random.choice(_EMAIL_DOMAIN_WEIGHTS, size))

    # Common names collide (john.smith@gmail.com); real addresses are unique, so
    # later holders of a taken address get digits appended until none collide.
    for _ in range(16):
        email = pc.binary_join_element_wise(local, domain, "@")
        codes = pc.dictionary_encode(email).indices.to_numpy(zero_copy_only=False)
        taken = np.ones(size, dtype=bool)
        taken[np.unique(codes, return_index=True)[1]] = False
        if not taken.any():
            break
        rows = np.flatnonzero(taken)
        digits = pc.cast(pa.array(random.integers(1000, rows.size)), pa.string())
        local = pc.replace_with_mask(
            local,
            pa.array(taken),
            pc.binary_join_element_wise(local.take(rows), digits, ""),
        )
    family = (head != np.arange(size)) & random.bernoulli(_FAMILY_EMAIL, size)
    return email.take(np.where(family, head, np.arange(size)))


# --------------------------------------------------------------------------------------
# Duplicates and their corruption
# --------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------
# Public functions
# --------------------------------------------------------------------------------------


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
