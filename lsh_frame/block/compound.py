"""Compound keys: two plain columns that together identify records.

Evidence that turns them on: among the plain columns without an exact key of
their own (at most ``COMPOUND_MAX_COLUMNS`` of them), a pair whose joint
values identify records as an identifier does (:meth:`ExactProfile.identifies`:
small buckets over nearly every record) gets an exact key on both together
(``"surname&&date_of_birth"``). The keys yielding fewest pairs are kept first,
while all kept yield at most ``COMPOUND_PAIRS_PER_RECORD`` pairs per record.

Where it was measured: at a million make_customers records, where a date of
birth alone no longer identifies anyone, a surname with a date of birth finds
the people whose every other field changed (benchmarks/HISTORY.md, "compound
keys"). The pairs only a compound key found are judged as those of a weak key
(:mod:`lsh_frame.decide.weak_keys`).
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
