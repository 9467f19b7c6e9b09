"""Entities from pairs: components, deterministic ids, weak-link cuts, warnings."""

import warnings

import numpy as np
import pandas as pd
import pytest
from entities import cliques_and_a_chain
from hypothesis import given
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame._kernels.components import components, first_appearance_ids

EDGES = st.lists(st.tuples(st.integers(0, 29), st.integers(0, 29)), max_size=60)


def reference_components(nodes, edges):
    """Plain-Python union-find: each node's smallest connected node."""
    parent = list(range(nodes))

    def find(node):
        while parent[node] != node:
            node = parent[node]
        return node

    for first, second in edges:
        a, b = find(first), find(second)
        parent[max(a, b)] = min(a, b)
    return [find(node) for node in range(nodes)]


def partition(ids):
    groups = {}
    for label, entity in ids.items():
        groups.setdefault(entity, set()).add(label)
    return {frozenset(group) for group in groups.values()}


@given(EDGES)
def test_components_match_a_reference_union_find(edges):
    first = np.array([a for a, _ in edges], dtype=np.int64)
    second = np.array([b for _, b in edges], dtype=np.int64)
    roots = components(30, first, second)
    assert roots.tolist() == reference_components(30, edges)
    # Transitivity: both ends of every edge share a component.
    assert (roots[first] == roots[second]).all()


@given(EDGES, st.randoms(use_true_random=False))
def test_ids_do_not_depend_on_pair_order(edges, random):
    frame = pd.DataFrame({"x": ["a"] * 30}, index=[f"r{i}" for i in range(30)])
    pairs = pd.DataFrame(
        {"left": [f"r{a}" for a, _ in edges], "right": [f"r{b}" for _, b in edges]}
    )
    ids = lf.cluster(frame, pairs, warn_size=100)
    shuffled = pairs.sample(frac=1, random_state=random.randint(0, 1000))
    swapped = shuffled.rename(columns={"left": "right", "right": "left"})
    pd.testing.assert_series_equal(lf.cluster(frame, shuffled, warn_size=100), ids)
    pd.testing.assert_series_equal(lf.cluster(frame, swapped, warn_size=100), ids)
    in_label_order = ids.sort_index().to_numpy()
    assert in_label_order[0] == 0
    # Numbered by first appearance in label order: each new id is one more than
    # the largest so far.
    seen = np.maximum.accumulate(in_label_order)
    assert (np.diff(np.concatenate([[-1], seen])) <= 1).all()


def test_ids_do_not_depend_on_row_order():
    customers = lf.datasets.make_customers(1_500, seed=4)
    scored = lf.pairs(customers, ["given_name", "surname", "date_of_birth"])
    ids = lf.cluster(customers, scored)
    shuffled = customers.sample(frac=1, random_state=3)
    reordered = lf.cluster(shuffled, scored)
    pd.testing.assert_series_equal(reordered.sort_index(), ids)
    assert reordered.index.equals(shuffled.index)
    assert ids.name == "entity_id" and ids.dtype == np.int64
    assert ids.nunique() < len(ids)  # some rows were linked


def test_ids_follow_label_order_and_unsortable_labels_keep_row_order():
    frame = pd.DataFrame({"x": list("abcd")}, index=["d", "b", "c", "a"])
    pairs = pd.DataFrame({"left": ["d"], "right": ["c"]})
    assert lf.cluster(frame, pairs).to_dict() == {"d": 2, "b": 1, "c": 2, "a": 0}
    mixed = frame.set_axis(["d", 2, "c", 1.5])
    links = pd.DataFrame({"left": ["d"], "right": ["c"]})
    assert lf.cluster(mixed, links).tolist() == [0, 1, 0, 2]


def test_link_ids_do_not_depend_on_row_order():
    customers = lf.datasets.make_customers(1_200, seed=6)
    left, right = customers.iloc[:600], customers.iloc[600:]
    scored = lf.pairs(left, ["given_name", "surname"], other=right)
    left_ids, right_ids = lf.cluster(left, scored, other=right)
    shuffled = lf.cluster(
        left.iloc[::-1], scored, other=right.sample(frac=1, random_state=1)
    )
    pd.testing.assert_series_equal(shuffled[0].sort_index(), left_ids)
    pd.testing.assert_series_equal(shuffled[1].sort_index(), right_ids)


def test_uses_match_column_and_min_score_cuts_weak_links():
    frame = pd.DataFrame({"x": list("abcde")})
    scored = pd.DataFrame(
        {
            "left": [0, 1, 3],
            "right": [1, 2, 4],
            "score": [0.95, 0.6, 0.9],
            "match": [True, False, True],
        }
    )
    assert lf.cluster(frame, scored).tolist() == [0, 0, 1, 2, 2]
    assert lf.cluster(frame, scored, min_score=0.5).tolist() == [0, 0, 0, 1, 1]
    assert lf.cluster(frame, scored, min_score=0.92).tolist() == [0, 0, 1, 2, 3]
    no_decision = scored.drop(columns=["match", "score"])
    assert lf.cluster(frame, no_decision).tolist() == [0, 0, 0, 1, 1]
    with pytest.raises(lf.ColumnError, match="score"):
        lf.cluster(frame, no_decision, min_score=0.5)


def test_an_entity_of_a_tenth_of_the_rows_is_giant():
    """Issue 44: one entity of 1,766 of 2,238 pages, under warn_size, unwarned."""
    frame = pd.DataFrame({"x": ["a"] * 1_000})
    first, second = np.triu_indices(150, k=1)
    clique = pd.DataFrame({"left": first, "right": second})
    with pytest.warns(UserWarning, match="has 150 of the 1,000 rows") as caught:
        lf.cluster(frame, clique)
    assert len(caught) == 1
    # A hundred rows is not giant, however small the table.
    first, second = np.triu_indices(90, k=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lf.cluster(frame.iloc[:100], pd.DataFrame({"left": first, "right": second}))


def test_link_gives_two_series_sharing_ids():
    left = pd.DataFrame({"x": ["a", "b", "c"]}, index=[10, 11, 12])
    right = pd.DataFrame({"x": ["b", "a"]}, index=[10, 11])
    pairs = pd.DataFrame({"left": [10, 11], "right": [11, 10]})
    left_ids, right_ids = lf.cluster(left, pairs, other=right)
    assert left_ids.tolist() == [0, 1, 2]
    assert right_ids.tolist() == [1, 0]
    assert right_ids.index.tolist() == [10, 11]


def test_large_component_warns_with_its_size():
    frame = pd.DataFrame({"x": ["a"] * 50})
    chain = pd.DataFrame({"left": np.arange(49), "right": np.arange(1, 50)})
    with pytest.warns(UserWarning, match="largest, entity 0, has 50"):
        lf.cluster(frame, chain, warn_size=20)
    # Under the size limit, the chain (49 links among 1,225 pairs of records)
    # is still named as a sparse entity, and only that.
    with pytest.warns(UserWarning, match="sparsely linked") as caught:
        ids = lf.cluster(frame, chain)
    assert len(caught) == 1 and "entity ids 0." in str(caught[0].message)
    assert ids.attrs["lsh_frame"] == {"links_cut": 0, "review": [0]}


def test_sparse_entities_are_split_by_their_strong_links():
    frame, pairs = cliques_and_a_chain()
    with pytest.warns(UserWarning, match="1 entity is sparsely linked") as caught:
        ids = lf.cluster(frame, pairs)
    groups = ids.groupby(ids).apply(lambda part: sorted(part.index)).tolist()
    assert sorted(map(len, groups)) == [4, 4, 4, 6]
    assert ids.iloc[:12].nunique() == 3  # the weak links were cut
    chain = int(ids.iloc[12])
    assert ids.attrs["lsh_frame"] == {"links_cut": 2, "review": [chain]}
    assert f"entity ids {chain}." in str(caught[0].message)
    # The pair order does not matter, and split=False keeps the components.
    shuffled = pairs.sample(frac=1.0, random_state=3)
    with pytest.warns(UserWarning, match="sparsely linked"):
        pd.testing.assert_series_equal(lf.cluster(frame, shuffled), ids)
    with pytest.warns(UserWarning, match="2 entities are sparsely linked"):
        whole = lf.cluster(frame, pairs, split=False)
    assert sorted(whole.value_counts().tolist()) == [6, 12]
    assert whole.attrs["lsh_frame"]["links_cut"] == 0
    # A cut on the score (min_score) is the user's decision: nothing is split.
    scored = pairs.assign(score=pairs["match_probability"])
    with pytest.warns(UserWarning, match="sparsely linked"):
        by_score = lf.cluster(frame, scored, min_score=0.5)
    assert by_score.attrs["lsh_frame"]["links_cut"] == 0


def test_identical_copies_count_once_for_sparseness():
    # Ten copies linked to the first one (a star: 9 of 45 pairs) are not sparse.
    frame = pd.DataFrame({"x": ["same"] * 10})
    pairs = pd.DataFrame(
        {"left": [0] * 9, "right": range(1, 10), "found_by": "identical"}
    ).assign(match=True, match_probability=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ids = lf.cluster(frame, pairs)
    assert ids.nunique() == 1 and ids.attrs["lsh_frame"]["review"] == []


def test_sparse_links_between_two_tables():
    # Linking: density counts left-right pairs. Five left and five right
    # records linked in a path (9 of 25 pairs) form one sparse entity.
    left = pd.DataFrame({"x": ["a"] * 5}, index=[f"l{i}" for i in range(5)])
    right = pd.DataFrame({"x": ["a"] * 5}, index=[f"r{i}" for i in range(5)])
    rows = [(f"l{i}", f"r{i}") for i in range(5)] + [
        (f"l{i + 1}", f"r{i}") for i in range(4)
    ]
    pairs = pd.DataFrame(rows, columns=["left", "right"]).assign(match=True)
    with pytest.warns(UserWarning, match="1 entity is sparsely linked"):
        left_ids, right_ids = lf.cluster(left, pairs, other=right)
    assert left_ids.attrs["lsh_frame"]["review"] == [0]
    assert right_ids.attrs["lsh_frame"] == left_ids.attrs["lsh_frame"]


def test_empty_and_unlinked_frames():
    empty = pd.DataFrame({"x": pd.Series([], dtype="str")})
    no_pairs = pd.DataFrame({"left": [], "right": []})
    assert len(lf.cluster(empty, no_pairs)) == 0
    frame = pd.DataFrame({"x": ["a", "b"]})
    assert lf.cluster(frame, no_pairs).tolist() == [0, 1]


def test_first_appearance_ids():
    assert first_appearance_ids(np.array([0, 0, 2, 2, 0])).tolist() == [0, 0, 1, 1, 0]


@pytest.mark.parametrize(
    "options, error, message",
    [
        ({"min_score": 2}, lf.ConfigError, "min_score"),
        ({"min_score": "auto"}, lf.ConfigError, "min_score"),
        ({"warn_size": 0}, lf.ConfigError, "warn_size"),
    ],
)
def test_bad_options(options, error, message):
    frame = pd.DataFrame({"x": ["a", "b"]})
    pairs = pd.DataFrame({"left": [0], "right": [1], "score": [1.0]})
    with pytest.raises(error, match=message):
        lf.cluster(frame, pairs, **options)


def test_unknown_labels_are_named():
    frame = pd.DataFrame({"x": ["a", "b"]})
    with pytest.raises(lf.ColumnError, match="not in the left frame"):
        lf.cluster(frame, pd.DataFrame({"left": [5], "right": [1]}))


def test_links_without_a_probability_are_never_cut():
    # Scored batches put together: where one fell back to a cut on the score,
    # its pairs have no probability (NaN). Nothing says they are weak.
    frame = pd.DataFrame({"x": ["a"] * 6})
    pairs = pd.DataFrame(
        {
            "left": [0, 1, 2, 3, 4],
            "right": [1, 2, 3, 4, 5],
            "match": True,
            "match_probability": [0.95, np.nan, 0.97, np.nan, 0.96],
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ids = lf.cluster(frame, pairs)
    assert ids.iloc[1] == ids.iloc[2] and ids.iloc[3] == ids.iloc[4]
    assert ids.attrs["lsh_frame"]["links_cut"] == 3  # 0.95, 0.97, 0.96 < 0.99


def test_an_entity_far_larger_than_the_rest_is_listed_for_review():
    # Two hundred pairs and one dense group of 30 (every pair linked): not
    # sparse, so not split, but 15 times the others: named for review.
    pairs = [(2 * i, 2 * i + 1) for i in range(200)]
    group = range(400, 430)
    pairs += [(a, b) for a in group for b in group if a < b]
    frame = pd.DataFrame({"x": ["a"] * 430})
    links = pd.DataFrame(pairs, columns=["left", "right"]).assign(
        match=True, match_probability=0.99
    )
    with pytest.warns(UserWarning, match="far larger than the rest") as caught:
        ids = lf.cluster(frame, links)
    big = int(ids.iloc[400])
    assert ids.attrs["lsh_frame"] == {"links_cut": 0, "review": [big]}
    assert f"entity ids {big}." in str(caught[0].message)
    assert ids.value_counts().max() == 30


def test_identical_copies_are_not_an_entity_to_review():
    # Fifty copies of one row beside two hundred pairs: far larger than the
    # rest by rows, but one record written fifty times.
    pairs = [(2 * i, 2 * i + 1, "record") for i in range(200)]
    pairs += [(400, member, "identical") for member in range(401, 450)]
    frame = pd.DataFrame({"x": ["a"] * 450})
    links = pd.DataFrame(pairs, columns=["left", "right", "found_by"]).assign(
        match=True, match_probability=1.0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ids = lf.cluster(frame, links)
    assert ids.value_counts().max() == 50
    assert ids.attrs["lsh_frame"]["review"] == []
