"""Pairs whose records share most of their matches (lsh_frame.decide.closing)."""

from __future__ import annotations

import contextlib
import itertools
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from conftest import COPIES_FIELDS, chained_people
from hypothesis import given, settings
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame.decide import closing as transitive
from lsh_frame.decide import pairs as pairs_module
from lsh_frame.decide import score as score_module
from lsh_frame.decide.closing import MatchGraph, closed_pairs


def _neighbours(edges: set[tuple[int, int]], records: int) -> list[set[int]]:
    around: list[set[int]] = [set() for _ in range(records)]
    for a, b in edges:
        if a != b:
            around[a].add(b)
            around[b].add(a)
    return around


def _graph_and_neighbours(
    matched: list[tuple[int, int]], records: int
) -> tuple[MatchGraph, list[set[int]]]:
    first = np.array([a for a, _ in matched], dtype=np.int64)
    second = np.array([b for _, b in matched], dtype=np.int64)
    return MatchGraph.of(first, second), _neighbours(set(matched), records)


@st.composite
def graphs(draw):
    records = draw(st.integers(1, 12))
    pair = st.tuples(st.integers(0, records - 1), st.integers(0, records - 1))
    matched = draw(st.lists(pair, max_size=40))
    asked = draw(st.lists(pair, max_size=40))
    return records, matched, asked


@settings(max_examples=200, deadline=None)
@given(graphs())
def test_closed_share_and_closing_agree_with_brute_force(case):
    records, matched, asked = case
    graph, around = _graph_and_neighbours(matched, records)
    everyone = np.arange(records)
    assert graph.degrees(everyone).tolist() == [len(side) for side in around]
    paths = closed = 0
    for middle in range(records):
        for x, z in itertools.permutations(sorted(around[middle]), 2):
            paths += 1
            closed += z in around[x]
    share = graph.closed_share()
    if paths == 0:
        assert share is None
    else:
        assert share == pytest.approx(closed / paths)

    left = np.array([a for a, _ in asked], dtype=np.int64)
    right = np.array([b for _, b in asked], dtype=np.int64)
    match = np.array([b in around[a] for a, b in asked], dtype=bool)
    expected = [
        a != b
        and not is_match
        and len(around[a] & around[b]) >= transitive.SHARED_AT_LEAST
        and len(around[a] & around[b])
        >= transitive.SHARED_SHARE * min(len(around[a]), len(around[b]))
        for (a, b), is_match in zip(asked, match, strict=True)
    ]
    assert transitive.closing(graph, left, right, match).tolist() == expected


def _clique_missing_one_pair():
    # Records 0-3 all match each other but 0-3; record 4 matches nothing.
    pairs = [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (0, 3), (3, 4)]
    first = np.array([a for a, _ in pairs])
    second = np.array([b for _, b in pairs])
    match = np.array([True, True, True, True, True, False, False])
    return first, second, match


def test_auto_closes_a_cluster_and_reports_it():
    first, second, match = _clique_missing_one_pair()
    closed, info = transitive.close(
        "auto", link=False, first=first, second=second, match=match
    )
    assert closed.tolist() == [True] * 6 + [False]  # 3-4 shares no match
    assert info["applied"] and info["added"] == 1
    assert info["closed_share"] == pytest.approx(12 / 16)
    assert "form clusters" in info["reason"]
    assert match.tolist()[5] is False  # the input is not changed


def test_auto_leaves_matches_that_do_not_form_clusters():
    # A star: the centre matched to four records that match nothing else
    # (a record matched many times is a confusion, not a cluster).
    first = np.array([0, 0, 0, 0, 1, 2])
    second = np.array([1, 2, 3, 4, 2, 3])
    match = np.array([True, True, True, True, False, False])
    closed, info = transitive.close(
        "auto", link=False, first=first, second=second, match=match
    )
    assert closed.tolist() == match.tolist()
    assert not info["applied"] and info["closed_share"] == 0.0
    assert "do not form clusters" in info["reason"]
    forced, forced_info = transitive.close(
        True, link=False, first=first, second=second, match=match
    )
    # 1 and 2 share one match (0): fewer than SHARED_AT_LEAST.
    assert forced_info["applied"] and forced.tolist() == match.tolist()


@pytest.mark.parametrize(
    ("rule", "link", "decided_here", "applied"),
    [
        ("auto", False, True, True),
        ("auto", False, False, False),  # the caller's min_score decided
        (True, False, False, True),
        (False, False, True, False),
        ("auto", True, True, False),
    ],
)
def test_when_the_rule_applies(rule, link, decided_here, applied):
    first, second, match = _clique_missing_one_pair()
    closed, info = transitive.close(
        rule,
        link=link,
        first=first,
        second=second,
        match=match,
        decided_here=decided_here,
    )
    assert info["applied"] is applied
    assert int(closed.sum()) == int(match.sum()) + (1 if applied else 0)
    assert info["rule"] == rule


def test_positions_far_apart_hold_only_the_matched_records():
    # Positions of a table of ten billion rows: the graph holds four records.
    far = 10**10
    first, second, match = _clique_missing_one_pair()
    first, second = first * far, second * far
    graph = MatchGraph.of(first[match], second[match])
    assert graph.records.tolist() == [0, far, 2 * far, 3 * far]
    closed, info = transitive.close(
        "auto", link=False, first=first, second=second, match=match
    )
    assert closed.tolist() == [True] * 6 + [False] and info["added"] == 1


def test_a_pair_the_decision_refused_for_itself_stays_unmatched():
    first, second, match = _clique_missing_one_pair()
    probability = np.where(match, 0.9, 0.1)
    probability[5] = 0.8  # at or above the cut, yet no match: its fields differ
    refused = transitive.closable(probability, 0.5, np.zeros(7, dtype=bool))
    closed, info = transitive.close(
        True, link=False, first=first, second=second, match=match, closable=refused
    )
    assert closed.tolist() == match.tolist() and info["added"] == 0


def test_a_star_of_identical_copies_is_read_as_one_record():
    # 0-1-2-3 a cluster missing 0-3; record 3 has 40 identical copies (4..43),
    # paired as a star with it, as lsh_frame.block.identical pairs a large group.
    first, second, match = _clique_missing_one_pair()
    copies = np.arange(4, 44)
    first = np.concatenate([first[:6], np.full(copies.size, 3)])
    second = np.concatenate([second[:6], copies])
    match = np.concatenate([match[:6], np.ones(copies.size, dtype=bool)])
    identical = np.arange(first.size) >= 6
    probability = np.where(match, 1.0, 0.2)
    _, blind = transitive.close(
        "auto", link=False, first=first, second=second, match=match
    )
    assert not blind["applied"]  # the star's open paths outnumber the cluster's
    closed, info = transitive.close(
        "auto",
        link=False,
        first=first,
        second=second,
        match=match,
        identical=identical,
        closable=transitive.closable(probability, 0.5, identical),
    )
    assert info["applied"] and info["closed_share"] == pytest.approx(12 / 16)
    assert closed[5] and info["added"] == 1


@pytest.mark.parametrize(
    ("value", "error"),
    [("yes", lf.ConfigError), (1, lf.ConfigTypeError), (None, lf.ConfigTypeError)],
)
def test_bad_values_are_refused(value, error):
    frame = pd.DataFrame({"name": ["ann lee", "ann lee"]})
    with pytest.raises(error, match="'transitive' parameter of pairs"):
        lf.pairs(frame, ["name"], transitive=value)


def test_true_needs_one_table():
    frame = pd.DataFrame({"name": ["ann lee", "bob ray"]})
    with pytest.raises(lf.ConfigError, match="within one table"):
        lf.pairs(frame, ["name"], other=frame.copy(), transitive=True)
    with pytest.raises(lf.ConfigError, match="within one table"):
        pairs = pd.DataFrame({"left": [0], "right": [0]})
        lf.score(frame, pairs, ["name"], other=frame.copy(), transitive=True)


def test_closing_changes_pairs_not_entities(people_with_copies):
    frame = people_with_copies
    before = frame.copy()
    fields = COPIES_FIELDS
    plain = lf.pairs(frame[fields], fields, transitive=False)
    closed = lf.pairs(frame[fields], fields, transitive=True)
    pd.testing.assert_frame_equal(frame, before)
    info = closed.attrs["lsh_frame"]["transitive"]
    assert info["applied"] and info["added"] > 0
    # The copies closed are true pairs: recall rises, precision holds.
    truth = frame["entity"]
    assert lf.evaluate(closed, truth).recall > lf.evaluate(plain, truth).recall
    assert lf.evaluate(closed, truth).precision > 0.98
    assert plain.attrs["lsh_frame"]["transitive"]["applied"] is False
    # The candidates come first, then the pairs found through the matches.
    rows = len(plain)
    assert len(closed) == rows + info["through_matches"]["pairs"]
    blocked = closed.iloc[:rows]
    added = blocked["match"] & ~plain["match"]
    assert int(added.sum()) + info["through_matches"]["closed"] == info["added"]
    assert not (plain["match"] & ~blocked["match"]).any()
    pd.testing.assert_frame_equal(
        blocked.drop(columns="match").astype({"found_by": str}),
        plain.drop(columns="match").astype({"found_by": str}),
    )
    # The entities are those of the matches before closing: cluster leaves
    # the closed pairs out (they would make chained entities look dense).
    pd.testing.assert_series_equal(lf.cluster(frame, closed), lf.cluster(frame, plain))
    assert transitive.closed_pairs(closed).sum() == info["added"]
    assert not transitive.closed_pairs(plain).any()
    # Without the attrs that say so, every match links (the same components).
    bare = closed.copy()
    bare.attrs = {}
    assert not transitive.closed_pairs(bare).any()
    ids = [lf.cluster(frame, scored, split=False) for scored in (plain, bare)]
    pd.testing.assert_series_equal(ids[0], ids[1])


def test_a_saved_model_closes_the_same_pairs(people_with_copies):
    frame = people_with_copies[COPIES_FIELDS]
    closed = lf.pairs(frame, COPIES_FIELDS)
    again = lf.pairs(frame, COPIES_FIELDS, min_score=closed.attrs["lsh_frame"]["model"])
    pd.testing.assert_series_equal(again["match"], closed["match"])
    assert (
        again.attrs["lsh_frame"]["transitive"]
        == closed.attrs["lsh_frame"]["transitive"]
    )
    # A number given as min_score is the caller's decision: left as it is.
    cut = lf.pairs(frame, COPIES_FIELDS, min_score=0.75)
    assert (cut["match"] == (cut["score"] >= 0.75)).all()
    assert cut.attrs["lsh_frame"]["transitive"]["applied"] is False


@settings(max_examples=200, deadline=None)
@given(graphs())
def test_pairs_through_matches_agree_with_brute_force(case):
    records, matched, _ = case
    graph, around = _graph_and_neighbours(matched, records)
    expected = sorted(
        {
            pair
            for middle in range(records)
            for pair in itertools.combinations(sorted(around[middle]), 2)
        }
    )
    assert transitive.path_pairs(graph) == sum(
        len(side) * (len(side) - 1) // 2 for side in around
    )
    for chunk in (transitive.ROUND_CHUNK, 1, 3):
        with mock.patch.object(transitive, "ROUND_CHUNK", chunk):
            low, high = transitive.through_matches(graph)
        assert list(zip(low.tolist(), high.tolist(), strict=True)) == expected


def _positions_of(scored, frame):
    index = frame.index
    return index.get_indexer(scored["left"]), index.get_indexer(scored["right"])


@pytest.mark.parametrize(
    "options",
    [{}, {"min_score": 0.7, "transitive": True}],
    ids=["learned model", "given cut"],
)
def test_pairs_adds_the_pairs_two_matches_apart(people_with_copies, options):
    frame = people_with_copies[COPIES_FIELDS]
    before = frame.copy()
    fields = COPIES_FIELDS
    scored = lf.pairs(frame, fields, **options)
    pd.testing.assert_frame_equal(frame, before)
    given = lf.candidates(frame, fields, collapse_identical=True)
    blocked = lf.score(frame, given, fields, **options)
    # The matches before closing: the same decision without the rule.
    unclosed = lf.score(frame, given, fields, **{**options, "transitive": False})
    info = scored.attrs["lsh_frame"]["transitive"]
    new = (scored["found_by"] == transitive.THROUGH_MATCHES).to_numpy()
    rows = len(blocked)
    assert not new[:rows].any() and new[rows:].all()
    assert info["through_matches"]["pairs"] == len(scored) - rows > 0
    assert scored.index.equals(pd.RangeIndex(len(scored)))
    # The pairs blocking found are scored and decided as score() decides them.
    pd.testing.assert_frame_equal(
        scored.iloc[:rows].astype({"found_by": str}),
        blocked.astype({"found_by": str}),
    )
    # The new pairs: every pair of records that match one same record
    # (before closing) and that blocking did not find, each once.
    first, second = _positions_of(blocked, frame)
    counted = unclosed["match"].to_numpy()
    assert (counted == blocked["match"].to_numpy() & ~closed_pairs(blocked)).all()
    around = _neighbours(
        set(zip(first[counted].tolist(), second[counted].tolist(), strict=True)),
        len(frame),
    )
    known = {
        (min(a, b), max(a, b))
        for a, b in zip(first.tolist(), second.tolist(), strict=True)
    }
    expected = {
        pair
        for side in around
        for pair in itertools.combinations(sorted(side), 2)
        if pair not in known
    }
    low, high = _positions_of(scored[new], frame)
    assert sorted(zip(low.tolist(), high.tolist(), strict=True)) == sorted(expected)
    # Only the rule decides them: shared matches, not their own probability.
    shared = np.array(
        [len(around[a] & around[b]) for a, b in zip(low, high, strict=True)]
    )
    fewer = np.minimum([len(around[a]) for a in low], [len(around[b]) for b in high])
    rule = (shared >= transitive.SHARED_AT_LEAST) & (
        shared >= transitive.SHARED_SHARE * fewer
    )
    decided = scored.loc[new, "match"].to_numpy()
    assert not (decided & ~rule).any()
    assert int(decided.sum()) == info["through_matches"]["closed"] > 0
    assert info["added"] == (
        blocked.attrs["lsh_frame"]["transitive"]["added"]
        + info["through_matches"]["closed"]
    )
    # With the learned model they are true pairs (a cut of 0.7 forced to close
    # matches that do not form clusters: namesakes). The entities do not change.
    both = people_with_copies["entity"].to_numpy()
    if not options:
        assert (both[low[decided]] == both[high[decided]]).mean() > 0.95
    plain = lf.pairs(frame, fields, **{**options, "transitive": False})
    assert "through_matches" not in plain.attrs["lsh_frame"]["transitive"]
    assert len(plain) == rows
    pd.testing.assert_series_equal(lf.cluster(frame, scored), lf.cluster(frame, plain))
    assert transitive.closed_pairs(scored).sum() == info["added"]
    # A cut on the score links candidates only: as without the new pairs.
    pd.testing.assert_series_equal(
        lf.cluster(frame, scored, min_score=0.8),
        lf.cluster(frame, scored[~new], min_score=0.8),
    )


def test_score_alone_adds_no_pair(people_with_copies):
    frame = people_with_copies[COPIES_FIELDS]
    given_pairs = lf.candidates(frame, COPIES_FIELDS)
    scored = lf.score(frame, given_pairs, COPIES_FIELDS)
    assert len(scored) == len(given_pairs)
    assert "through_matches" not in scored.attrs["lsh_frame"]["transitive"]


def test_too_many_pairs_through_the_matches_are_not_looked_for(people_with_copies):
    frame = people_with_copies[COPIES_FIELDS]
    # A low cut and transitive=True: many matches, many pairs through them.
    options = {"min_score": 0.7, "transitive": True}
    blocked = lf.score(
        frame,
        lf.candidates(frame, COPIES_FIELDS, collapse_identical=True),
        COPIES_FIELDS,
        **options,
    )
    rows = len(blocked)
    paths = transitive.path_pairs(
        transitive.found_pairs(blocked, *_positions_of(blocked, frame))
    )
    # One pair too few for them all (an upper bound, repeats included).
    with pytest.warns(UserWarning, match="did not look for pairs through the matches"):
        scored = lf.pairs(frame, COPIES_FIELDS, max_pairs=rows + paths - 1, **options)
    assert len(scored) == rows
    enough = lf.pairs(frame, COPIES_FIELDS, max_pairs=rows + paths, **options)
    assert len(enough) > rows
    found = scored.attrs["lsh_frame"]["transitive"]["through_matches"]
    assert found["pairs"] == 0 and "max_pairs" in found["skipped"]


def test_a_link_looks_for_no_pair_through_the_matches(people_with_copies):
    frame = people_with_copies[COPIES_FIELDS]
    left, right = frame.iloc[::2], frame.iloc[1::2]
    linked = lf.pairs(left, COPIES_FIELDS, other=right)
    assert "through_matches" not in linked.attrs["lsh_frame"]["transitive"]
    assert not (linked["found_by"] == transitive.THROUGH_MATCHES).any()


@settings(max_examples=200, deadline=None)
@given(
    st.sets(st.integers(0, 50), max_size=20),
    st.lists(st.integers(-5, 60), max_size=40),
)
def test_held_among_agrees_with_isin(codes, held):
    codes = np.array(sorted(codes), dtype=np.int64)
    held = np.array(held, dtype=np.int64)
    assert transitive.held_among(codes, held).tolist() == np.isin(codes, held).tolist()


def test_pairs_through_the_matches_without_a_model():
    frame, fields = chained_people()
    with pytest.warns(UserWarning, match="No match model decided"):
        scored = lf.pairs(frame, fields)
    decided = scored.attrs["lsh_frame"]
    assert "match_cut" not in (decided["model"] or {})
    new = (scored["found_by"] == transitive.THROUGH_MATCHES).to_numpy()
    low, high = _positions_of(scored[new], frame)
    # Each person's A and E, joined through B, C and D: closed by the rule.
    assert sorted(zip(low.tolist(), high.tolist(), strict=True)) == [
        (5 * person, 5 * person + 4) for person in range(10)
    ]
    assert scored.loc[new, "match"].all()
    assert scored.loc[new, "match_probability"].isna().all()
    assert decided["transitive"]["through_matches"] == {"pairs": 10, "closed": 10}
    assert closed_pairs(scored)[new].all()
    ids = lf.cluster(frame, scored)
    assert ids.nunique() == 10
    with pytest.warns(UserWarning, match="No match model decided"):
        deduped = frame.lsh.dedupe(fields)
    assert deduped["cluster_id"].nunique() == 10


def test_explain_reads_a_pair_found_through_the_matches(people_with_copies):
    frame = people_with_copies[COPIES_FIELDS]
    scored = lf.pairs(frame, COPIES_FIELDS)
    model = scored.attrs["lsh_frame"]["model"]
    found = scored[scored["found_by"] == transitive.THROUGH_MATCHES]
    cut = model["match_cut"]
    # Left unmatched by the rule, though its own probability reaches the cut.
    strong = found[~found["match"] & (found["match_probability"] >= cut)]
    assert len(strong)
    as_found = lf.explain(frame, strong.iloc[0], COPIES_FIELDS)
    assert not as_found.match and not as_found.closed
    assert "only shared matches could make it a match" in str(as_found)
    own = lf.explain(frame, strong.iloc[0], COPIES_FIELDS, min_score=model)
    assert own.match and not own.closed
    assert "its own reading with the given min_score" in str(own)


def test_pairs_through_matches_reuse_the_candidates_plan(
    people_with_copies, monkeypatch
):
    """The second look scores with the first plan: the tables are read once."""
    frame = people_with_copies[COPIES_FIELDS]
    planned = []
    original = score_module.plan_score

    def counted(*arguments, **options):
        planned.append(1)
        return original(*arguments, **options)

    monkeypatch.setattr(score_module, "plan_score", counted)
    reused = lf.pairs(frame, COPIES_FIELDS)
    assert reused.attrs["lsh_frame"]["transitive"]["through_matches"]["pairs"] > 0
    assert len(planned) == 1
    # Planned afresh for the pairs through the matches: the same frame.
    monkeypatch.setattr(pairs_module, "reusing_plans", contextlib.nullcontext)
    fresh = lf.pairs(frame, COPIES_FIELDS)
    assert len(planned) == 3
    pd.testing.assert_frame_equal(reused, fresh)
    assert reused.attrs == fresh.attrs
