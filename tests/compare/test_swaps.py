"""Fields whose values trade places (a given name typed as the surname)."""

import collections
import unicodedata
import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import (
    PEOPLE_FIELDS,
    learned_part,
    part_scores_as_all,
    saved_model_again,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import distance

import lsh_frame as lf
from lsh_frame.compare import plan as compare_plan
from lsh_frame.compare import swaps as _swaps
from lsh_frame.compare import table_checks
from lsh_frame.errors import ConfigError

NAMES = ["given_name", "surname"]
COLUMNS = PEOPLE_FIELDS


def straight_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Score without looking for swapped fields (the behaviour before them)."""
    monkeypatch.setattr(table_checks, "check_swaps", lambda plan, *_, **__: plan)


def plain(value: object) -> str | None:
    """The default normalisation: NFKC, lower case, collapsed whitespace."""
    if not isinstance(value, str):
        return None
    return " ".join(unicodedata.normalize("NFKC", value).lower().split())


def similarity(first: pd.Series, second: pd.Series) -> np.ndarray:
    """Indel similarity of normalised values (``compare="ratio"``), NaN if missing."""
    result = []
    for one, other in zip(map(plain, first), map(plain, second), strict=True):
        if (
            not isinstance(one, str)
            or not isinstance(other, str)
            or not one
            or not other
        ):
            result.append(np.nan)
        else:
            result.append(distance.Indel.normalized_similarity(one, other))
    return np.array(result)


def python_counts(rows: list[tuple[str | None, str | None]]) -> tuple[int, int]:
    kept = [(a, b) for a, b in rows if a is not None and b is not None and a != b]
    counts = collections.Counter(kept)
    crossed = sum(1 for a, b in kept if (b, a) in counts)
    repeated = sum(count for count in counts.values() if count > 1)
    return crossed, repeated


VALUES = st.sampled_from(["ann", "bob", "cy", "dee", None, ""])


def two_fields() -> list[tuple[lf.Field, lf.Field]]:
    """Fields ``a`` and ``b``, as the one pair of fields to count."""
    specs, _ = lf.block.fields._as_fields(["a", "b"], "test")
    return [(specs[0], specs[1])]


def counts_of(parts: list[pd.DataFrame]) -> _swaps.Counts:
    """The counts of fields ``a`` and ``b`` over some frames, merged."""
    pairs = two_fields()
    return _swaps.merge_counts(
        [
            _swaps.count_values(_swaps.normalised(part, pairs, "test"), pairs)
            for part in parts
        ]
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(VALUES, VALUES), min_size=0, max_size=30),
    st.integers(min_value=0, max_value=30),
)
def test_counts_match_a_python_reference_and_add_up(rows, cut):
    frame = pd.DataFrame(rows, columns=["a", "b"], dtype=object)
    pairs = two_fields()
    whole = _swaps.check(counts_of([frame]))
    blank_is_missing = [
        (a or None, b or None) for a, b in rows
    ]  # blanks count as missing
    assert (whole[0].crossed, whole[0].repeated) == python_counts(blank_is_missing)
    parts = [frame.iloc[:cut], frame.iloc[cut:]]
    assert _swaps.check(counts_of(parts)) == whole
    # Fields that share no value are not counted: they can have no crossed row.
    shared = _swaps.sharing(
        pairs,
        [_swaps.vocabularies(_swaps.normalised(part, pairs, "test")) for part in parts],
    )
    first = {a for a, _ in blank_is_missing if a is not None}
    second = {b for _, b in blank_is_missing if b is not None}
    assert bool(shared) == bool(first & second)
    if not shared:
        assert whole[0].crossed == 0


def test_swapped_names_are_found_and_scored_crossed(
    people_1500: pd.DataFrame, people_1500_pairs: pd.DataFrame
) -> None:
    checks = people_1500_pairs.attrs["lsh_frame"]["swaps"]
    names = [check for check in checks if check["fields"] == NAMES]
    assert names and names[0]["swapped"] and names[0]["scored_crossed"]
    assert names[0]["crossed_rows"] >= _swaps.SWAP_RATIO * names[0]["repeated_rows"]
    # No other pair of fields trades places in these records.
    assert not any(check["swapped"] for check in checks if check["fields"] != NAMES)
    swapped = people_1500_pairs["given_name_surname_swapped"].to_numpy()
    assert swapped.any()
    left = people_1500.loc[people_1500_pairs["left"]]
    right = people_1500.loc[people_1500_pairs["right"]]
    straight = {label: similarity(left[label], right[label]) for label in NAMES}
    crossed = {
        "given_name": similarity(left["given_name"], right["surname"]),
        "surname": similarity(left["surname"], right["given_name"]),
    }
    # Given names that are familiar forms of one name, or an initial and a
    # name, are read as agreeing (tests/test_nicknames.py); every other pair
    # as computed here.
    familiar = people_1500_pairs["given_name_nickname"].to_numpy()
    initial = people_1500_pairs["given_name_initial"].to_numpy()
    for label in NAMES:
        want = np.where(swapped, crossed[label], straight[label])
        if label == "given_name":
            want = np.where(familiar, 0.9, np.where(initial, 0.8, want))
        np.testing.assert_allclose(
            people_1500_pairs[f"{label}_score"], want, rtol=0, atol=1e-12
        )
        # A swapped pair's crossed scores agree and beat the straight ones.
        assert (crossed[label][swapped] >= 0.8).all()
        assert (crossed[label][swapped] > np.nan_to_num(straight[label][swapped])).all()
    # Every pair whose crossed scores both agree and beat the straight ones is read so.
    better = np.ones(len(people_1500_pairs), dtype=bool)
    for label in NAMES:
        better &= (crossed[label] >= 0.8) & (
            crossed[label] > np.nan_to_num(straight[label])
        )
    np.testing.assert_array_equal(swapped, better)


def test_the_model_learns_as_without_swaps_and_decides_crossed(
    people_1500: pd.DataFrame,
    people_1500_pairs: pd.DataFrame,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    straight_model(monkeypatch)
    before = lf.pairs(people_1500, COLUMNS, transitive=False)
    learned = dict(people_1500_pairs.attrs["lsh_frame"]["model"])
    assert learned.pop("swaps") == [NAMES]
    assert learned_part(learned) == learned_part(before.attrs["lsh_frame"]["model"])
    truth = people_1500["entity_id"]
    same = (
        truth.loc[people_1500_pairs["left"]].to_numpy()
        == truth.loc[people_1500_pairs["right"]].to_numpy()
    )
    gained = people_1500_pairs["match"].to_numpy() & ~before["match"].to_numpy()
    assert gained.any()
    assert people_1500_pairs["given_name_surname_swapped"].to_numpy()[gained].all()
    # The pairs read crossed that became matches are duplicates.
    assert same[gained].mean() >= 0.9
    after = lf.evaluate(people_1500_pairs, truth)
    assert after.recall > lf.evaluate(before, truth).recall
    assert after.precision >= lf.evaluate(before, truth).precision - 0.002


def test_fields_that_do_not_trade_places_are_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = np.random.default_rng(2)
    pool = ["james", "thomas", "george", "henry", "morgan", "lee", "grant", "ross"]
    first = rng.choice(pool[:6], 400)
    last = rng.choice(pool[2:], 400)
    # The same names in both columns, but no record holds another's reversed.
    keep = [
        i
        for i in range(400)
        if first[i] != last[i]
        and (last[i], first[i]) not in set(zip(first[:i], last[:i], strict=True))
    ]
    frame = pd.DataFrame(
        {
            "given_name": first[keep],
            "surname": last[keep],
            "city": rng.choice(["york", "leeds", "bath"], len(keep)),
        }
    )
    pairs = lf.candidates(frame, ["given_name", "surname", "city"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = lf.score(frame, pairs, ["given_name", "surname", "city"], min_score=0.8)
        check = got.attrs["lsh_frame"]["swaps"]
        crossed = next(c for c in check if c["fields"] == NAMES)
        assert (
            crossed["crossed_rows"] < _swaps.MIN_CROSSED_ROWS or not crossed["swapped"]
        )
        assert "given_name_surname_swapped" not in got
        straight_model(monkeypatch)
        want = lf.score(frame, pairs, ["given_name", "surname", "city"], min_score=0.8)
    pd.testing.assert_frame_equal(got, want)


def test_parts_of_the_pairs_score_as_all_of_them(
    people_1500: pd.DataFrame, people_1500_pairs: pd.DataFrame
) -> None:
    swapped = people_1500_pairs.index[people_1500_pairs["given_name_surname_swapped"]]
    part = people_1500_pairs.loc[
        swapped[:5].union(people_1500_pairs.index[:40]), ["left", "right", "found_by"]
    ]
    part_scores_as_all(
        people_1500, people_1500_pairs, part, COLUMNS, ("given_name_surname_swapped",)
    )


def test_a_saved_model_keeps_its_swaps(
    people_1500: pd.DataFrame, people_1500_pairs: pd.DataFrame
) -> None:
    learned = people_1500_pairs.attrs["lsh_frame"]["model"]
    model, again = saved_model_again(
        people_1500,
        people_1500_pairs,
        COLUMNS,
        "swaps",
        ("given_name_surname_swapped", "match_probability", "match"),
    )
    assert model.swaps == (("given_name", "surname"),)
    assert again.attrs["lsh_frame"]["swaps"] == [
        {"fields": NAMES, "swapped": True, "scored_crossed": True, "from": "model"}
    ]
    # A batch too small to show the swap still scores with the model's.
    batch = people_1500.iloc[:60]
    small = lf.pairs(batch, COLUMNS, min_score=learned)
    assert "given_name_surname_swapped" in small


@pytest.mark.parametrize("name", ["swaps", "shifts"])
@pytest.mark.parametrize(
    "pairs",
    [[["given_name", "nickname"]], [["surname", "surname"]], ["given_name"], "x", 3],
)
def test_a_model_with_wrong_pairs_of_fields_is_refused(
    people_1500_pairs: pd.DataFrame, name, pairs
) -> None:
    learned = {**people_1500_pairs.attrs["lsh_frame"]["model"], name: pairs}
    with pytest.raises(ConfigError, match=name):
        lf.decide.model.MatchModel.from_dict(learned)


def test_a_model_whose_swapped_fields_compare_otherwise_is_refused(
    people_1500: pd.DataFrame, people_1500_pairs: pd.DataFrame
) -> None:
    learned = people_1500_pairs.attrs["lsh_frame"]["model"]
    fields = [
        lf.Field("given_name", compare="jaro_winkler"),
        "surname",
        "date_of_birth",
        "email",
    ]
    with pytest.raises(ConfigError, match="crossed"):
        lf.pairs(people_1500, fields, min_score=learned)


def test_explain_says_a_pair_was_scored_crossed(
    people_1500: pd.DataFrame, people_1500_pairs: pd.DataFrame
) -> None:
    row = people_1500_pairs[people_1500_pairs["given_name_surname_swapped"]].iloc[0]
    explanation = lf.explain(people_1500, row, COLUMNS)
    by_field = {item.field: item for item in explanation.fields}
    assert by_field["given_name"].crossed == "surname"
    assert by_field["surname"].crossed == "given_name"
    assert by_field["email"].crossed is None
    assert by_field["given_name"].score == pytest.approx(row["given_name_score"])
    assert "scored crossed" in str(explanation)
    plain = people_1500_pairs[~people_1500_pairs["given_name_surname_swapped"]].iloc[0]
    assert "scored crossed" not in str(lf.explain(people_1500, plain, COLUMNS))


def test_dask_finds_the_same_swaps_and_familiar_forms(
    people_1500: pd.DataFrame,
) -> None:
    dask = pytest.importorskip("dask")
    import dask.dataframe as dd

    import lsh_frame.dask  # noqa: F401  (registers ddf.lsh)

    # The same names written in several cases, so that partitions' dictionaries
    # meet one text under codes in another order than the whole table's.
    varied = people_1500.copy()
    varied.loc[varied.index[::3], "given_name"] = varied["given_name"].str.upper()
    with dask.config.set(scheduler="synchronous"):
        ddf = dd.from_pandas(varied, npartitions=4, sort=False)
        frame = ddf.compute()
        got = ddf.lsh.pairs(COLUMNS).compute()
    want = lf.pairs(frame, COLUMNS)
    assert want["given_name_surname_swapped"].any()
    assert want["given_name_nickname"].any()
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert got.attrs == want.attrs


def test_a_saved_index_scores_new_records_crossed(people_1500, tmp_path) -> None:
    saved = people_1500[COLUMNS].iloc[:1_400]
    # New records: saved ones written with given name and surname swapped.
    chosen = saved.dropna(subset=COLUMNS).iloc[:40:4]
    new = chosen.rename(columns={"given_name": "surname", "surname": "given_name"})
    new = new[COLUMNS].set_axis([f"new-{label}" for label in chosen.index])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        index = lf.Index.build(saved, COLUMNS)
    found = index.query(new, k=3)
    entity = people_1500["entity_id"]
    best = found[found["rank"] == 1].set_index("right")["left"].loc[new.index]
    # The best match is the same person (the original or another of its records).
    assert (entity.loc[best].to_numpy() == entity.loc[chosen.index].to_numpy()).all()
    original = found.merge(
        pd.DataFrame({"left": chosen.index, "right": new.index}), on=["left", "right"]
    )
    assert len(original) == len(new)
    assert original["given_name_surname_swapped"].all() and original["match"].all()
    index.save(tmp_path / "ix")
    loaded = lf.Index.load(tmp_path / "ix")
    pd.testing.assert_frame_equal(loaded.query(new, k=3), found)


def test_a_field_is_swapped_with_one_other_field_at_most() -> None:
    frame = pd.DataFrame({"a": ["x"], "b": ["y"], "c": ["z"], "d": ["w"]})
    plan = compare_plan.plan_score(
        [frame],
        [compare_plan.comparison_rows(frame)],
        ["a", "b", "c", "d"],
        min_score="auto",
        values=False,
        estimate=False,
        num_perm=128,
        seed=1,
        owner="test",
    )
    checks = [
        _swaps.SwapCheck("a", "b", 10, 100),  # swapped, but a trades more with c
        _swaps.SwapCheck("a", "c", 50, 100),
        _swaps.SwapCheck("b", "d", 3, 100),
        _swaps.SwapCheck("c", "d", 1, 100),  # not swapped: 1 < 2% of 100
    ]
    assert [check.swapped for check in checks] == [True, True, True, False]
    decided = table_checks.with_swap_checks(plan, checks)
    assert decided.swaps == (("a", "c"), ("b", "d"))
    assert decided.swap_checks == tuple(checks)
