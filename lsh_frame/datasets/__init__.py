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

from lsh_frame.datasets.customers import (
    COLUMNS,
    TEXT_COLUMNS,
    make_customers,
    true_pairs,
)

__all__ = ["COLUMNS", "TEXT_COLUMNS", "make_customers", "true_pairs"]
