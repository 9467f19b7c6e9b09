"""Compound keys: two weak columns keyed together.

Columns too common to key alone (a birth year, a town) can together be as
selective as an identifier. A compound key joins the values of two columns
that are not keys of their own; it is kept when its buckets stay small
(at most ``COMPOUND_PAIRS_PER_RECORD`` pairs per record). Turned on by the
data: only columns whose own buckets are too large are combined, at most
``COMPOUND_MAX_COLUMNS`` of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable
from typing import TYPE_CHECKING

from lsh_frame.block.fields import BlockingKey
from lsh_frame.block.keys import compound_field

if TYPE_CHECKING:
    from lsh_frame.block.defaults import KeySource


#: Plain columns without an exact key of their own get one on two of them
#: together (a surname and a date of birth, ``"surname&&date_of_birth"``) when
#: the two identify records as an identifier does; all such keys together
#: yield at most this many pairs per record (the fewest-pair ones first). At
#: a million customer records, where a date of birth alone no longer
#: identifies anyone, they find the people whose every other field changed.
COMPOUND_PAIRS_PER_RECORD = 1.0

#: Compound keys are tried among at most this many plain columns (28 pairs).
COMPOUND_MAX_COLUMNS = 8


def compound_pairs(columns: list[Hashable]) -> list[tuple[Hashable, Hashable]]:
    """Return the pairs of columns compound keys are tried on, in order.

    None among more than ``COMPOUND_MAX_COLUMNS`` columns: the pairs grow
    with the square of the columns, and each costs a pass over the keys.
    """
    if len(columns) > COMPOUND_MAX_COLUMNS:
        return []
    return list(itertools.combinations(columns, 2))


def compound_keys(
    source: KeySource,
    every: list[Hashable],
    keyed: set[Hashable],
    records: int,
    bucket: float,
) -> tuple[list[BlockingKey], list[str]]:
    """Exact keys on two columns together, where the two identify records.

    ``every`` are the plain columns, ``keyed`` those with an exact key of their
    own. Each pair of the others (:func:`compound_pairs`) whose joint values
    identify records (:meth:`ExactProfile.identifies`) is a candidate; the
    ones yielding fewest pairs are kept first, while all kept yield at most
    ``COMPOUND_PAIRS_PER_RECORD`` pairs per record.
    """
    found = []
    for columns in compound_pairs(every):
        if keyed.intersection(columns):
            continue
        spec = compound_field(columns)
        profile = source.exact_profile(spec)
        if profile.identifies(records, bucket) and source.meets(profile):
            found.append((profile.pairs, spec.label, spec))
    keys, decisions, spent = [], [], 0
    for pairs, label, spec in sorted(found, key=lambda item: item[:2]):
        if spent + pairs > COMPOUND_PAIRS_PER_RECORD * records:
            decisions.append(
                f"{label}: no compound key: its {pairs:,} pairs would pass the "
                f"budget of {COMPOUND_PAIRS_PER_RECORD:g} pair per record for all "
                "compound keys"
            )
            continue
        spent += pairs
        keys.append(BlockingKey(spec, "exact"))
        decisions.append(
            f"{label}: compound exact key, the two identify records together "
            f"({pairs:,} pairs); its pairs no other key found are decided with "
            "the neighbours key's prior, and the model does not learn from them"
        )
    return keys, decisions
