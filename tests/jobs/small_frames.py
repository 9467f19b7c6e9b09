"""Hand-made small frames (5-50 rows), each with the truth: who is who.

Too few pairs to learn a match model from, so ``dedupe()`` falls back to a
cut on ``score``; these are the frames where columns many people share (a
tier, a balance, a city, a postcode, a birth date) could join two people.
Used by ``test_small_frames.py`` and ``benchmarks/user_week.py``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

import lsh_frame as lf


@dataclass(frozen=True)
class Case:
    """A small frame and the person of each row."""

    name: str
    build: Callable[[], tuple[pd.DataFrame, list[int]]]

    def frame(self) -> pd.DataFrame:
        """Return the records (no truth column)."""
        return self.build()[0]

    def people(self) -> list[int]:
        """Return the person of each row."""
        return self.build()[1]

    def wrong_merges(self, ids: pd.Series) -> list[tuple[int, int]]:
        """Return the row pairs of two different people given one entity."""
        people = self.people()
        ids = ids.to_numpy()
        return [
            (i, j)
            for i, j in itertools.combinations(range(len(people)), 2)
            if ids[i] == ids[j] and people[i] != people[j]
        ]

    def missed(self, ids: pd.Series) -> list[tuple[int, int]]:
        """Return the row pairs of one person given two entities."""
        people = self.people()
        ids = ids.to_numpy()
        return [
            (i, j)
            for i, j in itertools.combinations(range(len(people)), 2)
            if ids[i] != ids[j] and people[i] == people[j]
        ]


def _tier_and_balance() -> tuple[pd.DataFrame, list[int]]:
    # Mary Jones shares the city, the tier and the balance of the Browns.
    rows = [
        ("Mary Jones", "Leeds", "gold", 1250.0, 0),
        ("Bob Brown", "Leeds", "gold", 1250.0, 1),
        ("Bob Browne", "Leeds", "gold", 1250.0, 1),
        ("John Smith", "Bath", "silver", 300.0, 2),
        ("Jon Smith", "Bath", "silver", 300.0, 2),
        ("Alice Wong", "Hull", "bronze", 80.0, 3),
        ("Peter O'Neil", "Leeds", "gold", 1200.0, 4),
        ("Sara Lee", "York", "silver", 700.0, 5),
        ("Tom Hardy", "Leeds", "bronze", 90.0, 6),
        ("Ann Lee", "Hull", "gold", 1180.0, 7),
    ]
    frame = pd.DataFrame(
        [row[:4] for row in rows], columns=["name", "city", "tier", "balance"]
    )
    return frame, [row[4] for row in rows]


def _one_birth_date() -> tuple[pd.DataFrame, list[int]]:
    # Michael Williams and Robert Watts share a birth date, nothing else.
    rows = [
        ("Michael", "Williams", "12 High St", "1971-06-24", 0),
        ("Robert", "Watts", "4 Cook Cres", "1971-06-24", 1),
        ("Michael", "Wiliams", "12 High St", "1971-06-24", 0),
        ("Susan", "Clarke", "9 Ash Ave", "1985-02-11", 2),
        ("Sue", "Clarke", "9 Ash Ave", "1985-02-11", 2),
        ("David", "Nguyen", "1 Elm Rd", "1990-12-01", 3),
        ("Emma", "Taylor", "77 Bay Rd", "1969-03-30", 4),
    ]
    frame = pd.DataFrame(
        [row[:4] for row in rows],
        columns=["given_name", "surname", "address", "date_of_birth"],
    )
    return frame, [row[4] for row in rows]


def _a_decade_apart() -> tuple[pd.DataFrame, list[int]]:
    # Father and son: same name and street, births 28 years apart.
    rows = [
        ("John Carter", "5 Mill Lane", "1952-04-17", 0),
        ("John Carter", "5 Mill Lane", "1980-04-17", 1),
        ("Jane Carter", "5 Mill Lane", "1955-08-02", 2),
        ("Ravi Patel", "3 Rose St", "1977-10-10", 3),
        ("Ravi Patel", "3 Rose Street", "1977-10-10", 3),
        ("Lucy Gray", "8 Hill Rd", "1988-01-19", 4),
    ]
    frame = pd.DataFrame(
        [row[:3] for row in rows], columns=["name", "street", "date_of_birth"]
    )
    return frame, [row[3] for row in rows]


def _gender_state_postcode() -> tuple[pd.DataFrame, list[int]]:
    rows = [
        ("Karen", "Lewis", "F", "QLD", "4870", 0),
        ("Helen", "Morris", "F", "QLD", "4870", 1),
        ("Karen", "Lewis", "F", "QLD", "4870", 0),
        ("Mark", "Evans", "M", "NSW", "2606", 2),
        ("Paul", "Evans", "M", "NSW", "2606", 3),
        ("Grace", "Kim", "F", "VIC", "3000", 4),
    ]
    frame = pd.DataFrame(
        [row[:5] for row in rows],
        columns=["given_name", "surname", "gender", "state", "postcode"],
    )
    return frame, [row[5] for row in rows]


def _products() -> tuple[pd.DataFrame, list[int]]:
    rows = [
        ("Apple iPhone 13 128GB Blue", "phones", 799.0, 0),
        ("Apple iPhone 13, 128 GB, blue", "phones", 799.0, 0),
        ("Samsung Galaxy S21 128GB Grey", "phones", 799.0, 1),
        ("Google Pixel 6 128GB Black", "phones", 599.0, 2),
        ("Sony WH-1000XM4 Headphones", "audio", 349.0, 3),
        ("Bose QuietComfort 45 Headphones", "audio", 329.0, 4),
    ]
    frame = pd.DataFrame(
        [row[:3] for row in rows], columns=["title", "category", "price"]
    )
    return frame, [row[3] for row in rows]


def _customers() -> tuple[pd.DataFrame, list[int]]:
    customers = lf.datasets.make_customers(40, seed=7)
    people = customers.pop("entity_id").tolist()
    return customers, people


CASES = [
    Case("tier and balance", _tier_and_balance),
    Case("one birth date", _one_birth_date),
    Case("a generation apart", _a_decade_apart),
    Case("gender, state, postcode", _gender_state_postcode),
    Case("products at one price", _products),
    Case("40 customers", _customers),
]
