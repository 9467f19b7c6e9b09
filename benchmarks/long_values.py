"""Long values: CPU per character of MinHash, and fuzzy scoring of huge values.

What it measures
----------------
- ``minhash``: CPU seconds of ``lf.minhash(series, workers=1)`` (character
  3-shingles, 128 permutations, seed 1) on word-like random text of the same
  total size in values of different lengths: 100,000 × 22 characters,
  3,667 × 600 characters and 220 × 10,000 characters. The cost per character
  should not depend on the length of the values.
- ``fuzzy``: wall and CPU seconds of ``lf.score(df, pairs, ["given_name",
  "surname", "street_address"], min_score=0.8)`` on every pair (19,900) of
  ``make_customers(200, seed=1)``, as is, with one street address replaced by a
  1,000,000-character value, and with two near-identical such values (they
  differ in one character every 50,000).

Best of ``--repeat`` runs, in this process. Not a test: nothing is asserted.

How to run::

    python benchmarks/long_values.py                  # both parts (~1 minute)
    python benchmarks/long_values.py --part minhash
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common

import lsh_frame as lf

#: (values, characters per value) of the MinHash part: the same 2.2M characters.
MINHASH_CASES = [(100_000, 22), (3_667, 600), (220, 10_000)]
BIG_VALUE = 1_000_000


def word_text(rng: np.random.Generator, count: int, length: int) -> pd.Series:
    """``count`` values of ``length`` lower-case letters with a space every 7."""
    letters = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
    codes = rng.choice(letters, size=(count, length))
    codes[:, 5::7] = ord(" ")
    return pd.Series([row.tobytes().decode("ascii") for row in codes])


def best_of(repeat: int, run: Callable[[], object]) -> tuple[float, float]:
    """Best wall and CPU seconds of ``repeat`` runs."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        run()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return min(walls), min(cpus)


def minhash_part(repeat: int) -> str:
    rng = np.random.default_rng(1)
    rows = []
    for count, length in MINHASH_CASES:
        series = word_text(rng, count, length)
        _, cpu = best_of(repeat, lambda s=series: lf.minhash(s, workers=1))
        characters = count * length
        rows.append(
            [
                f"{count:,} × {length:,}",
                f"{characters:,}",
                f"{cpu:.2f}",
                f"{cpu / characters * 1e9:.0f}",
            ]
        )
    return _common.markdown_table(
        ["values × characters", "characters", "CPU s (best)", "CPU ns per character"],
        rows,
    )


def fuzzy_part(repeat: int) -> str:
    rng = np.random.default_rng(2)
    frame = lf.datasets.make_customers(200, seed=1)
    pairs = pd.DataFrame(
        list(itertools.combinations(frame.index, 2)), columns=["left", "right"]
    )
    big = word_text(rng, 1, BIG_VALUE)[0]
    near = np.frombuffer(big.encode("ascii"), dtype=np.uint8).copy()
    near[25_000::50_000] = ord("#")
    cases = {
        "none": [],
        "one 1 MB value": [big],
        "two near-identical 1 MB values": [big, near.tobytes().decode("ascii")],
    }
    rows = []
    for label, replacements in cases.items():
        table = frame.copy()
        for row, value in enumerate(replacements):
            table.loc[table.index[row], "street_address"] = value
        wall, cpu = best_of(
            repeat,
            lambda t=table: lf.score(
                t, pairs, ["given_name", "surname", "street_address"], min_score=0.8
            ),
        )
        rows.append([label, f"{len(pairs):,}", f"{wall:.2f}", f"{cpu:.2f}"])
    return _common.markdown_table(
        ["200 records, street_address", "pairs", "wall s (best)", "CPU s (best)"], rows
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["minhash", "fuzzy", "all"], default="all")
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    print(_common.report_header("Long values", ["rapidfuzz"]))
    if options.part in ("minhash", "all"):
        print(minhash_part(options.repeat), end="\n\n")
    if options.part in ("fuzzy", "all"):
        print(fuzzy_part(options.repeat))


if __name__ == "__main__":
    main()
