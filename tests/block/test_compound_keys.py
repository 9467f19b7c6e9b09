"""Compound exact keys: two plain columns that identify records together."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame.block import compound, defaults, fields
from lsh_frame.block import keys as block_keys
from lsh_frame.block.keys import compound_field, is_compound_label
from lsh_frame.decide.weak_keys import added_by_compound, found_only_by, weak_keys
from tests.conftest import dask_pairs_as_pandas


def people(n: int = 400, seed: int = 3) -> pd.DataFrame:
    """Records whose surnames and birthdays repeat, but rarely together.

    Neither column identifies anyone alone (each value is shared by about 20
    records), while the two together do; given names are few.
    """
    rng = np.random.default_rng(seed)
    surnames = [f"surname{i}" for i in range(n // 20)]
    days = pd.date_range("1950-01-01", periods=n // 20).strftime("%Y-%m-%d")
    return pd.DataFrame(
        {
            "given": rng.choice(["ann", "bob", "cat", "dan"], n),
            "surname": rng.choice(surnames, n),
            "dob": rng.choice(list(days), n),
        }
    )


def brute_force(frame: pd.DataFrame, columns: tuple[str, str]) -> set[tuple]:
    """Pairs of records equal on both columns (both present), by label."""
    found = set()
    values = frame[list(columns)]
    for first, second in itertools.combinations(range(len(frame)), 2):
        one, two = values.iloc[first], values.iloc[second]
        if one.notna().all() and two.notna().all() and (one == two).all():
            found.add((frame.index[first], frame.index[second]))
    return found


def test_a_pair_of_columns_that_identifies_records_gets_a_key():
    frame = people()
    report = lf.blocking_report(frame, ["given", "surname", "dob"])
    said = "\n".join(report.decisions)
    assert "surname&&dob: compound exact key" in said
    # Four given names identify no one, with either other column.
    assert "given&&surname: compound" not in said
    assert "given&&dob: compound" not in said
    assert "surname&&dob" in set(report.table["key"])


def test_compound_key_pairs_equal_brute_force():
    frame = people()
    found = lf.candidates(frame, [compound_field(("surname", "dob"))])
    got = set(zip(found["left"], found["right"], strict=True))
    assert got == brute_force(frame, ("surname", "dob"))
    assert got  # the frame holds some


@settings(max_examples=30, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "", None]), st.sampled_from(["x", "y", None])
        ),
        min_size=2,
        max_size=25,
    )
)
def test_compound_keys_need_every_column(rows):
    frame = pd.DataFrame(rows, columns=["one", "two"])
    spec = compound_field(("one", "two"))
    found = lf.candidates(frame, [spec])
    got = set(zip(found["left"], found["right"], strict=True))
    blanked = frame.replace("", None)
    assert got == brute_force(blanked, ("one", "two"))


def test_a_missing_value_is_not_part_of_a_compound_value():
    frame = pd.DataFrame({"one": ["a", "a", None, None], "two": ["x", None, "x", None]})
    keys, valid = block_keys._exact_keys(
        frame, compound_field(("one", "two")), owner="t"
    )
    assert valid.tolist() == [True, False, False, False]
    assert keys.shape == (4, 1)


def test_compound_labels_and_weak_keys():
    assert is_compound_label("surname&&dob")
    assert not is_compound_label("surname")
    counts = {"surname&&dob": 5, "phone": 3, "phone|surname&&dob": 10}
    assert "surname&&dob" in weak_keys(counts)
    pairs = pd.DataFrame(
        {
            "found_by": [
                "surname&&dob",
                "surname&&dob|record_neighbours",
                "phone|surname&&dob",
                "record_neighbours",
                "phone",
                None,
            ]
        }
    )
    assert added_by_compound(pairs).tolist() == [
        True,
        False,
        False,
        False,
        False,
        False,
    ]
    alone = found_only_by(pairs, ("record_neighbours", "surname&&dob"))
    assert alone.tolist() == [True, True, False, True, False, False]
    # A model saved before compound keys: their lone pairs are weak all the same.
    older = found_only_by(pairs, ("record_neighbours",))
    assert older.tolist() == alone.tolist()


def test_compound_pairs_do_not_change_the_other_pairs_decisions(monkeypatch):
    frame = lf.datasets.make_customers(2_000, seed=2)
    columns = ["given_name", "surname", "city", "postcode", "date_of_birth"]
    with_keys = lf.pairs(frame[columns], columns)
    found = with_keys["found_by"].astype(str)
    assert found.str.contains("&&").any(), "the test needs a compound key"
    assert added_by_compound(with_keys).any(), "and pairs only compound keys found"
    monkeypatch.setattr(compound, "COMPOUND_MAX_COLUMNS", 0)
    without_keys = lf.pairs(frame[columns], columns)
    assert not without_keys["found_by"].astype(str).str.contains("&&").any()
    both = with_keys.merge(without_keys, on=["left", "right"], suffixes=("", "_old"))
    # Every pair found before is decided as before, with the same probability.
    assert len(both) == len(without_keys)
    np.testing.assert_array_equal(both["match"], both["match_old"])
    np.testing.assert_allclose(
        both["match_probability"], both["match_probability_old"], rtol=1e-12
    )
    # The model learned from the same pairs.
    model = with_keys.attrs["lsh_frame"]["model"]
    old = without_keys.attrs["lsh_frame"]["model"]
    assert model["prior"] == pytest.approx(old["prior"], rel=1e-12)
    assert any(is_compound_label(key) for key in model["alone_keys"])


def test_compound_key_budget(monkeypatch):
    frame = people()
    monkeypatch.setattr(compound, "COMPOUND_PAIRS_PER_RECORD", 0.0)
    report = lf.blocking_report(frame, ["given", "surname", "dob"])
    said = "\n".join(report.decisions)
    assert "surname&&dob: no compound key" in said
    assert "surname&&dob" not in set(report.table["key"])


def test_no_compound_key_among_many_columns(monkeypatch):
    frame = people()
    monkeypatch.setattr(compound, "COMPOUND_MAX_COLUMNS", 2)
    report = lf.blocking_report(frame, ["given", "surname", "dob"])
    assert not any("compound" in line for line in report.decisions)


def test_compound_keys_on_dask_equal_pandas():
    frame = lf.datasets.make_customers(2_000, seed=2)
    columns = ["given_name", "surname", "city", "postcode", "date_of_birth"]
    want = dask_pairs_as_pandas(frame[columns], columns)
    assert added_by_compound(want).any()


def test_compound_keys_link_and_saved_index(tmp_path):
    frame = people()
    left, right = frame.iloc[:250], frame.iloc[250:]
    linked = lf.candidates(left, ["given", "surname", "dob"], other=right)
    expected = {
        (a, b)
        for a, b in itertools.product(left.index, right.index)
        if left.loc[a, "surname"] == right.loc[b, "surname"]
        and left.loc[a, "dob"] == right.loc[b, "dob"]
    }
    found = linked[linked["found_by"].astype(str).str.contains("surname&&dob")]
    assert set(zip(found["left"], found["right"], strict=True)) == expected
    index = lf.Index.build(left, ["given", "surname", "dob"], min_score=0.5)
    asked = index.query(right, k=None)
    by_key = asked[asked["found_by"].astype(str).str.contains("surname&&dob")]
    assert set(zip(by_key["left"], by_key["right"], strict=True)) == expected
    index.save(tmp_path / "saved")
    again = lf.Index.load(tmp_path / "saved").query(right, k=None)
    pd.testing.assert_frame_equal(again, asked)


def test_a_name_holding_the_compound_mark_is_refused():
    frame = people(60)
    # An identifier gets an exact key of its own, labelled by the column.
    marked = frame.assign(**{"id&&code": [f"c{i // 2}" for i in range(60)]})
    with pytest.raises(lf.ConfigError, match="&&"):
        lf.candidates(marked, ["given", "surname", "id&&code"])
    with pytest.raises(lf.ConfigError, match="&&"):
        lf.candidates(frame, [lf.Field("surname", blocking="exact", name="a&&b")])


def test_an_ampersand_in_a_column_name_is_a_column_like_any_other():
    frame = people().rename(columns={"dob": "R&D"})
    found = lf.pairs(frame, ["given", "surname", "R&D"])
    labels = set("|".join(found["found_by"].astype(str)).split("|"))
    assert "surname&&R&D" in labels
    assert not is_compound_label("R&D")
    # Pairs the column's own key found alone are not set aside as compound.
    assert not added_by_compound(pd.DataFrame({"found_by": ["R&D"]})).any()


def test_a_small_batch_keys_compound_fields_as_a_large_table_does():
    # A few new records take the one-pass path for exact keys; a compound key
    # must still combine its columns' keys, not hash their joined text.
    frame = people(40)
    spec = compound_field(("surname", "dob"))
    keys = [
        fields.BlockingKey(spec, "exact"),
        fields.BlockingKey(defaults.identifier_field("given"), "exact"),
        fields.BlockingKey(defaults.identifier_field("surname"), "exact"),
    ]
    for rows in (frame.iloc[:3], frame):
        sides = block_keys.table_keys(rows, keys, num_perm=8, seed=1, owner="t")
        want, valid = block_keys._exact_keys(rows, spec, owner="t")
        np.testing.assert_array_equal(sides[0].keys, want)
        np.testing.assert_array_equal(sides[0].valid, valid)


def test_explain_reads_compound_pairs_as_the_decision_does():
    frame = lf.datasets.make_customers(2_000, seed=2)
    columns = ["given_name", "surname", "city", "postcode", "date_of_birth"]
    scored = lf.pairs(frame[columns], columns)
    learned = scored.attrs["lsh_frame"]["model"]
    found = scored["found_by"].astype(str)
    only = scored[added_by_compound(scored)]
    beside = scored[found.str.contains("&&") & found.str.contains("record_neighbours")]
    beside = beside[found_only_by(beside, tuple(learned["alone_keys"]))]
    assert len(only) and len(beside)
    for row in (only.iloc[0], beside.iloc[0]):
        explanation = lf.explain(frame[columns], row, columns)
        assert explanation.alone and explanation.prior == learned["alone_prior"]
        assert explanation.fields[-1].running_probability == pytest.approx(
            row["match_probability"], rel=1e-9
        )
