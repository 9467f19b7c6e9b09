"""one_to_one on pairs, score and link: the greedy choice and the "auto" rule."""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame import cli
from lsh_frame.decide.one_to_one import best_two, choose, match_rank

NAME = [lf.Field("name", compare="ratio")]


def _reference(
    left: np.ndarray, right: np.ndarray, probability: Any, score: np.ndarray
) -> np.ndarray:
    """Walk the pairs best first (sorted in Python) and take those still free."""
    likely = np.zeros(left.size) if probability is None else probability
    best_first = sorted(
        range(left.size),
        key=lambda edge: (
            -(-1.0 if np.isnan(likely[edge]) else likely[edge]),
            -(-1.0 if np.isnan(score[edge]) else score[edge]),
            left[edge],
            right[edge],
            edge,
        ),
    )
    taken = np.zeros(left.size, dtype=bool)
    used_left: set[int] = set()
    used_right: set[int] = set()
    for edge in best_first:
        if left[edge] not in used_left and right[edge] not in used_right:
            taken[edge] = True
            used_left.add(int(left[edge]))
            used_right.add(int(right[edge]))
    return taken


def _never_called(*_: Any) -> Any:
    raise AssertionError("one_to_one=True must not score pairs within a table")


# Few distinct values, so that ties in probability and score are common.
_levels = st.sampled_from([np.nan, 0.3, 0.6, 0.6, 0.9, 1.0])


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 6), _levels, _levels),
        max_size=30,
        unique_by=lambda edge: (edge[0], edge[1]),
    ),
    st.booleans(),
)
def test_true_keeps_the_greedy_choice_of_brute_force(
    edges: list[tuple[int, int, float, float]], with_probability: bool
) -> None:
    left = np.array([edge[0] for edge in edges], dtype=np.int64)
    right = np.array([edge[1] for edge in edges], dtype=np.int64)
    probability = np.array([edge[2] for edge in edges]) if with_probability else None
    score = np.array([edge[3] for edge in edges])
    keep, info = choose(
        True,
        link=True,
        left=left,
        right=right,
        probability=probability,
        score=score,
        within=_never_called,
    )
    np.testing.assert_array_equal(keep, _reference(left, right, probability, score))
    assert info["applied"] and info["dropped"] == int((~keep).sum())
    assert info["several_matches"] == {
        "left": int((np.bincount(left) > 1).sum()) if left.size else 0,
        "right": int((np.bincount(right) > 1).sum()) if right.size else 0,
    }


def test_match_rank_and_best_two_break_ties_by_position() -> None:
    left = np.array([3, 0, 0, 1])
    right = np.array([0, 2, 1, 0])
    rank = match_rank(left, right, np.array([0.9, 0.9, 0.9, 0.9]), np.ones(4))
    np.testing.assert_array_equal(rank, [3, 1, 0, 2])
    # Left record 0 has two matches (right 1 first); right record 0 has two.
    np.testing.assert_array_equal(best_two(left, right, rank)[0], [1])
    np.testing.assert_array_equal(best_two(right, left, rank)[1], [3])


def test_a_pair_given_twice_is_one_match_not_two() -> None:
    left, right, pairs = _confusable(count=2)
    twice = pd.concat([pairs[pairs["right"] == "p0"], pairs], ignore_index=True)
    scored = lf.score(left, twice, NAME, other=right, min_score=0.875)
    info = scored.attrs["lsh_frame"]["one_to_one"]
    # l0 matches p0 (twice) and c0; l1 matches p1 and c1: two confusions.
    assert info["several_matches"] == {"left": 2, "right": 0}
    assert info["checked"] == {"left": 0, "right": 2}
    assert info["duplicates"] == {"left": 0, "right": 0}
    copies = scored[(scored["left"] == "l0") & (scored["right"] == "p0")]
    assert copies["match"].tolist() == [True, False]  # the first copy stays


def _names(count: int, seed: int) -> list[str]:
    generator = random.Random(seed)
    return [
        "".join(generator.choice(string.ascii_lowercase) for _ in range(20))
        for _ in range(count)
    ]


def _confusable(count: int = 6) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Each left record, its true partner, and another record like it.

    Left ``name`` is a random word of 20 letters; its partner differs in the
    last letter (0.95 alike, ratio), the confusion in the first two (0.9), and
    the partner and the confusion are 0.85 alike: with a cut of 0.875, they
    are different entities.
    """
    bases = _names(count, seed=7)
    left = pd.DataFrame({"name": bases}, index=[f"l{i}" for i in range(count)])
    right = pd.DataFrame(
        {
            "name": [
                *("11" + base[2:] for base in bases),
                *(base[:-1] + "0" for base in bases),
            ]
        },
        index=[f"c{i}" for i in range(count)] + [f"p{i}" for i in range(count)],
    )
    return left, right, _all_pairs(left, right)


def _duplicated(count: int = 6) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Each left record truly matches two right records that are duplicates.

    Both right records differ from the left one in the last letter (two
    different letters), so every pair of the three is 0.95 alike.
    """
    bases = _names(count, seed=8)
    left = pd.DataFrame({"name": bases}, index=[f"l{i}" for i in range(count)])
    right = pd.DataFrame(
        {
            "name": [
                *(base[:-1] + "0" for base in bases),
                *(base[:-1] + "1" for base in bases),
            ]
        },
        index=[f"a{i}" for i in range(count)] + [f"b{i}" for i in range(count)],
    )
    return left, right, _all_pairs(left, right)


def _all_pairs(left: pd.DataFrame, right: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        [(one, two) for one in left.index for two in right.index],
        columns=["left", "right"],
    )


def test_auto_applies_when_several_matches_are_confusions() -> None:
    left, right, pairs = _confusable()
    every = lf.score(left, pairs, NAME, other=right, min_score=0.875, one_to_one=False)
    levels = every.pivot(index="left", columns="right", values="score")
    assert np.allclose(np.diag(levels.filter(like="c")), 0.9)
    assert np.allclose(np.diag(levels.filter(like="p")), 0.95)
    assert every.groupby("left")["match"].sum().eq(2).all()  # partner + confusion
    scored = lf.score(left, pairs, NAME, other=right, min_score=0.875)
    matched = scored[scored["match"]]
    assert len(matched) == 6 and matched["left"].is_unique
    assert matched["right"].str.startswith("p").all()
    info = scored.attrs["lsh_frame"]["one_to_one"]
    assert info == {
        "rule": "auto",
        "applied": True,
        "reason": info["reason"],
        "several_matches": {"left": 6, "right": 0},
        "checked": {"left": 0, "right": 6},
        "duplicates": {"left": 0, "right": 0},
        "duplicate_cut": {"score": pytest.approx(0.9)},
        "dropped": 6,
        # Partner and confusion score alike: no clear best, so the pairs of
        # best matches decided.
        "clear_best": {"left": 1.0, "right": 0.0},
    }
    assert "0 of the 6 pairs" in info["reason"] and "confusions" in info["reason"]
    # Only match changes: the rows, their scores and order stay.
    pd.testing.assert_frame_equal(
        scored.drop(columns="match"), every.drop(columns="match")
    )


def test_auto_keeps_several_matches_of_true_duplicates() -> None:
    left, right, pairs = _duplicated()
    scored = lf.score(left, pairs, NAME, other=right, min_score=0.875)
    assert int(scored["match"].sum()) == 12
    info = scored.attrs["lsh_frame"]["one_to_one"]
    assert not info["applied"] and info["dropped"] == 0
    assert info["checked"] == {"left": 0, "right": 6}
    assert info["duplicates"] == {"left": 0, "right": 6}
    assert "half or more" in info["reason"]
    forced = lf.score(left, pairs, NAME, other=right, min_score=0.875, one_to_one=True)
    assert int(forced["match"].sum()) == 6
    assert forced.attrs["lsh_frame"]["one_to_one"]["applied"]


def test_auto_asks_for_duplicates_as_strong_as_a_typical_match() -> None:
    # A lax cut lets each left record's two right records match each other
    # too (0.85), but that is weaker than most matches (0.9 and 0.95): they
    # are still confusions.
    left, right, pairs = _confusable()
    scored = lf.score(left, pairs, NAME, other=right, min_score=0.8)
    inside = lf.score(
        right, pd.DataFrame({"left": ["c0"], "right": ["p0"]}), NAME, min_score=0.8
    )
    assert inside["match"].all()
    info = scored.attrs["lsh_frame"]["one_to_one"]
    assert info["applied"] and info["duplicates"] == {"left": 0, "right": 0}
    assert int(scored["match"].sum()) == 6


@pytest.fixture(scope="module")
def customers() -> pd.DataFrame:
    return lf.datasets.make_customers(3_000, seed=2)


COLUMNS = ["given_name", "surname", "street_address", "date_of_birth", "email"]


def _tables(customers: pd.DataFrame, duplicates: bool) -> tuple[Any, Any]:
    record = customers.groupby("entity_id").cumcount()
    frame = customers.drop(columns="entity_id")
    left = frame[record == 0]
    right = frame[record >= 1] if duplicates else frame[record == 1]
    return left, right


def test_auto_with_a_learned_model(customers: pd.DataFrame) -> None:
    left, right = _tables(customers, duplicates=False)
    scored = lf.link(left, right, COLUMNS)
    info = scored.attrs["lsh_frame"]["one_to_one"]
    assert scored.attrs["lsh_frame"]["model"] is not None
    # Each record's match stands out: one-to-one applies without checking
    # pairs of best matches, and the model learnt from the assignment.
    assert info["applied"] and info["checked"] is None
    assert max(info["clear_best"].values()) < 0.5
    assert scored.attrs["lsh_frame"]["provisional"] == "one-to-one assignment"
    matched = scored[scored["match"]]
    assert matched["left"].is_unique and matched["right"].is_unique
    # The right table now holds each customer's other records: duplicates.
    left, right = _tables(customers, duplicates=True)
    scored = lf.link(left, right, COLUMNS)
    info = scored.attrs["lsh_frame"]["one_to_one"]
    assert not info["applied"]
    assert info["duplicates"]["right"] * 2 > info["checked"]["right"] > 50
    assert not scored.loc[scored["match"], "left"].is_unique


def test_link_pairs_score_and_accessor_agree(customers: pd.DataFrame) -> None:
    left, right = _tables(customers, duplicates=False)
    for rule in ("auto", True, False):
        linked = lf.link(left, right, COLUMNS, one_to_one=rule)
        assert linked.attrs["lsh_frame"]["one_to_one"]["rule"] == rule
        pd.testing.assert_frame_equal(
            linked, lf.pairs(left, COLUMNS, other=right, one_to_one=rule)
        )
        pd.testing.assert_frame_equal(
            linked, left.lsh.link(right, COLUMNS, one_to_one=rule)
        )
        pd.testing.assert_frame_equal(
            linked, left.lsh.pairs(COLUMNS, other=right, one_to_one=rule)
        )
        # The keys that found a pair choose its prior: score them with found_by.
        rescored = left.lsh.score(
            linked[["left", "right", "found_by"]], COLUMNS, other=right, one_to_one=rule
        )
        pd.testing.assert_series_equal(rescored["match"], linked["match"])
    loose = lf.link(left, right, COLUMNS, one_to_one=False)
    assert loose.attrs["lsh_frame"]["provisional"] == "score >= min_score"
    assert not loose.loc[loose["match"], "right"].is_unique
    strict = lf.link(left, right, COLUMNS)
    assert strict.loc[strict["match"], "right"].is_unique


def test_merge_passes_its_rule_to_link(customers: pd.DataFrame) -> None:
    left, right = _tables(customers, duplicates=False)
    linked = lf.link(left, right, COLUMNS)
    merged = lf.merge(left, right, COLUMNS, one_to_one="auto")
    assert len(merged) == int(linked["match"].sum())
    assert merged.attrs["lsh_frame"]["one_to_one"]["applied"]
    plain = lf.merge(left, right, COLUMNS)  # merge keeps every match by default
    assert len(plain) == int(
        lf.link(left, right, COLUMNS, one_to_one=False)["match"].sum()
    )
    assert plain.attrs["lsh_frame"]["one_to_one"]["rule"] is False


def test_a_dedupe_refuses_true_and_ignores_auto(customers: pd.DataFrame) -> None:
    frame = customers.drop(columns="entity_id").head(500)
    with pytest.raises(lf.ConfigError, match="one_to_one=True without a second"):
        lf.pairs(frame, COLUMNS, one_to_one=True)
    with pytest.raises(lf.ConfigError, match="one_to_one=True without a second"):
        frame.lsh.score(pd.DataFrame({"left": [0], "right": [1]}), COLUMNS,
                        one_to_one=True)  # fmt: skip
    auto = lf.pairs(frame, COLUMNS)
    pd.testing.assert_frame_equal(auto, lf.pairs(frame, COLUMNS, one_to_one=False))
    info = auto.attrs["lsh_frame"]["one_to_one"]
    assert not info["applied"] and info["several_matches"] is None


@pytest.mark.parametrize("value", ["yes", "True", None, 1, 0.5, "AUTO"])
def test_bad_values_are_refused(customers: pd.DataFrame, value: Any) -> None:
    left, right = _tables(customers, duplicates=False)
    for call in (
        lambda: lf.link(left, right, COLUMNS, one_to_one=value),
        lambda: lf.pairs(left, COLUMNS, other=right, one_to_one=value),
        lambda: lf.merge(left, right, COLUMNS, one_to_one=value),
        lambda: left.lsh.score(pd.DataFrame({"left": [], "right": []}), COLUMNS,
                               other=right, one_to_one=value),
    ):  # fmt: skip
        with pytest.raises(lf.ConfigError, match="'one_to_one' parameter"):
            call()


def test_numpy_booleans_are_accepted(customers: pd.DataFrame) -> None:
    left, right = _tables(customers, duplicates=False)
    scored = lf.link(left.head(300), right.head(300), COLUMNS, one_to_one=np.True_)
    assert scored.attrs["lsh_frame"]["one_to_one"]["rule"] is True


def test_the_command_line_takes_a_rule(
    customers: pd.DataFrame, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    left, right = _tables(customers, duplicates=False)
    left_path, right_path = tmp_path / "left.csv", tmp_path / "right.csv"
    left.to_csv(left_path)
    right.to_csv(right_path)
    counts = {}
    for rule in ("auto", "no", None):
        output = tmp_path / f"pairs-{rule}.csv"
        extra = [] if rule is None else ["--one-to-one", rule]
        arguments = ["link", str(left_path), str(right_path), "--on",
                     ",".join(COLUMNS), "--index-col", "record_id", "--pairs",
                     "-q", "-o", str(output), *extra]  # fmt: skip
        assert cli.main(arguments) == 0
        counts[rule] = int(pd.read_csv(output)["match"].sum())
    assert counts["auto"] == counts[None] != counts["no"]


# ----------------------------------------------------------------------------
# Dask: the choice over every partition's matches equals pandas'


@pytest.fixture
def sync() -> Iterator[None]:
    dask = pytest.importorskip("dask")
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.mark.usefixtures("sync")
@pytest.mark.parametrize(("left_parts", "right_parts"), [(1, 1), (3, 2)])
def test_dask_equals_pandas(
    customers: pd.DataFrame, left_parts: int, right_parts: int
) -> None:
    import dask.dataframe as dd

    import lsh_frame.dask  # noqa: F401  (registers ddf.lsh)

    def same(got: pd.DataFrame, want: pd.DataFrame) -> None:
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        assert got.attrs == want.attrs

    left, right = _tables(customers, duplicates=False)
    dleft = dd.from_pandas(left, npartitions=left_parts, sort=False)
    dright = dd.from_pandas(right, npartitions=right_parts, sort=False)
    left, right = dleft.compute(), dright.compute()
    for rule in ("auto", True, False):
        want = lf.link(left, right, COLUMNS, one_to_one=rule)
        same(dleft.lsh.link(dright, COLUMNS, one_to_one=rule).compute(), want)
        same(
            dleft.lsh.pairs(COLUMNS, other=dright, one_to_one=rule).compute(),
            lf.pairs(left, COLUMNS, other=right, one_to_one=rule),
        )
    assert want.attrs["lsh_frame"]["one_to_one"]["checked"] is None  # rule False
    auto = lf.link(left, right, COLUMNS)
    assert auto.attrs["lsh_frame"]["one_to_one"]["applied"]
    assert auto.attrs["lsh_frame"]["provisional"] == "one-to-one assignment"
    # Given pairs in several partitions; a numeric cut instead of a model.
    pairs = dd.from_pandas(auto[["left", "right"]], npartitions=3, sort=False)
    same(
        dleft.lsh.score(pairs, COLUMNS, other=dright, min_score=0.8).compute(),
        lf.score(left, auto[["left", "right"]], COLUMNS, other=right, min_score=0.8),
    )
    # The right table with duplicates: auto keeps several matches, as pandas.
    left, right = _tables(customers, duplicates=True)
    dright = dd.from_pandas(right, npartitions=right_parts, sort=False)
    want = lf.link(left, dright.compute(), COLUMNS)
    assert not want.attrs["lsh_frame"]["one_to_one"]["applied"]
    same(dleft.lsh.link(dright, COLUMNS).compute(), want)
    merged = dleft.lsh.merge(dright, COLUMNS, one_to_one="auto").compute()
    assert (
        merged.attrs["lsh_frame"]["one_to_one"] == want.attrs["lsh_frame"]["one_to_one"]
    )
    with pytest.raises(lf.ConfigError, match="without a second table"):
        dleft.lsh.pairs(COLUMNS, one_to_one=True)
    with pytest.raises(lf.ConfigError, match="'one_to_one' parameter"):
        dleft.lsh.link(dright, COLUMNS, one_to_one="sometimes")


def test_a_clear_best_candidate_is_measured_per_table() -> None:
    from lsh_frame.decide.one_to_one import clear_best

    left = np.array([0, 0, 1, 1, 2])
    right = np.array([0, 1, 1, 2, 2])
    # Record 0's second (0.85) is within 0.9 of its best (0.9); record 1's
    # (0.3 against 0.8) is not; record 2 has one candidate and is not counted.
    score = np.array([0.9, 0.85, 0.8, 0.3, 0.7])
    shape = clear_best(left, right, score)
    assert shape["close_second"]["left"] == 0.5
    assert shape["clear"] is False  # half of the left records: not under half
    shape = clear_best(left, right, np.array([0.9, 0.5, 0.8, 0.3, 0.7]))
    assert shape["close_second"]["left"] == 0.0 and shape["clear"] is True
    nothing = clear_best(left[:0], right[:0], score[:0])
    assert nothing["clear"] is True and nothing["close_second"] == {
        "left": 0.0,
        "right": 0.0,
    }
