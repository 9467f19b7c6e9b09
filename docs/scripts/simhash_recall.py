"""Measure how far apart duplicates sit in SimHash space (tables of docs/simhash.md).

Run from the repository root:

    python docs/scripts/simhash_recall.py     # 20,000 customers, 20,000 documents

Two data sets:

* customers: ``lf.datasets.make_customers(20_000, seed=1)``; a record's text is every
  field but ``entity_id`` joined by spaces. Its true pairs come from
  ``lf.datasets.true_pairs``.
* documents: 10,000 synthetic documents of 300 words drawn from a Zipf vocabulary of
  20,000 words, plus one near copy of each with 1% of the words replaced (3 words);
  the true pairs are (document, its copy).

For each, fingerprints of several kinds (64 bits, ``seed=1``), and per Hamming distance
``k``: the share of true pairs within ``k`` (recall) and how many pairs within ``k`` the
exact search returns, per true pair (the cost of blocking at ``k``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

import lsh_frame as lf

DISTANCES = (0, 1, 2, 3, 4, 6, 8, 10, 12, 16)


def customers(n: int) -> tuple[pd.Series, pd.DataFrame]:
    """Return customer records as one text per row, and their true pairs."""
    frame = lf.datasets.make_customers(n, seed=1)
    columns = [column for column in frame.columns if column != "entity_id"]
    text = frame[columns[0]].fillna("")
    for column in columns[1:]:
        text = text.str.cat(frame[column].fillna(""), sep=" ")
    truth = lf.datasets.true_pairs(frame["entity_id"])
    return text.rename("record"), truth


def documents(
    n: int, words: int = 300, edits: int = 3
) -> tuple[pd.Series, pd.DataFrame]:
    """Return ``n`` documents and an edited copy of each, and the true pairs."""
    rng = np.random.default_rng(1)
    vocabulary = np.array([f"w{i}" for i in range(20_000)])
    weights = 1.0 / np.arange(1, vocabulary.size + 1)
    weights /= weights.sum()
    originals = rng.choice(vocabulary.size, size=(n, words), p=weights)
    copies = originals.copy()
    rows = np.repeat(np.arange(n), edits)
    positions = np.concatenate(
        [rng.choice(words, size=edits, replace=False) for _ in range(n)]
    )
    copies[rows, positions] = rng.choice(vocabulary.size, size=rows.size, p=weights)
    both = np.concatenate([originals, copies])
    text = pd.Series([" ".join(vocabulary[row]) for row in both], name="document")
    truth = pd.DataFrame({"left": np.arange(n), "right": np.arange(n) + n})
    return text, truth


def measure(name: str, text: pd.Series, truth: pd.DataFrame, **options: object) -> None:
    """Print the recall-vs-distance table of one kind of fingerprint."""
    start = time.perf_counter()
    prints = lf.simhash(text, **options)
    seconds = time.perf_counter() - start
    left = prints.iloc[truth["left"].to_numpy()].reset_index(drop=True)
    right = prints.iloc[truth["right"].to_numpy()].reset_index(drop=True)
    distance = lf.hamming_distance(left, right).dropna().to_numpy()
    rng = np.random.default_rng(2)
    a, b = rng.integers(0, len(text), size=(2, 20_000))
    random = lf.hamming_distance(
        prints.iloc[a].reset_index(drop=True), prints.iloc[b].reset_index(drop=True)
    ).dropna()
    print(f"\n### {name}: {options} ({len(text):,} rows, {seconds:.2f} s)")
    print(
        f"true pairs: {len(distance):,}, median distance {np.median(distance):.0f}; "
        f"random pairs: median {random.median():.0f}"
    )
    print("| k | recall | pairs found per true pair |")
    print("|---|---|---|")
    limit = 100 * len(truth)
    for k in DISTANCES:
        recall = float((distance <= k).mean())
        try:
            found = len(lf.hamming_pairs(prints, distance=k, max_pairs=limit))
            cost = f"{found / len(truth):.2f}"
        except lf.TooManyPairsError:
            cost = "> 100"
        print(f"| {k} | {recall:.3f} | {cost} |")


def main() -> None:
    """Run the measurements."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--part", choices=["all", "customers", "documents"],
                        default="all")  # fmt: skip
    args = parser.parse_args()
    if args.part in ("all", "customers"):
        text, truth = customers(args.n)
        for options in ({"kind": "word"}, {"kind": "char", "k": 3},
                        {"kind": "word", "weights": "idf"}):  # fmt: skip
            measure("customers", text, truth, **options)
    if args.part in ("all", "documents"):
        text, truth = documents(args.n // 2)
        for options in ({"kind": "word"}, {"kind": "word", "weights": "idf"},
                        {"kind": "word", "k": 2}):  # fmt: skip
            measure("documents", text, truth, **options)


if __name__ == "__main__":
    main()
