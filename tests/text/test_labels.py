"""Choices that must depend on the records, not on how they are labelled (issue 17).

The threshold chosen from the data samples records, and equal-scoring neighbours
are ranked: both by hashes of the records' values (then of their labels' text),
so the same rows give the same entities whatever their labels' dtype and order.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf
from lsh_frame.block import defaults
from lsh_frame.text.labels import hash_labels, hash_values, label_text

COLUMNS = list(lf.datasets.TEXT_COLUMNS)


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    # Chosen because integer and text labels gave different entities here
    # before the sample was drawn by the records' values.
    return lf.datasets.make_customers(2_000, seed=3)[COLUMNS]


def _partition(frame: pd.DataFrame, ids: pd.Series) -> dict[int, int]:
    """Each row (by its label as an int) with the smallest label of its entity."""
    labels = np.array([int(label) for label in frame.index])
    smallest = pd.Series(labels).groupby(ids.to_numpy()).transform("min")
    return dict(zip(labels.tolist(), smallest.tolist(), strict=True))


def test_dedupe_gives_the_same_entities_whatever_the_labels(people):
    as_int = people.lsh.dedupe(COLUMNS)
    as_text = people.set_axis(people.index.astype(str)).lsh.dedupe(COLUMNS)
    order = np.random.default_rng(7).permutation(len(people))
    shuffled = people.iloc[order]
    shuffled = shuffled.set_axis(shuffled.index.astype(str)).lsh.dedupe(COLUMNS)
    want = _partition(people, as_int["cluster_id"])
    assert _partition(as_text, as_text["cluster_id"]) == want
    assert _partition(shuffled, shuffled["cluster_id"]) == want
    for result in (as_text, shuffled):
        for name in ("pairs", "matches", "entities", "min_score"):
            assert result.attrs["lsh_frame"][name] == as_int.attrs["lsh_frame"][name]


def test_the_chosen_threshold_ignores_the_labels(people):
    want = people.lsh.blocking_report(COLUMNS).decisions
    labels = [f"id-{label * 7919 % 10007}" for label in people.index]
    relabelled = people.set_axis(labels)
    assert relabelled.lsh.blocking_report(COLUMNS).decisions == want


def test_label_text_is_the_same_for_integers_floats_and_text():
    assert label_text(pd.RangeIndex(3)).tolist() == ["0", "1", "2"]
    assert label_text(pd.Index([10.0, 2.0])).tolist() == ["10", "2"]
    assert label_text(pd.Index([1.5, 2.0])).tolist() == ["1.5", "2.0"]
    assert label_text(pd.Index(["10", "2"], dtype="string")).tolist() == ["10", "2"]
    as_int = hash_labels(pd.Index([10, 2, 33]))
    np.testing.assert_array_equal(as_int, hash_labels(pd.Index(["10", "2", "33"])))
    np.testing.assert_array_equal(as_int, hash_labels(pd.Index([10.0, 2.0, 33.0])))
    assert len(set(as_int.tolist())) == 3


def test_value_hashes_read_values_as_every_stage_does():
    typed = pd.DataFrame(
        {"year": [1999, 2001, 1999], "name": ["ann", "bob", "ann"]}, index=[4, 5, 6]
    )
    written = typed.astype({"year": str}).set_axis(["x", "y", "z"])
    hashed = hash_values(typed, ["year", "name"])
    assert hashed is not None
    np.testing.assert_array_equal(hashed, hash_values(written, ["year", "name"]))
    assert hashed[0] == hashed[2] and hashed[0] != hashed[1]
    # Values swapped between columns are other records.
    swapped = pd.DataFrame({"year": ["ann"], "name": ["1999"]})
    assert hash_values(swapped, ["year", "name"])[0] != hashed[0]
    # A column of missing values adds nothing; one that cannot be read as text
    # leaves the choice to the labels.
    with_notes = typed.assign(notes=None)
    np.testing.assert_array_equal(
        hash_values(with_notes, ["year", "name", "notes"]), hashed
    )
    vectors = typed.assign(vector=[[1.0], [2.0], [3.0]])
    assert hash_values(vectors, ["name", "vector"]) is None
    hashes, by_values = defaults.sample_hashes(vectors, ["name", "vector"], seed=1)
    assert not by_values
    np.testing.assert_array_equal(hashes, defaults.label_hashes(vectors.index, 1))
