"""``lsh-frame demo`` and ``lsh-frame plan``."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import TextIO

import numpy as np
import pandas as pd

from lsh_frame import _progress as progress_line
from lsh_frame._version import __version__
from lsh_frame.block.candidates import candidates
from lsh_frame.cli.io import OK
from lsh_frame.datasets import customers as datasets
from lsh_frame.decide.closing import closed_pairs
from lsh_frame.decide.score import score
from lsh_frame.evaluate import evaluate
from lsh_frame.resolve.cluster import cluster
from lsh_frame.sketch.banding import plan as lsh_plan


def run_plan(arguments: argparse.Namespace, say: Callable[[str], None]) -> int:
    """``lsh-frame plan``: the banding for a threshold and its S-curve."""
    chosen = lsh_plan(
        arguments.threshold, num_perm=arguments.num_perm, recall=arguments.recall
    )
    say(str(chosen))
    say("")
    say("similarity  P(candidate)")
    for similarity in np.round(np.arange(0.1, 1.0001, 0.1), 2):
        probability = float(chosen.probability(similarity))
        bar = "█" * round(probability * 40)
        say(f"  {similarity:8.1f}  {probability:11.3f}  {bar}".rstrip())
    return OK


#: Every column of ``make_customers`` but the truth (``entity_id``).
DEMO_COLUMNS = list(datasets.TEXT_COLUMNS)


def _show_entity(
    customers: pd.DataFrame,
    scored: pd.DataFrame,
    rows: pd.Index,
    say: Callable[[str], None],
) -> None:
    records = customers.loc[rows, ["given_name", "surname", "date_of_birth", "email"]]
    for line in records.fillna("").to_string().splitlines():
        say(f"    {line}")
    inside = scored[scored["left"].isin(rows) & scored["right"].isin(rows)]
    inside = inside[inside["match"]]
    shown = ", ".join(
        f"{left}–{right} {probability:.3f}"
        for left, right, probability in inside[["left", "right", "match_probability"]]
        .fillna({"match_probability": inside["score"]})
        .itertuples(index=False)
    )
    say(f"    match probability (or score) of the linked pairs: {shown}")


def run_demo(
    rows: int, seed: int, out: TextIO | None = None, *, show_progress: bool = False
) -> int:
    """Dedupe ``make_customers(rows)``, print what was found; return an exit code."""
    stream = out if out is not None else sys.stdout

    def say(line: str = "") -> None:
        print(line, file=stream)

    customers = datasets.make_customers(rows, seed=seed)
    records = customers[DEMO_COLUMNS]
    say(f"lsh_frame {__version__} demo: deduplicating synthetic customer records")
    say(
        f"  {rows:,} records of {customers['entity_id'].nunique():,} people "
        f"(seed {seed}); columns: {', '.join(DEMO_COLUMNS)}"
    )
    times = {}
    with progress_line.reporting(show_progress, "demo"):
        started = time.perf_counter()
        pairs = candidates(records, DEMO_COLUMNS)
        times["candidates"] = time.perf_counter() - started
        started = time.perf_counter()
        scored = score(records, pairs, DEMO_COLUMNS)
        times["scores"] = time.perf_counter() - started
        started = time.perf_counter()
        entity = cluster(records, scored)
        times["entities"] = time.perf_counter() - started
    sizes = entity.value_counts()
    matches = int(scored["match"].sum())
    say(
        "  "
        + " · ".join(f"{stage} {seconds:.2f} s" for stage, seconds in times.items())
        + f" (total {sum(times.values()):.2f} s, no labels used)"
    )
    say()
    say("Found")
    say(
        f"  {len(pairs):,} candidate pairs of {rows * (rows - 1) // 2:,} possible; "
        f"{matches:,} matches (match probability ≥ 0.5)"
    )
    say(
        f"  {rows:,} records → {len(sizes):,} entities; {int((sizes > 1).sum()):,} "
        f"have duplicates (largest: {int(sizes.max()) if len(sizes) else 0} records)"
    )
    say()
    say("Against the built-in truth")
    truth = customers["entity_id"]
    for label, result in (("pairs   ", scored), ("entities", entity)):
        quality = evaluate(result, truth)
        say(
            f"  {label}  precision {quality.precision:.4f}  recall "
            f"{quality.recall:.4f}  F1 {quality.f1:.4f}"
        )
    say()
    shared = sizes[sizes > 1]
    if len(shared):
        say("Three entities found")
        # The links the decision accepted itself (not the pairs that only
        # close a cluster, see lsh_frame.decide.closing).
        matched = scored[scored["match"].to_numpy() & ~closed_pairs(scored)]
        # A typical entity of three, the one holding the weakest accepted link,
        # and one of two: the range of what the decision accepts.
        three = shared[shared == 3]
        picks = [int(three.index[len(three) // 2])] if len(three) else []
        # Without a learned model (too few pairs) the score decided.
        strength = matched["match_probability"].fillna(matched["score"])
        if strength.notna().any():
            picks.append(int(entity.loc[matched.loc[strength.idxmin(), "left"]]))
        two = shared[shared == 2]
        if len(two):
            picks.append(int(two.index[len(two) // 2]))
        for pick in dict.fromkeys(picks):
            members = entity.index[entity.to_numpy() == pick]
            people = truth.loc[members].nunique()
            verdict = "right" if people == 1 else f"wrong: {people} people"
            say(f"  entity {pick} ({len(members)} records; truth says {verdict})")
            _show_entity(customers, scored, members, say)
        say()
    say("Next: lsh-frame dedupe customers.csv --on given_name,surname,email -o out.csv")
    return OK
