"""A saved index for matching new records: ``lf.Index`` beside datasketch and Splink 5.

    python benchmarks/index.py                        # 1M saved records (~12 min)
    python benchmarks/index.py --quick                # 20k saved records (~1 min)
    python benchmarks/index.py --only lsh_frame incremental
    python benchmarks/index.py --skip-splink --skip-datasketch

Data: ``lf.datasets.make_customers(saved + batch, seed)``; its ``entity_id``
column is the truth and no library sees it. A random sample of ``batch`` rows
(drawn with ``seed``) are the new records; the other ``saved`` rows are saved.
About a third of the new records have a true match among the saved ones
(make_customers' duplicates are spread at random); recall is measured on those.
Single-record queries are the first ``--queries`` new records, the batch is all
of them. Every library sees the eight text columns.

Sections, each tool in its own fresh process (see ``_common.py``):

- ``lsh_frame``: ``lf.Index.build`` (a full dedupe of the saved records),
  ``save`` (size on disk = the sum of its files), then in a new process
  ``lf.Index.load`` (memory-mapped), ``index.nbytes`` and the RSS the index adds,
  one ``index.query(new.iloc[[i]], k=10)`` per new record, one query of the whole
  batch, and ``index.remove`` of 10,000 saved labels.
- ``datasketch``: ``MinHashLSH`` in memory over MinHash (128 permutations, seed 1)
  of the character 3-shingles of the eight columns joined by a space. The text is
  normalised as lsh_frame normalises it (``lf.normalize``) outside the timing;
  shingling, ``MinHash.bulk`` (chunks of 50,000) and insertion (an insertion
  session) are timed. A query is shingling, ``template.copy().update_batch`` (what
  ``MinHash.bulk`` does per record) and ``lsh.query``. It returns an unordered set
  of candidate keys with no score: its recall is "a true match among the
  candidates", however many there are.
- ``splink``: Splink 5 on DuckDB with this repository's configuration
  (``_splink.py``: blocking rules, comparisons, prior, u by random sampling, EM)
  trained once on the saved records, term-frequency tables computed, then
  ``linker.inference.predict_between(saved, new)`` for one registered new record
  at a time and for the batch (every blocked pair scored, fetched as pandas).
  Splink returns every blocked pair; its "top 10" is the 10 highest match
  probabilities of a new record, ranked outside the timing.
- ``incremental``: ``make_customers(incremental, seed)`` cut into 10 batches in
  row order; ``Index.build`` on batch 1, ``index.resolve`` on batches 2..10. Every
  entity id given earlier must stay as it was; the pair F1 of the ids handed out
  (``lf.evaluate`` against ``entity_id``) is compared with one ``lf.dedupe`` of
  all the records.

Targets (the index issue; 2 cores): 1M saved, one new record: median query
≤ 5 ms, 99th percentile ≤ 20 ms; batches ≥ 20,000 new records/s; the index of
1M records ≤ 1 GB on disk and in memory, load ≤ 2 s, removing 10k records
≤ 1 s; incremental dedupe: no id ever changes, pair F1 within 0.005 of a full
run.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import logging
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common

from lsh_frame.datasets.customers import TEXT_COLUMNS

HERE = Path(__file__).resolve()
COLUMNS = list(TEXT_COLUMNS)
SECTIONS = ("lsh_frame", "datasketch", "splink", "incremental")
TOP = 10
REMOVED = 10_000
NUM_PERM = 128
SHINGLE = 3
CHUNK = 50_000
BATCHES = 10
WARM_UP = 5
MB = 1_000_000
log = _common.log_to_stderr("index")


# --------------------------------------------------------------------------------------
# Data (built outside the timing, the same in every child)
# --------------------------------------------------------------------------------------


@dataclass
class Data:
    """Saved records, new records and the truth (which no library sees)."""

    saved: pd.DataFrame
    new: pd.DataFrame
    truth: pd.Series  # entity_id of every label, saved and new
    has_match: pd.Series  # per new label: a saved record is the same entity

    def singles(self, count: int) -> pd.DataFrame:
        return self.new.iloc[:count]


def make_data(saved: int, batch: int, seed: int) -> Data:
    """``make_customers(saved + batch)``; a random ``batch`` rows are the new ones."""
    import lsh_frame as lf

    people = lf.datasets.make_customers(saved + batch, seed=seed)
    chosen = np.zeros(len(people), dtype=bool)
    chosen[np.random.default_rng(seed).choice(len(people), batch, replace=False)] = True
    truth = people["entity_id"]
    saved_entities = pd.Index(truth[~chosen].unique())
    new_truth = truth[chosen]
    has_match = pd.Series(new_truth.isin(saved_entities).to_numpy(), new_truth.index)
    return Data(
        people.loc[~chosen, COLUMNS], people.loc[chosen, COLUMNS], truth, has_match
    )


def recall_at(found_left: Any, found_right: Any, data: Data, new_labels: Any) -> dict:
    """Share of new records with a true saved match that have one in ``found``.

    ``found_left`` holds saved labels, ``found_right`` the new labels they were
    found for (the top 10, or every candidate).
    """
    left = np.asarray(found_left)
    right = np.asarray(found_right)
    same = data.truth.reindex(left).to_numpy() == data.truth.reindex(right).to_numpy()
    hit = pd.Series(same).groupby(right).any()
    wanted = data.has_match.reindex(pd.Index(new_labels))
    hits = hit.reindex(wanted.index, fill_value=False)[wanted.to_numpy()]
    per_query = pd.Series(right).value_counts().reindex(wanted.index, fill_value=0)
    return {
        "with_match": int(wanted.sum()),
        "found": int(hits.sum()),
        "recall": float(hits.mean()) if len(hits) else float("nan"),
        "mean_results": float(per_query.mean()),
    }


def match_quality(left: Any, right: Any, data: Data, new_labels: Any) -> dict:
    """Recall of the pairs declared matches, and their precision."""
    quality = recall_at(left, right, data, new_labels)
    same = (
        data.truth.reindex(np.asarray(left)).to_numpy()
        == data.truth.reindex(np.asarray(right)).to_numpy()
    )
    quality["precision"] = float(same.mean()) if len(same) else float("nan")
    quality["pairs"] = len(same)
    return quality


def latencies(seconds: list[float]) -> dict:
    values = np.asarray(seconds) * 1000
    return {
        "queries": len(values),
        "median_ms": float(np.median(values)),
        "p99_ms": float(np.percentile(values, 99)),
        "max_ms": float(values.max()),
        "mean_ms": float(values.mean()),
    }


def timed_queries(run: Any, frame: pd.DataFrame) -> tuple[list[float], list[Any]]:
    """Time ``run(frame.iloc[[i]])`` for every row (after a few untimed ones)."""
    for position in range(min(WARM_UP, len(frame))):
        run(frame.iloc[[position]])
    seconds, results = [], []
    for position in range(len(frame)):
        one = frame.iloc[[position]]
        start = time.perf_counter()
        result = run(one)
        seconds.append(time.perf_counter() - start)
        results.append(result)
    return seconds, results


def directory_bytes(path: Path) -> int:
    return sum(file.stat().st_size for file in path.rglob("*") if file.is_file())


def rss_since(baseline: int) -> int:
    _common.release_free_memory()
    return _common.current_rss_bytes() - baseline


class Watch:
    """Cores that *other* processes kept busy since it was made (from /proc/stat)."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.busy = _common._busy_cpu_seconds()
        self.own = _common._own_cpu_seconds()

    def other_cores(self) -> float | None:
        busy = _common._busy_cpu_seconds()
        if busy is None or self.busy is None:
            return None
        own = _common._own_cpu_seconds() - self.own
        elapsed = time.perf_counter() - self.started
        return max(0.0, busy - self.busy - own) / elapsed


def settle() -> int:
    """Release cached free memory; return the RSS as a baseline."""
    _common.release_free_memory()
    _common.reset_peak_rss()
    return _common.current_rss_bytes()


# --------------------------------------------------------------------------------------
# lsh_frame
# --------------------------------------------------------------------------------------


def child_lsh_frame_build(arguments: argparse.Namespace) -> dict:
    import lsh_frame as lf

    data = make_data(arguments.saved, arguments.batch, arguments.seed)
    baseline = settle()
    watch = Watch()
    start = time.perf_counter()
    index = lf.Index.build(data.saved, COLUMNS, seed=arguments.seed)
    build = time.perf_counter() - start
    peak = _common.peak_rss_bytes() - baseline
    held = rss_since(baseline)
    path = Path(arguments.index_dir)
    start = time.perf_counter()
    index.save(path)
    save = time.perf_counter() - start
    return {
        "other_cores": watch.other_cores(),
        "records": len(index),
        "build_s": build,
        "build_peak_added": peak,
        "built_rss_added": held,
        "built_nbytes": int(index.nbytes),
        "save_s": save,
        "disk_bytes": directory_bytes(path),
        "files": len([file for file in path.rglob("*") if file.is_file()]),
    }


def child_lsh_frame_query(arguments: argparse.Namespace) -> dict:
    import lsh_frame as lf

    data = make_data(arguments.saved, arguments.batch, arguments.seed)
    singles = data.singles(arguments.queries)
    removed = (
        data.saved.index.to_series()
        .sample(min(REMOVED, len(data.saved)), random_state=arguments.seed)
        .to_numpy()
    )
    baseline = settle()
    watch = Watch()
    start = time.perf_counter()
    index = lf.Index.load(arguments.index_dir)
    load = time.perf_counter() - start
    loaded_rss = _common.current_rss_bytes() - baseline

    start = time.perf_counter()
    first = index.query(singles.iloc[[0]], k=TOP)
    first_ms = (time.perf_counter() - start) * 1000
    seconds, results = timed_queries(lambda one: index.query(one, k=TOP), singles)
    found = pd.concat(results, ignore_index=True)
    single_recall = recall_at(found["left"], found["right"], data, singles.index)
    del first, results, found

    start = time.perf_counter()
    batch = index.query(data.new, k=TOP)
    batch_s = time.perf_counter() - start
    batch_recall = recall_at(batch["left"], batch["right"], data, data.new.index)
    matched = batch[batch["match"].to_numpy(dtype=bool)]
    batch_match = match_quality(matched["left"], matched["right"], data, data.new.index)
    columns = list(batch.columns)
    del batch, matched
    queried_rss = rss_since(baseline)
    peak = _common.peak_rss_bytes() - baseline

    held = len(index)
    start = time.perf_counter()
    index.remove(removed)
    remove_s = time.perf_counter() - start
    return {
        "other_cores": watch.other_cores(),
        "load_s": load,
        "records": held,
        "after_remove": len(index),
        "nbytes": int(index.nbytes),
        "loaded_rss_added": loaded_rss,
        "queried_rss_added": queried_rss,
        "peak_added": peak,
        "first_query_ms": first_ms,
        "single": latencies(seconds),
        "single_recall": single_recall,
        "batch_size": len(data.new),
        "batch_s": batch_s,
        "batch_recall": batch_recall,
        "batch_match": batch_match,
        "remove_s": remove_s,
        "removed": len(removed),
        "result_columns": columns,
    }


# --------------------------------------------------------------------------------------
# datasketch
# --------------------------------------------------------------------------------------


def normalised_text(frame: pd.DataFrame) -> list[str]:
    """The eight columns joined by a space (missing ones left out), as lsh_frame
    normalises text (NFKC, lower case, collapsed whitespace)."""
    import pyarrow as pa

    import lsh_frame as lf

    text = frame[COLUMNS[0]].fillna("")
    for column in COLUMNS[1:]:
        text = text.str.cat(frame[column].fillna(""), sep=" ")
    config = lf.ShingleConfig(k=SHINGLE)
    return lf.normalize(pa.array(text.to_numpy(dtype=object)), config).to_pylist()


def shingle(text: str) -> list[bytes]:
    """Character 3-shingles as a user writes them for datasketch."""
    return [
        gram.encode("utf8")
        for gram in {text[i : i + SHINGLE] for i in range(len(text) - SHINGLE + 1)}
    ]


def child_datasketch(arguments: argparse.Namespace) -> dict:
    from datasketch import MinHash, MinHashLSH

    data = make_data(arguments.saved, arguments.batch, arguments.seed)
    saved = data.saved.iloc[: arguments.datasketch_saved or None]
    saved_labels = saved.index.tolist()
    saved_text = normalised_text(saved)
    singles = data.singles(arguments.queries)
    new_text = normalised_text(data.new)
    new_labels = data.new.index.tolist()
    removed = pd.Series(saved_labels).sample(
        min(REMOVED, len(saved_labels)), random_state=arguments.seed
    )
    # Recall is judged against the saved records datasketch actually holds.
    held_entities = pd.Index(data.truth.reindex(saved.index).unique())
    data.has_match = pd.Series(
        data.truth.reindex(data.new.index).isin(held_entities).to_numpy(),
        data.new.index,
    )

    baseline = settle()
    watch = Watch()
    start = time.perf_counter()
    lsh = MinHashLSH(threshold=arguments.datasketch_threshold, num_perm=NUM_PERM)
    with lsh.insertion_session(buffer_size=CHUNK) as session:
        for begin in range(0, len(saved_text), CHUNK):
            sets = [shingle(text) for text in saved_text[begin : begin + CHUNK]]
            signed = MinHash.bulk(sets, num_perm=NUM_PERM, seed=1)
            for label, minhash in zip(
                saved_labels[begin : begin + CHUNK], signed, strict=True
            ):
                session.insert(label, minhash, check_duplication=False)
            del sets, signed
    build = time.perf_counter() - start
    gc.collect()
    held = rss_since(baseline)
    log(
        f"datasketch: {len(saved_text):,} records in {build:.1f} s, b={lsh.b} r={lsh.r}"
    )

    template = MinHash(num_perm=NUM_PERM, seed=1)

    def query(text: str) -> list:
        minhash = template.copy()
        minhash.update_batch(shingle(text))
        return lsh.query(minhash)

    for text in new_text[:WARM_UP]:
        query(text)
    seconds, lefts, rights = [], [], []
    for label, text in zip(singles.index, new_text[: len(singles)], strict=True):
        start = time.perf_counter()
        keys = query(text)
        seconds.append(time.perf_counter() - start)
        lefts += keys
        rights += [label] * len(keys)
    single_recall = recall_at(lefts, rights, data, singles.index)

    start = time.perf_counter()
    signed = MinHash.bulk(
        [shingle(text) for text in new_text], num_perm=NUM_PERM, seed=1
    )
    found = [lsh.query(minhash) for minhash in signed]
    batch_s = time.perf_counter() - start
    lefts = [key for keys in found for key in keys]
    rights = [
        label for label, keys in zip(new_labels, found, strict=True) for _ in keys
    ]
    batch_recall = recall_at(lefts, rights, data, data.new.index)
    del signed, found, lefts, rights

    start = time.perf_counter()
    with lsh.deletion_session() as session:
        for key in removed:
            session.remove(key)
    remove_s = time.perf_counter() - start
    return {
        "other_cores": watch.other_cores(),
        "records": len(saved_text),
        "threshold": arguments.datasketch_threshold,
        "bands": lsh.b,
        "rows": lsh.r,
        "build_s": build,
        "rss_added": held,
        "single": latencies(seconds),
        "single_recall": single_recall,
        "batch_size": len(new_text),
        "batch_s": batch_s,
        "batch_recall": batch_recall,
        "remove_s": remove_s,
        "removed": len(removed),
    }


# --------------------------------------------------------------------------------------
# Splink
# --------------------------------------------------------------------------------------


def splink_records(frame: pd.DataFrame) -> pd.DataFrame:
    records = frame.loc[:, COLUMNS].reset_index(drop=True)
    records.insert(0, "unique_id", frame.index.to_numpy(dtype=np.int64))
    return records


def child_splink(arguments: argparse.Namespace) -> dict:
    import _splink
    from splink import DuckDBAPI, Linker, SettingsCreator, block_on

    logging.getLogger("splink").setLevel(logging.ERROR)
    data = make_data(arguments.saved, arguments.batch, arguments.seed)
    records = splink_records(data.saved)
    singles = data.singles(arguments.splink_queries or arguments.queries)

    baseline = settle()
    watch = Watch()
    start = time.perf_counter()
    db_api = DuckDBAPI()
    saved = db_api.register(records)
    settings = SettingsCreator(
        link_type="dedupe_only",
        unique_id_column_name="unique_id",
        blocking_rules_to_generate_predictions=[
            block_on(*columns) for columns in _splink.PREDICT_BLOCKING
        ],
        comparisons=[comparison for _, comparison in _splink._comparisons()],
    )
    linker = Linker(saved, settings, log_level=logging.WARNING)
    training = linker.training
    training.estimate_probability_two_random_records_match(
        [block_on(*columns) for columns in _splink.PRIOR_RULES],
        recall=_splink.PRIOR_RECALL,
    )
    training.estimate_u_using_random_sampling(max_pairs=1e7, seed=arguments.seed)
    for columns in _splink.EM_RULES:
        training.estimate_parameters_using_expectation_maximisation(
            block_on(*columns),
            estimate_without_term_frequencies=True,
            max_pairs=_splink.EM_MAX_PAIRS,
        )
    # predict_between reads term frequencies from registered tables only.
    for column in ("given_name", "surname"):
        linker.table_management.compute_tf_table(column)
    train = time.perf_counter() - start
    held = rss_since(baseline)
    del records

    def predict(frame: pd.DataFrame) -> pd.DataFrame:
        new = db_api.register(splink_records(frame))
        predictions = linker.inference.predict_between(saved, new, warning_mode="never")
        found = predictions.as_pandas_dataframe()
        predictions.drop_table_from_database_and_remove_from_cache()
        new.drop_table_from_database_and_remove_from_cache(force_non_splink_table=True)
        return found

    seconds, results = timed_queries(predict, singles)
    found = top_pairs(pd.concat(results, ignore_index=True))
    single_recall = recall_at(found["left"], found["right"], data, singles.index)
    del results, found

    start = time.perf_counter()
    batch = predict(data.new)
    batch_s = time.perf_counter() - start
    blocked = len(batch)
    top = top_pairs(batch)
    batch_recall = recall_at(top["left"], top["right"], data, data.new.index)
    matched = batch[batch["match_probability"] >= _splink.THRESHOLD]
    batch_match = match_quality(
        matched["unique_id_l"], matched["unique_id_r"], data, data.new.index
    )
    return {
        "other_cores": watch.other_cores(),
        "records": len(data.saved),
        "train_s": train,
        "rss_added": held,
        "single": latencies(seconds),
        "single_recall": single_recall,
        "batch_size": len(data.new),
        "batch_s": batch_s,
        "batch_pairs": blocked,
        "batch_recall": batch_recall,
        "batch_match": batch_match,
    }


def top_pairs(predictions: pd.DataFrame) -> pd.DataFrame:
    """The 10 most probable saved records of each new record (left saved)."""
    ranked = predictions.sort_values(
        ["unique_id_r", "match_weight"], ascending=[True, False], kind="stable"
    )
    top = ranked.groupby("unique_id_r", sort=False).head(TOP)
    return pd.DataFrame(
        {"left": top["unique_id_l"].to_numpy(), "right": top["unique_id_r"].to_numpy()}
    )


# --------------------------------------------------------------------------------------
# Incremental dedupe
# --------------------------------------------------------------------------------------


def child_incremental(arguments: argparse.Namespace) -> dict:
    import lsh_frame as lf

    people = lf.datasets.make_customers(arguments.incremental, seed=arguments.seed)
    truth = people["entity_id"]
    records = people[COLUMNS]
    del people
    bounds = np.linspace(0, len(records), BATCHES + 1).astype(int)
    batches = [records.iloc[start:stop] for start, stop in itertools.pairwise(bounds)]

    watch = Watch()
    start = time.perf_counter()
    full = lf.dedupe(records, COLUMNS, seed=arguments.seed)
    full_s = time.perf_counter() - start
    full_quality = lf.evaluate(full["cluster_id"], truth)
    del full

    start = time.perf_counter()
    index = lf.Index.build(batches[0], COLUMNS, seed=arguments.seed)
    steps = [
        {"batch": 1, "records": len(batches[0]), "seconds": time.perf_counter() - start}
    ]
    given = index.entity_ids.copy()
    changed = 0
    for number, batch in enumerate(batches[1:], start=2):
        held = len(index)
        start = time.perf_counter()
        resolved = index.resolve(batch)
        added = len(index) > held
        if not added:
            index.add(batch, entity_ids=resolved["cluster_id"])
        seconds = time.perf_counter() - start
        now = index.entity_ids
        before = now.reindex(given.index)
        moved = int((before.to_numpy() != given.to_numpy()).sum())
        changed += moved
        ids = resolved["cluster_id"]
        merges = resolved.attrs.get("lsh_frame", {}).get("merges", [])
        steps.append(
            {
                "batch": number,
                "records": len(batch),
                "seconds": seconds,
                "resolve_adds": added,
                "changed": moved,
                "existing": int(ids.isin(given.to_numpy()).sum()),
                "new_entities": int(ids[~ids.isin(given.to_numpy())].nunique()),
                "merges_not_applied": len(merges),
            }
        )
        given = pd.concat([given, ids.astype(given.dtype)])
    final = index.entity_ids.reindex(given.index)
    changed_at_end = int((final.to_numpy() != given.to_numpy()).sum())
    quality = lf.evaluate(given, truth.reindex(given.index))
    return {
        "other_cores": watch.other_cores(),
        "records": len(records),
        "full_s": full_s,
        "full": {
            "precision": full_quality.precision,
            "recall": full_quality.recall,
            "f1": full_quality.f1,
        },
        "incremental": {
            "precision": quality.precision,
            "recall": quality.recall,
            "f1": quality.f1,
        },
        "steps": steps,
        "changed": changed,
        "changed_at_end": changed_at_end,
        "held": len(index),
    }


# --------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------


def _mb(value: float | None) -> str:
    return "—" if value is None else f"{value / MB:,.0f} MB"


def _s(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f} s"


def _rate(records: int, seconds: float) -> str:
    return f"{records / seconds:,.0f}"


def _recall(quality: dict | None) -> str:
    if not quality:
        return "—"
    return f"{quality['recall']:.4f} ({quality['found']:,}/{quality['with_match']:,})"


def report(runs: dict[str, dict], arguments: argparse.Namespace) -> str:
    """Every table of the sections that ran, the targets and the notes."""
    saved = f"{arguments.saved:,}"
    lines = [
        *build_table(runs),
        *single_table(runs, saved),
        *batch_table(runs, saved),
        *incremental_tables(runs.get("incremental")),
        "## Targets",
        "",
        *targets(runs, arguments),
        "",
        "## Notes",
        "",
        *notes(runs),
    ]
    return "\n".join(lines)


def _query_runs(runs: dict[str, dict]) -> list[tuple[str, dict]]:
    """(tool, its query results) for the tools that ran."""
    found = [
        ("lsh_frame", runs["lsh_frame"]["query"] if "lsh_frame" in runs else None),
        ("datasketch", runs.get("datasketch")),
        ("Splink 5", runs.get("splink")),
    ]
    return [(name, run) for name, run in found if run]


def build_table(runs: dict[str, dict]) -> list[str]:
    rows = []
    if "lsh_frame" in runs:
        build, query = runs["lsh_frame"]["build"], runs["lsh_frame"]["query"]
        rows.append(
            [
                "lsh_frame `Index`",
                f"{build['records']:,}",
                f"{build['build_s']:.1f} s (full dedupe)",
                _s(build["save_s"]),
                f"{_mb(build['disk_bytes'])} ({build['files']} files)",
                _s(query["load_s"]),
                _mb(query["nbytes"]),
                f"{_mb(query['loaded_rss_added'])} / {_mb(query['queried_rss_added'])}",
                f"{query['remove_s']:.3f} s",
            ]
        )
    if "datasketch" in runs:
        sketch = runs["datasketch"]
        rows.append(
            [
                f"datasketch `MinHashLSH` (threshold {sketch['threshold']})",
                f"{sketch['records']:,}",
                f"{sketch['build_s']:.1f} s",
                "—",
                "— (in memory)",
                "—",
                "—",
                _mb(sketch["rss_added"]),
                f"{sketch['remove_s']:.3f} s",
            ]
        )
    if "splink" in runs:
        splink = runs["splink"]
        rows.append(
            [
                "Splink 5 + DuckDB",
                f"{splink['records']:,}",
                f"{splink['train_s']:.1f} s (training)",
                "—",
                "— (in memory)",
                "—",
                "—",
                _mb(splink["rss_added"]),
                "—",
            ]
        )
    if not rows:
        return []
    headers = ["tool", "saved records", "build", "save", "on disk", "load", "nbytes",
               "RSS added (loaded / after queries)", f"remove {REMOVED:,}"]  # fmt: skip
    return [
        "## Build, size, load, remove",
        "",
        _common.markdown_table(headers, rows),
        "",
    ]


def single_table(runs: dict[str, dict], saved: str) -> list[str]:
    rows = []
    for name, run in _query_runs(runs):
        single = run["single"]
        rows.append(
            [
                name,
                f"{single['queries']:,}",
                f"{single['median_ms']:.2f}",
                f"{single['p99_ms']:.2f}",
                f"{single['max_ms']:.1f}",
                f"{run['single_recall']['mean_results']:.1f}",
                _recall(run["single_recall"]),
            ]
        )
    if not rows:
        return []
    headers = ["tool", "queries", "median ms", "p99 ms", "max ms", "results per query",
               "recall (a true match in the results)"]  # fmt: skip
    lines = [
        f"## One new record at a time against {saved} saved",
        "",
        _common.markdown_table(headers, rows),
        "",
        f"Results: lsh_frame's top {TOP}; every datasketch candidate (no scores); "
        f"the top {TOP} of Splink's blocked pairs by match weight.",
    ]
    if "lsh_frame" in runs:
        first = runs["lsh_frame"]["query"]["first_query_ms"]
        lines.append(
            f"lsh_frame's first query after `load` (not counted above): {first:.1f} ms."
        )
    return [*lines, ""]


def batch_table(runs: dict[str, dict], saved: str) -> list[str]:
    rows = []
    for name, run in _query_runs(runs):
        matched = run.get("batch_match")
        rows.append(
            [
                name,
                f"{run['batch_size']:,}",
                f"{run['batch_s']:.2f} s",
                _rate(run["batch_size"], run["batch_s"]),
                f"{run['batch_recall']['mean_results']:.1f}",
                _recall(run["batch_recall"]),
                "—" if not matched else f"{matched['recall']:.4f}",
                "—" if not matched else f"{matched['precision']:.4f}",
            ]
        )
    if not rows:
        return []
    headers = ["tool", "new records", "time", "records/s", "results per record",
               f"recall, top {TOP} / candidates", "recall, matches",
               "precision, matches"]  # fmt: skip
    return [
        f"## A batch of new records against {saved} saved",
        "",
        _common.markdown_table(headers, rows),
        "",
        "Matches: lsh_frame's `match` column; Splink's match probability ≥ 0.5; "
        "datasketch decides nothing.",
        "",
    ]


def incremental_tables(incremental: dict | None) -> list[str]:
    if not incremental:
        return []
    rows = [
        [
            step["batch"],
            f"{step['records']:,}",
            f"{step['seconds']:.2f} s",
            _rate(step["records"], step["seconds"]),
            step.get("changed", "—"),
            step.get("existing", "—"),
            step.get("new_entities", "—"),
            step.get("merges_not_applied", "—"),
        ]
        for step in incremental["steps"]
    ]
    headers = ["batch", "records", "time", "records/s", "earlier ids changed",
               "records given an existing id", "new entities",
               "merges not applied"]  # fmt: skip
    seconds = sum(step["seconds"] for step in incremental["steps"])
    quality = [
        ["one `lf.dedupe` of everything", incremental["full_s"], incremental["full"]],
        [f"build + {BATCHES - 1} × resolve", seconds, incremental["incremental"]],
    ]
    quality_rows = [
        [run, f"{time_s:.1f} s", f"{scores['precision']:.4f}",
         f"{scores['recall']:.4f}", f"{scores['f1']:.4f}"]
        for run, time_s, scores in quality
    ]  # fmt: skip
    return [
        f"## Incremental dedupe: {incremental['records']:,} records in {BATCHES} "
        "batches",
        "",
        "Batch 1 is `Index.build`, the others `index.resolve` (which also holds the "
        "records). Entity ids are checked after every batch.",
        "",
        _common.markdown_table(headers, rows),
        "",
        _common.markdown_table(
            ["run", "time", "pair precision", "pair recall", "pair F1"], quality_rows
        ),
        "",
    ]


def notes(runs: dict[str, dict]) -> list[str]:
    lines = []
    sketch = runs.get("datasketch")
    if sketch:
        lines.append(
            f"- datasketch: MinHashLSH(threshold={sketch['threshold']}, "
            f"num_perm={NUM_PERM}) → b={sketch['bands']} bands of r={sketch['rows']} "
            f"rows; character {SHINGLE}-shingles (UTF-8 bytes, SHA-1, affine32) of "
            "the eight columns joined by a space, normalised by `lf.normalize` "
            "outside the timing. It returns candidates only, with no scores."
        )
    if "splink" in runs:
        import _splink

        description = _splink.describe().replace("\n", "; ")
        lines.append(
            f"- Splink: trained once on the saved records ({description}); "
            "`predict_between(saved, new)` scores every blocked pair."
        )
    busy = []
    for name, run in runs.items():
        parts = run.values() if name == "lsh_frame" else [run]
        for part in parts:
            if part.get("other_cores") is not None:
                busy.append(f"{part['other_cores']:.2f}")
        if busy:
            lines.append(
                f"- Other processes kept {' / '.join(busy)} cores busy on "
                f"average during {name}'s timed parts."
            )
        busy = []
    return lines


def targets(runs: dict[str, dict], arguments: argparse.Namespace) -> list[str]:
    full_size = arguments.saved >= 1_000_000
    scale = "" if full_size else f" (measured at {arguments.saved:,}: n/a)"
    rows = []

    def bar(text: str, measured: str, ok: bool | None) -> None:
        rows.append([text, measured, _common.pass_miss(ok)])

    ours = runs.get("lsh_frame")
    if ours:
        build, query = ours["build"], ours["query"]
        single = query["single"]
        verdict = (lambda ok: ok) if full_size else (lambda ok: None)
        bar(
            f"1M saved, one new record: median ≤ 5 ms{scale}",
            f"{single['median_ms']:.2f} ms",
            verdict(single["median_ms"] <= 5),
        )
        bar(
            f"1M saved, one new record: p99 ≤ 20 ms{scale}",
            f"{single['p99_ms']:.2f} ms",
            verdict(single["p99_ms"] <= 20),
        )
        rate = query["batch_size"] / query["batch_s"]
        bar(
            f"batches ≥ 20,000 new records/s against 1M{scale}",
            f"{rate:,.0f}/s",
            verdict(rate >= 20_000),
        )
        memory = max(query["nbytes"], query["queried_rss_added"])
        bar(
            f"index of 1M ≤ 1 GB on disk{scale}",
            _mb(build["disk_bytes"]),
            verdict(build["disk_bytes"] <= 1e9),
        )
        bar(
            f"index of 1M ≤ 1 GB in memory (nbytes, RSS added){scale}",
            f"{_mb(query['nbytes'])}, {_mb(query['queried_rss_added'])}",
            verdict(memory <= 1e9),
        )
        bar(
            f"load ≤ 2 s{scale}",
            f"{query['load_s']:.2f} s",
            verdict(query["load_s"] <= 2),
        )
        bar(
            f"remove 10k records ≤ 1 s{scale}",
            f"{query['remove_s']:.3f} s",
            verdict(query["remove_s"] <= 1),
        )
    incremental = runs.get("incremental")
    if incremental:
        changed = incremental["changed"] + incremental["changed_at_end"]
        bar(
            "incremental: no existing id ever changes",
            f"{changed:,} changed",
            changed == 0,
        )
        gap = incremental["full"]["f1"] - incremental["incremental"]["f1"]
        bar(
            "incremental: pair F1 within 0.005 of a full run",
            f"{incremental['incremental']['f1']:.4f} vs "
            f"{incremental['full']['f1']:.4f} (difference {-gap:+.4f})",
            gap <= 0.005,
        )
    if not rows:
        return ["No section with a target ran."]
    return [_common.markdown_table(["target", "measured", "verdict"], rows, "llc")]


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


def lsh_frame_version() -> str:
    """Where lsh_frame was imported from and its git commit (if in a checkout)."""
    import subprocess

    import lsh_frame

    folder = Path(lsh_frame.__file__).resolve().parent.parent
    described = subprocess.run(
        ["git", "-C", str(folder), "describe", "--always", "--dirty"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    return f"{lsh_frame.__version__} from {folder} (commit {described or 'unknown'})"


CHILDREN = {
    "lsh_frame_build": child_lsh_frame_build,
    "lsh_frame_query": child_lsh_frame_query,
    "datasketch": child_datasketch,
    "splink": child_splink,
    "incremental": child_incremental,
}


def child_arguments(arguments: argparse.Namespace, child: str, **extra: Any) -> list:
    options = {
        "child": child,
        "saved": arguments.saved,
        "batch": arguments.batch,
        "queries": arguments.queries,
        "seed": arguments.seed,
        "incremental": arguments.incremental,
        "datasketch-threshold": arguments.datasketch_threshold,
        "datasketch-saved": arguments.datasketch_saved,
        "splink-queries": arguments.splink_queries,
        **extra,
    }
    return [item for key, value in options.items() for item in (f"--{key}", str(value))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saved", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--batch", type=int, default=20_000)
    parser.add_argument("--incremental", type=int, help="records (default: --saved)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--only", nargs="+", choices=SECTIONS)
    parser.add_argument("--skip-splink", action="store_true")
    parser.add_argument("--skip-datasketch", action="store_true")
    parser.add_argument(
        "--quick", action="store_true", help="20k saved, 100 queries, batch 2,000"
    )
    parser.add_argument("--datasketch-threshold", type=float, default=0.4)
    parser.add_argument(
        "--datasketch-saved", type=int, default=0, help="cap datasketch's saved rows"
    )
    parser.add_argument(
        "--splink-queries", type=int, default=0, help="single queries for Splink"
    )
    parser.add_argument("--json", help="also write the raw results to this file")
    parser.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    parser.add_argument("--index-dir", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.quick:
        arguments.saved, arguments.queries, arguments.batch = 20_000, 100, 2_000
    arguments.incremental = arguments.incremental or arguments.saved

    if arguments.child:
        result = CHILDREN[arguments.child](arguments)
        Path(arguments.out).write_text(json.dumps(result), encoding="utf8")
        return 0

    sections = list(arguments.only or SECTIONS)
    if arguments.skip_splink and "splink" in sections:
        sections.remove("splink")
    if arguments.skip_datasketch and "datasketch" in sections:
        sections.remove("datasketch")
    header = _common.report_header(
        "Index benchmark: matching new records against saved ones",
        ["lsh-frame", "datasketch", "splink", "duckdb"],
    )
    header += f"- lsh_frame: {lsh_frame_version()}\n"
    runs: dict[str, dict] = {}
    for section in sections:
        log(f"{section}: {arguments.saved:,} saved, {arguments.batch:,} new")
        started = time.perf_counter()
        if section == "lsh_frame":
            folder = Path(tempfile.mkdtemp(prefix="lsh_frame_index_"))
            try:
                path = str(folder / "index")
                runs[section] = {
                    "build": _common.run_child(
                        HERE,
                        child_arguments(
                            arguments, "lsh_frame_build", **{"index-dir": path}
                        ),
                    ),
                    "query": _common.run_child(
                        HERE,
                        child_arguments(
                            arguments, "lsh_frame_query", **{"index-dir": path}
                        ),
                    ),
                }
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        else:
            runs[section] = _common.run_child(HERE, child_arguments(arguments, section))
        log(f"{section}: {time.perf_counter() - started:.0f} s")
    print(header)
    print(report(runs, arguments))
    if arguments.json:
        Path(arguments.json).write_text(json.dumps(runs, indent=1), encoding="utf8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
