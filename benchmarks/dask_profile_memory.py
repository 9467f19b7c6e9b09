"""The client's peak memory while the Dask engine profiles the exact keys.

    python benchmarks/dask_profile_memory.py gathered PATH   # counts to the client
    python benchmarks/dask_profile_memory.py ranges PATH     # added up on the workers

``PATH``: Parquet files of ``make_customers`` as ``dask_scale.py`` writes them
(``benchmarks/.data/customers_1000000_seed1_part100000``). Each run is a fresh
process with a ``LocalCluster`` (2 workers × 1 thread); it profiles every
column and pair of columns the defaults may key on (``TEXT_COLUMNS``), either
as the engine did before issue 43's change (every partition's exact-key counts
gathered and merged on the client) or as it does now
(``_DaskSource._summarise``: counts added up by range of values on the
workers), and prints the time and the process's peak RSS before and after.
"""

from __future__ import annotations

import resource
import sys
import time


def main(mode: str, path: str) -> None:
    import dask.dataframe as dd
    from dask import delayed
    from distributed import Client, LocalCluster

    import lsh_frame.dask  # noqa: F401  (registers ddf.lsh)
    from lsh_frame.block.defaults import exact_profile, merge_counts
    from lsh_frame.dask import _keys
    from lsh_frame.dask._tables import Table, compute
    from lsh_frame.datasets.customers import TEXT_COLUMNS

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        memory_limit="8GB",
        processes=True,
        dashboard_address=None,
    )
    client = Client(cluster)
    table = Table(dd.read_parquet(path, index="record_id"), "frame", "bench")
    columns = list(TEXT_COLUMNS)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    if mode == "ranges":
        source = _keys._DaskSource([table], columns, columns, 1, "bench")
        profiled = len(source._summarise())
    else:
        results = compute(
            *[
                delayed(_keys._part_profile)(part, columns, columns, 1, "bench")
                for part in table.parts
            ]
        )
        merged = [
            merge_counts([result[1][key] for result in results])
            for key in range(len(results[0][1]))
        ]
        profiled = len([exact_profile([side]) for side in merged])
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        f"{mode}: {took:.1f} s, {profiled} keys, client peak RSS "
        f"{after / 1024**2:.2f} GB (before {before / 1024**2:.2f} GB)"
    )
    client.close()
    cluster.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
