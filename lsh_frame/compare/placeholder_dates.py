"""Placeholder days: the day a source writes for a date whose day it does not know.

Evidence that turns the reading on, from every record of the tables (never
from the pairs): a day of the year that holds at least ``PLACEHOLDER_SHARE``
of a date field's dates (18 times a calendar day's share), at least
``PLACEHOLDER_ROWS`` records and at least ``PLACEHOLDER_RATIO`` times the
dates of the field's median day. A date on such a day is known only to its
year: two values whose years agree score ``YEAR_SCORE`` and the match model
reads them at a level of their own (``YEAR_CUTS``; see
:mod:`lsh_frame.compare.typed_values`).

Measured on the development sets: 1 January holds 0.397 of historical_50k's
dates of birth (14,386 against a median day of 59); the most common day of
every other benchmark table's dates holds 0.005-0.014. So the reading is on
for historical_50k and off everywhere else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from lsh_frame.compare.typed_values import _YEAR

if TYPE_CHECKING:
    from lsh_frame.compare.typed_values import DateValues

__all__ = ["DayCheck", "DayCounts", "check_days"]


#: A day of the year is a placeholder when at least this share of a field's
#: dates fall on it (18 times a calendar day's share) ...
PLACEHOLDER_SHARE = 0.05

#: ... and at least this many records hold it; a field with at least this
#: many values known only to their year is read at YEAR_CUTS. Measured: 1
#: January holds 0.397 of historical_50k's dates of birth; the most common day
#: of every other benchmark table's dates 0.005-0.014 (fake_1000's 1,000
#: records, with their duplicates).
PLACEHOLDER_ROWS = 10

#: ... and it holds at least this many times the dates of the field's median
#: day (among the days holding any): dates bunched into a few weeks (visits,
#: orders) or one person's many copies in a small table are not placeholders.
#: historical_50k's 1 January: 14,386 against a median day of 59 (244 times).
PLACEHOLDER_RATIO = 20

#: Slots of month * 100 + day (1-01 to 12-31).
_DAY_SLOTS = 1232


@dataclass(frozen=True)
class DayCounts:
    """How many of a date field's values fall on each day of the year.

    ``days[month * 100 + day]`` counts the whole dates on that day, ``years``
    the values that are a year alone. Counts of parts add up (:meth:`merge`).
    """

    days: npt.NDArray[np.int64]
    years: int

    @classmethod
    def of(cls, dates: DateValues, counts: npt.NDArray[np.int64]) -> DayCounts:
        """Count ``dates``, each value held by ``counts`` records."""
        full = dates.full
        days = np.bincount(
            (dates.month * 100 + dates.day)[full],
            weights=counts[full],
            minlength=_DAY_SLOTS,
        ).astype(np.int64)
        return cls(days, int(counts[dates.kind == _YEAR].sum()))

    @classmethod
    def merge(cls, parts: list[DayCounts]) -> DayCounts:
        """Add up the counts of tables or partitions."""
        days = np.zeros(_DAY_SLOTS, dtype=np.int64)
        for part in parts:
            days += part.days
        return cls(days, sum(part.years for part in parts))


@dataclass(frozen=True)
class DayCheck:
    """A date field's placeholder days, from every record of the tables."""

    label: str
    #: Whole dates, and values that are a year alone.
    dates: int
    years: int
    #: The placeholder days (``month * 100 + day``) and the dates on each.
    days: tuple[tuple[int, int], ...]

    @property
    def placeholders(self) -> tuple[int, ...]:
        """The placeholder days, ``month * 100 + day``."""
        return tuple(day for day, _ in self.days)

    @property
    def year_level(self) -> bool:
        """Whether the field holds enough values known only to their year."""
        held = self.years + sum(count for _, count in self.days)
        return held >= PLACEHOLDER_ROWS

    def to_dict(self) -> dict[str, object]:
        """Return the counts, for ``attrs["lsh_frame"]["dates"]``."""
        return {
            "field": self.label,
            "dates": self.dates,
            "years_alone": self.years,
            "placeholder_days": [
                f"{day // 100:02d}-{day % 100:02d}" for day, _ in self.days
            ],
            "on_placeholder_days": [count for _, count in self.days],
            "year_level": self.year_level,
        }


def check_days(label: str, counts: DayCounts) -> DayCheck:
    """Return a field's placeholder days (see PLACEHOLDER_SHARE and below it).

    Examples
    --------
    >>> import pyarrow as pa
    >>> text = ["1854-01-01"] * 30 + [f"1850-03-{day:02d}" for day in range(1, 29)]
    >>> from lsh_frame.compare.typed_values import parse_dates
    >>> dates = parse_dates(pa.array(text))
    >>> check = check_days("dob", DayCounts.of(dates, np.ones(len(text), np.int64)))
    >>> check.placeholders, check.year_level
    ((101,), True)
    """
    total = int(counts.days.sum())
    busy = counts.days[counts.days > 0]
    median = float(np.median(busy)) if busy.size else 0.0
    held = np.flatnonzero(
        (counts.days >= PLACEHOLDER_ROWS)
        & (counts.days >= PLACEHOLDER_SHARE * max(total, 1))
        & (counts.days >= PLACEHOLDER_RATIO * median)
    )
    return DayCheck(
        label,
        total,
        counts.years,
        tuple((int(day), int(counts.days[day])) for day in held),
    )
