"""The neighbours key: each record's most similar records by weighted tokens."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lsh_frame as lf
from lsh_frame._kernels import neighbours as kernel
from lsh_frame.block import neighbours

WORDS = ["acme", "corp", "sony", "tv", "x100", "x200", "blue", "red", "ltd", "inc"]


def _brute_force(frames, columns, budget):
    """The same neighbours from a plain quadratic loop over token sets."""
    bits = kernel.record_bits([len(frame) for frame in frames])
    sides = [
        neighbours.record_tokens(frame, columns, owner="test", record_bits=bits)
        for frame in frames
    ]
    sets = []
    for packed, frame in zip(sides, frames, strict=True):
        records = packed & np.uint64((1 << bits) - 1)
        hashes = packed >> np.uint64(bits)
        per_record = [set() for _ in range(len(frame))]
        for record, token in zip(records.tolist(), hashes.tolist(), strict=True):
            per_record[record].add(token)
        sets.append(per_record)
    frequency: dict[int, int] = {}
    for per_record in sets:
        for tokens in per_record:
            for token in tokens:
                frequency[token] = frequency.get(token, 0) + 1
    total = sum(len(frame) for frame in frames)
    vocabulary = np.array(sorted(frequency), dtype=np.uint64)
    counts = np.array([frequency[int(t)] for t in vocabulary], dtype=np.int64)
    quantised = dict(
        zip(
            vocabulary.tolist(),
            kernel.quantised_weights(counts, total).tolist(),
            strict=True,
        )
    )

    def norm(tokens):
        return math.sqrt(sum(quantised[t] for t in tokens))

    link = len(frames) == 2
    ties = [neighbours._tie_ranks(frame, columns)[0] for frame in frames]
    found = set()
    directions = [(0, 1), (1, 0)] if link else [(0, 0)]
    for query_side, index_side in directions:
        for q, q_tokens in enumerate(sets[query_side]):
            scored = []
            for r, r_tokens in enumerate(sets[index_side]):
                if not link and r == q:
                    continue
                shared = q_tokens & r_tokens
                if not shared:
                    continue
                cosine = sum(quantised[t] for t in shared) / (
                    norm(q_tokens) * norm(r_tokens)
                )
                scored.append((-cosine, ties[index_side][r], r, cosine))
            if not scored:
                continue
            scored.sort()
            best = scored[0][3]
            # Cosines of tokens every record holds are tiny (about 1e-6: such
            # a token weighs 1 of about four million), so the slack for
            # rounding is relative to the best, not absolute.
            slack = 1e-9 * best
            close = sum(
                1
                for *_, cosine in scored
                if cosine >= budget.relative * best - slack
                and cosine >= budget.floor - slack
            )
            keep = min(budget.factor * close + budget.least, budget.most)
            for _, _, r, _ in scored[:keep]:
                if link:
                    found.add((q, r) if query_side == 0 else (r, q))
                else:
                    found.add((min(q, r), max(q, r)))
    return found


def _frame(rows):
    return pd.DataFrame({"name": rows}, index=[f"r{i}" for i in range(len(rows))])


names = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=0, max_size=4).map(" ".join),
    min_size=1,
    max_size=25,
)


@settings(max_examples=40, deadline=None)
@given(names)
def test_dedupe_neighbours_match_brute_force(rows):
    frame = _frame(rows)
    result = neighbours.neighbour_pairs([frame], ["name"], owner="test")
    got = set(zip(result.left.tolist(), result.right.tolist(), strict=True))
    expected = _brute_force([frame], ["name"], neighbours.DEDUPE)
    assert got == expected


@settings(max_examples=30, deadline=None)
@given(names, names)
def test_link_neighbours_match_brute_force(left_rows, right_rows):
    left, right = _frame(left_rows), _frame(right_rows)
    result = neighbours.neighbour_pairs([left, right], ["name"], owner="test")
    got = set(zip(result.left.tolist(), result.right.tolist(), strict=True))
    expected = _brute_force([left, right], ["name"], neighbours.LINK)
    small, large = sorted([len(left), len(right)])
    if large <= neighbours.SIDE_RATIO * small:
        assert got == expected
    else:
        # Only the smaller table looks up: a subset of both ways.
        assert got <= expected


def test_pairs_are_canonical_and_cosines_in_range():
    people = lf.datasets.make_customers(400, seed=2)
    result = neighbours.neighbour_pairs(
        [people], ["given_name", "surname", "street_address"], owner="test"
    )
    assert (result.left < result.right).all()
    codes = result.left * len(people) + result.right
    assert (np.diff(codes) > 0).all()  # distinct and sorted
    assert ((result.cosine > 0) & (result.cosine <= 1)).all()


def test_neighbours_do_not_depend_on_row_order():
    people = lf.datasets.make_customers(600, seed=4).drop(columns="entity_id")
    field = lf.Field(["given_name", "surname", "city"], blocking="neighbours")
    first = lf.candidates(people, [field])
    shuffled = people.sample(frac=1.0, random_state=7)
    second = lf.candidates(shuffled, [field])

    def as_set(pairs):
        return {
            frozenset(pair) for pair in zip(pairs["left"], pairs["right"], strict=True)
        }

    assert as_set(first) == as_set(second)


def test_neighbours_find_products_written_differently():
    left = pd.DataFrame(
        {
            "title": [
                "Sony Bravia KDL-40 LCD TV",
                "Canon EOS 450D camera body",
                "Apple iPod nano 8GB blue",
                "Bose QuietComfort 3 headphones",
            ]
        },
        index=[10, 11, 12, 13],
    )
    right = pd.DataFrame(
        {
            "title": [
                "KDL40 Bravia 40in LCD television by Sony",
                "EOS-450D Canon SLR",
                "iPod Nano (8 GB) - Blue",
                "QC3 QuietComfort Bose",
            ]
        },
        index=[20, 21, 22, 23],
    )
    pairs = lf.candidates(left, [lf.Field("title", blocking="neighbours")], other=right)
    found = set(zip(pairs["left"], pairs["right"], strict=True))
    assert {(10, 20), (11, 21), (12, 22), (13, 23)} <= found
    assert set(pairs["found_by"]) == {"title"}


def test_neighbours_united_with_other_keys_and_reported():
    people = lf.datasets.make_customers(1_000, seed=5)
    fields = [
        lf.Field(
            ["given_name", "surname", "street_address"],
            blocking="neighbours",
            name="near",
        ),
        lf.Field("email", blocking="exact"),
    ]
    pairs = lf.candidates(people, fields)
    near = lf.candidates(people, fields[:1])
    exact = lf.candidates(people, fields[1:])

    def as_set(frame):
        return set(zip(frame["left"], frame["right"], strict=True))

    assert as_set(pairs) == as_set(near) | as_set(exact)
    assert set(pairs["found_by"].cat.categories) <= {"near", "email", "near|email"}
    truth = lf.datasets.true_pairs(people["entity_id"])
    report = lf.blocking_report(people, fields, true_pairs=truth)
    row = report.table.set_index("key").loc["near"]
    assert row["pairs"] == len(near)
    assert row["how"].startswith("most similar records")
    found = as_set(near) & set(zip(truth["left"], truth["right"], strict=True))
    assert row["pairs_completeness"] == pytest.approx(len(found) / len(truth))
    assert any(line.startswith("near: neighbours key") for line in report.decisions)


def test_a_small_batch_only_looks_up_the_large_table():
    people = lf.datasets.make_customers(2_000, seed=6).drop(columns="entity_id")
    batch = people.iloc[:10]
    rest = people.iloc[10:]
    field = lf.Field(["given_name", "surname", "email"], blocking="neighbours")
    pairs = lf.candidates(batch, [field], other=rest)
    per_record = pairs.groupby("left").size()
    assert per_record.max() <= neighbours.LINK.most
    assert len(pairs) <= 10 * (neighbours.LINK.most)
    assert set(pairs["left"]) <= set(batch.index)


def test_records_without_tokens_get_no_neighbours_and_are_counted():
    frame = pd.DataFrame({"name": ["acme corp", None, "", "acme corp ltd", "---"]})
    field = lf.Field("name", blocking="neighbours")
    pairs = lf.candidates(frame, [field])
    assert set(zip(pairs["left"], pairs["right"], strict=True)) == {(0, 3)}
    row = lf.blocking_report(frame, [field]).table.iloc[0]
    assert row["records_without_key"] == 3


def test_neighbour_pairs_respect_max_pairs():
    people = lf.datasets.make_customers(500, seed=1)
    field = lf.Field(["given_name", "surname", "city"], blocking="neighbours")
    with pytest.raises(lf.TooManyPairsError, match="max_pairs=10"):
        lf.candidates(people, [field], max_pairs=10)


def test_work_is_bounded_by_the_cap():
    # A token every record holds is never looked up: its postings would be
    # quadratic; the records still find each other through rarer tokens.
    frame = pd.DataFrame({"name": [f"common word{i % 50}" for i in range(2_000)]})
    budget_before = neighbours.WORK_FLOOR
    try:
        neighbours.WORK_FLOOR = 200_000
        result = neighbours.neighbour_pairs([frame], ["name"], owner="test")
    finally:
        neighbours.WORK_FLOOR = budget_before
    assert result.cap < 2_000
    assert result.work <= 200_000 + 2_000 * result.cap
    assert result.left.size > 0


def test_chunks_cover_every_record_once():
    work = np.array([5, 0, 3_000_000, 2_000_000, 1, 7_000_000, 0], dtype=np.int64)
    bounds = neighbours._chunks(work, n_index=10)
    assert bounds[0][0] == 0 and bounds[-1][1] == work.size
    assert all(a[1] == b[0] for a, b in itertools.pairwise(bounds))
    for first, stop in bounds:
        assert stop - first == 1 or work[first:stop].sum() <= neighbours.CHUNK_WORK


def test_field_refuses_unknown_blocking_kind():
    with pytest.raises(lf.ConfigError, match="'neighbours'"):
        lf.Field("name", blocking="nearest")


def test_copies_of_one_record_are_neighbours_even_alone():
    # Tokens every record holds weigh the least, never nothing: two copies of a
    # record, or one new record against a table of one, still find each other.
    field = lf.Field("name", blocking="neighbours")
    twins = pd.DataFrame({"name": ["acme corp", "acme corp"]})
    assert len(lf.candidates(twins, [field])) == 1
    one, other = pd.DataFrame({"name": ["smith"]}), pd.DataFrame({"name": ["smith"]})
    assert len(lf.candidates(one, [field], other=other)) == 1
    assert len(lf.drop_duplicates(twins, [field])) == 1


def test_a_key_may_not_be_named_like_the_identical_rows_marker():
    frame = pd.DataFrame({"identical": ["a", "b"], "name": ["x", "y"]})
    with pytest.raises(lf.ConfigError, match="marks the pairs of identical rows"):
        lf.candidates(frame, [lf.Field("identical", blocking="exact")])
    pairs = lf.candidates(
        frame, [lf.Field("identical", blocking="exact", name="identical_key")]
    )
    assert pairs.empty


@settings(max_examples=80, deadline=None)
@given(
    groups=st.lists(
        st.lists(st.integers(0, 40), min_size=1, max_size=30), min_size=1, max_size=8
    ),
    budget=st.sampled_from(
        [(0.5, 0.2, 2, 2, 100), (0.7, 0.0, 1, 0, 100), (0.5, 0.2, 2, 2, 3)]
    ),
)
def test_only_neighbours_select_could_keep_are_dropped_before_ranking(groups, budget):
    # Neighbours of each query ranked by cosine (descending), as select() reads them.
    query = np.concatenate([np.full(len(g), q) for q, g in enumerate(groups)])
    cosine = np.concatenate([np.sort(np.array(g, float) / 40)[::-1] for g in groups])
    names = ("relative", "floor", "factor", "least", "most")
    options = dict(zip(names, budget, strict=True))
    kept_all, ranks_all = kernel.select(query, cosine, **options)
    rankable = kernel._rankable(query, cosine, budget)
    kept_some, ranks_some = kernel.select(query[rankable], cosine[rankable], **options)
    positions = np.flatnonzero(rankable)
    assert positions[kept_some].tolist() == np.flatnonzero(kept_all).tolist()
    assert ranks_some.tolist() == ranks_all.tolist()


def test_a_small_frame_is_tokenised_in_one_pass_as_column_by_column(monkeypatch):
    """Columns tokenised together give exactly the tokens of one at a time."""
    from lsh_frame.block import neighbours as module

    frame = lf.datasets.make_customers(80, seed=5).drop(columns="entity_id")
    frame["amount"] = np.arange(len(frame)) * 2.5
    frame.iloc[3, :] = None
    columns = list(frame.columns)
    together = np.sort(module.record_tokens(frame, columns, owner="t", record_bits=8))
    monkeypatch.setattr(module, "SMALL_BATCH_VALUES", 0)
    apart = np.sort(module.record_tokens(frame, columns, owner="t", record_bits=8))
    assert together.size > 1_000
    assert np.array_equal(together, apart)


sorted_values = st.lists(st.integers(0, 12), max_size=60).map(
    lambda values: np.sort(np.array(values, dtype=np.uint64))
)


@settings(max_examples=60, deadline=None)
@given(values=sorted_values, slice_size=st.integers(1, 7))
def test_compacting_in_slices_keeps_each_distinct_value_once(values, slice_size):
    expected = np.unique(values)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kernel, "SLICE", slice_size)
        got = kernel.compact_sorted(values.copy())
    assert got.tolist() == expected.tolist()


@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(st.integers(0, 50), max_size=60),
    threshold=st.integers(0, 50),
    slice_size=st.integers(1, 7),
)
def test_keeping_in_place_equals_a_mask(values, threshold, slice_size):
    first = np.array(values, dtype=np.int64)
    second = first * 3 + 1
    expected = first[first <= threshold], second[first <= threshold]
    original = first.copy()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kernel, "SLICE", slice_size)
        kept = kernel.keep_in_place(
            lambda start, stop: original[start:stop] <= threshold, first, second
        )
    assert [part.tolist() for part in kept] == [part.tolist() for part in expected]


@settings(max_examples=40, deadline=None)
@given(
    sides=st.lists(
        st.lists(st.tuples(st.integers(0, 9), st.integers(0, 15)), max_size=40),
        min_size=1,
        max_size=2,
    ),
    slice_size=st.integers(1, 9),
)
def test_vocabulary_in_slices_equals_the_whole_array_reading(sides, slice_size):
    """Token ids, records and frequencies do not depend on the slice size."""
    bits = 4

    def packed(side):
        return np.array(
            [(token << bits) | record for token, record in side], dtype=np.uint64
        )

    whole = kernel.vocabulary([packed(side) for side in sides], bits)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kernel, "SLICE", slice_size)
        sliced = kernel.vocabulary([packed(side) for side in sides], bits)
    for name in ("records", "tokens", "side_frequency"):
        assert [part.tolist() for part in getattr(sliced, name)] == [
            part.tolist() for part in getattr(whole, name)
        ]
    # And against a plain reading: distinct (token, record) pairs by token.
    tokens = sorted({token for side in sides for token, _ in side})
    for side, records, ids in zip(sides, sliced.records, sliced.tokens, strict=True):
        expected = sorted({(tokens.index(token), record) for token, record in side})
        assert list(zip(ids.tolist(), records.tolist(), strict=True)) == expected


def test_records_are_reordered_by_record_then_token():
    records = np.array([3, 1, 3, 0, 1], dtype=np.int64)
    tokens = np.array([0, 2, 1, 5, 1], dtype=np.int64)
    by_record, by_token = kernel.by_record(records, tokens)
    assert list(zip(by_record.tolist(), by_token.tolist(), strict=True)) == sorted(
        zip(records.tolist(), tokens.tolist(), strict=True)
    )
    # The caller's arrays are left as they were.
    assert records.tolist() == [3, 1, 3, 0, 1] and tokens.tolist() == [0, 2, 1, 5, 1]


def test_neighbours_do_not_depend_on_the_slice_size(monkeypatch):
    frame = lf.datasets.make_customers(300, seed=2).drop(columns="entity_id")
    columns = list(frame.columns)
    whole = neighbours.neighbour_pairs([frame], columns, owner="test")
    monkeypatch.setattr(kernel, "SLICE", 97)
    sliced = neighbours.neighbour_pairs([frame], columns, owner="test")
    for name in ("left", "right", "cosine", "kept_per_record"):
        assert np.array_equal(getattr(sliced, name), getattr(whole, name))


def test_a_large_column_tokenised_a_slice_of_rows_at_a_time(monkeypatch):
    """Rows taken a slice at a time give exactly the tokens of all at once."""
    from lsh_frame.block import neighbours as module

    frame = lf.datasets.make_customers(500, seed=8).drop(columns="entity_id")
    frame.iloc[7, :] = None
    columns = list(frame.columns)
    monkeypatch.setattr(module, "SMALL_BATCH_VALUES", 0)
    whole = np.sort(module.record_tokens(frame, columns, owner="t", record_bits=9))
    monkeypatch.setattr(module, "ROWS_PER_SLICE", 37)
    sliced = np.sort(module.record_tokens(frame, columns, owner="t", record_bits=9))
    assert whole.size > 10_000
    assert np.array_equal(whole, sliced)


def test_token_array_grows_past_a_guess_that_was_too_small():
    parts = [np.arange(size, dtype=np.uint64) + 10 * size for size in (3, 0, 7, 1, 12)]
    tokens = neighbours._TokenArray(2)
    for part in parts:
        tokens.add(part)
    assert tokens.array().tolist() == np.concatenate(parts).tolist()


# -- long values give their words, not their character shingles ---------------


def _token_set(frame, columns, **options):
    packed = neighbours.record_tokens(
        frame, columns, owner="t", record_bits=8, **options
    )
    return set((packed >> np.uint64(8)).tolist())


def test_a_long_value_gives_words_but_no_shingles():
    limit = neighbours.LONG_VALUE_WORDS
    words = [f"w{i:03d}x" for i in range(limit)]
    short = " ".join(words[: limit - 1])  # one word short of long
    long = " ".join(words)
    frame = pd.DataFrame({"text": [short, long]})
    short_tokens = _token_set(frame.iloc[[0]], ["text"])
    long_tokens = _token_set(frame.iloc[[1]], ["text"])
    # The short value: its words, its whole value and its shingles.
    assert len(short_tokens) > limit + 40
    # The long value: its words and its whole value only ...
    assert len(long_tokens) == limit + 1
    # ... unless every value gives shingles (an index saved before the rule).
    assert len(_token_set(frame.iloc[[1]], ["text"], long_words=None)) > limit + 40
    # A record's tokens depend on its own values only, in any company.
    assert _token_set(frame, ["text"]) == short_tokens | long_tokens


def test_a_long_description_does_not_drown_the_title(monkeypatch):
    """Titles agree; each side's descriptions are paragraphs shared by a
    family of products, and half the products sit in another family on the
    right: their descriptions point at the wrong products, their titles at
    the right one."""
    rng = np.random.default_rng(5)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocabulary = ["".join(rng.choice(letters, 7)) for _ in range(5_000)]
    n, families = 200, 40
    family = np.arange(n) % families
    paragraphs = [" ".join(rng.choice(vocabulary, 40)) for _ in range(families)]
    moved = rng.random(n) < 0.5
    titles = [
        f"{first} {second} edition {i}"
        for i, (first, second) in enumerate(
            zip(rng.choice(vocabulary, n), rng.choice(vocabulary, n), strict=True)
        )
    ]
    left = pd.DataFrame(
        {"title": titles, "description": [paragraphs[f] for f in family]}
    )
    right = pd.DataFrame(
        {
            "title": titles,
            "description": [
                paragraphs[(f + 1) % families if away else f]
                for f, away in zip(family, moved, strict=True)
            ],
        },
        index=np.arange(n) + 1_000,
    )
    field = lf.Field(["title", "description"], blocking="neighbours")

    def found_moved():
        found = lf.candidates(left, [field], other=right)
        pairs = set(zip(found["left"], found["right"], strict=True))
        return sum((i, i + 1_000) in pairs for i in np.flatnonzero(moved))

    assert found_moved() == moved.sum()
    # With every value's shingles, the paragraphs decide and the moved are lost.
    monkeypatch.setattr(neighbours, "LONG_VALUE_WORDS", None)
    assert found_moved() == 0


def test_threads_give_exactly_what_one_thread_gives(monkeypatch):
    """Slices of rows and chunks of look-ups on several threads: the same
    tokens in the same order, the same neighbours."""
    import importlib

    from lsh_frame.block import neighbours as module

    minhash = importlib.import_module("lsh_frame.sketch.minhash")  # not the function
    frame = lf.datasets.make_customers(600, seed=4).drop(columns="entity_id")
    columns = list(frame.columns)
    monkeypatch.setattr(module, "SMALL_BATCH_VALUES", 0)
    monkeypatch.setattr(module, "ROWS_PER_SLICE", 53)
    monkeypatch.setattr(module, "CHUNK_WORK", 2_000)
    results = {}
    for threads in (1, 3):
        monkeypatch.setattr(minhash, "default_workers", lambda threads=threads: threads)
        tokens = module.record_tokens(frame, columns, owner="t", record_bits=10)
        pairs = module.neighbour_pairs([frame], columns, owner="t")
        results[threads] = tokens, pairs
    (tokens_one, one), (tokens_three, three) = results[1], results[3]
    assert tokens_one.size > 10_000
    assert np.array_equal(tokens_one, tokens_three)
    assert len(module._chunks(np.full(600, 100), 600)) > 10
    assert one.left.size > 600
    for name in ("left", "right", "cosine", "kept_per_record"):
        assert np.array_equal(getattr(one, name), getattr(three, name))
