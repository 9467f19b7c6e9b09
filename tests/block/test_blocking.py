"""Candidate pairs: contract, keys, buckets, limits, and the data-driven defaults."""

import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame.block import candidates, defaults


@pytest.fixture(scope="module")
def customers():
    return lf.datasets.make_customers(3_000, seed=5)


def pair_set(pairs):
    return set(zip(pairs["left"], pairs["right"], strict=True))


def test_dedupe_pairs_are_canonical(customers):
    pairs = lf.candidates(
        customers,
        [lf.Field("surname", blocking="exact"), lf.Field("given_name", threshold=0.6)],
    )
    position = customers.index.get_indexer
    left, right = position(pairs["left"]), position(pairs["right"])
    assert (left < right).all()  # each unordered pair once, never a self pair
    assert not pairs.duplicated(["left", "right"]).any()
    assert pairs.equals(
        pairs.sort_values(["left", "right"]).reset_index(drop=True)
    ) or (np.all(np.diff(left * len(customers) + right) > 0))
    assert list(pairs.columns) == ["left", "right", "found_by"]
    assert isinstance(pairs["found_by"].dtype, pd.CategoricalDtype)


def test_exact_key_finds_exactly_the_equal_normalised_values():
    frame = pd.DataFrame(
        {"x": ["Ann", " ann ", "ANN", "bob", None, "", "  ", "bob"]},
        index=list("abcdefgh"),
    )
    pairs = lf.candidates(frame, [lf.Field("x", blocking="exact")])
    assert pair_set(pairs) == {("a", "b"), ("a", "c"), ("b", "c"), ("d", "h")}


def test_missing_and_blank_values_never_form_a_bucket():
    frame = pd.DataFrame({"x": [None, "", " ", None, "\t", "ab"] * 50})
    pairs = lf.candidates(
        frame, [lf.Field("x", blocking="exact"), lf.Field("x", name="fuzzy")]
    )
    kept = frame["x"].iloc[pd.Index(pairs["left"])]
    assert (kept == "ab").all()  # only the real value pairs up


def test_link_keeps_orientation(customers):
    left, right = customers.iloc[:1500], customers.iloc[1500:]
    pairs = lf.candidates(left, [lf.Field("surname", blocking="exact")], other=right)
    assert (
        pairs["left"].isin(left.index).all() and pairs["right"].isin(right.index).all()
    )
    merged = pd.merge(
        left["surname"].str.lower().dropna().rename_axis("a").reset_index(),
        right["surname"].str.lower().dropna().rename_axis("b").reset_index(),
        on="surname",
    )
    assert pair_set(pairs) == set(zip(merged["a"], merged["b"], strict=True))


def test_link_with_a_copy_agrees_with_dedupe(customers):
    sample = customers.iloc[:800]
    fields = [
        lf.Field("surname", blocking="exact"),
        lf.Field("street_address", threshold=0.5),
    ]
    dedupe = pair_set(lf.candidates(sample, fields))
    link = pair_set(lf.candidates(sample, fields, other=sample.copy()))
    position = sample.index.get_loc
    assert {(a, b) for a, b in link if position(a) < position(b)} == dedupe
    assert {(a, a) for a in sample.index if pd.notna(sample.at[a, "surname"])} <= link


values = st.lists(
    st.sampled_from(["ann", "bob", "cy", None, "", "ann b", "bob c"]),
    min_size=0,
    max_size=30,
)


@given(first=values, second=values)
def test_union_of_keys_contains_each_keys_pairs(first, second):
    size = min(len(first), len(second))
    frame = pd.DataFrame({"a": first[:size], "b": second[:size]}, dtype=object)
    key_a, key_b = lf.Field("a", blocking="exact"), lf.Field("b", blocking="exact")
    both = lf.candidates(frame, [key_a, key_b])
    only_a, only_b = lf.candidates(frame, [key_a]), lf.candidates(frame, [key_b])
    assert pair_set(both) == pair_set(only_a) | pair_set(only_b)
    labels = dict(
        zip(
            zip(both["left"], both["right"], strict=True), both["found_by"], strict=True
        )
    )
    for pair in pair_set(only_a):
        assert "a" in labels[pair].split("|")
    for pair in pair_set(only_b) - pair_set(only_a):
        assert labels[pair] == "b"


def test_bucket_cap_drops_and_warns():
    frame = pd.DataFrame({"x": ["same"] * 12 + ["other", "other"]})
    with pytest.warns(
        UserWarning, match=r"1 bucket\(s\) with more than 5 records.*12 × 'same'"
    ):
        pairs = lf.candidates(frame, [lf.Field("x", blocking="exact")], max_bucket=5)
    assert pair_set(pairs) == {(12, 13)}


def test_max_pairs_stops_before_building(customers):
    with pytest.raises(
        lf.TooManyPairsError, match=r"would build [\d,]+ candidate pairs.*max_pairs=10"
    ):
        lf.candidates(customers, [lf.Field("city", blocking="exact")], max_pairs=10)


def test_one_value_everywhere_does_not_exhaust_memory():
    frame = pd.DataFrame({"name": ["john smith"] * 100_000})
    with pytest.warns(UserWarning, match="100,000 × 'john smith'"):
        pairs = lf.candidates(
            frame,
            [
                lf.Field("name", blocking="exact"),
                lf.Field("name", name="lsh", threshold=0.8),
            ],
        )
    assert pairs.empty


def test_plain_columns_let_the_data_decide(customers):
    context = candidates.resolve(
        customers, ["given_name", "surname", "city", "phone", "email"]
    )
    decided = "\n".join(context.decisions)
    assert "phone: exact key" in decided and "email: exact key" in decided
    assert "city: no key of its own" in decided
    assert "record: lsh key" in decided
    # Plain columns get both record keys: the LSH one and the neighbours one.
    labels = [key.label for key in context.keys]
    assert labels[-2:] == ["record", "record_neighbours"] and "city" not in labels
    assert "record_neighbours: neighbours key" in decided


def test_plain_columns_of_very_large_tables_keep_the_neighbours_key(
    customers, monkeypatch
):
    # The neighbours key does not depend on the table's size: a table that
    # says it holds ten million records gets it as a small one does (other
    # keys may differ: an identifier's pairs grow with the table).
    columns = ["given_name", "surname", "city", "phone", "email"]
    options = {"threshold": None, "recall": 0.95, "num_perm": 128, "seed": 1}

    def decided():
        source = defaults._FrameSource(customers, None, "test", columns)
        return defaults.decide_keys(source, columns, owner="test", **options)

    small = decided()
    monkeypatch.setattr(
        defaults._FrameSource, "n_left", property(lambda self: 10_000_000)
    )
    large = decided()
    assert [key.label for key in small[0]][-1] == "record_neighbours"
    assert [key.label for key in large[0]][-1] == "record_neighbours"
    assert not any("no neighbours key" in line for line in large[1])


def test_defaults_find_true_pairs(customers):
    columns = [column for column in customers.columns if column != "entity_id"]
    pairs = lf.candidates(customers, columns)
    truth = lf.datasets.true_pairs(customers["entity_id"])
    found = pair_set(pairs) & set(zip(truth["left"], truth["right"], strict=True))
    assert len(found) / len(truth) > 0.95
    assert len(pairs) < 10 * len(customers)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (
            lambda f: lf.candidates(f, "nope"),
            lf.ColumnError,
            "'nope' is not in the frame",
        ),
        (lambda f: lf.candidates(f, []), lf.ConfigError, "at least one column"),
        (
            lambda f: lf.candidates(f.set_index(pd.Index([1] * len(f))), "surname"),
            lf.ColumnError,
            "duplicate labels",
        ),
        (
            lambda f: lf.candidates(f, "surname", max_bucket=1),
            lf.ConfigError,
            "'max_bucket'",
        ),
        (
            lambda f: lf.candidates(f, "surname", other=[1]),
            lf.ConfigTypeError,
            "'other'",
        ),
        (
            lambda f: lf.candidates(f, "surname", other=f[["city"]]),
            lf.ColumnError,
            "'surname'",
        ),
        (
            lambda f: lf.candidates(f, [lf.Field("surname", blocking=None)]),
            lf.ConfigError,
            "blocking key",
        ),
        (
            lambda f: lf.candidates(f, [lf.Field("surname"), lf.Field("surname")]),
            lf.ConfigError,
            "distinct name",
        ),
        (lambda f: lf.Field("x", blocking="fuzzy"), lf.ConfigError, "'blocking'"),
        (lambda f: lf.Field("x", threshold=2), lf.ConfigError, "'threshold'"),
        (lambda f: lf.Field("x", weight=-1), lf.ConfigError, "'weight'"),
        (lambda f: lf.Field("x", k=0), lf.ConfigError, "'k'"),
    ],
)
def test_bad_input(customers, call, error, message):
    with pytest.raises(error, match=message):
        call(customers)


def test_empty_and_tiny_frames():
    empty = pd.DataFrame({"x": pd.Series([], dtype="str")})
    assert lf.candidates(empty, [lf.Field("x", blocking="exact")]).empty
    one = pd.DataFrame({"x": ["a"]})
    assert lf.candidates(one, ["x"]).empty


def test_input_is_not_mutated(customers):
    before = customers.copy()
    lf.candidates(customers, ["surname", "city"])
    pd.testing.assert_frame_equal(customers, before)


def test_signature_columns_block_without_recomputing(customers):
    frame = customers.assign(sig=lf.minhash(customers["surname"]))
    from_signatures = lf.candidates(frame, [lf.Field("sig", bands=16, rows=8)])
    from_text = lf.candidates(
        frame, [lf.Field("surname", bands=16, rows=8, name="sig")]
    )
    pd.testing.assert_frame_equal(from_signatures, from_text)


def test_sketch_signature_columns_block_like_minhash(customers):
    # A column signed with the fast similarity sketch blocks through the same
    # bands; it finds (nearly) the same true pairs as classic MinHash.
    text = customers["given_name"].str.cat(customers[["surname", "city"]], sep=" ")
    truth = lf.datasets.true_pairs(customers["entity_id"])
    found = {}
    for scheme in ("affine32", "fss32"):
        frame = customers.assign(sig=lf.minhash(text, scheme=scheme))
        pairs = lf.candidates(frame, [lf.Field("sig", threshold=0.5)])
        assert set(pairs["found_by"]) == {"sig"}
        found[scheme] = lf.evaluate(pairs, truth).pairs_completeness
    assert found["fss32"] > 0.8
    assert abs(found["fss32"] - found["affine32"]) < 0.05


def test_signature_columns_must_match_across_tables(customers):
    left = customers.iloc[:100].assign(sig=lf.minhash(customers["surname"].iloc[:100]))
    right = customers.iloc[100:200].assign(
        sig=lf.minhash(customers["surname"].iloc[100:200], num_perm=64)
    )
    with pytest.raises(lf.SignatureMismatchError, match="num_perm=128 vs 64"):
        lf.candidates(left, [lf.Field("sig", threshold=0.5)], other=right)
    with pytest.raises(lf.ConfigError, match="signature column in one table"):
        lf.candidates(
            left, [lf.Field("sig", threshold=0.5)], other=right.assign(sig="x")
        )


def test_explicit_banding(customers):
    with pytest.raises(lf.ConfigError, match="'bands' and 'rows' together"):
        lf.Field("surname", bands=4)
    with pytest.raises(lf.ConfigError, match="200 signature values"):
        lf.candidates(customers, [lf.Field("surname", bands=40, rows=5)])
    context = candidates.resolve(customers, [lf.Field("surname", bands=20, rows=6)])
    assert (context.keys[0].plan.bands, context.keys[0].plan.rows) == (20, 6)


def test_report_counts_without_building_pairs(customers):
    fields = [lf.Field("phone", blocking="exact"), lf.Field("surname", threshold=0.7)]
    truth = lf.datasets.true_pairs(customers["entity_id"])
    report = customers.lsh.blocking_report(fields, true_pairs=truth)
    table = report.table.set_index("key")
    phone = table.loc["phone"]
    assert phone["records_keyed"] + phone["records_without_key"] == len(customers)
    assert phone["records_without_key"] == customers["phone"].isna().sum()
    exact_pairs = lf.candidates(customers, [fields[0]])
    assert phone["pairs"] == len(exact_pairs)  # exact keys: the count is exact
    lsh_pairs = lf.candidates(customers, [fields[1]])
    assert table.loc["surname", "pairs"] >= len(lsh_pairs)  # bands: an upper bound
    assert table["cumulative_pairs"].tolist() == table["pairs"].cumsum().tolist()
    # Completeness agrees with the pairs the keys actually build.
    built = pair_set(lf.candidates(customers, fields))
    true_set = set(zip(truth["left"], truth["right"], strict=True))
    assert table["cumulative_completeness"].iloc[-1] == pytest.approx(
        len(built & true_set) / len(true_set)
    )
    assert table.loc["phone", "pairs_completeness"] == pytest.approx(
        len(pair_set(exact_pairs) & true_set) / len(true_set)
    )
    assert "Largest buckets" in str(report) and "phone" in report._repr_html_()


def test_report_shows_dropped_buckets_and_link():
    left = pd.DataFrame({"x": ["same"] * 8 + ["a"]}, index=[f"l{i}" for i in range(9)])
    right = pd.DataFrame({"x": ["same", "a", "b"]}, index=["r0", "r1", "r2"])
    report = lf.blocking_report(
        left,
        [lf.Field("x", blocking="exact")],
        other=right,
        max_bucket=5,
        true_pairs=pd.DataFrame({"left": ["l8"], "right": ["r1"]}),
    )
    row = report.table.iloc[0]
    assert (row["dropped_buckets"], row["pairs"], row["pairs_completeness"]) == (
        1,
        1,
        1.0,
    )
    assert report.largest_buckets["x"][0] == (9, "same")
    with pytest.raises(lf.ColumnError, match="not in the frames"):
        lf.blocking_report(
            left,
            ["x"],
            other=right,
            true_pairs=pd.DataFrame({"left": ["zz"], "right": ["r1"]}),
        )
    with pytest.raises(lf.ConfigTypeError, match="'true_pairs'"):
        lf.blocking_report(left, ["x"], other=right, true_pairs=[("l8", "r1")])


def test_report_does_not_count_pairs_in_dropped_link_buckets():
    left = pd.DataFrame({"x": ["same"] * 6}, index=[f"l{i}" for i in range(6)])
    right = pd.DataFrame({"x": ["same", "same"]}, index=["r0", "r1"])
    truth = pd.DataFrame({"left": ["l0"], "right": ["r0"]})
    report = lf.blocking_report(
        left,
        [lf.Field("x", blocking="exact")],
        other=right,
        max_bucket=5,
        true_pairs=truth,
    )
    row = report.table.iloc[0]
    assert (row["dropped_buckets"], row["pairs"], row["pairs_completeness"]) == (
        1,
        0,
        0.0,
    )
    with pytest.warns(UserWarning, match="dropped"):
        assert lf.candidates(
            left, [lf.Field("x", blocking="exact")], other=right, max_bucket=5
        ).empty


def test_decisions_say_when_a_field_cannot_be_made_selective():
    # Similarities spread evenly up to 1 (a shared prefix of random length): at
    # every threshold many pairs sit just below it, so no banding fits the budget.
    base = "abcdefghijklmnopqrstuvwxyz" * 3
    lengths = np.random.default_rng(0).integers(10, 78, 600)
    frame = pd.DataFrame({"x": [f"{base[:n]}-{i:04d}" for i, n in enumerate(lengths)]})
    context = candidates.resolve(frame, [lf.Field("x", blocking="lsh")])
    assert "is not met even at the highest threshold" in context.decisions[0]


def test_a_small_batch_linked_to_a_large_table_gets_a_small_budget():
    # Six to ten new records against thousands: the data-chosen keys must aim
    # at a few candidates per new record, not one per record of the saved table.
    people = lf.datasets.make_customers(5_000, seed=3)
    columns = [column for column in people.columns if column != "entity_id"]
    saved, batch = people.iloc[:4_990], people.iloc[4_990:]
    pairs = lf.candidates(saved[columns], columns, other=batch[columns])
    assert len(pairs) <= 10 * len(batch)
    truth = people["entity_id"]
    true_pairs = sum(
        int((truth.iloc[:4_990] == entity).sum()) for entity in truth.iloc[4_990:]
    )
    found = truth.loc[pairs["left"]].to_numpy() == truth.loc[pairs["right"]].to_numpy()
    assert true_pairs > 0
    assert found.sum() == true_pairs


def test_data_chosen_keys_do_not_depend_on_row_order():
    people = lf.datasets.make_customers(3_000, seed=8)
    columns = [column for column in people.columns if column != "entity_id"]
    shuffled = people.sample(frac=1.0, random_state=4)
    first = lf.candidates(people[columns], columns)
    second = lf.candidates(shuffled[columns], columns)

    def as_set(pairs):
        return set(map(frozenset, pairs[["left", "right"]].to_numpy().tolist()))

    assert as_set(first) == as_set(second)
    report = lf.blocking_report(shuffled[columns], columns)
    assert report.decisions == lf.blocking_report(people[columns], columns).decisions


def _phone_tables(separator_left: str, separator_right: str):
    rng = np.random.default_rng(11)
    digits = rng.integers(100, 999, size=(300, 3))
    numbers = [f"{a}{{}}{b}-{c}0" for a, b, c in digits]
    left = pd.DataFrame(
        {
            "phone": [n.format(separator_left) for n in numbers],
            "name": [f"person {i}" for i in range(300)],
        },
        index=[f"l{i}" for i in range(300)],
    )
    right = pd.DataFrame(
        {
            "phone": [n.format(separator_right) for n in numbers],
            "name": [f"someone {i}" for i in range(300)],
        },
        index=[f"r{i}" for i in range(300)],
    )
    return left, right


def test_identifier_keys_ignore_how_separators_are_written():
    left, right = _phone_tables("/", "-")
    context = candidates.resolve(left, ["phone", "name"], other=right)
    assert any(d.startswith("phone: exact key") for d in context.decisions)
    pairs = lf.candidates(left, ["phone", "name"], other=right)
    found = set(zip(pairs["left"], pairs["right"], strict=True))
    assert {(f"l{i}", f"r{i}") for i in range(300)} <= found


def test_a_link_key_whose_values_never_meet_is_reported_not_used():
    left, right = _phone_tables("/", "-")
    # The same films, but one side writes the year after every title.
    left["title"] = [f"film number {i}" for i in range(300)]
    right["title"] = [f"film number {i} (1999)" for i in range(300)]
    context = candidates.resolve(left, ["title"], other=right)
    decided = "\n".join(context.decisions)
    assert "title: no exact key" in decided
    assert "almost never agree" in decided
    assert all(key.kind != "exact" for key in context.keys)
    # Within one table the same column still identifies records.
    alone = candidates.resolve(left, ["title"])
    assert any(d.startswith("title: exact key") for d in alone.decisions)


# ----------------------------------------------------------------------------
# Issue 14: sets of columns, non-finite weights, call-level fractions


SET_OF_COLUMNS = {"given_name", "surname"}


@pytest.mark.parametrize(
    "call",
    [
        lambda f: f.lsh.minhash(SET_OF_COLUMNS),
        lambda f: f.lsh.minhash(frozenset(SET_OF_COLUMNS)),
        lambda f: f.lsh.shingles({"surname"}),
        lambda f: lf.Field(SET_OF_COLUMNS),
        lambda f: f.lsh.candidates(SET_OF_COLUMNS),
        lambda f: f.lsh.pairs(SET_OF_COLUMNS),
        lambda f: f.lsh.dedupe(SET_OF_COLUMNS),
        lambda f: f.lsh.merge(f, SET_OF_COLUMNS),
        lambda f: f.lsh.merge(f, ["surname"], right_on={"surname"}),
    ],
)
def test_a_set_of_columns_is_refused(customers, call):
    # A set has no order, so which column came first would depend on
    # PYTHONHASHSEED; refuse it instead of guessing.
    with pytest.raises(lf.ConfigTypeError, match=r"a set.*Pass a list"):
        call(customers.head(50))


@pytest.mark.parametrize("weight", [float("inf"), float("-inf"), float("nan")])
def test_a_non_finite_weight_is_refused(weight):
    with pytest.raises(lf.ConfigError, match=r"'weight' parameter of Field.*finite"):
        lf.Field("surname", weight=weight)


EXACT_ONLY = [lf.Field("email", blocking="exact")]


@pytest.mark.parametrize(
    ("options", "name"),
    [
        ({"threshold": float("nan")}, "threshold"),
        ({"threshold": 0}, "threshold"),
        ({"threshold": 1.5}, "threshold"),
        ({"threshold": "0.5"}, "threshold"),
        ({"recall": 1.5}, "recall"),
        ({"recall": float("nan")}, "recall"),
        ({"recall": None}, "recall"),
    ],
)
@pytest.mark.parametrize(
    "call",
    [
        lambda f, o: f.lsh.candidates(EXACT_ONLY, **o),
        lambda f, o: f.lsh.blocking_report(EXACT_ONLY, **o),
        lambda f, o: f.lsh.pairs(EXACT_ONLY, **o),
        lambda f, o: f.lsh.dedupe(EXACT_ONLY, **o),
        lambda f, o: f.lsh.drop_duplicates(EXACT_ONLY, **o),
        lambda f, o: f.lsh.link(f, EXACT_ONLY, **o),
        lambda f, o: f.lsh.merge(f, EXACT_ONLY, **o),
    ],
)
def test_call_level_fractions_are_checked_whatever_the_fields(
    customers, call, options, name
):
    with pytest.raises(lf.ConfigError, match=rf"'{name}' parameter of .* \(0, 1\]"):
        call(customers.head(50), options)


# ----------------------------------------------------------------------------
# Issue 14: labels pandas cannot hash (a tuple in an object index)

NAMES = ["ann lee", "anne lee", "bob smith", "bobby smith", "ann lee"]


def _with_label(label):
    return pd.DataFrame(
        {"name": NAMES}, index=pd.Index([3, "b", 2.5, label, 8], dtype=object)
    )


@pytest.mark.parametrize(
    "call",
    [
        lambda f: f.lsh.candidates(["name"]),
        lambda f: f.lsh.pairs(["name"]),
        lambda f: f.lsh.pairs([lf.Field("name", blocking="neighbours")]),
        lambda f: f.lsh.dedupe(["name"], min_score=0.8),
        lambda f: f.lsh.drop_duplicates(["name"], min_score=0.8),
        lambda f: f.lsh.merge(f.iloc[::-1], ["name"], min_score=0.8),
    ],
)
def test_a_tuple_label_works_like_a_label_of_its_own(call):
    got = call(_with_label(("t", 1)))
    want = call(_with_label("t-1"))

    def untupled(frame):
        # The same frame with the tuple written as the string label it stood for.
        frame = frame.copy()
        frame.index = pd.Index(
            ["t-1" if label == ("t", 1) else label for label in frame.index],
            dtype=object,
        )
        for column in frame.columns:
            if frame[column].dtype == object:
                frame[column] = frame[column].map(
                    lambda value: "t-1" if value == ("t", 1) else value
                )
        return frame

    assert len(want) > 0
    pd.testing.assert_frame_equal(untupled(got), want, check_index_type=False)


def test_label_hashes_are_stable_for_labels_pandas_cannot_hash():
    index = pd.Index([3, "b", 2.5, ("t", 1), 8], dtype=object)
    hashes = defaults.label_hashes(index, seed=1)
    assert hashes.dtype == np.uint64 and len(set(hashes.tolist())) == 5
    # Hashable scalars keep the hash they have in an index without the tuple.
    plain = defaults.label_hashes(pd.Index([3, "b", 2.5, "x", 8], dtype=object), 1)
    assert (hashes[[0, 1, 2, 4]] == plain[[0, 1, 2, 4]]).all()
    # The same in another process (never Python's salted hash()).
    script = (
        "import pandas as pd; from lsh_frame.block import defaults; "
        "print(defaults.label_hashes("
        "pd.Index([3, 'b', 2.5, ('t', 1), 8], dtype=object), seed=1).tolist())"
    )
    other = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "123"},
    )
    assert other.stdout.strip() == str(hashes.tolist())


@pytest.mark.parametrize("tag_columns", [True, False])
@pytest.mark.parametrize("rows", [1, 3, 40])
def test_few_records_are_signed_in_one_pass_as_column_by_column(
    monkeypatch, tag_columns, rows
):
    """Pooled signing of a small batch equals the minimum of column signatures."""
    from lsh_frame.block import keys as block_keys

    frame = lf.datasets.make_customers(60, seed=3).drop(columns="entity_id")
    frame.iloc[1, :] = None
    frame.iloc[2, 1] = ""
    frame = frame.iloc[:rows]
    spec = lf.Field(list(frame.columns), tag_columns=tag_columns)
    pooled = block_keys.field_signatures(frame, spec, num_perm=64, seed=3, owner="test")
    monkeypatch.setattr(block_keys, "SMALL_BATCH_VALUES", 0)
    apart = block_keys.field_signatures(frame, spec, num_perm=64, seed=3, owner="test")
    assert np.array_equal(pooled[0], apart[0])
    assert np.array_equal(pooled[1], apart[1])


def test_a_few_records_get_their_exact_keys_in_one_pass(monkeypatch):
    """Exact keys of several fields together equal those of one field at a time."""
    from lsh_frame.block import fields as module
    from lsh_frame.block import keys as block_keys

    frame = lf.datasets.make_customers(50, seed=8).drop(columns="entity_id")
    frame.iloc[2, :] = None
    frame.iloc[3, 5] = "  "
    keys = [
        module.BlockingKey(defaults.identifier_field(column), "exact")
        for column in ["phone", "email", "date_of_birth", "postcode"]
    ] + [module.BlockingKey(lf.Field("surname", blocking="exact"), "exact")]
    together = block_keys.table_keys(frame, keys, num_perm=64, seed=1, owner="t")
    monkeypatch.setattr(block_keys, "SMALL_BATCH_VALUES", 0)
    apart = block_keys.table_keys(frame, keys, num_perm=64, seed=1, owner="t")
    for one, other in zip(together, apart, strict=True):
        # Records without a key hold whatever; only keyed records count.
        assert np.array_equal(one.valid, other.valid)
        assert np.array_equal(one.keys[one.valid], other.keys[other.valid])
    assert not together[0].valid[2] and together[0].valid.sum() > 40


@pytest.mark.parametrize("chunk", [None, 97])
def test_a_fields_signature_is_the_minimum_of_its_columns_signatures(
    monkeypatch, chunk
):
    """Pooled a chunk at a time into one matrix: the minimum of each column's."""
    import importlib

    from lsh_frame.block.keys import field_signatures
    from lsh_frame.config import MinHashConfig
    from lsh_frame.text.shingle import column_text

    minhash_module = importlib.import_module("lsh_frame.sketch.minhash")
    frame = lf.datasets.make_customers(9_000, seed=6)
    frame.loc[frame.index[:40], "city"] = None  # missing in one column only
    blank = ["given_name", "city", "street_address"]
    frame.loc[frame.index[40:45], blank] = ""  # blank in every column
    frame.loc[frame.index[45], blank] = None  # no value at all
    if chunk is not None:
        monkeypatch.setattr(minhash_module, "DEFAULT_CHUNK_SIZE", chunk)
    # Names and cities repeat (signed once per value), addresses do not.
    spec = lf.Field(["given_name", "city", "street_address"])
    matrix, valid = field_signatures(frame, spec, num_perm=64, seed=3, owner="t")
    config = MinHashConfig(num_perm=64, seed=3, shingle=spec.shingle_config)
    parts = [
        minhash_module.sign_array(column_text(frame, column, owner="t"), config)
        for column in spec.columns
    ]
    top = np.iinfo(matrix.dtype).max
    expected = np.minimum.reduce(
        [np.where(ok[:, None], signed, top) for signed, ok in parts]
    )
    expected_valid = np.logical_or.reduce([ok for _, ok in parts])
    expected[~expected_valid] = 0
    assert not expected_valid[45] and expected_valid[:40].sum() > 30
    np.testing.assert_array_equal(valid, expected_valid)
    np.testing.assert_array_equal(matrix, expected)


# -- blocking="auto": a Field that asks for no key of its own -----------------


def _plain_customers() -> pd.DataFrame:
    return lf.datasets.make_customers(800, seed=4).drop(columns="entity_id")


@pytest.mark.parametrize(
    "change",
    [
        lambda column: lf.Field(column, compare="ratio"),
        lambda column: lf.Field(column, weight=2.5),
        lambda column: lf.Field(column, name=f"my_{column}"),
        lambda column: lf.Field(column, strip_punctuation=True, compare="exact"),
    ],
)
def test_a_field_that_changes_only_the_scoring_blocks_as_its_column_name(change):
    frame = _plain_customers()
    columns = list(frame.columns)
    plain = frame.lsh.candidates(columns)
    for position in (0, len(columns) - 1):
        fields = [
            change(column) if index == position else column
            for index, column in enumerate(columns)
        ]
        pd.testing.assert_frame_equal(frame.lsh.candidates(fields), plain)
    # Every field a Field object, none asking for a key: still the data's keys.
    everyone = [change(column) for column in columns]
    pd.testing.assert_frame_equal(frame.lsh.candidates(everyone), plain)


def test_a_field_that_asks_for_a_key_gets_it_beside_the_data_decided_keys():
    frame = _plain_customers()
    fields = [
        lf.Field("surname", blocking="exact"),
        "given_name",
        lf.Field("street_address", compare="token_set_ratio"),
    ]
    context = candidates.resolve(frame, fields)
    by_label = {key.label: key for key in context.keys}
    assert by_label["surname"].kind == "exact"
    # The data decides over the other two columns only.
    assert by_label["record"].field.columns == ("given_name", "street_address")
    assert by_label["record_neighbours"].field.columns == (
        "given_name",
        "street_address",
    )
    found = frame.lsh.candidates(fields)
    pairs = set(zip(found["left"], found["right"], strict=True))
    # Every pair of records with the same surname is a candidate ...
    labelled = frame[["surname"]].assign(label=frame.index)
    same = labelled.merge(labelled, on="surname", suffixes=("_a", "_b"))
    same = same[same["label_a"] < same["label_b"]]
    assert len(same) > 50
    assert set(zip(same["label_a"], same["label_b"], strict=True)) <= pairs
    # ... and the data's keys still find pairs whose surnames differ.
    surname = frame["surname"]
    others = found[
        surname.loc[found["left"]].to_numpy() != surname.loc[found["right"]].to_numpy()
    ]
    assert len(others) > 0
    assert others["found_by"].astype(str).str.contains("record").all()


@pytest.mark.parametrize(
    "settings",
    [
        {"threshold": 0.5},
        {"recall": 0.9},
        {"bands": 8, "rows": 4},
        {"k": 2},
        {"shingle": "word"},
    ],
)
def test_lsh_settings_ask_for_an_lsh_key(settings):
    assert lf.Field("x").blocking == "auto"
    assert lf.Field("x", compare="date", weight=2).blocking == "auto"
    assert lf.Field("x", **settings).blocking == "lsh"
    # Explicit choices stay as given.
    assert lf.Field("x", blocking=None, compare="exact").blocking is None
    assert lf.Field("x", blocking="exact", **settings).blocking == "exact"


def test_a_signature_column_by_name_makes_its_own_lsh_key():
    frame = _plain_customers()
    frame["sig"] = frame.lsh.minhash("surname", num_perm=64)
    by_name = frame.lsh.candidates(["sig"])
    pd.testing.assert_frame_equal(by_name, frame.lsh.candidates([lf.Field("sig")]))
    pd.testing.assert_frame_equal(
        by_name, frame.lsh.candidates([lf.Field("sig", blocking="lsh")])
    )
    assert len(by_name) > 0
    # Beside plain columns, the signatures key on their own: no record key
    # shingles them.
    context = candidates.resolve(frame, ["sig", "given_name"])
    by_label = {key.label: key for key in context.keys}
    assert by_label["sig"].kind == "lsh"
    assert "sig" not in by_label["record"].field.columns


def test_exact_profiles_side_by_side_are_the_ones_computed_alone(monkeypatch):
    """The plain-column defaults profile every column's exact key on threads
    first: the same keys, profiles, decisions and candidates as one by one."""
    import importlib

    minhash = importlib.import_module("lsh_frame.sketch.minhash")  # not the function
    frame = lf.datasets.make_customers(800, seed=6).drop(columns="entity_id")
    other = lf.datasets.make_customers(500, seed=7).drop(columns="entity_id")
    columns = list(frame.columns)
    specs = [defaults.identifier_field(column) for column in columns]
    alone = defaults._FrameSource(frame, other, "t", columns)
    ahead = defaults._FrameSource(frame, other, "t", columns)
    monkeypatch.setattr(minhash, "default_workers", lambda: 3)
    ahead.profile_ahead(specs)
    for spec in specs:
        assert ahead.exact_profile(spec) == alone.exact_profile(spec)
        for mine, theirs in zip(
            ahead.exact[spec.label], alone.exact[spec.label], strict=True
        ):
            assert np.array_equal(mine.keys, theirs.keys)
            assert np.array_equal(mine.valid, theirs.valid)
    assert not ahead._ahead  # each prepared profile is used once
    results = {}
    for threads in (1, 3):
        monkeypatch.setattr(minhash, "default_workers", lambda threads=threads: threads)
        found = lf.candidates(frame, columns)
        results[threads] = (found, lf.blocking_report(frame, columns).decisions)
    (one, said_one), (three, said_three) = results[1], results[3]
    pd.testing.assert_frame_equal(one, three)
    assert said_one == said_three
