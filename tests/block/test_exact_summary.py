"""Exact-key profiles add up over ranges of key values (the Dask engine's way).

``ExactSummary`` of disjoint ranges, added up, must profile an exact key as
``exact_profile`` does on the whole tables: the same keyed records, distinct
keys, pairs and typical (99th percentile) bucket, deduplicating or linking.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lsh_frame.block.defaults import ExactSummary, exact_counts, exact_profile

keys = st.lists(st.integers(0, 2**64 - 1) | st.integers(0, 40), max_size=300)


def _counts(values: list[int]) -> tuple[np.ndarray, np.ndarray]:
    array = np.array(values, dtype=np.uint64).reshape(-1, 1)
    return exact_counts(array, np.ones(len(values), dtype=bool))


def _cut(
    side: tuple[np.ndarray, np.ndarray], bounds: list[int]
) -> list[tuple[np.ndarray, np.ndarray]]:
    at = np.searchsorted(side[0], np.array(bounds, dtype=np.uint64))
    starts, stops = [0, *at.tolist()], [*at.tolist(), side[0].size]
    return [(side[0][a:b], side[1][a:b]) for a, b in zip(starts, stops, strict=True)]


@settings(max_examples=200, deadline=None)
@given(
    tables=st.lists(keys, min_size=1, max_size=2),
    bounds=st.lists(st.integers(0, 2**64 - 1) | st.integers(0, 40), max_size=5),
)
def test_summaries_of_ranges_add_up_to_the_profile(
    tables: list[list[int]], bounds: list[int]
) -> None:
    sides = [_counts(values) for values in tables]
    bounds = sorted(bounds)
    pieces = [_cut(side, bounds) for side in sides]
    summary = ExactSummary.of([side[0] for side in pieces])
    for number in range(1, len(bounds) + 1):
        summary = summary.plus(ExactSummary.of([side[number] for side in pieces]))
    assert summary.profile() == exact_profile(sides)


def test_a_constant_column_is_one_large_bucket() -> None:
    side = _counts([7] * 500 + list(range(100, 150)))
    profile = ExactSummary.of([side]).profile()
    assert profile == exact_profile([side])
    assert (profile.distinct, profile.pairs, profile.keyed) == (51, 124_750, 550)
    assert profile.typical_bucket == 500.0
