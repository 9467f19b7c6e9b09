"""Scoring pairs: exact Jaccard, fuzzy scores, NaN handling, weights, decisions."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from rapidfuzz import distance, fuzz

import lsh_frame as lf
from lsh_frame._kernels import native, sets
from lsh_frame.compare import text as compare_text
from lsh_frame.config import ShingleConfig
from lsh_frame.decide import cut as decide_cut
from lsh_frame.decide import model as decide_model
from lsh_frame.decide import score as decide_score
from lsh_frame.decide import tables
from lsh_frame.decide.closing import THROUGH_MATCHES
from lsh_frame.explain import shingle_texts

WORDS = st.text(alphabet="abcdé xyz", min_size=0, max_size=14)


@pytest.fixture(scope="module")
def customers():
    return lf.datasets.make_customers(2_000, seed=11)


@pytest.fixture(scope="module")
def customer_pairs(customers):
    return lf.candidates(customers, ["given_name", "surname", "date_of_birth"])


def python_jaccard(first, second, config):
    left = set(shingle_texts(first, config))
    right = set(shingle_texts(second, config))
    if first is None or second is None or not left or not right:
        return np.nan
    return len(left & right) / len(left | right)


def csr_of(groups):
    """Token hashes and offsets (CSR) of small integer sets, spread over 64 bits."""
    hashes = np.array(
        [value * 0x9E3779B97F4A7C15 % 2**64 for group in groups for value in group],
        dtype=np.uint64,
    )
    offsets = np.concatenate([[0], np.cumsum([len(group) for group in groups])])
    return hashes, offsets.astype(np.int64)


def draw_pairs(data, count, max_size):
    """Two equally long arrays of set indices below ``count``."""
    first = data.draw(st.lists(st.integers(0, count - 1), max_size=max_size))
    second = data.draw(
        st.lists(st.integers(0, count - 1), min_size=len(first), max_size=len(first))
    )
    return np.array(first, dtype=np.int64), np.array(second, dtype=np.int64)


@given(
    st.lists(st.frozensets(st.integers(0, 40), max_size=12), min_size=1, max_size=20),
    st.data(),
)
def test_intersection_kernel_matches_python_sets(collection, data):
    ids, set_offsets = sets.token_sets(*csr_of(collection))
    first, second = draw_pairs(data, len(collection), 30)
    got = sets.intersection_sizes(ids, set_offsets, first, second)
    expected = [
        len(collection[a] & collection[b]) for a, b in zip(first, second, strict=True)
    ]
    assert got.tolist() == expected
    assert np.diff(set_offsets).tolist() == [len(group) for group in collection]


def test_intersection_kernel_in_slices(monkeypatch):
    rng = np.random.default_rng(3)
    groups = [set(rng.integers(0, 50, rng.integers(0, 20)).tolist()) for _ in range(60)]
    hashes = np.array([v for group in groups for v in group], dtype=np.uint64)
    offsets = np.concatenate([[0], np.cumsum([len(g) for g in groups])]).astype(
        np.int64
    )
    ids, set_offsets = sets.token_sets(hashes, offsets)
    first, second = rng.integers(0, 60, 500), rng.integers(0, 60, 500)
    whole = sets.intersection_sizes(ids, set_offsets, first, second)
    monkeypatch.setattr(sets, "_MERGE_TOKENS", 7)
    sliced = sets.intersection_sizes(ids, set_offsets, first, second)
    assert whole.tolist() == sliced.tolist()
    assert whole.tolist() == [
        len(groups[a] & groups[b]) for a, b in zip(first, second, strict=False)
    ]


@given(st.lists(st.one_of(st.none(), WORDS), min_size=2, max_size=12), st.data())
def test_exact_jaccard_equals_python_sets(values, data):
    frame = pd.DataFrame({"text": pd.Series(values, dtype="str")})
    size = len(values)
    left = data.draw(st.lists(st.integers(0, size - 1), min_size=1, max_size=15))
    right = data.draw(
        st.lists(st.integers(0, size - 1), min_size=len(left), max_size=len(left))
    )
    pairs = pd.DataFrame({"left": left, "right": right})
    scored = lf.score(frame, pairs, "text", min_score=0.5)
    config = ShingleConfig()
    expected = [
        python_jaccard(values[a], values[b], config)
        for a, b in zip(left, right, strict=False)
    ]
    np.testing.assert_allclose(scored["text_jaccard"], expected, equal_nan=True)


@pytest.mark.parametrize("kind, k", [("word", 1), ("word", 2), ("char", 2)])
def test_exact_jaccard_other_shingles(kind, k):
    values = ["the quick brown fox", "the quick red fox", "a brown fox", None, "fox"]
    frame = pd.DataFrame({"text": values})
    pairs = pd.DataFrame({"left": [0, 0, 1, 2, 0], "right": [1, 2, 2, 3, 4]})
    field = lf.Field("text", shingle=kind, k=k)
    scored = lf.score(frame, pairs, [field], min_score=0.5)
    config = field.shingle_config
    expected = [
        python_jaccard(values[a], values[b], config)
        for a, b in zip(pairs["left"], pairs["right"], strict=False)
    ]
    np.testing.assert_allclose(scored["text_jaccard"], expected, equal_nan=True)


SCORER_REFERENCE = {
    "ratio": lambda a, b: distance.Indel.normalized_similarity(a, b),
    "token_sort_ratio": lambda a, b: fuzz.token_sort_ratio(a, b) / 100,
    "token_set_ratio": lambda a, b: fuzz.token_set_ratio(a, b) / 100,
    "partial_ratio": lambda a, b: fuzz.partial_ratio(a, b) / 100,
    "jaro_winkler": lambda a, b: distance.JaroWinkler.normalized_similarity(a, b),
    "levenshtein": lambda a, b: distance.Levenshtein.normalized_similarity(a, b),
    "exact": lambda a, b: float(a == b),
}


@pytest.mark.parametrize("comparison", sorted(SCORER_REFERENCE))
def test_each_comparison_matches_rapidfuzz_on_normalised_text(customers, comparison):
    pairs = pd.DataFrame({"left": np.arange(0, 300), "right": np.arange(300, 600)})
    field = lf.Field("surname", compare=comparison)
    scored = lf.score(customers, pairs, [field], min_score=0.5)
    values = customers["surname"].str.lower()
    expected = [
        np.nan
        if pd.isna(values.iloc[a]) or pd.isna(values.iloc[b])
        else SCORER_REFERENCE[comparison](values.iloc[a], values.iloc[b])
        for a, b in zip(pairs["left"], pairs["right"], strict=False)
    ]
    got = scored["surname_score"]
    np.testing.assert_allclose(got, expected, equal_nan=True, atol=1e-9)
    assert ((got >= 0) & (got <= 1) | got.isna()).all()
    assert scored.attrs["lsh_frame"]["compare"] == {"surname": comparison}


def test_auto_comparison_follows_the_number_of_words():
    frame = pd.DataFrame(
        {
            "name": ["ann", "anne", "bob"],
            "address": ["1 high st", "1 high street", "2 low rd"],
        }
    )
    pairs = pd.DataFrame({"left": [0], "right": [1]})
    scored = lf.score(frame, pairs, ["name", "address"], min_score=0.5)
    assert scored.attrs["lsh_frame"]["compare"] == {
        "name": "ratio",
        "address": "token_sort_ratio",
    }


@pytest.mark.parametrize("comparison", [*sorted(SCORER_REFERENCE), "jaccard"])
def test_values_that_normalise_alike_score_one(comparison):
    frame = pd.DataFrame({"name": ["John  Smith", "john smith", "JOHN SMITH "]})
    pairs = pd.DataFrame({"left": [0, 0, 1], "right": [1, 2, 2]})
    scored = lf.score(frame, pairs, [lf.Field("name", compare=comparison)])
    assert scored["name_score"].tolist() == [1.0, 1.0, 1.0]
    assert scored["name_jaccard"].tolist() == [1.0, 1.0, 1.0]


def test_missing_and_blank_values_give_nan_not_zero():
    frame = pd.DataFrame(
        {
            "name": ["ann lee", "ann lee", None, "  ", "bob"],
            "city": ["oslo", None, "oslo", "oslo", "rome"],
        }
    )
    pairs = pd.DataFrame({"left": [0, 0, 0, 2], "right": [1, 2, 3, 3]})
    scored = lf.score(frame, pairs, ["name", "city"], min_score=0.5)
    assert scored["name_score"].tolist()[:1] == [1.0]
    assert scored["name_score"].iloc[1:].isna().all()  # None and blank
    assert scored["name_jaccard"].iloc[1:].isna().all()
    assert np.isnan(scored["city_score"].iloc[0])
    # The combined score uses the fields present in both records only.
    assert scored["score"].tolist()[:3] == [1.0, 1.0, 1.0]
    assert np.isnan(scored["score"].iloc[3]) or scored["score"].iloc[3] == 1.0
    assert scored["match"].dtype == bool


def test_no_field_present_gives_nan_score_and_no_match():
    frame = pd.DataFrame({"name": [None, None], "city": ["", None]})
    scored = lf.score(
        frame, pd.DataFrame({"left": [0], "right": [1]}), ["name", "city"]
    )
    assert np.isnan(scored["score"].iloc[0])
    assert not scored["match"].iloc[0]


def test_combined_score_is_the_weighted_mean_of_present_fields(
    customers, customer_pairs
):
    fields = [
        lf.Field("given_name", weight=2.0),
        lf.Field("surname", weight=1.0, compare="jaro_winkler"),
        lf.Field("email", weight=0.5),
    ]
    scored = lf.score(customers, customer_pairs, fields, min_score=0.5)
    matrix = scored[["given_name_score", "surname_score", "email_score"]].to_numpy()
    weights = np.array([2.0, 1.0, 0.5])
    present = ~np.isnan(matrix)
    expected = (np.nan_to_num(matrix) * weights).sum(1) / (present * weights).sum(1)
    np.testing.assert_allclose(scored["score"], expected)
    assert present.all(axis=1).mean() < 1  # the data has missing values to skip
    assert (scored["match"] == (scored["score"] >= 0.5)).all()


def test_zero_weight_field_is_reported_but_not_counted(customers, customer_pairs):
    scored = lf.score(
        customers,
        customer_pairs,
        [lf.Field("given_name"), lf.Field("city", weight=0)],
        min_score=0.5,
    )
    only_name = lf.score(customers, customer_pairs, ["given_name"], min_score=0.5)
    np.testing.assert_allclose(scored["score"], only_name["score"])
    assert "city_score" in scored


def test_scores_are_symmetric_under_swapping(customers, customer_pairs):
    fields = [
        "given_name",
        lf.Field("surname", compare="partial_ratio"),
        lf.Field("street_address", compare="token_set_ratio"),
        lf.Field("email", compare="jaro_winkler"),
    ]
    scored = lf.score(customers, customer_pairs, fields, min_score=0.5)
    swapped = customer_pairs.rename(columns={"left": "right", "right": "left"})
    swapped_scored = lf.score(customers, swapped, fields, min_score=0.5)
    score_columns = [
        name for name in scored.columns if name.endswith(("_score", "_jaccard"))
    ]
    pd.testing.assert_frame_equal(
        scored[[*score_columns, "score"]], swapped_scored[[*score_columns, "score"]]
    )


def test_link_scores_match_dedupe_scores_on_the_same_records(customers):
    left, right = customers.iloc[:1000], customers.iloc[1000:]
    pairs = lf.candidates(left, ["surname", "date_of_birth"], other=right)
    # The scores and the cut; one-to-one is a link's choice a dedupe has not.
    linked = lf.score(
        left,
        pairs,
        ["given_name", "surname"],
        other=right,
        min_score=0.6,
        one_to_one=False,
    )
    together = lf.score(customers, pairs, ["given_name", "surname"], min_score=0.6)
    pd.testing.assert_frame_equal(linked, together)


def test_estimate_tracks_exact_jaccard():
    rng = np.random.default_rng(2)
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa"]
    values = [" ".join(rng.choice(words, 4)) for _ in range(300)]
    frame = pd.DataFrame({"text": values})
    pairs = pd.DataFrame({"left": np.arange(0, 299), "right": np.arange(1, 300)})
    scored = lf.score(frame, pairs, "text", estimate=True, num_perm=256, min_score=0.5)
    error = (scored["text_estimate"] - scored["text_jaccard"]).abs()
    assert error.mean() < 0.03
    assert error.max() < 0.15
    same = (
        frame["text"].iloc[pairs["left"]].to_numpy()
        == frame["text"].iloc[pairs["right"]].to_numpy()
    )
    assert (scored["text_estimate"][same] == 1).all()


def test_signature_field_is_scored_by_its_estimate(customers, monkeypatch):
    frame = customers[["surname"]].assign(signature=customers.lsh.minhash("surname"))
    pairs = pd.DataFrame({"left": np.arange(200), "right": np.arange(200, 400)})
    scored = lf.score(frame, pairs, "signature", min_score=0.5)
    sigs = frame["signature"]
    expected = lf.estimate_jaccard(
        sigs.iloc[pairs["left"]].reset_index(drop=True),
        sigs.iloc[pairs["right"]].reset_index(drop=True),
    )
    np.testing.assert_allclose(
        scored["signature_score"], expected.astype(float), equal_nan=True
    )
    monkeypatch.setattr(compare_text, "_ESTIMATE_CHUNK", 7)  # gathered in slices
    sliced = lf.score(frame, pairs, "signature", min_score=0.5)
    pd.testing.assert_series_equal(sliced["signature_score"], scored["signature_score"])
    with pytest.raises(lf.ConfigError, match="signatures"):
        lf.score(frame, pairs, lf.Field("signature", compare="ratio"))


def test_values_side_by_side_keep_the_users_values(customers):
    pairs = pd.DataFrame({"left": [5, 7], "right": [9, 11]}, index=[10, 20])
    scored = lf.score(
        customers,
        pairs,
        ["surname", lf.Field(["given_name", "surname"], name="name")],
        values=True,
        min_score=0.5,
    )
    assert scored.index.tolist() == [10, 20]
    assert scored["surname_left"].tolist() == customers["surname"].iloc[[5, 7]].tolist()
    assert (
        scored["surname_right"].tolist() == customers["surname"].iloc[[9, 11]].tolist()
    )
    assert scored["name_left"].iloc[0].endswith(str(customers["surname"].iloc[5]))


def test_inputs_are_not_mutated_and_extra_columns_kept(customers, customer_pairs):
    frame_before, pairs_before = customers.copy(), customer_pairs.copy()
    pairs = customer_pairs.assign(note="x")
    scored = lf.score(customers, pairs, ["given_name", "surname"])
    pd.testing.assert_frame_equal(customers, frame_before)
    pd.testing.assert_frame_equal(customer_pairs, pairs_before)
    assert list(scored.columns[:4]) == ["left", "right", "found_by", "note"]
    rescored = lf.score(customers, scored, ["given_name", "surname"])
    assert list(rescored.columns) == list(scored.columns)  # replaced, not repeated
    pd.testing.assert_frame_equal(rescored, scored)


def test_empty_pairs_and_empty_frames():
    frame = pd.DataFrame({"name": pd.Series([], dtype="str")})
    pairs = pd.DataFrame(
        {"left": pd.Series([], dtype="int64"), "right": pd.Series([], dtype="int64")}
    )
    scored = lf.score(frame, pairs, "name")
    assert len(scored) == 0
    assert {"name_score", "name_jaccard", "score", "match"} <= set(scored.columns)
    one = pd.DataFrame({"name": ["ann"]})
    assert len(lf.pairs(one, "name")) == 0


def test_pairs_is_candidates_then_score(customers):
    fields = ["given_name", "surname", "date_of_birth"]
    one_call = lf.pairs(customers, fields, seed=3)
    two_calls = lf.score(customers, lf.candidates(customers, fields, seed=3), fields)
    # Then the pairs found through the matches (lsh_frame.decide.closing), after.
    rows = len(two_calls)
    found = one_call.attrs["lsh_frame"]["transitive"]["through_matches"]["pairs"]
    assert len(one_call) == rows + found
    assert (one_call["found_by"].iloc[rows:] == THROUGH_MATCHES).all()
    pd.testing.assert_frame_equal(
        one_call.iloc[:rows].astype({"found_by": str}),
        two_calls.astype({"found_by": str}),
    )
    # The candidates' categories, then THROUGH_MATCHES when some were found.
    categories = one_call["found_by"].cat.categories
    assert categories[: len(two_calls["found_by"].cat.categories)].equals(
        two_calls["found_by"].cat.categories
    )
    assert set(categories[len(two_calls["found_by"].cat.categories) :]) <= {
        THROUGH_MATCHES
    }
    via_accessor = customers.lsh.pairs(fields, seed=3)
    pd.testing.assert_frame_equal(one_call, via_accessor)


def test_auto_min_score_splits_two_groups():
    rng = np.random.default_rng(0)
    low, high = rng.normal(0.35, 0.05, 5_000), rng.normal(0.92, 0.03, 800)
    cut = decide_cut.auto_min_score(np.concatenate([low, high]))
    assert (high >= cut).all()
    assert (low >= cut).mean() < 0.01
    assert decide_cut.auto_min_score(high[:50]) == decide_cut.DEFAULT_MIN_SCORE
    assert decide_cut.auto_min_score(np.full(500, 0.3)) == decide_cut.DEFAULT_MIN_SCORE
    # Three groups (unrelated, relatives, matches): the cut is below the top one.
    middle = rng.normal(0.72, 0.04, 3_000)
    cut = decide_cut.auto_min_score(np.concatenate([low, middle, high]))
    assert (high >= cut).mean() > 0.99
    assert (middle >= cut).mean() < 0.01
    all_low = decide_cut.auto_min_score(rng.uniform(0.0, 0.3, 1_000))
    assert all_low == decide_cut.AUTO_MIN_SCORE_RANGE[0]


def test_default_decision_finds_duplicates_without_labels(customers):
    scored = lf.pairs(customers, ["given_name", "surname", "date_of_birth", "email"])
    result = lf.evaluate(scored, customers["entity_id"])
    assert scored.attrs["lsh_frame"]["min_score_rule"] == "auto"
    # Households (shared surname, address, phone) must not pass as duplicates.
    assert result.precision > 0.95
    assert result.recall > 0.8
    model = scored.attrs["lsh_frame"]["model"]
    assert set(model["fields"]) == {"given_name", "surname", "date_of_birth", "email"}
    probability = scored["match_probability"]
    assert ((probability >= 0) & (probability <= 1)).all()
    # A match is a pair whose probability reaches the model's match cut: half
    # the best F1 the probabilities expect, never above 0.5.
    assert 0.25 < model["match_cut"] <= 0.5
    assert model["match_cut"] == pytest.approx(
        scored.attrs["lsh_frame"]["model"]["fit"]["expected_f1"] / 2, abs=1e-4
    )
    reached = probability >= model["match_cut"]
    # Beyond the cut, only the pairs whose records share most of their
    # matches (lsh_frame.decide.closing) are matches, as many as attrs report.
    assert (scored["match"] | ~reached).all()
    closed = scored.attrs["lsh_frame"]["transitive"]
    assert int((scored["match"] & ~reached).sum()) == closed["added"]
    plain = lf.pairs(
        customers,
        ["given_name", "surname", "date_of_birth", "email"],
        transitive=False,
    )
    assert (plain["match"] == reached).all()


def test_match_model_weighs_fields_by_what_non_matches_share():
    rng = np.random.default_rng(4)
    size = 4_000
    # Matches agree on both fields; non-matching candidates (relatives) agree on
    # the shared field almost always and on the personal one almost never.
    is_match = rng.random(size) < 0.25
    shared = np.where(is_match | (rng.random(size) < 0.9), 1.0, 0.3)
    personal = np.where(is_match, rng.choice([1.0, 0.85], size), 0.2)
    personal[rng.random(size) < 0.1] = np.nan
    score = (shared + np.nan_to_num(personal, nan=shared)) / 2
    provisional = score >= 0.9
    model = decide_model.MatchModel.learn(
        {"shared": shared, "personal": personal}, provisional
    )
    weights = model.to_dict()["fields"]
    assert weights["personal"]["weight"][-1] < -3  # differing on it rules a pair out
    assert abs(weights["shared"]["weight"][0]) < 1  # relatives share it anyway
    found = model.probability({"shared": shared, "personal": personal}) >= 0.5
    known = ~np.isnan(personal)  # without the personal field nothing tells them apart
    assert (found == is_match)[known].mean() > 0.99


def test_match_model_needs_both_groups_and_enough_pairs():
    values = np.linspace(0, 1, 500)
    assert decide_model.MatchModel.learn({"a": values}, np.zeros(500, bool)) is None
    assert decide_model.MatchModel.learn({"a": values}, np.ones(500, bool)) is None
    assert decide_model.MatchModel.learn({"a": values[:50]}, values[:50] > 0.5) is None
    frame = pd.DataFrame({"name": ["ann", "anne", "bob"]})
    few = lf.score(frame, pd.DataFrame({"left": [0, 0], "right": [1, 2]}), "name")
    assert few["match_probability"].isna().all()  # nothing to learn from
    assert few.attrs["lsh_frame"]["model"] is None
    assert (few["match"] == (few["score"] >= decide_cut.DEFAULT_MIN_SCORE)).all()
    given = lf.score(
        frame, pd.DataFrame({"left": [0], "right": [1]}), "name", min_score=0.5
    )
    assert "match_probability" not in given


@pytest.mark.parametrize(
    "call, error, message",
    [
        (
            lambda f, p: lf.score(f, p.drop(columns="right"), "name"),
            lf.ColumnError,
            "'right'",
        ),
        (lambda f, p: lf.score(f, "pairs", "name"), lf.ConfigTypeError, "DataFrame"),
        (lambda f, p: lf.score(f, p.assign(left=[99]), "name"), lf.ColumnError, "99"),
        (lambda f, p: lf.score(f, p, "nmae"), lf.ColumnError, "Did you mean 'name'"),
        (
            lambda f, p: lf.score(f, p, "name", min_score=1.5),
            lf.ConfigError,
            "min_score",
        ),
        (
            lambda f, p: lf.score(f, p, "name", min_score="high"),
            lf.ConfigError,
            "min_score",
        ),
        (
            lambda f, p: lf.score(f, p, "name", values="yes"),
            lf.ConfigTypeError,
            "values",
        ),
        (lambda f, p: lf.score(f, p, "tags"), lf.ColumnTypeError, "'tags'.*list"),
        (
            lambda f, p: lf.score(f.set_axis([0, 0]), p, "name"),
            lf.ColumnError,
            "duplicate",
        ),
    ],
)
def test_bad_input_is_named(call, error, message):
    frame = pd.DataFrame({"name": ["ann", "anne"], "tags": [["a"], ["b"]]})
    pairs = pd.DataFrame({"left": [0], "right": [1]})
    with pytest.raises(error, match=message):
        call(frame, pairs)


def test_unknown_comparison_is_rejected():
    with pytest.raises(lf.ConfigError, match="compare"):
        lf.Field("name", compare="soundex")


@given(
    st.lists(
        st.lists(st.integers(0, 150), max_size=90),  # repeats; some sets over 64
        min_size=1,
        max_size=12,
    ),
    st.data(),
)
def test_set_table_matches_python_sets_for_short_and_long_sets(groups, data):
    first, second = draw_pairs(data, len(groups), 25)
    expected = [
        len(set(groups[a]) & set(groups[b])) for a, b in zip(first, second, strict=True)
    ]
    # A few sets share one width class; many keep each its own.
    with pytest.MonkeyPatch.context() as patch:
        for few_sets in (sets.FEW_SETS, 0):
            patch.setattr(sets, "FEW_SETS", few_sets)
            table = sets.SetTable.build(*csr_of(groups))
            assert table.intersection_sizes(first, second).tolist() == expected
            assert table.sizes.tolist() == [len(set(group)) for group in groups]


def test_set_table_tokens_equal_to_the_padding_still_count():
    top = np.iinfo(np.uint64).max
    groups = [[top, top - 1, 5], [top, 5], [top - 1], []]
    hashes = np.array([value for group in groups for value in group], dtype=np.uint64)
    offsets = np.array([0, 3, 5, 6, 6], dtype=np.int64)
    table = sets.SetTable.build(hashes, offsets)
    assert not table.padded  # falls back to the exact sort-merge
    first, second = np.array([0, 0, 1, 2, 3]), np.array([1, 2, 2, 3, 0])
    assert table.intersection_sizes(first, second).tolist() == [2, 1, 0, 0, 0]
    assert table.sizes.tolist() == [3, 2, 1, 0]


def test_multi_column_field_with_rows_missing_every_column():
    frame = pd.DataFrame(
        {
            "given": [None, "ann", "ann", "bob", None],
            "surname": [None, "lee", "lee", None, "ray"],
        }
    )
    field = lf.Field(["given", "surname"], name="name")
    pairs = pd.DataFrame({"left": [1, 1, 0, 3], "right": [2, 3, 1, 4]})
    scored = lf.score(frame, pairs, field, values=True, min_score=0.5)
    assert scored["name_left"].fillna("-").tolist() == [
        "ann lee",
        "ann lee",
        "-",
        "bob",
    ]
    assert scored["name_right"].tolist() == ["ann lee", "bob", "ann lee", "ray"]
    assert scored["name_score"].iloc[0] == 1.0
    assert np.isnan(scored["name_score"].iloc[2])
    exact = lf.candidates(frame, [lf.Field(["given", "surname"], blocking="exact")])
    assert exact[["left", "right"]].values.tolist() == [[1, 2]]


def test_set_table_keeps_each_set_at_its_own_width():
    # The layout of the numpy kernel (the compiled one merges sorted sets).
    counts = [5] * 1_000 + [60]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    hashes = np.arange(offsets[-1], dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    with native.forced("numpy"):
        table = sets.SetTable.build(hashes, offsets)
        shapes = [left.shape for left, _ in table.classes]
        assert shapes == [(0, 4), (1_000, 8), (0, 16), (0, 32), (1, 64)]
        mixed = table.intersection_sizes(
            np.array([0, 1_000, 3]), np.array([1_000, 1_000, 3])
        )
    assert mixed.tolist() == [0, 60, 5]


def test_scoring_a_few_pairs_equals_the_same_rows_of_a_full_scoring(customers):
    fields = ["given_name", "street_address", lf.Field("surname", compare="jaccard")]
    pairs = lf.candidates(customers, ["given_name", "surname", "date_of_birth"])
    full = lf.score(customers, pairs, fields, min_score=0.8)
    few = lf.score(customers, pairs.iloc[:5], fields, min_score=0.8)
    pd.testing.assert_frame_equal(few, full.iloc[:5])
    assert few.attrs["lsh_frame"]["compare"] == full.attrs["lsh_frame"]["compare"]
    left, right = customers.iloc[:1000], customers.iloc[1000:]
    link_pairs = lf.candidates(left, ["surname"], other=right)
    linked = lf.score(left, link_pairs, fields, other=right, min_score=0.8)
    pd.testing.assert_frame_equal(
        lf.score(left, link_pairs.iloc[:3], fields, other=right, min_score=0.8),
        linked.iloc[:3],
    )


def test_fields_from_an_index_and_numpy_min_score(customers, customer_pairs):
    columns = customers.columns.drop("entity_id")[:3]
    scored = lf.score(customers, customer_pairs, columns, min_score=np.float32(0.5))
    assert [f"{name}_score" in scored for name in columns] == [True] * 3
    assert scored.attrs["lsh_frame"]["min_score"] == 0.5


def test_a_small_batch_says_it_fell_back_to_a_cut():
    people = lf.datasets.make_customers(30, seed=3)
    columns = ["given_name", "surname", "email"]
    with pytest.warns(UserWarning, match="No match model decided the pairs") as caught:
        scored = lf.pairs(people, columns)
    assert caught[0].filename == __file__  # points at the caller's line
    info = scored.attrs["lsh_frame"]
    assert info["model"] is None
    assert info["fallback"].startswith(f"only {len(scored):,} pairs to learn from")
    assert f"score >= {info['min_score']}" in info["fallback"]
    assert info["fallback"] in str(caught[0].message)
    assert (scored["match"] == (scored["score"] >= info["min_score"])).all()
    # A number, or a learned model, is the user's decision: no fallback.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        decided = lf.pairs(people, columns, min_score=0.8)
    assert "fallback" not in decided.attrs["lsh_frame"]


def test_a_table_without_duplicates_gets_no_matches():
    # Without duplicates the candidates' top group is relatives (a surname and
    # an address shared; given name, phone, birth date and e-mail not): the
    # model sees that its "matches" are another group, and matches nothing.
    people = lf.datasets.make_customers(3_000, seed=3, duplicate_rate=0.0)
    columns = [column for column in people.columns if column != "entity_id"]
    with pytest.warns(UserWarning, match="another group") as caught:
        scored = lf.pairs(people[columns], columns)
    info = scored.attrs["lsh_frame"]
    assert not scored["match"].any() and info["model"] is None
    assert info["min_score"] is None
    assert "given_name" in info["fallback"] and "given_name" in str(caught[0].message)
    assert people.lsh.dedupe(columns)["cluster_id"].nunique() == len(people)
    # With a few duplicates the model finds them, as before.
    few = lf.datasets.make_customers(3_000, seed=3, duplicate_rate=0.02)
    found = lf.pairs(few[columns], columns)
    assert found.attrs["lsh_frame"]["model"] is not None
    quality = lf.evaluate(found[found["match"]], few["entity_id"])
    assert quality.precision > 0.9 and quality.recall > 0.9


def test_all_zero_weights_are_rejected():
    frame = pd.DataFrame({"name": ["ann", "anne"]})
    pairs = pd.DataFrame({"left": [0], "right": [1]})
    with pytest.raises(lf.ConfigError, match="weight 0"):
        lf.score(frame, pairs, [lf.Field("name", weight=0)])


def _levels_frame(rng, size, agree):
    """Field scores: 1.0 (agrees), 0.85 (nearly) or 0.3 (differs) per probability."""
    draw = rng.random(size)
    return np.where(
        draw < agree[0], 1.0, np.where(draw < agree[0] + agree[1], 0.85, 0.3)
    )


def test_refined_model_finds_the_matches_the_provisional_split_left_out(
    monkeypatch: pytest.MonkeyPatch,
):
    # Duplicates that moved or changed e-mail fall below the provisional cut;
    # the one-step model learns that differing there almost never happens among
    # matches. Refining must take them back without admitting relatives. The
    # one-step model reads the scores the refined one learned from: the
    # decision's readings of names (crossed, familiar forms, initials) are off.
    monkeypatch.setattr(decide_score, "check_tables", lambda plan, *_, **__: plan)
    people = lf.datasets.make_customers(5_000, seed=1)
    columns = [column for column in people.columns if column != "entity_id"]
    scored = lf.pairs(people[columns], columns)
    fields = [f"{column}_score" for column in columns]
    levels = {
        name: decide_model.MatchModel.levels(scored[name].to_numpy()) for name in fields
    }
    one_step = decide_model.MatchModel.learn_levels(
        levels, (scored["score"] >= scored.attrs["lsh_frame"]["min_score"]).to_numpy()
    )
    before = lf.evaluate(
        scored[one_step.probability_of_levels(levels) >= 0.5], people["entity_id"]
    )
    after = lf.evaluate(scored[scored["match"]], people["entity_id"])
    assert after.recall > before.recall + 0.05
    assert after.precision > 0.97
    assert after.f1 > 0.97
    fit = scored.attrs["lsh_frame"]["model"]["fit"]
    assert fit["em_kept"] is True
    assert 1.0 <= fit["em_growth"] <= 1.3


def test_refined_model_rejects_em_that_takes_relatives_for_people():
    # Few fields, many relatives: EM alone would call relatives matches.
    rng = np.random.default_rng(3)
    matches, relatives, strangers = 600, 1_500, 600
    scores = {}
    for name, in_match, in_relative, in_stranger in (
        ("given_name", (0.75, 0.15), (0.05, 0.05), (0.05, 0.05)),
        ("surname", (0.9, 0.1), (1.0, 0.0), (0.1, 0.0)),
        ("date_of_birth", (0.85, 0.1), (0.05, 0.05), (0.02, 0.02)),
        ("email", (0.7, 0.1), (0.5, 0.1), (0.02, 0.0)),
    ):
        scores[name] = np.concatenate(
            [
                _levels_frame(rng, matches, in_match),
                _levels_frame(rng, relatives, in_relative),
                _levels_frame(rng, strangers, in_stranger),
            ]
        )
    truth = np.arange(matches + relatives + strangers) < matches
    levels = {
        name: decide_model.MatchModel.levels(values) for name, values in scores.items()
    }
    combined = np.mean(np.column_stack(list(scores.values())), axis=1)
    provisional = combined >= decide_cut.auto_min_score(combined)
    one_step = decide_model.MatchModel.learn_levels(levels, provisional)
    refined, fit = decide_model.MatchModel.refine(levels, one_step)
    found = refined.probability_of_levels(levels) >= 0.5
    precision = (found & truth).sum() / found.sum()
    assert precision > 0.95
    if not fit["em_kept"]:
        assert fit["em_growth"] > 1.3


def test_level_patterns_are_the_distinct_rows():
    rng = np.random.default_rng(0)
    for fields in (1, 5, 33):  # 33 fields take the row-wise path
        columns = [rng.integers(0, 4, 2_000) for _ in range(fields)]
        patterns, counts = tables._level_patterns(columns)
        expected, expected_counts = np.unique(
            np.stack(columns, axis=1), axis=0, return_counts=True
        )
        np.testing.assert_array_equal(patterns, expected)
        np.testing.assert_array_equal(counts, expected_counts)


def test_a_learned_model_decides_a_later_batch():
    people = lf.datasets.make_customers(6_000, seed=2)
    columns = [column for column in people.columns if column != "entity_id"]
    saved, batch = people.iloc[:5_000], people.iloc[5_000:5_040]
    learned = lf.pairs(saved[columns], columns).attrs["lsh_frame"]["model"]
    assert json.loads(json.dumps(learned)) == learned  # can be stored as JSON
    found = lf.pairs(saved[columns], columns, other=batch[columns], min_score=learned)
    info = found.attrs["lsh_frame"]
    assert info["min_score_rule"] == "model"
    assert info["model"]["fields"] == learned["fields"]
    assert (found["match"] == (found["match_probability"] >= 0.5)).all()
    truth = (people["entity_id"].iloc[:5_000], people["entity_id"].iloc[5_000:5_040])
    quality = lf.evaluate(found, truth)
    assert quality.precision > 0.9
    assert quality.recall > 0.9
    # The same model object works too, and an explicit comparison is respected.
    model = decide_model.MatchModel.from_dict(learned)
    again = lf.pairs(saved[columns], columns, other=batch[columns], min_score=model)
    pd.testing.assert_frame_equal(again, found)


def test_a_learned_model_must_fit_the_fields():
    people = lf.datasets.make_customers(2_000, seed=2)
    learned = lf.pairs(people, ["given_name", "surname", "email"]).attrs["lsh_frame"][
        "model"
    ]
    with pytest.raises(lf.ConfigError, match="learned on the fields"):
        lf.pairs(people, ["given_name", "surname"], min_score=learned)
    with pytest.raises(lf.ConfigError, match="not a learned model"):
        lf.pairs(people, ["given_name"], min_score={"prior": 0.5})
    broken = {**learned, "prior": 1.5}
    with pytest.raises(lf.ConfigError, match="invalid numbers"):
        lf.pairs(people, ["given_name", "surname", "email"], min_score=broken)
    with pytest.raises(lf.ConfigError, match="must be a number"):
        lf.cluster(people, lf.pairs(people, ["email"]), min_score=learned)


def test_refinement_is_skipped_with_few_fields_and_never_flips_a_field():
    people = lf.datasets.make_customers(2_000, seed=1)
    scored = lf.pairs(people, ["given_name", "surname"])
    model = scored.attrs["lsh_frame"]["model"]
    assert model["fit"]["skipped"] == "fewer than 4 fields"
    # The neighbours key found no match the record key missed: the model
    # learned from the other keys' pairs, and the pairs only it found are rare
    # matches (their own prior).
    assert model["fit"]["trained_on"] == "other keys' pairs"
    assert model["alone_prior"] < model["prior"]
    for weights in (field["weight"] for field in model["fields"].values()):
        assert weights[-1] < max(weights[:-1])  # differing counts less than agreeing
    columns = [column for column in people.columns if column != "entity_id"]
    refined = lf.pairs(people[columns], columns).attrs["lsh_frame"]["model"]
    assert refined["fit"]["em_kept"] is True
    for weights in (field["weight"] for field in refined["fields"].values()):
        assert weights[-1] < max(weights[:-1])
    flipped = decide_model.MatchModel(
        prior=0.2,
        m={"a": np.array([0.2, 0.3, 0.5])},
        u={"a": np.array([0.5, 0.3, 0.2])},
        cuts=(0.99, 0.8),
    )
    assert not flipped.sound
    # Differing may point slightly towards a match among candidates (movers
    # differ on the street, relatives share it) as long as agreeing weighs more.
    movers = decide_model.MatchModel(
        prior=0.2,
        m={"street": np.array([0.6, 0.1, 0.3])},
        u={"street": np.array([0.3, 0.45, 0.25])},
        cuts=(0.99, 0.8),
    )
    assert movers.sound


@pytest.mark.parametrize(
    "compare_value", [None, {"given_name": "bogus"}, {"x": "ratio"}]
)
def test_a_learned_model_with_bad_comparisons_is_refused(compare_value):
    people = lf.datasets.make_customers(1_000, seed=2)
    columns = ["given_name", "surname", "email", "date_of_birth"]
    learned = lf.pairs(people, columns).attrs["lsh_frame"]["model"]
    with pytest.raises(lf.ConfigError, match="compare"):
        decide_model.MatchModel.from_dict({**learned, "compare": compare_value})


# ----------------------------------------------------------------------------
# Issue 14: a field with no values neither helps nor hurts

PEOPLE_COLUMNS = ["given_name", "surname", "street_address", "date_of_birth", "email"]


@pytest.fixture(scope="module")
def people_300():
    return lf.datasets.make_customers(300, seed=3).drop(columns="entity_id")


@pytest.mark.parametrize("columns", [PEOPLE_COLUMNS, PEOPLE_COLUMNS[:3]])
def test_a_field_with_no_values_changes_no_decision(people_300, columns):
    without = people_300.lsh.pairs(columns)
    with_notes = people_300.assign(notes=None).lsh.pairs([*columns, "notes"])
    assert with_notes["notes_score"].isna().all()
    decided = ["left", "right", "score", "match_probability", "match"]
    pd.testing.assert_frame_equal(with_notes[decided], without[decided])
    model = with_notes.attrs["lsh_frame"]["model"]
    reference_model = without.attrs["lsh_frame"]["model"]
    assert model["no_values"] == ["notes"]
    assert reference_model["no_values"] == []
    assert model["fields"] == reference_model["fields"]
    assert model["fit"] == reference_model["fit"]


def test_a_model_learned_with_a_field_with_no_values_decides_a_later_batch(
    people_300,
):
    frame = people_300.assign(notes=None)
    fields = [*PEOPLE_COLUMNS, "notes"]
    first = frame.lsh.pairs(fields)
    learned = first.attrs["lsh_frame"]["model"]
    again = frame.lsh.pairs(fields, min_score=learned)
    pd.testing.assert_series_equal(again["match"], first["match"])
    assert again.attrs["lsh_frame"]["model"]["no_values"] == ["notes"]
    # The field now has values, but the model has no weights for it: neutral.
    noted = frame.assign(notes=frame["surname"])
    decided = noted.lsh.pairs(fields, min_score=learned)
    assert decided["notes_score"].notna().any()
    assert decided["match_probability"].notna().all()
    with pytest.raises(lf.ConfigError, match="learned on the fields"):
        frame.lsh.pairs(PEOPLE_COLUMNS[:4], min_score=learned)


def long_text(seed, length, alphabet=b"abcdefghijklmnopqrstuvwxyz"):
    """Word-like text of ``length`` characters."""
    letters = np.frombuffer(alphabet, dtype=np.uint8)
    codes = np.random.default_rng(seed).choice(letters, length)
    codes[5::7] = ord(" ")
    return codes.tobytes().decode("ascii")


def scored_pair(first, second, comparison):
    frame = pd.DataFrame({"text": [first, second]})
    pairs = pd.DataFrame({"left": [0], "right": [1]})
    field = lf.Field("text", compare=comparison)
    return lf.score(frame, pairs, [field], min_score=0.5).iloc[0]


@pytest.mark.parametrize("comparison", ["ratio", "token_sort_ratio", "levenshtein"])
def test_values_within_the_fuzzy_bound_are_compared_whole(comparison):
    bound = compare_text.FUZZY_MAX_CHARS
    # Exactly the bound in characters, one byte more (the cut is in characters).
    first = "é" + long_text(1, bound - 1)
    second = first[:-50] + long_text(2, 50)  # they differ only at the end
    scorer, scale = compare_text.SCORERS[comparison]
    expected = scorer(first, second) / scale
    assert scored_pair(first, second, comparison)["text_score"] == expected < 1


@pytest.mark.parametrize("comparison", ["ratio", "token_sort_ratio"])
def test_long_values_differing_after_the_bound_score_as_their_prefixes(comparison):
    bound = compare_text.FUZZY_MAX_CHARS
    first = long_text(3, 1_000_000)
    # A change within the bound, and the rest of the value entirely different.
    rest = long_text(4, 1_000_000 - bound, alphabet=b"0123456789")
    second = first[:10] + "x" + first[11:bound] + rest
    whole = scored_pair(first, second, comparison)
    prefixes = scored_pair(first[:bound], second[:bound], comparison)
    assert whole["text_score"] == prefixes["text_score"] < 1
    # Jaccard is exact over the whole values, not only their prefixes.
    assert whole["text_jaccard"] < 0.5 < prefixes["text_jaccard"]


def test_fuzzy_comparisons_receive_at_most_the_bound(monkeypatch):
    seen = []
    cpdist = compare_text.process.cpdist

    def recording(queries, choices, **options):
        seen.extend(len(value) for value in [*queries, *choices])
        return cpdist(queries, choices, **options)

    monkeypatch.setattr(compare_text.process, "cpdist", recording)
    huge = "é" + long_text(5, 300_000)
    frame = pd.DataFrame({"text": [huge, huge[:-1] + "z", "short value", huge[:3_000]]})
    pairs = pd.DataFrame({"left": [0, 0, 0, 1], "right": [1, 2, 3, 2]})
    scored = lf.score(frame, pairs, [lf.Field("text", compare="ratio")], min_score=0.5)
    assert max(seen) == compare_text.FUZZY_MAX_CHARS  # cut, in characters
    assert sorted(set(seen)) == [11, 3_000, compare_text.FUZZY_MAX_CHARS]
    assert scored["text_score"].tolist()[0] == 1.0  # equal prefixes


def test_a_few_pairs_score_in_one_pass_as_field_by_field(monkeypatch):
    """Fields sharing one dictionary (a few pairs) score exactly as one by one."""
    from lsh_frame.compare import fields as compare_fields

    people = lf.datasets.make_customers(300, seed=9)
    frame = people.drop(columns="entity_id").assign(
        amount=np.linspace(1.0, 99.0, len(people)),
        born=pd.to_datetime(people["date_of_birth"], errors="coerce"),
        note=people["street_address"] + " near " + people["city"] + " " * 3,
    )
    frame.iloc[4, :3] = None
    fields = [
        "given_name",
        "surname",
        lf.Field(["street_address", "city"]),
        lf.Field("email", shingle="word"),
        lf.Field("street_address", shingle="word", compare="jaccard"),
        "date_of_birth",
        "amount",
        "born",
        lf.Field("note", compare="tfidf"),
        lf.Field("phone", compare="jaro_winkler", strip_punctuation=True),
        lf.Field("postcode", compare="jaccard"),
        lf.Field("city", compare="levenshtein", weight=0.5),
        lf.Field("phone", compare="exact", name="phone_exact"),
    ]
    rng = np.random.default_rng(2)
    pairs = pd.DataFrame(
        {"left": rng.integers(0, 300, 60), "right": rng.integers(0, 300, 60)}
    )
    pairs = pairs[pairs["left"] != pairs["right"]]
    left, right = frame.iloc[:150], frame.iloc[150:]
    link_pairs = pd.DataFrame(
        {"left": rng.integers(0, 150, 60), "right": rng.integers(150, 300, 60)}
    )
    together = lf.score(frame, pairs, fields, min_score=0.7)
    linked = lf.score(left, link_pairs, fields, other=right, min_score=0.7)
    monkeypatch.setattr(compare_fields, "THREADED_PAIRS", 0)
    apart = lf.score(frame, pairs, fields, min_score=0.7)
    pd.testing.assert_frame_equal(together, apart, check_exact=True)
    pd.testing.assert_frame_equal(
        linked,
        lf.score(left, link_pairs, fields, other=right, min_score=0.7),
        check_exact=True,
    )
    assert together["match"].any()


def _strip_edge_punctuation(text: str) -> str:
    """Reference: drop punctuation and spaces at both ends (Unicode classes P*)."""
    import unicodedata

    def edge(character: str) -> bool:
        return character in " \t\n\r\f\v" or unicodedata.category(character).startswith(
            ("P", "Z")
        )

    start, stop = 0, len(text)
    while start < stop and edge(text[start]):
        start += 1
    while stop > start and edge(text[stop - 1]):
        stop -= 1
    return text[start:stop] or text


@pytest.mark.parametrize("comparison", ["ratio", "jaro_winkler", "levenshtein"])
def test_whole_value_scorers_ignore_punctuation_at_the_ends(comparison):
    """(1994). and 1994, agree; inner punctuation and all-punctuation values count."""
    left = ["(1994).", "1994", "pages 285-295,", "o'brien.", "-", "«émile»", "x"]
    right = ["1994,", "1993.", "pages 285-296", "obrien", "--", "émile", ". x ."]
    frame = pd.DataFrame({"value": left + right})
    pairs = pd.DataFrame(
        {"left": range(len(left)), "right": range(len(left), 2 * len(left))}
    )
    scored = lf.score(
        frame, pairs, [lf.Field("value", compare=comparison)], min_score=0.5
    )
    scorer, scale = compare_text.SCORERS[comparison]
    expected = [
        scorer(_strip_edge_punctuation(a), _strip_edge_punctuation(b)) / scale
        for a, b in zip(left, right, strict=True)
    ]
    np.testing.assert_allclose(scored["value_score"].to_numpy(), expected)
    assert scored["value_score"].iloc[0] == 1.0
    assert scored["value_score"].iloc[1] < 1.0  # 1994 vs 1993 still differ
    assert scored["value_score"].iloc[3] < 1.0  # the inner apostrophe counts
    assert scored["value_score"].iloc[4] < 1.0  # "-" and "--" are kept whole


def test_word_scorers_keep_punctuation_at_the_ends():
    frame = pd.DataFrame({"value": ["(1994).", "1994,"]})
    pairs = pd.DataFrame({"left": [0], "right": [1]})
    scored = lf.score(
        frame, pairs, [lf.Field("value", compare="token_sort_ratio")], min_score=0.5
    )
    assert (
        scored["value_score"].iloc[0] == fuzz.token_sort_ratio("(1994).", "1994,") / 100
    )
    assert scored["value_score"].iloc[0] < 1.0


@pytest.mark.parametrize("comparison", ["ratio", "token_sort_ratio", "jaro_winkler"])
def test_an_aside_in_brackets_on_one_side_is_missing_not_different(comparison):
    left = ["Shanghai (China)", "Hard Target (1993)", "Godfather (1972)", "x (y)"]
    right = ["Shanghai", "hard target", "Godfather (1990)", "(y)"]
    frame = pd.DataFrame({"value": left + right})
    pairs = pd.DataFrame({"left": range(4), "right": range(4, 8)})
    scored = lf.score(
        frame, pairs, [lf.Field("value", compare=comparison)], min_score=0.5
    )["value_score"].to_numpy()
    # An aside only one value has is left out of the comparison ...
    assert scored[0] == 1.0 and scored[1] == 1.0
    # ... but two values that both have one are compared whole, and a value
    # that is nothing but an aside keeps it.
    assert scored[2] < 1.0 and scored[3] < 1.0


def test_phone_numbers_are_compared_on_their_digits():
    frame = pd.DataFrame(
        {
            "phone": [
                "(07) 7467 4346",
                "0774674346",
                "07-7467-4346",
                "0774674347",  # one digit wrong
                "0418 709 430",  # another number
            ]
        }
    )
    pairs = pd.DataFrame({"left": [0, 0, 0, 0], "right": [1, 2, 3, 4]})
    scored = lf.score(frame, pairs, ["phone"], min_score=0.5)
    assert scored.attrs["lsh_frame"]["compare"]["phone"] == "digits"
    got = scored["phone_score"].to_numpy()
    assert got[:2].tolist() == [1.0, 1.0]
    assert got[2] == pytest.approx(1 - 2 / 18)
    assert got[3] < 0.5
    # The same numbers as floats (pd.read_csv) score alike.
    floats = pd.DataFrame({"phone": [774674346.0, 774674346.0, np.nan]})
    again = lf.score(floats, pd.DataFrame({"left": [0], "right": [1]}), ["phone"])
    assert again.attrs["lsh_frame"]["compare"]["phone"] == "digits"
    assert again["phone_score"].tolist() == [1.0]


@pytest.mark.parametrize(
    "values",
    [
        ["4870", "0800", "2606", "6000"],  # postcodes: bare short codes
        ["12 Smith St", "4 Cook Cres", "9 Ash Ave", "1 Elm Rd"],
        ["1921-02-22", "1950-03-01", "1960-01-01", "1970-07-07"],
    ],
)
def test_other_columns_are_not_read_as_digits(values):
    frame = pd.DataFrame({"field": values})
    pairs = pd.DataFrame({"left": [0], "right": [1]})
    scored = lf.score(frame, pairs, ["field"], min_score=0.5)
    assert scored.attrs["lsh_frame"]["compare"]["field"] != "digits"
