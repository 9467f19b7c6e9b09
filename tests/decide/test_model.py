"""The match model's levels, its provisional cut and saved models (lsh_frame.decide)."""

from __future__ import annotations

import dataclasses
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame.compare import levels as compare_levels
from lsh_frame.decide import cut as decide_cut
from lsh_frame.decide import em, learn, model, tables


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(st.floats(0.0, 1.0), st.just(float("nan"))), min_size=1, max_size=40
    )
)
def test_levels_count_the_cuts_a_score_falls_below(values):
    scores = np.array(values, dtype=np.float64)
    cuts = compare_levels.LEVEL_CUTS
    levels = compare_levels.levels_of(scores, cuts)
    for value, level in zip(values, levels.tolist(), strict=True):
        if np.isnan(value):
            assert level == len(cuts) + 1
        else:
            assert level == sum(value < cut for cut in cuts)


def test_level_names_describe_each_level():
    names = compare_levels.level_names((0.99, 0.8))
    assert names == [">= 0.99", "[0.8, 0.99)", "< 0.8"]
    assert (
        len(compare_levels.level_names(compare_levels.LEVEL_CUTS))
        == len(compare_levels.LEVEL_CUTS) + 1
    )


def test_the_cut_ignores_a_small_bump_at_the_top():
    rng = np.random.default_rng(3)
    # Citations: non-matches around 0.62, matches spread widely around 0.88,
    # and some exact copies at 1.0. The valley between the two groups is the
    # cut, not the shallow dip just below the copies.
    low = rng.normal(0.62, 0.06, 20_000)
    high = rng.normal(0.88, 0.07, 15_000)
    spike = np.ones(400)
    scores = np.clip(np.concatenate([low, high, spike]), 0, 1)
    cut = decide_cut.auto_min_score(scores)
    assert 0.7 <= cut <= 0.8
    assert (high >= cut).mean() > 0.9


def test_one_group_of_scores_has_no_valley():
    rng = np.random.default_rng(4)
    scores = np.clip(rng.normal(0.45, 0.12, 5_000), 0, 1)
    assert decide_cut.auto_min_score(scores) == decide_cut.DEFAULT_MIN_SCORE


def test_a_clear_valley_is_told_from_a_dip_below_near_copies():
    rng = np.random.default_rng(6)
    two_groups = np.concatenate(
        [rng.normal(0.4, 0.05, 900), rng.normal(0.95, 0.02, 100)]
    )
    cut, depth = decide_cut.ScoreSpread.of(two_groups).valley()
    assert depth < 0.1 and decide_cut.ScoreSpread.of(two_groups).clear
    assert cut == decide_cut.auto_min_score(two_groups)
    # Copies of citations: matches spread over the upper half with no valley
    # above the non-matches, and a spike of near-copies at the top. The only
    # valley is the dip below the spike: the cut, but not a clear one.
    spread = np.clip(
        np.concatenate(
            [
                rng.normal(0.4, 0.08, 20_000),
                rng.uniform(0.5, 0.9, 8_000),
                rng.normal(0.97, 0.015, 500),
            ]
        ),
        0,
        1,
    )
    cut, depth = decide_cut.ScoreSpread.of(spread).valley()
    assert cut >= 0.9
    assert decide_cut.ScoreSpread.of(spread).clear is (
        depth <= decide_cut._CLEAR_VALLEY
    )
    assert not decide_cut.ScoreSpread.of(spread).clear
    # One group: no valley at all. The default cut is kept with the model's
    # usual guards (clear), as without the test: nothing says it is a dip.
    one = np.clip(rng.normal(0.45, 0.12, 5_000), 0, 1)
    assert decide_cut.ScoreSpread.of(one).valley() == (
        decide_cut.DEFAULT_MIN_SCORE,
        None,
    )
    assert decide_cut.ScoreSpread.of(one).clear


def _levelled(rng, size, shares):
    """Field scores at each level (1.0, 0.95, 0.85, else 0.3) with these shares."""
    draw = rng.random(size)
    bounds = np.cumsum(shares)
    return np.select(
        [draw < bounds[0], draw < bounds[1], draw < bounds[2]], [1.0, 0.95, 0.85], 0.3
    )


def _grouped_scores(rng, sizes, shares):
    """Each field's scores over groups of pairs of these sizes, at their shares."""
    return {
        name: np.concatenate(
            [
                _levelled(rng, size, part)
                for size, part in zip(sizes, parts, strict=True)
            ]
        )
        for name, parts in shares.items()
    }


def test_em_finds_the_matches_an_unclear_split_left_out():
    # Citations: the matches agree on the title but write authors, venues and
    # pages many ways, so their combined scores spread over the upper half and
    # the cut keeps only the surest. With an unclear split EM may grow the
    # matches as far as the data says; with a clear one it may not.
    rng = np.random.default_rng(5)
    matches, others = 2_000, 3_000
    shares = {
        "title": ((0.75, 0.1, 0.1), (0.02, 0.03, 0.15)),
        "author": ((0.35, 0.2, 0.25), (0.05, 0.05, 0.2)),
        "venue": ((0.25, 0.1, 0.1), (0.08, 0.02, 0.1)),
        "year": ((0.6, 0.0, 0.2), (0.2, 0.0, 0.3)),
        "pages": ((0.3, 0.1, 0.1), (0.01, 0.01, 0.03)),
    }
    scores = {
        name: np.concatenate(
            [_levelled(rng, matches, inside), _levelled(rng, others, outside)]
        )
        for name, (inside, outside) in shares.items()
    }
    truth = np.arange(matches + others) < matches
    combined = np.mean(np.column_stack(list(scores.values())), axis=1)
    spread = decide_cut.ScoreSpread.of(combined)
    assert not spread.clear
    levels = {name: model.MatchModel.levels(values) for name, values in scores.items()}
    start = model.MatchModel.learn_levels(levels, combined >= spread.cut())
    found = {}
    for clear in (True, False):
        refined, fit = model.MatchModel.refine(levels, start, clear)
        assert fit["split"] == ("clear" if clear else "unclear")
        assert fit["em_kept"] is not clear
        # Both starts reach this one fit: the split's is kept.
        assert fit["em_start"] == "split"
        found[clear] = refined.probability_of_levels(levels) >= 0.5
    for clear, precision, recall in ((True, 0.99, 0.1), (False, 0.9, 0.9)):
        hits = (found[clear] & truth).sum()
        assert hits / found[clear].sum() > precision
        assert hits / matches > recall
    assert (found[False] & truth).sum() > 3 * (found[True] & truth).sum()


def test_an_unclear_split_still_rejects_a_fit_whose_matches_mostly_differ():
    # Relatives who share a surname, an address and a phone but not a given
    # name outnumber the duplicates: EM takes them for people, and its
    # "matches" then differ on given names far more often than they agree.
    rng = np.random.default_rng(8)
    sizes = (300, 3_000, 1_000)  # duplicates, relatives, strangers
    shares = {
        "given_name": ((0.8, 0.1, 0.05), (0.02, 0.02, 0.02), (0.02, 0.02, 0.02)),
        "surname": ((0.9, 0.05, 0.03), (0.97, 0.02, 0.01), (0.05, 0.02, 0.02)),
        "address": ((0.7, 0.1, 0.1), (0.95, 0.03, 0.02), (0.02, 0.02, 0.02)),
        "phone": ((0.6, 0.1, 0.1), (0.9, 0.05, 0.0), (0.0, 0.0, 0.0)),
    }
    scores = _grouped_scores(rng, sizes, shares)
    truth = np.arange(sum(sizes)) < sizes[0]
    levels = {name: model.MatchModel.levels(values) for name, values in scores.items()}
    start = model.MatchModel.learn_levels(levels, truth)
    patterns, counts = tables._level_patterns(list(levels.values()))
    taken, _, converged = start.expectation_maximisation(
        list(levels), patterns, counts.astype(np.float64), 1_000
    )
    assert converged and taken.m["given_name"][-1] > 2 / 3
    assert not taken.mostly_agrees(2 / 3)
    refined, fit = model.MatchModel.refine(levels, start, clear=False)
    assert fit["em_kept"] is False and fit["em_growth"] > 2
    found = refined.probability_of_levels(levels) >= 0.5
    assert found.sum() < 1.5 * sizes[0]
    assert (found & truth).sum() / found.sum() > 0.75


def test_a_pair_whose_only_shared_evidence_disagrees_is_no_match():
    # The prior says most candidates match (0.72); the one field both records
    # hold differs a little more among matches than among non-matches. The
    # posterior stays above 0.5, but nothing speaks for a match.
    from lsh_frame.decide import matches as decide_matches

    learned = model.MatchModel(
        prior=0.72,
        m={
            "dob": np.array([0.8, 0.05, 0.05, 0.1]),
            "city": np.array([0.7, 0.1, 0.1, 0.1]),
        },
        u={
            "dob": np.array([0.78, 0.05, 0.05, 0.12]),
            "city": np.array([0.2, 0.1, 0.1, 0.6]),
        },
    )
    levels = {
        "dob": np.array([3, 0, 3, 4]),  # differs, agrees, differs, missing
        "city": np.array([4, 4, 0, 4]),  # missing, missing, agrees, missing
    }
    probability, match = decide_matches.decide(None, learned, levels, None)  # type: ignore[arg-type]
    assert probability[0] > 0.5 and probability[3] > 0.5  # the prior alone
    assert match.tolist() == [False, True, True, False]
    assert learned.speaks_for(levels).tolist() == [False, True, True, False]


def test_a_saved_model_keeps_its_cuts_and_older_models_still_decide():
    people = lf.datasets.make_customers(2_000, seed=2)
    columns = ["given_name", "surname", "date_of_birth", "email"]
    scored = lf.pairs(people, columns)
    learned = scored.attrs["lsh_frame"]["model"]
    assert learned["cuts"] == list(compare_levels.LEVEL_CUTS)
    assert len(learned["levels"]) == len(compare_levels.LEVEL_CUTS) + 1
    again = lf.score(
        people,
        scored[["left", "right", "found_by"]],
        columns,
        min_score=json.loads(json.dumps(learned)),
    )
    np.testing.assert_allclose(
        again["match_probability"].to_numpy(), scored["match_probability"].to_numpy()
    )
    # The pairs only the neighbours key (or a weak key) found are read with
    # their own prior; without found_by every pair is read with the model's.
    assert "record_neighbours" in learned["alone_keys"]
    alone = lf.decide.weak_keys.found_only_by(scored, tuple(learned["alone_keys"]))
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
    ).probability({name: decided[f"{name}_score"].to_numpy() for name in columns})
    np.testing.assert_allclose(decided["match_probability"].to_numpy(), expected)
    # A model saved before swapped fields and familiar forms of names reads
    # every pair plainly: the pairs this run scored crossed (make_customers
    # swaps names) or read as familiar forms are read as they are.
    read = (
        scored["given_name_surname_swapped"].to_numpy()
        | scored["given_name_nickname"].to_numpy()
        | scored["given_name_initial"].to_numpy()
    )
    assert read.any()
    assert "given_name_surname_swapped" not in decided
    assert "given_name_nickname" not in decided
    assert "given_name_initial" not in decided
    for name in columns:
        straight = decided[f"{name}_score"].to_numpy()
        np.testing.assert_array_equal(
            straight[~read], scored[f"{name}_score"].to_numpy()[~read]
        )
    assert decided.attrs["lsh_frame"]["model"]["cuts"] == [0.99, 0.8]


def test_evidence_adds_up_to_each_pairs_match_probability():
    people = lf.datasets.make_customers(1_500, seed=2)
    columns = ["given_name", "surname", "date_of_birth", "email"]
    scored = lf.pairs(people, columns)
    learned = model.MatchModel.from_dict(scored.attrs["lsh_frame"]["model"])
    alone = lf.decide.weak_keys.found_only_by(scored, learned.alone_keys)
    identical = (scored["found_by"] == "identical").to_numpy()
    assert alone.any() and learned.alone_prior is not None
    evidence = learned.evidence(
        {name: scored[f"{name}_score"].to_numpy() for name in columns}, alone
    )
    np.testing.assert_allclose(
        evidence.probability[~identical],
        scored["match_probability"].to_numpy()[~identical],
        rtol=1e-12,
        atol=1e-15,
    )
    assert set(np.unique(evidence.start)) == {
        np.log2(learned.prior / (1 - learned.prior)),
        np.log2(learned.alone_prior / (1 - learned.alone_prior)),
    }
    # A missing score is the last level and weighs nothing.
    missing = scored["email_score"].isna().to_numpy()
    assert missing.any()
    assert (evidence.levels["email"][missing] == learned.size_of("email")).all()
    assert (evidence.weights["email"][missing] == 0).all()


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
    classic = compare_levels.levels_of(title, (0.99, 0.8))
    assert np.unique(classic).tolist() == [1]


def test_fields_that_differ_together_are_grouped():
    rng = np.random.default_rng(6)
    size = 5_000
    size_levels = len(compare_levels.LEVEL_CUTS) + 1
    moved = rng.random(size) < 0.3
    # street and city change together (a move); name differs on its own.
    street = np.where(moved, size_levels - 1, 0)
    city = np.where(moved & (rng.random(size) < 0.95), size_levels - 1, 0)
    name = np.where(rng.random(size) < 0.3, size_levels - 1, 0)
    missing = np.full(size, size_levels)  # a field never present groups with none
    patterns = np.stack([street, city, name, missing], axis=1)
    together = em._differ_together(patterns, np.ones(size), size_levels)
    assert together.tolist() == [
        [True, True, False, False],
        [True, True, False, False],
        [False, False, True, False],
        [False, False, False, True],
    ]


def _agrees(
    rng: np.random.Generator,
    truth: np.ndarray,
    share_matches: float,
    share_others: float,
) -> np.ndarray:
    """Top level where a pair agrees (by its class's share), else the lowest."""
    share = np.where(truth, share_matches, share_others)
    return np.where(rng.random(truth.size) < share, 0, len(compare_levels.LEVEL_CUTS))


def test_leaving_out_fields_that_differ_together_finds_people_who_moved():
    rng = np.random.default_rng(7)
    size = 40_000
    bottom = len(compare_levels.LEVEL_CUTS)
    truth = rng.random(size) < 0.1
    moved = truth & (rng.random(size) < 0.3)
    # Matches mostly agree on name and birth date; a third of them moved
    # (street, city and postcode all differ). Non-matches: look-alikes that
    # share the whole address half the time, the name or birth date rarely.
    same_place = rng.random(size) < 0.5

    name, born, phone = (
        _agrees(rng, truth, 0.95, 0.02),
        _agrees(rng, truth, 0.95, 0.01),
        _agrees(rng, truth, 0.9, 0.01),
    )
    place = np.where(truth & ~moved, 0, np.where(~truth & same_place, 0, bottom))
    labels = ["name", "born", "phone", "street", "city", "postcode"]
    columns = [name, born, phone, place, place, place]
    levels = dict(zip(labels, columns, strict=True))
    start = model.MatchModel.learn_levels(levels, truth & ~moved)
    assert start is not None
    assert (start.probability_of_levels(levels)[moved] < 0.5).mean() > 0.9
    patterns, counts = tables._level_patterns(columns)
    weights = counts.astype(np.float64)
    unmatched = weights * (1 - start._pattern_probability(labels, patterns))
    together = em._differ_together(patterns, unmatched, start.size)
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
    assert learned["field_cuts"] == {"title": list(compare_levels.FINE_CUTS)}
    assert len(learned["fields"]["title"]["m"]) == len(compare_levels.FINE_CUTS) + 1
    assert len(learned["fields"]["code"]["m"]) == len(compare_levels.LEVEL_CUTS) + 1
    again = lf.score(frame, pairs, ["title", "code"], min_score=learned)
    np.testing.assert_allclose(
        again["match_probability"].to_numpy(), scored["match_probability"].to_numpy()
    )
    broken = {**learned, "field_cuts": {"title": [0.3, 0.9]}}
    with pytest.raises(lf.ConfigError, match="cuts"):
        model.MatchModel.from_dict(broken)
    elsewhere = {**learned, "field_cuts": {"nope": list(compare_levels.FINE_CUTS)}}
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
    table = tables.LevelTable.of(levels, np.zeros(size, dtype=bool))
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
    learned = scored.attrs["lsh_frame"]["model"]
    alone = (
        pairs["found_by"].isin(learned["alone_keys"]).fillna(False).to_numpy(dtype=bool)
    )
    np.testing.assert_allclose(
        again["match_probability"].to_numpy()[alone],
        scored["match_probability"].to_numpy()[alone],
    )


def _three_fields_model(cells: dict[int, tuple[float, float]]) -> model.MatchModel:
    m = np.array([0.85, 0.05, 0.03, 0.07])
    u = np.array([0.3, 0.05, 0.05, 0.6])
    fields = ("street", "city", "postcode")
    return model.MatchModel(
        prior=0.1,
        m=dict.fromkeys((*fields, "name"), m),
        u=dict.fromkeys((*fields, "name"), u),
        together=(tables.Together(fields, cells),),
    )


def test_fields_that_differ_together_weigh_as_one_observation():
    bottom, missing = len(compare_levels.LEVEL_CUTS), len(compare_levels.LEVEL_CUTS) + 1
    cells = {
        ("differ", 0b111): (0.05, 0.5),
        ("differ", 0b011): (0.1, 0.4),
        ("differ", 0b101): (0.2, 0.4),
    }
    learned = _three_fields_model(cells)
    per_field = np.log(0.07 / 0.6)
    # all three differ; two present and differing; one differs alone; two
    # present but only one differs; all agree
    levels = {
        "street": np.array([bottom, bottom, bottom, bottom, 0]),
        "city": np.array([bottom, bottom, 0, missing, 0]),
        "postcode": np.array([bottom, missing, 0, 0, 0]),
        "name": np.array([0, 0, 0, 0, 0]),
    }
    weights = learned.level_weights(levels)
    group = weights["street"] + weights["city"] + weights["postcode"]
    assert group[0] == pytest.approx(np.log(0.05 / 0.5))
    assert weights["street"][0] == pytest.approx(weights["city"][0])
    assert group[1] == pytest.approx(np.log(0.1 / 0.4))
    assert weights["postcode"][1] == 0.0  # missing stays neutral
    assert weights["street"][2] == pytest.approx(per_field)  # not all differ
    assert weights["street"][3] == pytest.approx(per_field)  # ditto
    assert group[4] == pytest.approx(3 * np.log(0.85 / 0.3))
    # The probability and the evidence (bits) both read the shared weights.
    start = np.log(0.1 / 0.9)
    total = start + sum(weights.values())
    np.testing.assert_allclose(
        learned.probability_of_levels(levels), 1 / (1 + np.exp(-total))
    )
    scores = {
        label: np.where(level == bottom, 0.1, 1.0) for label, level in levels.items()
    }
    scores["city"] = np.where(levels["city"] == missing, np.nan, scores["city"])
    scores["postcode"] = np.where(
        levels["postcode"] == missing, np.nan, scores["postcode"]
    )
    evidence = learned.evidence(scores)
    np.testing.assert_allclose(
        evidence.probability, learned.probability_of_levels(levels)
    )


def test_a_part_of_a_group_that_differs_weighs_as_one_observation():
    bottom, missing = len(compare_levels.LEVEL_CUTS), len(compare_levels.LEVEL_CUTS) + 1
    cells = {
        ("differ", 0b111): (0.05, 0.5),
        ("differ among more", 0b011): (0.08, 0.45),
    }
    learned = _three_fields_model(cells)
    per_field = np.log(0.07 / 0.6)
    agrees = np.log(0.85 / 0.3)
    # street and city differ, postcode agrees; street and postcode differ
    # (no cell: each its own); all differ; street and city differ, postcode
    # missing (all present differ: a "differ" cell, none here); one differs
    levels = {
        "street": np.array([bottom, bottom, bottom, bottom, bottom]),
        "city": np.array([bottom, 0, bottom, bottom, 0]),
        "postcode": np.array([0, bottom, bottom, missing, 0]),
        "name": np.zeros(5, dtype=np.intp),
    }
    weights = learned.level_weights(levels)
    assert weights["street"][0] + weights["city"][0] == pytest.approx(
        np.log(0.08 / 0.45)
    )
    assert weights["postcode"][0] == pytest.approx(agrees)  # keeps its own
    assert weights["street"][1] == pytest.approx(per_field)
    assert weights["postcode"][1] == pytest.approx(per_field)
    group = weights["street"] + weights["city"] + weights["postcode"]
    assert group[2] == pytest.approx(np.log(0.05 / 0.5))
    assert group[3] == pytest.approx(2 * per_field)
    assert group[4] == pytest.approx(per_field + 2 * agrees)
    readings = learned.joint_readings(levels)
    assert [
        (fields, kind, chosen.tolist()) for fields, kind, chosen, _ in readings
    ] == [
        (("street", "city", "postcode"), "differ", [False, False, True, False, False]),
        (("street", "city"), "differ", [True, False, False, False, False]),
    ]
    # A model saved without such cells reads those pairs field by field.
    older = _three_fields_model({("differ", 0b111): (0.05, 0.5)})
    assert older.level_weights(levels)["street"][0] == pytest.approx(per_field)


@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4)),
        min_size=1,
        max_size=60,
    ),
    st.lists(st.floats(0, 1), min_size=60, max_size=60),
)
def test_shares_of_a_differing_part_match_a_python_reference(rows, shares):
    bottom, missing = len(compare_levels.LEVEL_CUTS), len(compare_levels.LEVEL_CUTS) + 1
    patterns = np.array(rows, dtype=np.intp)
    patterns[patterns == 4] = missing
    matched = np.array(shares[: len(rows)])
    unmatched = 1 - matched
    fields = ("street", "city", "postcode")
    start = _three_fields_model({})
    grouped = start.with_together(list(fields), patterns, matched, unmatched, (fields,))
    (group,) = grouped.together
    # All three differing leave no other field present: an "all differ" cell.
    assert ("differ among more", 0b111) not in group.cells
    for mask in (0b011, 0b101, 0b110):
        members = [bit for bit in range(3) if mask >> bit & 1]
        want = []
        for mass in (matched, unmatched):
            seen = hit = 0.0
            for row, weight in zip(rows, mass, strict=False):
                levels = [bottom if row[bit] == 3 else row[bit] for bit in members]
                if all(row[bit] != 4 for bit in members):
                    seen += weight
                    hit += weight * all(level == bottom for level in levels)
            want.append((hit + 0.5) / (seen + 1.0))
        assert group.cells["differ among more", mask] == pytest.approx(tuple(want))


def _movers(seed: int) -> tuple[np.ndarray, ...]:
    """Matches of which 15% moved (street, city, postcode all differ), non-matches
    of which a fifth share the whole address (a household): truth, moved,
    household, the name, birth date, e-mail and place levels."""
    rng = np.random.default_rng(seed)
    size = 60_000
    bottom = len(compare_levels.LEVEL_CUTS)
    truth = rng.random(size) < 0.1
    moved = truth & (rng.random(size) < 0.15)
    household = rng.random(size) < 0.2
    name, born = _agrees(rng, truth, 0.9, 0.03), _agrees(rng, truth, 0.95, 0.05)
    email = _agrees(rng, truth, 0.7, 0.01)
    place = np.where(truth & ~moved, 0, np.where(~truth & household, 0, bottom))
    return truth, moved, household, name, born, email, place


def test_refining_finds_people_who_moved_and_kept_their_phone(monkeypatch):
    truth, moved, household, name, born, email, place = _movers(11)
    surname = _agrees(np.random.default_rng(12), truth, 0.9, 0.3)
    bottom = len(compare_levels.LEVEL_CUTS)
    # A household shares its phone; a person who moved kept theirs.
    phone = np.where(truth | household, 0, bottom)
    labels = ["name", "surname", "born", "email", "street", "city", "postcode"]
    labels.append("phone")
    columns = [name, surname, born, email, place, place, place, phone]
    levels = dict(zip(labels, columns, strict=True))
    start = model.MatchModel.learn_levels(levels, truth & ~moved)
    assert start is not None
    refined, fit = model.MatchModel.refine(levels, start)
    assert fit["together"] and "street" in fit["together"][0]
    found = refined.probability_of_levels(levels) >= 0.5
    assert found[moved].mean() > 0.9
    assert found[~truth].mean() < 0.01
    monkeypatch.setattr(model, "_TOGETHER_KINDS", ("differ", "agree"))
    before, _ = model.MatchModel.refine(levels, start)
    assert (before.probability_of_levels(levels)[moved] >= 0.5).mean() < 0.8


def test_a_group_of_independent_fields_weighs_what_its_fields_add_up_to():
    rng = np.random.default_rng(8)
    size = 200_000
    bottom = len(compare_levels.LEVEL_CUTS)
    truth = rng.random(size) < 0.2
    columns = [
        np.where(rng.random(size) < np.where(truth, share, 0.6), bottom, 0)
        for share in (0.1, 0.2, 0.15)
    ]
    labels = ["a", "b", "c"]
    start = model.MatchModel.learn_levels(
        dict(zip(labels, columns, strict=True)), truth
    )
    assert start is not None
    patterns, counts = tables._level_patterns([*columns, truth.astype(np.intp)])
    matched = counts * (patterns[:, -1] == 1)
    grouped = start.with_together(
        labels, patterns[:, :-1], matched, counts - matched, (tuple(labels),)
    )
    all_differ = {label: np.array([bottom]) for label in labels}
    independent = sum(start.level_weights(all_differ).values())
    joint = sum(grouped.level_weights(all_differ).values())
    assert joint == pytest.approx(independent, abs=0.1)


def test_refining_reads_a_move_and_a_household_as_one_fact_each():
    truth, moved, _, name, born, email, place = _movers(9)
    phone = _agrees(np.random.default_rng(10), truth, 0.9, 0.1)
    labels = ["name", "born", "phone", "email", "street", "city", "postcode"]
    columns = [name, born, phone, email, place, place, place]
    levels = dict(zip(labels, columns, strict=True))
    start = model.MatchModel.learn_levels(levels, truth & ~moved)
    assert start is not None
    refined, fit = model.MatchModel.refine(levels, start)
    assert fit["together"] == [["street", "city", "postcode"]]
    assert fit["em_kept"]
    found = refined.probability_of_levels(levels) >= 0.5
    assert found[moved].mean() > 0.8
    assert found[~truth].mean() < 0.01
    # Read as independent fields, the three "differs" out-vote the fields
    # that agree, and EM takes households for the same people.
    assert (start.probability_of_levels(levels)[moved] >= 0.5).mean() < 0.1
    patterns, counts = tables._level_patterns(columns)
    independent, _, _ = dataclasses.replace(
        start, together=()
    ).expectation_maximisation(labels, patterns, counts.astype(np.float64))
    assert (independent.probability_of_levels(levels)[~truth] >= 0.5).mean() > 0.1
    saved = json.loads(json.dumps(refined.to_dict()))
    again = model.MatchModel.from_dict(saved)
    np.testing.assert_allclose(
        again.probability_of_levels(levels), refined.probability_of_levels(levels)
    )


@pytest.mark.parametrize(
    "together",
    [
        "street",
        [{"fields": ["street"], "cells": []}],
        [{"fields": ["street", "nowhere"], "cells": []}],
        [
            {
                "fields": ["street", "city"],
                "cells": [{"present": ["street"], "m": 0.1, "u": 0.2}],
            }
        ],
        [
            {
                "fields": ["street", "city"],
                "cells": [{"present": ["street", "city"], "m": 1.5, "u": 0.2}],
            }
        ],
        [{"fields": ["street", "city"], "cells": [{"present": ["street", "city"]}]}],
        [
            {
                "fields": ["street", "city"],
                "cells": [
                    {"all": "some", "present": ["street", "city"], "m": 0.1, "u": 0.2}
                ],
            }
        ],
    ],
)
def test_a_saved_model_with_bad_groups_is_refused(together):
    saved = _three_fields_model({("differ", 0b11): (0.1, 0.4)}).to_dict()
    saved["together"] = together
    with pytest.raises(lf.ConfigError, match="together"):
        model.MatchModel.from_dict(saved)


def test_a_split_whose_model_is_unsound_starts_again_from_pairs_that_agree():
    # Names and a date of birth: blocking found each record's namesakes, who
    # share the names and differ on the date. The score has no valley between
    # them and the duplicates, and a split that takes both learns that a date
    # which differs speaks for a match: the model is not sound. It starts
    # again from the pairs that agree on every field and finds the duplicates.
    rng = np.random.default_rng(11)
    sizes = (400, 3_000, 2_000)  # duplicates, namesakes, strangers
    shares = {
        "given_name": ((0.8, 0.1, 0.05), (0.9, 0.02, 0.02), (0.02, 0.02, 0.02)),
        "surname": ((0.85, 0.05, 0.05), (0.9, 0.02, 0.02), (0.05, 0.02, 0.02)),
        "dob": ((0.85, 0.0, 0.0), (0.01, 0.0, 0.0), (0.3, 0.0, 0.0)),
        "city": ((0.7, 0.1, 0.0), (0.1, 0.0, 0.0), (0.2, 0.0, 0.0)),
    }
    scores = _grouped_scores(rng, sizes, shares)
    truth = np.arange(sum(sizes)) < sizes[0]
    taken = np.arange(sum(sizes)) < sizes[0] + sizes[1]  # duplicates and namesakes
    levels = {name: model.MatchModel.levels(values) for name, values in scores.items()}
    table = tables.LevelTable.of(levels, taken)
    unsound = model.MatchModel.learn_table(list(levels), table)
    assert not unsound.sound
    taken_for = unsound.probability_of_levels(levels) >= 0.5
    assert (taken_for & truth).sum() / taken_for.sum() < 0.5
    learned, fit = learn.learn_model(list(levels), table, {}, clear=True)
    assert fit["start"] == em._START_AGREEING
    assert learned.sound
    found = learned.probability_of_levels(levels) >= 0.5
    hits = (found & truth).sum()
    assert hits / found.sum() > 0.9 and hits / sizes[0] > 0.5
    # A sound split is learned from as before: no new start.
    _, kept = learn.learn_model(list(levels), tables.LevelTable.of(levels, truth), {})
    assert "start" not in kept


def test_the_agreeing_split_counts_only_fields_both_records_fill():
    # Levels 0-3, 4 = missing; a pair needs two filled fields, all at level 0.
    rows = np.array(
        [
            [0, 0, 4, 1],  # agrees on both fields it fills
            [0, 4, 4, 1],  # one field filled: not sure
            [0, 1, 0, 0],  # nearly on one field
            [0, 0, 0, 0],  # agrees on all three
        ],
        dtype=np.uint8,
    )
    split = learn._agreeing_split(
        tables.LevelTable(rows, np.array([5, 6, 7, 8])), np.array([4, 4, 4])
    )
    agreeing = {tuple(row[:-1]): bool(row[-1]) for row in split.rows.tolist()}
    assert agreeing == {
        (0, 0, 4): True,
        (0, 4, 4): False,
        (0, 1, 0): False,
        (0, 0, 0): True,
    }
    assert split.pairs == 26


def test_a_field_written_differently_in_the_two_tables_does_not_reject_em():
    # Two restaurant guides name cuisines their own way ("american" and
    # "steakhouses"): matches differ on the cuisine nine times in ten, in
    # the split's model and after EM alike. That is no sign of a fit that
    # took another group, so EM is kept; a field whose matches EM turned from
    # agreeing to differing still rejects it (the test above).
    rng = np.random.default_rng(3)
    matches, others = 1_500, 3_000
    shares = {
        "name": ((0.7, 0.1, 0.1), (0.02, 0.02, 0.1)),
        "address": ((0.5, 0.1, 0.2), (0.03, 0.05, 0.1)),
        "phone": ((0.6, 0.2, 0.1), (0.01, 0.02, 0.02)),
        "city": ((0.6, 0.0, 0.1), (0.5, 0.0, 0.05)),
        "cuisine": ((0.1, 0.0, 0.0), (0.06, 0.0, 0.0)),
    }
    scores = _grouped_scores(rng, (matches, others), shares)
    truth = np.arange(matches + others) < matches
    combined = np.mean(np.column_stack(list(scores.values())), axis=1)
    levels = {name: model.MatchModel.levels(values) for name, values in scores.items()}
    start = model.MatchModel.learn_levels(levels, combined >= 0.85)
    assert start.m["cuisine"][-1] > 2 / 3
    refined, fit = model.MatchModel.refine(levels, start, clear=False)
    assert not refined.mostly_agrees(2 / 3)  # what rejected such fits before
    assert fit["em_kept"] is True
    found = refined.probability_of_levels(levels) >= 0.5
    hits = (found & truth).sum()
    assert hits / found.sum() > 0.9 and hits / matches > 0.8
    assert start.probability_of_levels(levels)[truth].mean() < 0.8 * hits / matches


def _level_likelihoods(labels, patterns, weights, fitted):
    """Brute-force log-likelihood of a model without groups."""
    total = 0.0
    for pattern, weight in zip(patterns, weights, strict=True):
        match, other = fitted.prior, 1 - fitted.prior
        for column, label in enumerate(labels):
            level = pattern[column]
            if level < fitted.size_of(label):
                match *= fitted.m[label][level]
                other *= fitted.u[label][level]
        total += weight * np.log(match + other)
    return total


def _shipped_levels(name):
    """A level table shipped in tests/data (levels and counts, no records)."""
    from pathlib import Path

    saved = np.load(Path(__file__).parents[1] / "data" / f"{name}.npz")
    labels = [str(label) for label in saved["labels"]]
    field_cuts = {
        label: compare_levels.FINE_CUTS if fine else compare_levels.LEVEL_CUTS
        for label, fine in zip(labels, saved["fine"], strict=True)
    }
    return (
        labels,
        field_cuts,
        tables.LevelTable(saved["rows"].astype(np.intp), saved["counts"]),
    )


def test_em_keeps_the_likelier_of_two_starts():
    """Level patterns of a citation table (counts only, no records) on which
    EM from the provisional split stops at a poorer fixed point."""
    labels, field_cuts, table = _shipped_levels("two_fixed_points")
    learned, fit = learn.learn_model(labels, table, field_cuts, clear=False)
    assert fit["em_kept"] and fit["em_start"] == "vague"
    patterns, counts = table.fields()
    weights = counts.astype(np.float64)
    # What the first start alone reaches: fewer matches, a poorer fit.
    start = model.MatchModel.learn_table(labels, table, field_cuts)
    careful = start
    for _ in range(em._LEAVE_ONE_OUT_STEPS):
        careful = careful.leave_one_out(labels, patterns, weights)
    alone, _, converged = careful.expectation_maximisation(
        labels, patterns, weights, em._EM_ITERATIONS_UNCLEAR
    )
    assert converged
    assert learned.prior > alone.prior + 0.1
    kept = learned.log_likelihood(labels, patterns, weights)
    lost = alone.log_likelihood(labels, patterns, weights)
    assert kept > lost + 100
    # The likelihood is the mixture's, computed pattern by pattern.
    few = slice(0, 300)
    assert np.isclose(
        learned.log_likelihood(labels, patterns[few], weights[few]),
        _level_likelihoods(labels, patterns[few], weights[few], learned),
    )


def test_em_reads_the_fields_apart_when_their_group_leads_it_astray():
    """Level patterns of a citation table with clean years and page numbers
    (counts only, no records): title, year and pages differ together among its
    look-alikes (two versions of one paper), and EM with the three read as one
    takes another group for the matches (an unsound fit, not kept). A fit with
    each field read alone is kept instead of no refinement at all."""
    labels, field_cuts, table = _shipped_levels("fields_read_apart")
    learned, fit = learn.learn_model(labels, table, field_cuts, clear=False)
    assert fit["em_kept"]
    assert fit["together"] == []
    assert fit["together_dropped"] == [["title", "year", "pages"]]
    assert not learned.together
    # What the group read as one gives: EM's fit is not sound, so without the
    # second reading the model would stay at the split's surest matches.
    patterns, counts = table.fields()
    weights = counts.astype(np.float64)
    careful = model.MatchModel.learn_table(labels, table, field_cuts)
    for _ in range(em._LEAVE_ONE_OUT_STEPS):
        careful = careful.leave_one_out(labels, patterns, weights)
    matched, unmatched = careful._soft_counts(labels, patterns, weights)
    groups = careful.groups_differing(labels, patterns, unmatched)
    assert groups == (("title", "year", "pages"),)
    grouped = careful.with_together(labels, patterns, matched, unmatched, groups)
    astray, _, _ = grouped.expectation_maximisation(
        labels, patterns, weights, em._EM_ITERATIONS_UNCLEAR
    )
    assert not astray.sound
    assert learned.prior > 3 * careful.prior
    assert learned.sound and learned.mostly_agrees(em._MOST_DIFFER_UNCLEAR)


def test_a_link_warns_of_no_invalid_square_root():
    """Issue 38, defect 13: a mean over 1 by rounding made sqrt warn."""
    left = lf.datasets.make_customers(300, seed=3).drop(columns="entity_id")
    right = lf.datasets.make_customers(200, seed=8).drop(columns="entity_id")
    columns = ["given_name", "surname", "street_address", "date_of_birth", "email"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        warnings.simplefilter("error", RuntimeWarning)
        linked = left.lsh.link(right, columns)
    assert linked["match"].any()


def test_a_field_that_always_differs_is_not_together_with_another():
    """A field that differs on every pair has no spread: not together (no NaN)."""
    rng = np.random.default_rng(0)
    size = int(rng.integers(50, 3_000))
    # Weights whose dot product and sum round apart (here the mean is 1 + 4e-16).
    weights = rng.random(size) * rng.random(size)
    patterns = np.ones((weights.size, 2), dtype=np.intp)  # the lowest of 2 levels
    patterns[::2, 1] = 0  # the second field agrees on half of the pairs
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        together = em._differ_together(patterns, weights, 2)
    assert together.tolist() == [[True, False], [False, True]]
