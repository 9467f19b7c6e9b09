"""The ``lsh-frame`` command line.

``lsh-frame demo`` signs a built-in synthetic customer table, reports how well
MinHash similarity separates true duplicates from unrelated records, and blocks
it into candidate pairs with the defaults.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from typing import TextIO

import numpy as np
import pandas as pd

from lsh_frame import __version__, datasets
from lsh_frame._arrow import signature_config
from lsh_frame.blocking import candidates
from lsh_frame.errors import LshFrameError
from lsh_frame.minhash import estimate_jaccard, minhash

DEMO_COLUMNS = ["given_name", "surname", "street_address", "city"]


def _record_text(frame: pd.DataFrame) -> pd.Series:
    first, *rest = DEMO_COLUMNS
    return frame[first].str.cat(frame[rest], sep=" ", na_rep="")


def _pair_estimates(
    signatures: pd.Series, left: np.ndarray, right: np.ndarray
) -> pd.Series:
    estimates = estimate_jaccard(
        signatures.iloc[left].reset_index(drop=True),
        signatures.iloc[right].reset_index(drop=True),
    )
    assert isinstance(estimates, pd.Series)
    return estimates


def run_demo(rows: int, seed: int, out: TextIO | None = None) -> int:
    """Sign ``make_customers(rows)`` and print a summary; return an exit code."""
    stream = out if out is not None else sys.stdout

    def say(line: str = "") -> None:
        print(line, file=stream)

    customers = datasets.make_customers(rows, seed=seed)
    text = _record_text(customers)
    started = time.perf_counter()
    signatures = minhash(text, k=3, num_perm=128, seed=seed)
    elapsed = time.perf_counter() - started
    config = signature_config(signatures, owner="demo")

    truth = datasets.true_pairs(customers["entity_id"])
    positions = customers.index.get_indexer
    true_left = positions(pd.Index(truth["left"]))
    true_right = positions(pd.Index(truth["right"]))
    rng = np.random.default_rng(seed)
    random_left = rng.integers(0, rows, size=min(len(truth), 10_000) or 1)
    random_right = rng.integers(0, rows, size=random_left.size)
    distinct = customers["entity_id"].to_numpy()
    keep = distinct[random_left] != distinct[random_right]
    duplicates = _pair_estimates(signatures, true_left, true_right)
    unrelated = _pair_estimates(signatures, random_left[keep], random_right[keep])

    say(f"lsh_frame {__version__} demo: synthetic customer records (seed {seed})")
    say(
        f"  {rows:,} records of {customers['entity_id'].nunique():,} people; "
        f"{len(truth):,} true duplicate pairs"
    )
    say(
        f"  signed '{' + '.join(DEMO_COLUMNS)}' in {elapsed:.2f} s "
        f"({rows / max(elapsed, 1e-9):,.0f} records/s)"
    )
    say(
        f"  each signature: {config.num_perm} values ({config.describe()}), "
        "in an Arrow extension column"
    )
    say(f"  records without a signature (no text): {int(signatures.isna().sum()):,}")
    say()
    say("Estimated Jaccard similarity of the record text")
    for label, values in (
        ("true duplicate pairs", duplicates),
        ("unrelated pairs", unrelated),
    ):
        values = values.dropna()
        if values.empty:
            continue
        say(
            f"  {label:<22} mean {values.mean():.2f}   median {values.median():.2f}"
            f"   ≥ 0.5: {(values >= 0.5).mean():6.1%}"
        )
    say()
    say("Blocking with the defaults (every column by name, no labels used)")
    columns = [column for column in customers.columns if column != "entity_id"]
    started = time.perf_counter()
    pairs = candidates(customers[columns], columns)
    elapsed = time.perf_counter() - started
    possible = rows * (rows - 1) // 2
    found = len(pairs.merge(truth, on=["left", "right"])) if len(truth) else 0
    say(
        f"  {len(pairs):,} candidate pairs of {possible:,} possible in {elapsed:.2f} s"
        + (f"; {found / len(truth):.2%} of the true pairs found" if len(truth) else "")
    )
    for key, count in pairs["found_by"].value_counts().head(4).items():
        say(f"    {count:>7,}  found by {key}")
    if len(truth):
        say()
        say("Three true duplicate pairs and their estimated similarity")
        order = duplicates.sort_values(kind="stable")
        picks = order.index[[len(order) - 1, len(order) // 2, 0]]
        for pick in picks:
            left_label, right_label = truth.iloc[pick]
            say(f"  {duplicates.iloc[pick]:.2f}  {text.loc[left_label]!r}")
            say(f"        {text.loc[right_label]!r}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``lsh-frame`` command."""
    parser = argparse.ArgumentParser(
        prog="lsh-frame",
        description="Entity resolution for pandas with MinHash and LSH.",
    )
    parser.add_argument("--version", action="version", version=__version__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser(
        "demo", help="sign built-in synthetic customers and summarise"
    )
    demo.add_argument("--rows", type=int, default=20_000, help="records (20000)")
    demo.add_argument("--seed", type=int, default=1, help="random seed (1)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    parser = build_parser()
    arguments = parser.parse_args(argv)
    try:
        if arguments.command == "demo":
            if arguments.rows < 1:
                parser.error("--rows must be at least 1")
            return run_demo(arguments.rows, arguments.seed)
    except LshFrameError as error:
        print(f"lsh-frame: error: {error}", file=sys.stderr)
        return 2
    return 0  # pragma: no cover - argparse rejects unknown commands


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
