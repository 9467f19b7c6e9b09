"""Deduplicate customer records stored as Parquet partitions, on a Dask cluster.

Run from the repository root (needs ``pip install 'lsh-frame[dask]'``):

    python examples/dask_dedupe.py                    # 200,000 records, 2 workers
    python examples/dask_dedupe.py --rows 1000000 --workers 2 --memory 4GB

The records are the built-in synthetic customers (``lf.datasets.make_customers``,
no download), written once as Parquet files of ``--partition-rows`` rows with the
row label in column ``record_id``, as a data pipeline would leave them. The
example starts a ``distributed.LocalCluster`` (on a real cluster, connect a
``Client`` to its scheduler instead), reads the partitions with the label as
the index, runs ``ddf.lsh.dedupe`` (the call of pandas' ``df.lsh.dedupe``),
writes the result as Parquet and checks it against the truth. With
``--check-pandas`` it also runs the pandas path and shows that the entity ids are
the same.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import dask.dataframe as dd
import pandas as pd
from distributed import Client, LocalCluster

import lsh_frame as lf
import lsh_frame.dask  # registers ddf.lsh

COLUMNS = list(lf.datasets.TEXT_COLUMNS)


def write_partitions(rows: int, partition_rows: int, folder: Path) -> Path:
    """Write make_customers(rows) as Parquet files, the label as ``record_id``."""
    people = lf.datasets.make_customers(rows, seed=1)
    people.index.name = "record_id"
    people = people.reset_index()
    target = folder / "customers"
    target.mkdir()
    for number, start in enumerate(range(0, rows, partition_rows)):
        chunk = people.iloc[start : start + partition_rows]
        chunk.to_parquet(target / f"part.{number:04d}.parquet", index=False)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--partition-rows", type=int, default=50_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory", default="4GB", help="memory limit per worker")
    parser.add_argument("--check-pandas", action="store_true")
    arguments = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        source = write_partitions(arguments.rows, arguments.partition_rows, folder)
        cluster = LocalCluster(
            n_workers=arguments.workers,
            threads_per_worker=1,
            memory_limit=arguments.memory,
            dashboard_address=None,
        )
        with Client(cluster):
            # Labels must be unique across partitions: read them as the index.
            records = dd.read_parquet(source, index="record_id")
            print(f"{arguments.rows:,} records in {records.npartitions} partitions")

            started = time.perf_counter()
            deduped = records.lsh.dedupe(COLUMNS, progress=True)
            deduped.to_parquet(folder / "deduped")  # one file per input partition
            seconds = time.perf_counter() - started

        cluster.close()
        result = pd.read_parquet(folder / "deduped")
        info = result.attrs.get("lsh_frame") or {}
        print(f"dedupe and write: {seconds:.1f} s")
        print(
            f"{result['cluster_id'].nunique():,} entities from "
            f"{info.get('matches', '?'):,} matched pairs"
            if info
            else f"{result['cluster_id'].nunique():,} entities"
        )
        print(lf.evaluate(result["cluster_id"], result["entity_id"]))
        families = result[result["cluster_size"] > 1].sort_values("cluster_id")
        print(
            families[["given_name", "surname", "date_of_birth", "cluster_id"]].head(6)
        )

        if arguments.check_pandas:
            people = pd.read_parquet(source).set_index("record_id")
            expected = people.lsh.dedupe(COLUMNS)
            same = (expected["cluster_id"] == result["cluster_id"]).all()
            print(f"entity ids equal to the pandas path's: {bool(same)}")


if __name__ == "__main__":
    main()
