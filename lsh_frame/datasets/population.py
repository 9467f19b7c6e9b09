"""The people behind the synthetic records: households, names, addresses, e-mails.

Everything is drawn from :class:`_Random`, a seeded generator whose draws are
the same on every platform, so ``make_customers(n, seed=s)`` is reproducible.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from lsh_frame.datasets import wordlists as _wordlists

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
