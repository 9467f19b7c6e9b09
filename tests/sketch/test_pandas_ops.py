"""Signature and fingerprint columns behave in pandas (issue 38, defect 6):
``==``, ``unique``, ``value_counts``, ``drop_duplicates``, ``groupby`` and
``sort_values`` work by value (lsh_frame.sketch.pandas_array)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf

TEXTS = ["a b c", "x y z", "a b c", None, "x y z", "a b c", "p q r"]


def sketches(kind: str, texts=TEXTS, **options) -> pd.Series:
    values = pd.Series(texts, name="text")
    if kind == "minhash":
        return lf.minhash(values, **{"num_perm": 16, **options})
    return lf.simhash(values, **options)


KINDS = ["minhash", "simhash", "simhash128", "simhash32"]


@pytest.fixture(params=KINDS)
def column(request) -> pd.Series:
    kind = request.param
    if kind.startswith("simhash") and kind != "simhash":
        return sketches("simhash", bits=int(kind[len("simhash") :]))
    return sketches(kind)


#: Rows holding the same text: the groups every operation must find.
GROUPS = [[0, 2, 5], [1, 4], [6]]


def test_equality_is_by_value(column):
    assert (column == column.copy()).tolist() == [True] * 3 + [pd.NA] + [True] * 3
    assert (column != column.copy()).tolist() == [False] * 3 + [pd.NA] + [False] * 3
    shifted = column.iloc[[2, 4, 0, 3, 0, 2, 6]].reset_index(drop=True)
    equal = column == shifted
    assert equal.tolist() == [True, True, True, pd.NA, False, True, True]
    # One value: a row's own element, as single elements compare.
    first = column.iloc[0]
    assert (column == first).tolist() == [True, False, True, pd.NA, False, True, False]
    assert column.iloc[0] == column.iloc[2]


def test_sketches_built_differently_are_never_equal(column):
    other = (
        sketches("minhash", num_perm=16, seed=2)
        if "minhash" in str(column.dtype)
        else sketches("simhash", seed=2, bits=column.dtype.pyarrow_dtype.config.bits)
    )
    assert not (column == other).fillna(False).any()
    assert (column != other).fillna(True).all()
    with pytest.raises(ValueError, match="Lengths must match"):
        _ = column.array == other.array[:3]


def test_an_order_is_refused_with_a_clear_error(column):
    with pytest.raises(TypeError, match="have no order"):
        _ = column < column.copy()


def test_unique_and_counts(column):
    assert column.nunique() == 3
    assert column.nunique(dropna=False) == 4
    unique = column.unique()
    assert len(unique) == 4 and unique.dtype == column.dtype
    assert pd.Series(unique).isna().tolist() == [False, False, True, False]
    counts = column.value_counts()
    assert counts.tolist() == [3, 2, 1]
    assert counts.index[0] == column.iloc[0] and counts.index[1] == column.iloc[1]
    assert column.value_counts(dropna=False).tolist() == [3, 2, 1, 1]
    duplicated = [False, False, True, False, True, True, False]
    assert column.duplicated().tolist() == duplicated


def test_drop_duplicates_and_groupby(column):
    frame = pd.DataFrame({"sketch": column, "row": range(len(column))})
    kept = frame.drop_duplicates("sketch")
    assert kept["row"].tolist() == [0, 1, 3, 6]
    assert frame.drop_duplicates()["row"].tolist() == list(range(7))
    groups = frame.groupby("sketch", sort=False)["row"].apply(list)
    assert sorted(groups.tolist()) == sorted(GROUPS)
    assert sorted(frame.groupby("sketch")["row"].apply(list).tolist()) == sorted(GROUPS)
    sizes = frame.groupby("sketch", dropna=False).size()
    assert sorted(sizes.tolist()) == [1, 1, 2, 3]


def test_sort_values_groups_equal_values_and_puts_missing_last(column):
    frame = pd.DataFrame({"sketch": column, "row": range(len(column))})
    order = frame.sort_values("sketch")["row"].tolist()
    assert order[-1] == 3  # missing last
    group = {row: number for number, rows in enumerate(GROUPS) for row in rows}
    up_groups = [group[row] for row in order[:-1]]
    # Each group's rows together, in row order (a stable sort).
    assert [key for key, _ in itertools.groupby(up_groups)] == sorted(
        set(up_groups), key=up_groups.index
    )
    assert len(set(up_groups)) == 3
    for number in range(3):
        rows = [row for row in order[:-1] if group[row] == number]
        assert rows == GROUPS[number]
    down = frame.sort_values("sketch", ascending=False, na_position="first")
    assert down["row"].tolist()[0] == 3
    # Descending: the groups in reverse order, each group's rows in row order.
    assert [group[row] for row in down["row"].tolist()[1:]] == up_groups[::-1]
    for number in range(3):
        rows = [row for row in down["row"].tolist()[1:] if group[row] == number]
        assert rows == GROUPS[number]
    assert column.sort_values().index.tolist() == order


def test_simhash_sorts_as_unsigned_integers():
    fingerprints = sketches("simhash")
    values = [fingerprints.iloc[i] for i in (0, 1, 6)]
    assert fingerprints.dropna().sort_values().drop_duplicates().tolist() == sorted(
        values
    )
    # And compares with a plain integer.
    assert (fingerprints == int(values[0])).tolist()[:3] == [True, False, True]
    assert not (fingerprints == -1).fillna(False).any()


def test_operations_keep_the_dtype(tmp_path, column):
    frame = pd.DataFrame({"sketch": column})
    assert pd.concat([frame, frame])["sketch"].dtype == column.dtype
    assert column.iloc[::2].dtype == column.dtype
    frame.to_parquet(tmp_path / "sketches.parquet")
    back = pd.read_parquet(tmp_path / "sketches.parquet")["sketch"]
    assert back.dtype == column.dtype
    assert back.nunique() == 3
    assert (back == column).fillna(True).all()


def test_hamming_and_minhash_functions_still_take_them():
    fingerprints = sketches("simhash")
    assert lf.hamming_distance(fingerprints, fingerprints.iloc[0]).iloc[2] == 0
    signatures = sketches("minhash")
    estimate = lf.estimate_jaccard(signatures, signatures.iloc[[2, 4, 0, 3, 1, 2, 6]])
    assert np.isclose(estimate.iloc[0], 1.0)
