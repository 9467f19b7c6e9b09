"""End-to-end dedupe: lsh_frame against Splink 5 (DuckDB) on the same records.

    python benchmarks/e2e.py                      # 100k and 1M records (~15 min)
    python benchmarks/e2e.py --sizes 100000       # one size
    python benchmarks/e2e.py --skip-splink        # lsh_frame only

Data: ``lsh_frame.datasets.make_customers(n, seed)`` (synthetic people with typos,
nicknames, moves and households; ``entity_id`` is the truth), built in each
child process. Nothing from ``../shared`` is needed.

Each tool runs in its own fresh process per size, so peak memory is the tool's
own (plus the records, which both hold). lsh_frame runs the library defaults on
the eight text columns: ``candidates`` (signatures, keys, pairs) → ``score`` →
``cluster``; stage times come from the steps the library announces
(``lsh_frame._progress.recording``). Splink runs the configuration in
``benchmarks/_splink.py`` (blocking rules on names, date of birth, postcode,
e-mail, phone and address; standard comparisons; u by random sampling; EM).
Both are judged by ``lf.evaluate`` on their predicted pairs (match probability
≥ 0.5) and on their clusters.

Targets (issue 5): 1M records end to end ≤ 60 s and ≤ 8 GB peak; ≥ 3× faster
than Splink on the same rows; recall and F1 within 0.005 of Splink's or better.
Needs the ``bench`` extra plus ``splink`` (``pip install '.[bench]' splink``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

import _common as common

from lsh_frame.datasets.customers import TEXT_COLUMNS

HERE = Path(__file__).resolve().parent
#: Every column of make_customers but the truth (entity_id).
COLUMNS = list(TEXT_COLUMNS)
#: Which stage a step announced by the library belongs to (by its first word).
STAGE_OF_STEP = {
    "profiling": "keys",
    "signing": "signatures",
    "grouping": "keys",
    "building": "pairs",
    "finding": "pairs",  # the neighbours key: each record's most similar records
    "scoring": "scores",
    "deciding": "scores",
    "clustering": "clusters",
}
STAGES = ["signatures", "keys", "pairs", "scores", "clusters"]


# ----------------------------------------------------------------------------
# Children


def _quality(result: Any, truth: Any) -> dict[str, float]:
    import lsh_frame as lf

    quality = lf.evaluate(result, truth)
    return {
        "precision": quality.precision,
        "recall": quality.recall,
        "f1": quality.f1,
    }


def _stage_times(
    steps: list[tuple[str, float]], started: float, finished: float
) -> dict[str, float]:
    """Wall time per stage: each step lasts until the next one starts."""
    times = dict.fromkeys(STAGES, 0.0)
    marks = [*steps, ("end", finished)]
    # Work before the first announced step (checks, text) counts as signatures.
    times["signatures"] += marks[0][1] - started
    for (label, start), (_, stop) in itertools.pairwise(marks):
        times[STAGE_OF_STEP[label.split()[0]]] += stop - start
    return times


def run_lsh_frame(rows: int, seed: int) -> dict[str, Any]:
    """The library's defaults, stage by stage, on ``make_customers(rows)``."""
    import lsh_frame as lf
    from lsh_frame import _progress

    people = lf.datasets.make_customers(rows, seed=seed)
    records = people[COLUMNS]
    common.release_free_memory()
    data_rss = common.current_rss_bytes()
    started = time.perf_counter()
    with _progress.recording() as steps:
        pairs = lf.candidates(records, COLUMNS, seed=seed)
        scored = lf.score(records, pairs, COLUMNS)
        entity = lf.cluster(records, scored)
    finished = time.perf_counter()
    model = scored.attrs["lsh_frame"]["model"]
    return {
        "stages": _stage_times(steps, started, finished),
        "total": finished - started,
        "data_rss": data_rss,
        "peak_rss": common.lifetime_peak_rss_bytes(),
        "candidates": len(pairs),
        "matches": int(scored["match"].sum()),
        "pairs": _quality(scored, people["entity_id"]),
        "clusters": _quality(entity, people["entity_id"]),
        "note": f"model fit {model['fit'] if model else None}",
    }


def run_splink_child(rows: int, seed: int) -> dict[str, Any]:
    """Splink 5 on DuckDB (``_splink.run_splink``) on ``make_customers(rows)``."""
    import lsh_frame as lf

    sys.path.insert(0, str(HERE))
    import _splink

    people = lf.datasets.make_customers(rows, seed=seed)
    records = people[COLUMNS]
    common.release_free_memory()
    data_rss = common.current_rss_bytes()
    started = time.perf_counter()
    result = _splink.run_splink(records, seed=seed)
    finished = time.perf_counter()
    return {
        "stages": result["stages"],
        "total": finished - started,
        "data_rss": data_rss,
        "peak_rss": common.lifetime_peak_rss_bytes(),
        "candidates": result.get("candidates"),
        "matches": len(result["pairs"]),
        "pairs": _quality(result["pairs"], people["entity_id"]),
        "clusters": _quality(result["entity"], people["entity_id"]),
        "note": result["config"],
    }


# ----------------------------------------------------------------------------
# Report


def _gb(value: int) -> str:
    return f"{value / 1024**3:.2f} GB"


def _row(tool: str, rows: int, run: dict[str, Any]) -> list[str]:
    stages = ", ".join(
        f"{name} {seconds:.1f}" for name, seconds in run["stages"].items()
    )
    pairs, clusters = run["pairs"], run["clusters"]
    candidates = run["candidates"]
    return [
        tool,
        f"{rows:,}",
        f"{run['total']:.1f} s",
        stages,
        _gb(run["peak_rss"]),
        "—" if candidates is None else f"{candidates:,}",
        f"{pairs['precision']:.4f} / {pairs['recall']:.4f} / {pairs['f1']:.4f}",
        f"{clusters['precision']:.4f} / {clusters['recall']:.4f} / "
        f"{clusters['f1']:.4f}",
    ]


def _targets(rows: int, ours: dict[str, Any], theirs: dict[str, Any] | None) -> list:
    lines = []
    if rows >= 1_000_000:
        lines.append(
            f"- {rows:,} records end to end ≤ 60 s: {ours['total']:.1f} s — "
            f"{common.pass_miss(ours['total'] <= 60)}"
        )
        lines.append(
            f"- peak memory ≤ 8 GB: {_gb(ours['peak_rss'])} — "
            f"{common.pass_miss(ours['peak_rss'] <= 8 * 1024**3)}"
        )
    if theirs is None:
        return lines
    speedup = theirs["total"] / ours["total"]
    lines.append(
        f"- {rows:,}: ≥ 3× faster than Splink: {speedup:.1f}× — "
        f"{common.pass_miss(speedup >= 3)}"
    )
    for level in ("pairs", "clusters"):
        for metric in ("recall", "f1"):
            mine, reference = ours[level][metric], theirs[level][metric]
            lines.append(
                f"- {rows:,}: {level} {metric} within 0.005 of Splink's or better: "
                f"{mine:.4f} vs {reference:.4f} — "
                f"{common.pass_miss(mine >= reference - 0.005)}"
            )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-splink", action="store_true")
    parser.add_argument("--child", choices=["lsh_frame", "splink"])
    parser.add_argument("--rows", type=int)
    parser.add_argument("--out")
    arguments = parser.parse_args()

    if arguments.child:
        run = run_lsh_frame if arguments.child == "lsh_frame" else run_splink_child
        result = run(arguments.rows, arguments.seed)
        Path(arguments.out).write_text(json.dumps(result), encoding="utf8")
        return 0

    log = common.log_to_stderr("e2e")
    header = common.report_header("End-to-end dedupe benchmark", ["splink", "duckdb"])
    rows_out, targets, notes = [], [], []
    for rows in arguments.sizes:
        runs = {}
        tools = ["lsh_frame"] + ([] if arguments.skip_splink else ["splink"])
        for tool in tools:
            log(f"{tool} on {rows:,} records")
            runs[tool] = common.run_child(
                __file__,
                ["--child", tool, "--rows", str(rows), "--seed", str(arguments.seed)],
            )
            log(f"{tool}: {runs[tool]['total']:.1f} s")
        for tool, run in runs.items():
            rows_out.append(_row(tool, rows, run))
        targets += _targets(rows, runs["lsh_frame"], runs.get("splink"))
        notes.append(f"- lsh_frame at {rows:,}: {runs['lsh_frame']['note']}")
        if "splink" in runs:
            notes.append(f"- Splink at {rows:,}: {runs['splink']['note']}")
    print(header)
    print(
        common.markdown_table(
            [
                "tool",
                "records",
                "total",
                "stages (s)",
                "peak RSS",
                "candidate pairs",
                "pairs P / R / F1",
                "clusters P / R / F1",
            ],
            rows_out,
            align="llrlrrll",
        )
    )
    print("\nTargets:")
    print("\n".join(targets))
    print("\nNotes:")
    print("\n".join(notes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
