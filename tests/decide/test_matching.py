"""Links read as a matching: the marginals, the learned model, the decision."""

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from conftest import catalogues
from hypothesis import given, settings
from hypothesis import strategies as st

from lsh_frame.decide.links import exclusive_matches
from lsh_frame.decide.matching import Matching, matching_marginals, monotone
from lsh_frame.decide.model import MatchModel
from lsh_frame.errors import ConfigError


def brute_force(left, right, weight, exclusive):
    """Marginals by enumerating every allowed set of pairs."""
    pairs = range(left.size)
    total = 0.0
    marginal = np.zeros(left.size)
    for size in range(left.size + 1):
        for chosen in itertools.combinations(pairs, size):
            chosen = list(chosen)
            if "left" in exclusive and len(set(left[chosen])) < len(chosen):
                continue
            if "right" in exclusive and len(set(right[chosen])) < len(chosen):
                continue
            product = float(np.prod(weight[chosen])) if chosen else 1.0
            total += product
            marginal[chosen] += product
    return marginal / total


@st.composite
def forests(draw):
    """A bipartite forest: each new pair joins a new record to an old one."""
    size = draw(st.integers(1, 7))
    left, right = [0], [0]
    lefts, rights = 1, 1
    for _ in range(size - 1):
        if draw(st.booleans()):
            left.append(lefts)
            right.append(draw(st.integers(0, rights - 1)))
            lefts += 1
        else:
            left.append(draw(st.integers(0, lefts - 1)))
            right.append(rights)
            rights += 1
    weight = draw(st.lists(st.floats(0.01, 50.0), min_size=size, max_size=size))
    return np.array(left), np.array(right), np.array(weight)


@given(forests())
@settings(max_examples=60, deadline=None)
def test_marginals_are_exact_on_a_forest(graph):
    left, right, weight = graph
    got = matching_marginals(left, right, weight)
    np.testing.assert_allclose(
        got, brute_force(left, right, weight, ("left", "right")), atol=1e-6
    )


@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 3)),
        min_size=1,
        max_size=7,
        unique=True,
    ),
    st.data(),
)
@settings(max_examples=60, deadline=None)
def test_one_exclusive_table_is_exact_on_any_graph(edges, data):
    left = np.array([edge[0] for edge in edges])
    right = np.array([edge[1] for edge in edges])
    weight = np.array(
        data.draw(
            st.lists(st.floats(0.01, 50.0), min_size=len(edges), max_size=len(edges))
        )
    )
    for side in ("left", "right"):
        got = matching_marginals(left, right, weight, (side,))
        np.testing.assert_allclose(
            got, brute_force(left, right, weight, (side,)), atol=1e-9
        )


def test_a_record_never_holds_more_than_one_match_in_probability():
    rng = np.random.default_rng(3)
    left = rng.integers(0, 40, 300)
    right = rng.integers(0, 40, 300)
    keep = np.unique(left * 1000 + right, return_index=True)[1]
    left, right = left[keep], right[keep]
    probability = matching_marginals(left, right, rng.exponential(5.0, left.size))
    assert (np.bincount(left, weights=probability) <= 1 + 1e-9).all()
    assert (np.bincount(right, weights=probability) <= 1 + 1e-9).all()
    assert ((probability >= 0) & (probability <= 1)).all()


@given(
    st.lists(st.floats(0.01, 1.0), min_size=2, max_size=8),
    st.lists(st.floats(0.01, 1.0), min_size=2, max_size=8),
)
def test_monotone_weights_never_rise_and_exact_agreement_never_counts_against(m, u):
    size = min(len(m), len(u))
    m = np.array(m[:size]) / sum(m[:size])
    u = np.array(u[:size]) / sum(u[:size])
    fitted_m, fitted_u = monotone(m, u)
    weights = np.log(fitted_m / fitted_u)
    assert (np.diff(weights) <= 1e-9).all()
    assert weights[0] >= -1e-12
    np.testing.assert_allclose(fitted_m, m)
    assert fitted_u.sum() == pytest.approx(1.0)


def test_exclusive_matches_keep_the_likeliest_per_exclusive_record():
    left, right = np.array([0, 0, 1, 1]), np.array([0, 1, 1, 2])
    probability = np.array([0.6, 0.5, 0.9, 0.3])
    everything = np.ones(4, dtype=bool)
    both = exclusive_matches(left, right, probability, everything, ("left", "right"))
    assert both.tolist() == [True, False, True, False]
    alone = exclusive_matches(left, right, probability, everything, ("right",))
    assert alone.tolist() == [True, False, True, True]


def test_a_link_is_read_as_a_matching_and_its_model_saves_and_loads():
    left, right, _ = catalogues(400, seed=4)
    scored = left.lsh.link(right, ["title", "price"])
    attrs = scored.attrs["lsh_frame"]
    learned = attrs["model"]
    assert learned["fit"]["reading"] == "matching"
    assert attrs["one_to_one"]["applied"] is True
    assert set(learned["matching"]["exclusive"]) <= {"left", "right"}
    # Every record of an exclusive table keeps at most one match.
    matches = scored[scored["match"]]
    for side in learned["matching"]["exclusive"]:
        assert not matches[side].duplicated().any()
    # Probabilities of a record's pairs add up to at most one.
    for side in learned["matching"]["exclusive"]:
        totals = scored.groupby(side)["match_probability"].sum()
        assert (totals <= 1 + 1e-6).all()
    # The model saves as JSON, loads, and decides the same pairs again.
    model = MatchModel.from_dict(json.loads(json.dumps(learned)))
    assert model.matching == Matching.from_dict(learned["matching"])
    again = left.lsh.link(right, ["title", "price"], min_score=model)
    pd.testing.assert_series_equal(again["match"], scored["match"])
    np.testing.assert_allclose(again["match_probability"], scored["match_probability"])


def test_the_matching_tells_look_alikes_apart_that_pairs_alone_do_not():
    left, right, truth = catalogues(400, seed=7)
    columns = ["title", "price"]

    def f1(scored):
        matched = scored[scored["match"]]
        found = set(zip(matched["left"], matched["right"], strict=True))
        hits = len(found & truth)
        return 2 * hits / (len(found) + len(truth))

    matched = f1(left.lsh.link(right, columns))
    alone = f1(left.lsh.link(right, columns, one_to_one=False))
    assert matched > alone and matched > 0.9


@pytest.mark.parametrize(
    "spec",
    [
        {"exclusive": ["middle"], "rho": {"middle": 0.5}},
        {"exclusive": ["left"], "rho": {"left": 1.5}},
        {"exclusive": ["left"], "rho": {"right": 0.5}},
        {"exclusive": [], "rho": {}},
        "both",
    ],
)
def test_a_saved_model_with_a_broken_matching_is_refused(spec):
    left, right, _ = catalogues(200, seed=2)
    learned = left.lsh.link(right, ["title", "price"]).attrs["lsh_frame"]["model"]
    with pytest.raises(ConfigError, match="matching"):
        MatchModel.from_dict({**learned, "matching": spec})
