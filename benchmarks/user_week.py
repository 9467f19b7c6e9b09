"""A new user's week, scripted: dedupe last week's customers, match next week's.

    python benchmarks/user_week.py                  # every part (~5 min on 2 cores)
    python benchmarks/user_week.py --only index     # or: readings, small

Data: ``lf.datasets.make_customers(records + signups, seed)`` made messy (below),
written to one CSV file; its ``entity_id`` column is the truth and no library
call sees it. The first ``records`` rows are last week's customers, the next
``signups`` rows next week's sign-ups: about a third of them are customers
already known (make_customers' duplicates fall anywhere in its random order).

Messy, as files people keep are (the same for every part, from ``seed``):
8% of the names, streets and cities upper-cased, 5% with a space doubled or
trailing, 10% of the dates of birth written ``dd/mm/yyyy``; phones and
postcodes are digits only, so ``pd.read_csv`` reads them as floats with NaN
(dropping a phone's leading zero and that of Darwin's 08xx postcodes).

Parts:

- ``readings``: the file read as all text (as the CLI reads it: ``dtype=str``)
  and with ``pd.read_csv`` defaults (floats); ``df.lsh.dedupe()`` of last
  week's rows each way; the entity (pair) F1 of each against the truth and
  their difference. Bar: within 0.005.
- ``index``: last week's rows as ``pd.read_csv`` gives them, deduplicated,
  the deduplicated table kept, then an index built on it, and the sign-ups
  resolved against it: ``lf.Index.from_dedupe(last.lsh.dedupe())`` (the way
  the guide gives), and the naive ``last.lsh.drop_duplicates().lsh.index()``.
  Of the sign-ups whose person is among last week's, the share resolved to
  the entity holding that person ("recall"); of the sign-ups resolved to an
  existing entity, the share resolved right ("precision"); every warning the
  calls raised. Bars: both ≥ 0.98, no crash, no warning the user cannot act on.
- ``small``: the hand-made small frames of ``tests/jobs/small_frames.py`` (5-50
  rows), deduplicated with the defaults; the frames in which two different
  people were merged. Bar: none.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _common import load_average, markdown_table, pass_miss, report_header

import lsh_frame as lf

COLUMNS = [
    "given_name",
    "surname",
    "street_address",
    "city",
    "postcode",
    "phone",
    "date_of_birth",
    "email",
]


def messy_customers(records: int, signups: int, seed: int) -> pd.DataFrame:
    """Return make_customers made messy (see the module docstring), as text."""
    frame = lf.datasets.make_customers(records + signups, seed=seed)
    rng = np.random.default_rng(seed)
    for column in ["given_name", "surname", "street_address", "city"]:
        values = frame[column].astype(object)
        upper = rng.random(len(frame)) < 0.08
        spaced = rng.random(len(frame)) < 0.05
        present = values.notna().to_numpy()
        values[upper & present] = values[upper & present].str.upper()
        doubled = spaced & present
        values[doubled] = values[doubled].str.replace(" ", "  ", n=1) + " "
        frame[column] = values.astype("str")
    dates = frame["date_of_birth"].astype(object)
    slashed = (rng.random(len(frame)) < 0.10) & dates.notna().to_numpy()
    parts = dates[slashed].str.split("-", expand=True)
    dates[slashed] = parts[2] + "/" + parts[1] + "/" + parts[0]
    frame["date_of_birth"] = dates.astype("str")
    return frame


def read_both(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Return the frame through a CSV file: all text, and pd.read_csv defaults."""
    buffer = io.StringIO()
    frame.to_csv(buffer)
    text = buffer.getvalue()
    as_text = pd.read_csv(
        io.StringIO(text), dtype=str, keep_default_na=False, na_values=[""]
    ).set_index("record_id")
    as_text["entity_id"] = as_text["entity_id"].astype(np.int64)
    defaults = pd.read_csv(io.StringIO(text), index_col="record_id")
    return as_text, defaults


def entity_f1(ids: pd.Series, truth: pd.Series) -> float:
    """Pair F1 of entity ids against the truth."""
    return float(lf.evaluate(ids, truth).f1)


def caught(call: Any) -> tuple[Any, list[str]]:
    """Run ``call()``; return its result and the warnings it raised."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        result = call()
    return result, [str(warning.message) for warning in seen]


def part_readings(args: argparse.Namespace, log: Any) -> str:
    """The same messy file read as text and with read_csv defaults."""
    frame = messy_customers(args.records, 0, args.seed)
    rows = []
    scores = {}
    for name, table in zip(
        ["all text", "read_csv defaults"], read_both(frame), strict=True
    ):
        truth = table.pop("entity_id")
        dtypes = ", ".join(
            f"{column} {table[column].dtype}" for column in ["postcode", "phone"]
        )
        log(f"readings: {name} ({dtypes}), load {load_average()}")
        started = time.perf_counter()
        result, said = caught(lambda table=table: table.lsh.dedupe())
        elapsed = time.perf_counter() - started
        scores[name] = entity_f1(result["cluster_id"], truth)
        info = result.attrs["lsh_frame"]
        rows.append(
            [
                name,
                dtypes,
                f"{info['entities']:,}",
                f"{info['min_score']}",
                f"{scores[name]:.4f}",
                f"{elapsed:.1f} s",
                len(said),
            ]
        )
    gap = abs(scores["all text"] - scores["read_csv defaults"])
    return "\n".join(
        [
            "## The same file, read two ways",
            "",
            f"`df.lsh.dedupe()` of {args.records:,} messy customers (every column).",
            "",
            markdown_table(
                [
                    "read as",
                    "dtypes",
                    "entities",
                    "min_score",
                    "entity F1",
                    "dedupe time",
                    "warnings",
                ],
                rows,
            ),
            "",
            f"- Bar: entity F1 within 0.005: gap {gap:.4f} — {pass_miss(gap <= 0.005)}",
            "",
        ]
    )


def resolved_quality(
    resolved: pd.Series,
    index_truth: pd.Series,
    new_truth: pd.Series,
    known_before: int,
) -> dict[str, Any]:
    """How the sign-ups' entity ids compare with the truth.

    ``resolved``: the sign-ups' entity ids; ``index_truth``: the true person of
    every entity id the index held before (the most common person of its
    records); ``known_before``: the first id a new entity would take.
    """
    known = new_truth.isin(index_truth.to_numpy())
    existing = resolved < known_before
    held = pd.Series(
        index_truth.reindex(resolved.to_numpy()).to_numpy(), resolved.index
    )
    right = existing & (held == new_truth)
    return {
        "known": int(known.sum()),
        "recall": float((right & known).sum() / max(int(known.sum()), 1)),
        "precision": float(right.sum() / max(int(existing.sum()), 1)),
        "matched": int(existing.sum()),
    }


def entity_truth(ids: pd.Series, truth: pd.Series) -> pd.Series:
    """The most common true person of each entity id."""
    pairs = pd.DataFrame({"id": ids.to_numpy(), "truth": truth.to_numpy()})
    counts = pairs.value_counts().reset_index()
    return counts.drop_duplicates("id").set_index("id")["truth"]


def part_index(args: argparse.Namespace, log: Any) -> str:
    """Index the table a user keeps; resolve next week's sign-ups against it."""
    frame = messy_customers(args.records, args.signups, args.seed)
    _, table = read_both(frame)
    truth = table.pop("entity_id")
    last, new = table.iloc[: args.records], table.iloc[args.records :]
    last_truth, new_truth = truth.iloc[: args.records], truth.iloc[args.records :]
    rows = []
    said_all: list[str] = []

    def run(name: str, build: Any) -> None:
        log(f"index: {name}, load {load_average()}")
        started = time.perf_counter()
        try:
            (index, kept), said = caught(build)
        except Exception as error:  # the bar: no crash
            rows.append([name, f"crash: {type(error).__name__}: {error}"[:120]])
            return
        built = time.perf_counter() - started
        before = index.entity_ids.copy()
        known_before = int(before.max()) + 1
        owners = entity_truth(before, last_truth.loc[before.index])
        started = time.perf_counter()
        resolved, more = caught(lambda: index.resolve(new))
        elapsed = time.perf_counter() - started
        said = said + more
        said_all.extend(f"{name}: {message}" for message in said)
        quality = resolved_quality(
            resolved["cluster_id"], owners, new_truth, known_before
        )
        rows.append(
            [
                name,
                f"{kept:,}",
                f"{built:.1f} s",
                f"{quality['known']:,}",
                f"{quality['matched']:,}",
                f"{quality['recall']:.4f}",
                f"{quality['precision']:.4f}",
                f"{elapsed:.1f} s",
                len(said),
            ]
        )
        results[name] = quality

    results: dict[str, dict[str, Any]] = {}

    def naive() -> tuple[Any, int]:
        kept = last.lsh.drop_duplicates()
        return kept.lsh.index(), len(kept)

    def from_dedupe() -> tuple[Any, int]:
        deduped = last.lsh.dedupe()
        index = lf.Index.from_dedupe(deduped)
        return index, len(index)

    run("last.lsh.drop_duplicates().lsh.index()", naive)
    if hasattr(lf.Index, "from_dedupe"):
        run("lf.Index.from_dedupe(last.lsh.dedupe())", from_dedupe)
    headers = [
        "index built by",
        "records held",
        "dedupe + build",
        "known sign-ups",
        "joined an entity",
        "known joined to their own",
        "joins right",
        "resolve",
        "warnings",
    ]
    rows = [row + [""] * (len(headers) - len(row)) for row in rows]
    lines = [
        "## The index on the table a user keeps",
        "",
        f"{args.records:,} messy customers read by `pd.read_csv`, deduplicated; "
        f"then `index.resolve()` of {args.signups:,} sign-ups.",
        "",
        markdown_table(headers, rows),
        "",
    ]
    for name, quality in results.items():
        ok = quality["recall"] >= 0.98 and quality["precision"] >= 0.98
        lines.append(
            f"- Bar ({name}): ≥ 0.98 of known sign-ups joined to their own entity, "
            f"≥ 0.98 of joins right: {quality['recall']:.4f} / "
            f"{quality['precision']:.4f} — {pass_miss(ok)}"
        )
    lines.append("")
    if said_all:
        lines += ["Warnings:", ""] + [f"- {message}" for message in said_all] + [""]
    return "\n".join(lines)


def decided_by(info: dict[str, Any]) -> str:
    """Say in a few words what decided a small frame's matches."""
    if "fallback" not in info:
        return "a learned model"
    readings = info.get("identifying")
    if readings is None:
        return f"score >= {info['min_score']} over every field"
    fields = [reading["field"] for reading in readings if reading["identifying"]]
    return f"score >= {info['min_score']}, and on {', '.join(fields) or 'none'} alone"


def part_small(args: argparse.Namespace, log: Any) -> str:
    """Hand-made small frames: no two people merged on weak columns alone."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "jobs"))
    from small_frames import CASES  # type: ignore[import-not-found]

    rows = []
    merged_frames = 0
    for case in CASES:
        frame = case.frame()
        result, _said = caught(lambda frame=frame: frame.lsh.dedupe())
        wrong = case.wrong_merges(result["cluster_id"])
        missed = case.missed(result["cluster_id"])
        merged_frames += bool(wrong)
        rows.append(
            [
                case.name,
                len(frame),
                len(wrong),
                len(missed),
                decided_by(result.attrs["lsh_frame"]),
            ]
        )
    log(f"small: {len(CASES)} frames, load {load_average()}")
    return "\n".join(
        [
            "## Small frames",
            "",
            markdown_table(
                ["frame", "rows", "people merged", "duplicates missed", "decided by"],
                rows,
            ),
            "",
            f"- Bar: no two people merged: {merged_frames} frame(s) merge people — "
            f"{pass_miss(merged_frames == 0)}",
            "",
        ]
    )


def main() -> None:
    """Run the parts asked for and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=50_000)
    parser.add_argument("--signups", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=44)
    parser.add_argument(
        "--only", nargs="*", choices=["readings", "index", "small"], default=None
    )
    args = parser.parse_args()
    parts = args.only or ["small", "readings", "index"]

    def log(message: str) -> None:
        print(f"[user_week] {message}", file=sys.stderr, flush=True)

    report = [report_header("A new user's week", ["rapidfuzz"])]
    for part in parts:
        report.append(
            {"readings": part_readings, "index": part_index, "small": part_small}[part](
                args, log
            )
        )
    report.append(f"Load average at the end: {load_average()}")
    print("\n".join(report))


if __name__ == "__main__":
    main()
