"""The match model's levels, its provisional cut and saved models (lsh_frame.model)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame import model


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(st.floats(0.0, 1.0), st.just(float("nan"))), min_size=1, max_size=40
    )
)
def test_levels_count_the_cuts_a_score_falls_below(values):
    scores = np.array(values, dtype=np.float64)
    cuts = model.LEVEL_CUTS
    levels = model.levels_of(scores, cuts)
    for value, level in zip(values, levels.tolist(), strict=True):
        if np.isnan(value):
            assert level == len(cuts) + 1
        else:
            assert level == sum(value < cut for cut in cuts)


def test_level_names_describe_each_level():
    names = model.level_names((0.99, 0.8))
    assert names == [">= 0.99", "[0.8, 0.99)", "< 0.8"]
    assert len(model.level_names(model.LEVEL_CUTS)) == len(model.LEVEL_CUTS) + 1


def test_the_cut_ignores_a_small_bump_at_the_top():
    rng = np.random.default_rng(3)
    # Citations: non-matches around 0.62, matches spread widely around 0.88,
    # and some exact copies at 1.0. The valley between the two groups is the
    # cut, not the shallow dip just below the copies.
    low = rng.normal(0.62, 0.06, 20_000)
    high = rng.normal(0.88, 0.07, 15_000)
    spike = np.ones(400)
    scores = np.clip(np.concatenate([low, high, spike]), 0, 1)
    cut = model.auto_min_score(scores)
    assert 0.7 <= cut <= 0.8
    assert (high >= cut).mean() > 0.9


def test_one_group_of_scores_has_no_valley():
    rng = np.random.default_rng(4)
    scores = np.clip(rng.normal(0.45, 0.12, 5_000), 0, 1)
    assert model.auto_min_score(scores) == model.DEFAULT_MIN_SCORE


def test_a_saved_model_keeps_its_cuts_and_older_models_still_decide():
    people = lf.datasets.make_customers(2_000, seed=2)
    columns = ["given_name", "surname", "date_of_birth", "email"]
    scored = lf.pairs(people, columns)
    learned = scored.attrs["lsh_frame"]["model"]
    assert learned["cuts"] == list(model.LEVEL_CUTS)
    assert len(learned["levels"]) == len(model.LEVEL_CUTS) + 1
    again = lf.score(
        people,
        scored[["left", "right", "found_by"]],
        columns,
        min_score=json.loads(json.dumps(learned)),
    )
    np.testing.assert_allclose(
        again["match_probability"].to_numpy(), scored["match_probability"].to_numpy()
    )
    # The pairs only the neighbours key found are read with their own prior;
    # without found_by every pair is read with the model's prior.
    alone = (scored["found_by"] == "record_neighbours").to_numpy()
    assert alone.any() and 0 < learned["alone_prior"] < learned["prior"]
    unknown = lf.score(people, scored[["left", "right"]], columns, min_score=learned)[
        "match_probability"
    ].to_numpy()
    np.testing.assert_allclose(unknown[~alone], scored["match_probability"][~alone])
    assert (unknown[alone] > scored["match_probability"].to_numpy()[alone]).all()
    # A model saved with the classic three levels (no "cuts") reads its scores
    # with the classic cuts 0.99 and 0.8.
    classic = {
        "prior": 0.1,
        "levels": ["agrees", "nearly agrees", "differs"],
        "fields": {
            name: {"m": [0.8, 0.15, 0.05], "u": [0.05, 0.15, 0.8]} for name in columns
        },
    }
    decided = lf.score(people, scored[["left", "right"]], columns, min_score=classic)
    expected = model.MatchModel(
        prior=0.1,
        m={name: np.array([0.8, 0.15, 0.05]) for name in columns},
        u={name: np.array([0.05, 0.15, 0.8]) for name in columns},
        cuts=(0.99, 0.8),
    ).probability({name: scored[f"{name}_score"].to_numpy() for name in columns})
    np.testing.assert_allclose(decided["match_probability"].to_numpy(), expected)
    assert decided.attrs["lsh_frame"]["model"]["cuts"] == [0.99, 0.8]


@pytest.mark.parametrize("cuts", [[], [0.5, 0.9], [0.9, 0.9], ["a"], [True], "0.9"])
def test_a_saved_model_with_bad_cuts_is_refused(cuts):
    fields = {"a": {"m": [0.5, 0.5], "u": [0.5, 0.5]}}
    with pytest.raises(lf.ConfigError, match="cuts"):
        model.MatchModel.from_dict({"prior": 0.1, "fields": fields, "cuts": cuts})


def test_a_saved_model_whose_levels_do_not_fit_its_cuts_is_refused():
    fields = {"a": {"m": [0.5, 0.3, 0.2], "u": [0.2, 0.3, 0.5]}}
    with pytest.raises(lf.ConfigError, match="invalid numbers"):
        model.MatchModel.from_dict({"prior": 0.1, "fields": fields, "cuts": [0.9]})


def test_finer_levels_keep_signal_in_the_middle_of_the_scale():
    # Matches score 0.9-0.98 on a field, non-matches 0.8-0.89: with the
    # classic levels (0.99, 0.8) both "nearly agree"; the cut at 0.9 tells
    # them apart.
    rng = np.random.default_rng(5)
    size = 4_000
    truth = rng.random(size) < 0.3
    title = np.where(truth, rng.uniform(0.9, 0.98, size), rng.uniform(0.8, 0.89, size))
    fine = model.MatchModel.learn({"title": title}, truth)
    assert fine is not None
    found = fine.probability({"title": title}) >= 0.5
    assert (found == truth).mean() > 0.99
    classic = model.levels_of(title, (0.99, 0.8))
    assert np.unique(classic).tolist() == [1]


def test_fields_that_differ_together_are_grouped():
    rng = np.random.default_rng(6)
    size = 5_000
    size_levels = len(model.LEVEL_CUTS) + 1
    moved = rng.random(size) < 0.3
    # street and city change together (a move); name differs on its own.
    street = np.where(moved, size_levels - 1, 0)
    city = np.where(moved & (rng.random(size) < 0.95), size_levels - 1, 0)
    name = np.where(rng.random(size) < 0.3, size_levels - 1, 0)
    missing = np.full(size, size_levels)  # a field never present groups with none
    patterns = np.stack([street, city, name, missing], axis=1)
    together = model._differ_together(patterns, np.ones(size), size_levels)
    assert together.tolist() == [
        [True, True, False, False],
        [True, True, False, False],
        [False, False, True, False],
        [False, False, False, True],
    ]


def test_leaving_out_fields_that_differ_together_finds_people_who_moved():
    rng = np.random.default_rng(7)
    size = 40_000
    bottom = len(model.LEVEL_CUTS)
    truth = rng.random(size) < 0.1
    moved = truth & (rng.random(size) < 0.3)
    # Matches mostly agree on name and birth date; a third of them moved
    # (street, city and postcode all differ). Non-matches: look-alikes that
    # share the whole address half the time, the name or birth date rarely.
    same_place = rng.random(size) < 0.5

    def agrees(share_matches: float, share_others: float) -> np.ndarray:
        share = np.where(truth, share_matches, share_others)
        return np.where(rng.random(size) < share, 0, bottom)

    name, born, phone = agrees(0.95, 0.02), agrees(0.95, 0.01), agrees(0.9, 0.01)
    place = np.where(truth & ~moved, 0, np.where(~truth & same_place, 0, bottom))
    labels = ["name", "born", "phone", "street", "city", "postcode"]
    columns = [name, born, phone, place, place, place]
    levels = dict(zip(labels, columns, strict=True))
    start = model.MatchModel.learn_levels(levels, truth & ~moved)
    assert start is not None
    assert (start.probability_of_levels(levels)[moved] < 0.5).mean() > 0.9
    patterns, counts = model._level_patterns(columns)
    weights = counts.astype(np.float64)
    unmatched = weights * (1 - start._pattern_probability(labels, patterns))
    together = model._differ_together(patterns, unmatched, start.size)
    assert together[3:, 3:].all() and not together[:3, 3:].any()
    careful = start
    for _ in range(5):
        careful = careful.leave_one_out(labels, patterns, weights)
    found = careful.probability_of_levels(levels) >= 0.5
    assert found[moved].mean() > 0.8
    assert found[~truth].mean() < 0.01


def test_long_text_fields_are_read_at_finer_levels():
    words = [f"w{i}" for i in range(400)]
    rng = np.random.default_rng(9)
    titles = [" ".join(rng.choice(words, 8)) for _ in range(300)]
    frame = pd.DataFrame(
        {"title": titles + titles, "code": [f"c{i}" for i in range(600)]}
    )
    pairs = pd.DataFrame(
        {
            "left": np.arange(300),
            "right": (np.arange(300) + rng.integers(0, 2, 300) * 7) % 600,
        }
    )
    scored = lf.score(frame, pairs, ["title", "code"])
    info = scored.attrs["lsh_frame"]
    assert info["compare"]["title"] == "tfidf"
    learned = info["model"]
    assert learned["field_cuts"] == {"title": list(model.FINE_CUTS)}
    assert len(learned["fields"]["title"]["m"]) == len(model.FINE_CUTS) + 1
    assert len(learned["fields"]["code"]["m"]) == len(model.LEVEL_CUTS) + 1
    again = lf.score(frame, pairs, ["title", "code"], min_score=learned)
    np.testing.assert_allclose(
        again["match_probability"].to_numpy(), scored["match_probability"].to_numpy()
    )
    broken = {**learned, "field_cuts": {"title": [0.3, 0.9]}}
    with pytest.raises(lf.ConfigError, match="cuts"):
        model.MatchModel.from_dict(broken)
    elsewhere = {**learned, "field_cuts": {"nope": list(model.FINE_CUTS)}}
    with pytest.raises(lf.ConfigError, match="field_cuts"):
        model.MatchModel.from_dict(elsewhere)


@settings(max_examples=25, deadline=None)
@given(share=st.floats(0.0, 0.6), seed=st.integers(0, 1_000))
def test_the_prior_among_some_pairs_is_their_share_of_matches(share, seed):
    # Two fields whose levels are drawn from m among matches and u otherwise:
    # with m and u held fixed, EM on the prior recovers the share of matches.
    rng = np.random.default_rng(seed)
    m = {"a": np.array([0.8, 0.1, 0.05, 0.05]), "b": np.array([0.7, 0.2, 0.05, 0.05])}
    u = {"a": np.array([0.02, 0.08, 0.2, 0.7]), "b": np.array([0.05, 0.1, 0.25, 0.6])}
    fitted = model.MatchModel(prior=0.5, m=m, u=u, cuts=(0.99, 0.9, 0.8))
    size = 20_000
    is_match = rng.random(size) < share
    levels = {
        label: np.where(
            is_match, rng.choice(4, size, p=m[label]), rng.choice(4, size, p=u[label])
        )
        for label in m
    }
    table = model.LevelTable.of(levels, np.zeros(size, dtype=bool))
    estimate = fitted.prior_among(["a", "b"], table)
    assert abs(estimate - is_match.mean()) < 0.02
    # A fixed point: the mean posterior under the estimate is the estimate.
    posterior = dataclasses.replace(fitted, prior=estimate).probability_of_levels(
        levels
    )
    assert abs(posterior.mean() - estimate) < 1e-4


@pytest.mark.parametrize("alone_prior", [0.0, 1.0, 1.5, "0.1", True])
def test_a_saved_model_with_a_bad_alone_prior_is_refused(alone_prior):
    fields = {"a": {"m": [0.8, 0.15, 0.05], "u": [0.05, 0.15, 0.8]}}
    saved = {"prior": 0.1, "fields": fields}
    assert model.MatchModel.from_dict(saved).alone_prior is None
    good = model.MatchModel.from_dict({**saved, "alone_prior": 0.01})
    assert good.alone_prior == 0.01 and good.to_dict()["alone_prior"] == 0.01
    with pytest.raises(lf.ConfigError, match="alone_prior"):
        model.MatchModel.from_dict({**saved, "alone_prior": alone_prior})


def test_found_by_of_pandas_string_dtype_with_missing_values_is_read():
    people = lf.datasets.make_customers(400, seed=4)
    columns = ["given_name", "surname", "date_of_birth", "email"]
    scored = lf.pairs(people, columns)
    pairs = scored[["left", "right", "found_by"]].copy()
    pairs["found_by"] = pairs["found_by"].astype("string")
    pairs.loc[pairs.index[:3], "found_by"] = pd.NA
    again = lf.score(
        people, pairs, columns, min_score=scored.attrs["lsh_frame"]["model"]
    )
    alone = (
        (pairs["found_by"] == "record_neighbours").fillna(False).to_numpy(dtype=bool)
    )
    np.testing.assert_allclose(
        again["match_probability"].to_numpy()[alone],
        scored["match_probability"].to_numpy()[alone],
    )
