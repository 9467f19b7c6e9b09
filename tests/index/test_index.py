"""lsh_frame.Index: a saved index for new records (build, query, add, remove,
resolve, save and load)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import lsh_frame as lf
from lsh_frame.index import index as index_module
from lsh_frame.index import query as index_query
from lsh_frame.index import tables, update

COLUMNS = ["given_name", "surname", "date_of_birth", "postcode", "phone"]


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    return lf.datasets.make_customers(3_000, seed=11)


@pytest.fixture(scope="module")
def split(people):
    """Saved records, new records, and the truth of both."""
    truth = people["entity_id"]
    frame = people[COLUMNS]
    return frame.iloc[:2_700], frame.iloc[2_700:], truth


@pytest.fixture(scope="module")
def built(split):
    saved, _, _ = split
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lf.Index.build(saved, COLUMNS)


def fresh(split):
    saved, _, _ = split
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lf.Index.build(saved, COLUMNS)


def test_build_resolves_the_table_as_dedupe_does(split, built):
    saved, _, _ = split
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = lf.dedupe(saved, COLUMNS)
    assert len(built) == len(saved)
    assert built.entity_ids.index.equals(saved.index)
    assert np.array_equal(built.entity_ids.to_numpy(), full["cluster_id"].to_numpy())
    assert built.model is not None
    assert any("record_neighbours" in key for key in built.keys)


def test_query_finds_the_true_matches(split, built):
    saved, new, truth = split
    found = built.query(new, k=3)
    assert list(found.columns[:4]) == ["left", "right", "rank", "found_by"]
    assert found["rank"].between(1, 3).all()
    # Sorted by new record, then rank; best first.
    order = pd.Index(new.index).get_indexer(found["right"])
    assert (np.diff(order) >= 0).all()
    matched = found[found["match"]]
    same = (
        truth.loc[matched["left"]].to_numpy() == truth.loc[matched["right"]].to_numpy()
    )
    assert same.mean() > 0.95
    known = new.index[truth.loc[new.index].isin(truth.loc[saved.index])]
    found_known = matched["right"].isin(known)
    assert matched.loc[found_known, "right"].nunique() >= 0.9 * len(known)
    # The entity id is the held record's.
    assert np.array_equal(
        matched["entity_id"].to_numpy(),
        built.entity_ids.loc[matched["left"]].to_numpy(),
    )


def test_query_agrees_with_a_full_link_on_the_pairs_both_score(split, built):
    saved, new, _ = split
    found = built.query(new, k=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        linked = lf.pairs(
            saved, COLUMNS, other=new, min_score=built.model, one_to_one=False
        )
    both = found.merge(linked, on=["left", "right"], suffixes=("", "_link"))
    assert len(both) >= linked["match"].sum() > 50
    assert np.allclose(both["score"], both["score_link"], equal_nan=True)
    assert (both["match"] == both["match_link"]).all()
    # Every match of the full link is a candidate of the index.
    link_matches = set(
        map(tuple, linked.loc[linked["match"], ["left", "right"]].values)
    )
    index_pairs = set(map(tuple, found[["left", "right"]].values))
    assert len(link_matches - index_pairs) <= 0.01 * len(link_matches)


def test_an_identical_record_is_its_own_best_match(split, built):
    saved, _, _ = split
    copy = saved.iloc[[10]].rename(index=lambda label: f"copy-{label}")
    found = built.query(copy, k=5)
    best = found.iloc[0]
    assert best["left"] == saved.index[10] and best["rank"] == 1 and best["match"]


def test_query_is_deterministic_and_label_type_free(split, built):
    _, new, _ = split
    again = fresh(split)
    pd.testing.assert_frame_equal(built.query(new, k=4), again.query(new, k=4))
    renamed = new.rename(index=lambda label: f"n{label}")
    a, b = built.query(new, k=4), built.query(renamed, k=4)
    assert (b["right"] == "n" + a["right"].astype(str)).all()
    assert np.array_equal(a["left"], b["left"])


def test_query_of_no_records_and_of_records_without_candidates(built):
    empty = built.query(pd.DataFrame({column: [] for column in COLUMNS}, dtype=object))
    assert len(empty) == 0 and "match" in empty.columns
    nobody = pd.DataFrame({column: ["zzqx"] for column in COLUMNS}, index=["x"])
    assert (built.query(nobody)["match"] == False).all()  # noqa: E712


def test_bad_input(split, built):
    _, new, _ = split
    with pytest.raises(lf.ColumnError, match="lack"):
        built.query(new.drop(columns="surname"))
    doubled = pd.concat([new.iloc[:2], new.iloc[:2]])
    with pytest.raises(lf.ColumnError, match="duplicate"):
        built.query(doubled)
    with pytest.raises(lf.ConfigError):
        built.query(new, k=0)
    with pytest.raises(lf.ConfigTypeError):
        lf.Index.build(new, COLUMNS, entity_ids=["a"] * len(new))
    with pytest.raises(lf.ConfigError):
        lf.Index.build(new, COLUMNS, entity_ids=[1, 2])


def test_the_callers_frames_are_not_changed(split):
    saved, new, _ = split
    saved_copy, new_copy = saved.copy(), new.copy()
    index = fresh(split)
    index.query(new)
    index.resolve(new.iloc[:50])
    pd.testing.assert_frame_equal(saved, saved_copy)
    pd.testing.assert_frame_equal(new, new_copy)


def test_save_and_load_round_trip(tmp_path, split, built):
    _, new, _ = split
    path = tmp_path / "customers.index"
    built.save(path)
    loaded = lf.Index.load(path)
    assert len(loaded) == len(built)
    pd.testing.assert_frame_equal(built.query(new, k=3), loaded.query(new, k=3))
    pd.testing.assert_series_equal(built.entity_ids, loaded.entity_ids)
    assert loaded.model.to_dict() == built.model.to_dict()
    manifest = json.loads((path / "index.json").read_text())
    assert manifest["format"] == "lsh_frame.index" and manifest["version"] == 2
    assert not list(path.glob("*.pkl"))
    with pytest.raises(FileExistsError):
        built.save(path)
    built.save(path, overwrite=True)
    manifest["version"] = 99
    (path / "index.json").write_text(json.dumps(manifest))
    with pytest.raises(lf.ConfigError, match="version 99"):
        lf.Index.load(path)
    with pytest.raises(FileNotFoundError):
        lf.Index.load(tmp_path / "nothing")


def test_a_loaded_index_keeps_changing(tmp_path, split):
    saved, new, _ = split
    index = fresh(split)
    index.save(tmp_path / "ix")
    loaded = lf.Index.load(tmp_path / "ix")
    loaded.remove(saved.index[:5])
    loaded.add(new.iloc[:20])
    assert len(loaded) == len(saved) - 5 + 20
    loaded.save(tmp_path / "ix", overwrite=True)
    assert len(lf.Index.load(tmp_path / "ix")) == len(loaded)


def test_add_makes_records_findable(split):
    saved, new, _ = split
    index = fresh(split)
    first = new.iloc[:100]
    index.add(first)
    assert len(index) == len(saved) + 100
    ids = index.entity_ids.loc[first.index]
    assert ids.is_unique and ids.min() > index.entity_ids.loc[saved.index].max()
    copy = first.iloc[[3]].rename(index={first.index[3]: "again"})
    found = index.query(copy, k=5)
    assert first.index[3] in set(found.loc[found["match"], "left"])
    with pytest.raises(lf.ColumnError, match="already holds"):
        index.add(first.iloc[:1])
    index.add(new.iloc[100:110], entity_ids=np.arange(7, 17))
    assert index.entity_ids.loc[new.index[100:110]].tolist() == list(range(7, 17))


def test_remove_drops_records_from_results(split):
    saved, _, _ = split
    index = fresh(split)
    probe = saved.iloc[[10]].rename(index=lambda label: f"probe-{label}")
    assert saved.index[10] in set(index.query(probe, k=5)["left"])
    index.remove(saved.index[10])
    assert saved.index[10] not in set(index.query(probe, k=5)["left"])
    assert len(index) == len(saved) - 1
    with pytest.raises(KeyError):
        index.remove(["no such label"])
    index.remove(["no such label"], errors="ignore")
    # Removed labels may come back.
    index.add(saved.iloc[[10]])
    assert saved.index[10] in set(index.query(probe, k=5)["left"])


def test_compact_changes_nothing_found(split):
    saved, new, _ = split
    index = fresh(split)
    for start in range(0, 60, 20):
        index.add(new.iloc[start : start + 20])
    index.remove(saved.index[:30])
    assert len(index._segments) == 4
    before = index.query(new.iloc[60:160], k=None)
    ids = index.entity_ids
    index.compact()
    assert len(index._segments) == 1
    after = index.query(new.iloc[60:160], k=None)
    pd.testing.assert_series_equal(index.entity_ids, ids)
    # Neighbours are chosen over all segments at once: the same candidates,
    # keys and decisions as one segment.
    pd.testing.assert_frame_equal(before, after)
    assert after["match"].sum() > 10


def test_many_adds_merge_segments(split, monkeypatch):
    _, new, _ = split
    monkeypatch.setattr(update, "MAX_SEGMENTS", 3)
    index = fresh(split)
    for start in range(0, 50, 10):
        index.add(new.iloc[start : start + 10])
    assert len(index._segments) <= 4
    found = index.query(new.iloc[:10].rename(index=lambda label: f"q{label}"), k=5)
    matched = found[found["match"]]
    assert set(zip(matched["right"], matched["left"], strict=True)) >= {
        (f"q{label}", label) for label in new.index[:10]
    }


def test_resolve_gives_existing_ids_and_never_renumbers(split):
    _, new, truth = split
    index = fresh(split)
    before = index.entity_ids.copy()
    resolved = index.resolve(new)
    assert resolved.index.equals(new.index)
    assert list(resolved.columns) == [*new.columns, "cluster_id"]
    pd.testing.assert_series_equal(index.entity_ids.loc[before.index], before)
    ids = resolved["cluster_id"]
    matched = ids.isin(before.to_numpy())
    # Records that joined an existing entity are mostly true duplicates.
    joined = ids[matched]
    members = before.groupby(before).apply(lambda group: set(truth.loc[group.index]))
    right = [
        truth.loc[label] in members.loc[entity] for label, entity in joined.items()
    ]
    assert np.mean(right) > 0.95
    assert resolved.attrs["lsh_frame"]["matched"] == int(matched.sum())
    fresh_ids = ids[~matched]
    assert fresh_ids.min() > before.max()
    assert resolved.attrs["lsh_frame"]["new_entities"] == fresh_ids.nunique()


def test_resolve_groups_duplicates_within_a_batch(split):
    index = fresh(split)
    person = pd.DataFrame(
        {
            "given_name": ["Zebulon", "Zebulon", "Zeb"],
            "surname": ["Quartermaine", "Quartermaine", "Quartermaine"],
            "date_of_birth": ["1911-02-03", "1911-02-03", "1911-02-03"],
            "postcode": ["ZZ9 9ZZ", "ZZ9 9ZZ", "ZZ9 9ZZ"],
            "phone": ["0999 111222", "0999 111222", None],
        },
        index=[90_001, 90_002, 90_003],
    )
    resolved = index.resolve(person)
    assert resolved["cluster_id"].nunique() == 1
    assert resolved.attrs["lsh_frame"]["new_entities"] == 1


def test_resolve_reports_merges_and_does_not_apply_them(split):
    saved, _, _ = split
    twins = pd.concat([saved.iloc[[0]], saved.iloc[[0]]])
    twins.index = [90_001, 90_002]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        index = lf.Index.build(
            pd.concat([saved, twins]),
            COLUMNS,
            entity_ids=np.r_[np.arange(len(saved)), 10_000, 10_001],
        )
    third = saved.iloc[[0]].rename(index={saved.index[0]: 90_003})
    resolved = index.resolve(third)
    merges = resolved.attrs["lsh_frame"]["merges"]
    assert len(merges) == 1 and merges[0]["records"] == [90_003]
    involved = {merges[0]["into"], *merges[0]["entities"]}
    assert {10_000, 10_001} <= involved
    assert index.entity_ids.loc[90_001] == 10_000
    assert index.entity_ids.loc[90_002] == 10_001
    assert resolved["cluster_id"].iloc[0] == merges[0]["into"]
    assert len(index.merges) == 1


def test_incremental_resolve_is_close_to_a_full_run(people):
    frame = people[COLUMNS]
    truth = people["entity_id"]
    batches = np.array_split(np.arange(len(frame)), 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = lf.dedupe(frame, COLUMNS)["cluster_id"]
        index = lf.Index.build(frame.iloc[batches[0]], COLUMNS)
    given = index.entity_ids.copy()
    for rows in batches[1:]:
        index.resolve(frame.iloc[rows])
        assert index.entity_ids.loc[given.index].equals(given)
        given = index.entity_ids.copy()
    incremental = index.entity_ids.loc[frame.index]

    def f1(ids: pd.Series) -> float:
        found = pd.DataFrame({"entity": ids.to_numpy(), "truth": truth.to_numpy()})
        together = found.groupby(["entity", "truth"]).size()
        true_positive = (together * (together - 1) / 2).sum()
        predicted = found.groupby("entity").size()
        actual = found.groupby("truth").size()
        precision = true_positive / (predicted * (predicted - 1) / 2).sum()
        recall = true_positive / (actual * (actual - 1) / 2).sum()
        return 2 * precision * recall / (precision + recall)

    assert f1(incremental) >= f1(full) - 0.03


def test_accessor_and_float_min_score(split):
    saved, new, _ = split
    index = saved.lsh.index(COLUMNS, min_score=0.9)
    assert index.model is None
    found = index.query(new, k=2)
    assert "match_probability" not in found.columns
    assert (found.loc[found["match"], "score"] >= 0.9).all()


def test_entity_ids_from_a_column(split):
    saved, _, _ = split
    frame = saved.assign(customer=np.arange(len(saved)) // 2)
    index = lf.Index.build(frame, COLUMNS, entity_ids="customer", min_score=0.9)
    assert index.entity_ids.tolist() == frame["customer"].tolist()
    assert index.entities == frame["customer"].nunique()


def test_resolve_relearns_when_the_index_has_doubled(people):
    frame = people[COLUMNS]
    index = lf.Index.build(frame.iloc[:500], COLUMNS)
    first = index.resolve(frame.iloc[500:800])
    assert not first.attrs["lsh_frame"]["relearned"]
    before = index.entity_ids.copy()
    second = index.resolve(frame.iloc[800:1_000])
    assert second.attrs["lsh_frame"]["relearned"]
    # Relearning keeps every id, label and the records held.
    assert index.entity_ids.loc[before.index].equals(before)
    assert len(index) == 1_000 and len(index._segments) == 1
    assert index._settings["built_on"] == 1_000
    # ... and the relearned index goes on finding and resolving.
    copy = frame.iloc[[900]].rename(index=lambda label: f"again-{label}")
    found = index.query(copy, k=1)
    assert found["match"].iloc[0] and found["left"].iloc[0] == frame.index[900]
    fixed = lf.Index.build(frame.iloc[:500], COLUMNS)
    for rows in (slice(500, 800), slice(800, 1_000)):
        resolved = fixed.resolve(frame.iloc[rows], relearn=False)
        assert not resolved.attrs["lsh_frame"]["relearned"]
    assert fixed._settings["built_on"] == 500
    with pytest.raises(lf.ConfigTypeError):
        fixed.resolve(frame.iloc[1_000:1_010], relearn="yes")


def test_relearn_keeps_a_given_decision(split):
    saved, _, _ = split
    index = lf.Index.build(saved.iloc[:400], COLUMNS, min_score=0.9)
    index.relearn()
    assert index.model is None and index._plan.min_score == 0.9


def test_a_table_without_any_text_still_answers():
    blank = pd.DataFrame({"name": [None] * 30, "city": [""] * 30})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        index = lf.Index.build(blank, ["name", "city"], min_score=0.9)
    assert len(index) == 30 and index.entities == 30
    found = index.query(pd.DataFrame({"name": ["ann"], "city": ["leeds"]}, index=["n"]))
    assert len(found) == 0 and "match" in found.columns
    resolved = index.resolve(pd.DataFrame({"name": ["ann"], "city": ["x"]}, index=[99]))
    assert resolved["cluster_id"].tolist() == [30]


def test_remove_after_a_label_came_back(split):
    saved, _, _ = split
    index = fresh(split)
    label = saved.index[5]
    index.remove(label)
    index.add(saved.iloc[[5]])
    index.remove(label)  # held twice (one removed): the live one goes
    assert label not in set(index.labels) and len(index) == len(saved) - 1
    with pytest.raises(KeyError):
        index.remove(label)


def test_labels_of_another_type_are_refused_before_anything_changes(split):
    saved, new, _ = split
    texts = saved.set_axis("s" + saved.index.astype(str))
    index = lf.Index.build(texts, COLUMNS)
    with pytest.raises(lf.ColumnError, match="same type"):
        index.add(new.iloc[:3])
    with pytest.raises(lf.ColumnError, match="same type"):
        index.resolve(new.iloc[:3])
    assert len(index) == len(texts) and len(index._segments) == 1


def test_a_failed_compact_leaves_the_index_as_it_was(split, monkeypatch):
    saved, new, _ = split
    index = fresh(split)
    index.add(new.iloc[:10])
    found = index.query(new.iloc[20:40])

    def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(index, "_append", broken)
    with pytest.raises(RuntimeError):
        index.compact()
    monkeypatch.undo()
    assert len(index) == len(saved) + 10
    pd.testing.assert_frame_equal(index.query(new.iloc[20:40]), found)


def test_empty_batches_and_json_awkward_values_save(tmp_path, split):
    saved, new, _ = split
    index = lf.Index.build(saved.iloc[:400], COLUMNS, num_perm=np.int64(64))
    index.add(new.iloc[:0])
    resolved = index.resolve(new.iloc[:0])
    assert len(resolved) == 0 and "cluster_id" in resolved.columns
    assert len(index._segments) == 1
    index.save(tmp_path / "a")
    dated = saved.iloc[:300].set_axis(
        pd.date_range("2020-01-01", periods=300, freq="D", name=("day", "of"))
    )
    index = lf.Index.build(dated, COLUMNS, min_score=0.5)
    twin = saved.iloc[[0]].set_axis(
        pd.DatetimeIndex(["2030-01-01"], name=("day", "of"))
    )
    index.resolve(twin)
    index.save(tmp_path / "b")
    loaded = lf.Index.load(tmp_path / "b")
    assert loaded.labels.name == ("day", "of") and len(loaded) == 301
    assert len(loaded.query(twin.set_axis(pd.DatetimeIndex(["2031-01-01"])))) > 0


def test_entity_ids_as_a_series_align_by_label(split):
    saved, _, _ = split
    frame = saved.iloc[:200]
    ids = pd.Series(np.arange(200), index=frame.index)[::-1]
    index = lf.Index.build(frame, COLUMNS, entity_ids=ids, min_score=0.9)
    assert index.entity_ids.equals(
        pd.Series(np.arange(200), index=frame.index).rename("cluster_id")
    )
    with pytest.raises(lf.ConfigError, match="no id"):
        lf.Index.build(frame, COLUMNS, entity_ids=ids.iloc[1:], min_score=0.9)


@pytest.mark.parametrize("slice_size", [1, 7, 1 << 22])
def test_the_built_tables_tokens_are_those_of_the_general_path(monkeypatch, slice_size):
    """Built in place, a slice at a time: the same norms and inverted index."""
    from lsh_frame._kernels import neighbours as kernel

    frame = lf.datasets.make_customers(400, seed=4).drop(columns="entity_id")
    columns = list(frame.columns)
    monkeypatch.setattr(kernel, "SLICE", slice_size)
    records, hashes = tables._token_pairs(frame, columns, "test")
    vocabulary = index_module._build_vocabulary(hashes, len(frame))
    # The general path (new records' tokens, searched in the vocabulary).
    weights, looked_up = vocabulary.weigh(hashes)
    norms = tables._norms(records, weights, len(frame))
    general = tables._tokens_of(records, hashes, weights, looked_up, 0)
    assert looked_up.sum() < looked_up.size  # some tokens are too common
    built_norms = index_module._built_norms(records, vocabulary, len(frame))
    built = index_module._built_tokens(records, vocabulary)
    np.testing.assert_array_equal(built_norms, norms)
    np.testing.assert_array_equal(built.hashes, general.hashes)
    np.testing.assert_array_equal(built.weights, general.weights)
    for name in ("records", "starts", "counts"):
        np.testing.assert_array_equal(
            getattr(built.postings, name), getattr(general.postings, name)
        )
    # The index holds its own small arrays, not views of the table's tokens.
    assert built.postings.records.base is None


def test_an_index_reads_long_values_by_the_rule_it_was_saved_with(tmp_path):
    """New records' tokens follow the index's own rule for long values."""
    from lsh_frame.block import neighbours

    rng = np.random.default_rng(2)
    words = ["".join(rng.choice(list("abcdefghij"), 6)) for _ in range(500)]
    frame = pd.DataFrame(
        {
            "title": [f"item {i} {words[i]}" for i in range(300)],
            "description": [
                " ".join(rng.choice(words, neighbours.LONG_VALUE_WORDS + 5))
                for _ in range(300)
            ],
        }
    )
    index = lf.Index.build(frame.iloc[:250], ["title", "description"], min_score=0.5)
    assert index._long_words == neighbours.LONG_VALUE_WORDS
    index.save(tmp_path / "now")
    manifest = json.loads((tmp_path / "now" / "index.json").read_text())
    assert manifest["settings"]["long_value_words"] == neighbours.LONG_VALUE_WORDS
    # An index saved before the rule has no such setting: its records were
    # read with every value's shingles, and so are the new records it gets.
    del manifest["settings"]["long_value_words"]
    (tmp_path / "now" / "index.json").write_text(json.dumps(manifest))
    before = lf.Index.load(tmp_path / "now")
    assert before._long_words is None
    new = frame.iloc[250:]
    columns = ["title", "description"]
    with_rule = tables._token_pairs(
        new, columns, "t", long_words=neighbours.LONG_VALUE_WORDS
    )[1]
    without = tables._token_pairs(new, columns, "t", long_words=None)[1]
    assert without.size > with_rule.size
    seen = {}
    original = index_query._token_pairs

    def spy(*args, **options):
        result = original(*args, **options)
        seen["hashes"] = result[1].size
        return result

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(index_query, "_token_pairs", spy)
        before.query(new)
        assert seen["hashes"] == without.size
        index.query(new)
        assert seen["hashes"] == with_rule.size
