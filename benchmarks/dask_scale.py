"""Scale out: dedupe make_customers from Parquet partitions on a Dask LocalCluster.

    python benchmarks/dask_scale.py                          # 1M and 5M (~30 min)
    python benchmarks/dask_scale.py --sizes 1000000          # one size
    python benchmarks/dask_scale.py --sizes 200000 --partition-rows 20000  # a look
    python benchmarks/dask_scale.py --parity 200000   # pairs equal pandas' (issue 43)

Data: ``lsh_frame.datasets.make_customers(n, seed)`` written once as Parquet, one
file per ``--partition-rows`` rows, the row label as column ``record_id`` (under
``--data``, default ``benchmarks/.data/``; reused when present). Nothing from
``../shared`` is needed.

Each run is a fresh process:

- ``dask``: ``LocalCluster(n_workers=2, threads_per_worker=1, memory_limit=4 GB)``
  (``--memory-limit`` to change it; spilling to disk allowed),
  ``dd.read_parquet(..., index="record_id")``,
  ``ddf.lsh.dedupe(COLUMNS)`` and ``to_parquet`` of the result. Stage times are
  the steps the library announces on the client (``_progress.recording``);
  each worker's peak memory is its process RSS, sampled every 0.2 s.
- ``pandas``: ``pd.read_parquet``, ``df.lsh.dedupe(COLUMNS)``, ``to_parquet``; peak
  RSS of the process.

Both are judged by ``lf.evaluate`` of the written ``cluster_id`` against the
truth ``entity_id`` (pairs of records put in one entity: precision, recall,
F1). Targets (issue 6): the same clusters as pandas at 1M; 5M rows on 2
workers × 4 GB in ≤ 30 min with F1 within 0.005 of pandas at 1M; Dask at 1M
≤ 2× the pandas wall time. Needs the ``dask`` extra plus ``distributed`` and
``psutil`` (``pip install '.[dask,bench]' distributed``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import _common as common

from lsh_frame.datasets.customers import TEXT_COLUMNS

HERE = Path(__file__).resolve().parent
COLUMNS = list(TEXT_COLUMNS)
WORKERS, MEMORY_LIMIT = 2, "4GB"
#: Issue 43's bars at 5M and above: client and worker peak RSS, pairs F1.
CLIENT_PEAK, WORKER_PEAK, MIN_F1 = 2 * 1024**3, 8 * 1024**3, 0.99


def _data(rows: int, seed: int, partition_rows: int, folder: Path) -> Path:
    """Write make_customers(rows) as Parquet files of ``partition_rows`` rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import lsh_frame as lf

    target = folder / f"customers_{rows}_seed{seed}_part{partition_rows}"
    if (target / "_done").exists():
        return target
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    people = lf.datasets.make_customers(rows, seed=seed)
    people.index.name = "record_id"
    people = people.reset_index()
    for number, start in enumerate(range(0, rows, partition_rows)):
        chunk = pa.Table.from_pandas(
            people.iloc[start : start + partition_rows], preserve_index=False
        )
        pq.write_table(chunk, target / f"part.{number:05d}.parquet")
    (target / "_done").write_text("ok", encoding="utf8")
    return target


def _stages(
    steps: list[tuple[str, float]], started: float, finished: float
) -> dict[str, float]:
    """Wall time per announced step (by its first word); before the first: setup."""
    times: dict[str, float] = {"setup": steps[0][1] - started if steps else 0.0}
    for (label, start), (_, stop) in itertools.pairwise([*steps, ("end", finished)]):
        name = label.split()[0]
        times[name] = times.get(name, 0.0) + stop - start
    return times


def _quality(written: Path) -> dict[str, Any]:
    import numpy as np
    import pandas as pd

    import lsh_frame as lf

    result = pd.read_parquet(written, columns=["entity_id", "cluster_id"])
    quality = lf.evaluate(result["cluster_id"], result["entity_id"])
    # Every row's entity id, in label order: equal digests mean equal results.
    ordered = result["cluster_id"].sort_index()
    digest = pd.util.hash_pandas_object(ordered.reset_index(), index=False)
    return {
        "digest": int(digest.to_numpy().sum(dtype=np.uint64)),
        "precision": quality.precision,
        "recall": quality.recall,
        "f1": quality.f1,
        "entities": int(result["cluster_id"].nunique()),
    }


def run_pandas(data: Path, out: Path) -> dict[str, Any]:
    import pandas as pd

    import lsh_frame as lf
    from lsh_frame import _progress

    started = time.perf_counter()
    people = pd.read_parquet(data).set_index("record_id")
    with _progress.recording() as steps:
        result = people.lsh.dedupe(COLUMNS)
    result.to_parquet(out / "result.parquet")
    finished = time.perf_counter()
    info = result.attrs["lsh_frame"]
    del lf
    return {
        "total": finished - started,
        "stages": _stages(steps, started, finished),
        "peak": {"process": common.lifetime_peak_rss_bytes()},
        "pairs": info["pairs"],
        "matches": info["matches"],
        "quality": _quality(out / "result.parquet"),
    }


def run_dask(data: Path, out: Path, shuffle: str, memory_limit: str) -> dict[str, Any]:
    import dask.dataframe as dd
    import psutil
    from distributed import Client, LocalCluster

    import lsh_frame.dask  # noqa: F401  (registers ddf.lsh)
    from lsh_frame import _progress

    cluster = LocalCluster(
        n_workers=WORKERS,
        threads_per_worker=1,
        memory_limit=memory_limit,
        processes=True,
        dashboard_address=None,
        local_directory=str(out / "dask-worker-space"),
    )
    client = Client(cluster)
    peaks: dict[str, int] = {}
    # The client's RSS by the step it was in (LocalCluster's scheduler runs in
    # the client's process too): which step sets the client's peak.
    by_step: dict[str, int] = {}
    current: list[list[tuple[str, float]]] = []
    me = psutil.Process()
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            steps_now = current[-1] if current else []
            label = steps_now[-1][0].split()[0] if steps_now else "setup"
            by_step[label] = max(by_step.get(label, 0), me.memory_info().rss)
            try:
                for worker, rss in client.run(
                    lambda: psutil.Process().memory_info().rss
                ).items():
                    peaks[worker] = max(peaks.get(worker, 0), rss)
            except Exception:
                pass
            done.wait(0.2)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    ddf = dd.read_parquet(data, index="record_id")
    with _progress.recording() as steps:
        current.append(steps)
        result = ddf.lsh.dedupe(COLUMNS, shuffle_method=shuffle)
    written = out / "result"
    with _progress.recording() as writing:
        current.append(writing)
        _progress.step("writing")
        result.to_parquet(written)
    finished = time.perf_counter()
    done.set()
    sampler.join()
    info = client.compute(result.partitions[0]).result().attrs["lsh_frame"]
    restarts = sum(
        1 for line in str(client.get_worker_logs()).splitlines() if "restart" in line
    )
    client.close()
    cluster.close()
    return {
        "total": finished - started,
        "stages": _stages([*steps, *writing], started, finished),
        "peak": {
            **{f"worker {n}": peak for n, peak in enumerate(peaks.values())},
            "client": common.lifetime_peak_rss_bytes(),
        },
        "pairs": info["pairs"],
        "matches": info["matches"],
        "quality": _quality(written),
        "restarts": restarts,
        "client_by_step": by_step,
    }


#: Issue 43's parity bar: the shared sets and make_customers 200k, on 1, 3, 7 parts.
PARITY_TASKS = ("walmart_amazon", "cora", "historical_50k", "make_customers")
PARITY_PARTITIONS = (1, 3, 7)


def _parity_task(name: str, customers: int) -> Any:
    """The task's tables and columns (the customers without their truth column)."""
    import _datasets

    import lsh_frame as lf

    if name == "make_customers":
        frame = lf.datasets.make_customers(customers, seed=1).drop(columns="entity_id")
        return _datasets.Task(
            f"make_customers {customers:,} dedupe", frame, None, COLUMNS, frame[:0]
        )
    loaded: Any = getattr(_datasets, name)()
    return loaded


def run_parity(customers: int, memory_limit: str) -> dict[str, Any]:
    """``ddf.lsh.pairs`` against ``df.lsh.pairs`` with the defaults, every frame.

    On the same LocalCluster as the scale runs; the pandas frames are the
    computed dask frames (the same values and dtypes). Equal means every pair,
    score, decision and ``attrs`` to the last bit.
    """
    import dask.dataframe as dd
    import pandas as pd
    from distributed import Client, LocalCluster

    import lsh_frame.dask  # noqa: F401  (registers ddf.lsh)

    cluster = LocalCluster(
        n_workers=WORKERS,
        threads_per_worker=1,
        memory_limit=memory_limit,
        processes=True,
        dashboard_address=None,
    )
    client = Client(cluster)
    rows = []
    for name in PARITY_TASKS:
        task = _parity_task(name, customers)
        options: dict[str, Any] = {}
        if task.right is not None and task.right_on is not None:
            options["right_on"] = task.right_on
        want = None
        for parts in PARITY_PARTITIONS:
            left = dd.from_pandas(task.left, npartitions=parts, sort=False)
            right = (
                None
                if task.right is None
                else dd.from_pandas(task.right, npartitions=parts, sort=False)
            )
            if want is None:
                started = time.perf_counter()
                want = left.compute().lsh.pairs(
                    task.columns,
                    **({} if right is None else {"other": right.compute()}),
                    **options,
                )
                pandas_time = time.perf_counter() - started
            started = time.perf_counter()
            got = left.lsh.pairs(
                task.columns, **({} if right is None else {"other": right}), **options
            ).compute()
            dask_time = time.perf_counter() - started
            try:
                pd.testing.assert_frame_equal(got, want, check_exact=True)
                same = got.attrs == want.attrs
            except AssertionError:
                same = False
            rows.append(
                {
                    "task": task.name,
                    "records": task.records,
                    "partitions": parts,
                    "pairs": len(want),
                    "matches": int(want["match"].sum()),
                    "same": same,
                    "pandas": pandas_time,
                    "dask": dask_time,
                }
            )
            print(f"parity: {rows[-1]}", file=sys.stderr, flush=True)
    client.close()
    cluster.close()
    return {"parity": rows}


def _print_parity(rows: list[dict[str, Any]]) -> None:
    print(
        common.markdown_table(
            ["task", "records", "parts", "pairs", "matches", "pandas", "Dask", "same"],
            [
                [
                    row["task"],
                    f"{row['records']:,}",
                    str(row["partitions"]),
                    f"{row['pairs']:,}",
                    f"{row['matches']:,}",
                    f"{row['pandas']:.1f} s",
                    f"{row['dask']:.1f} s",
                    common.pass_miss(row["same"]),
                ]
                for row in rows
            ],
            align="lrrrrrrl",
        )
    )


def _gb(value: int) -> str:
    return f"{value / 1024**3:.2f} GB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 5_000_000])
    parser.add_argument("--pandas-sizes", type=int, nargs="*", default=[1_000_000])
    parser.add_argument("--partition-rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--shuffle", default="tasks")
    parser.add_argument("--memory-limit", default=MEMORY_LIMIT, help="per worker")
    parser.add_argument("--data", type=Path, default=HERE / ".data")
    parser.add_argument("--child", choices=["pandas", "dask", "parity"])
    parser.add_argument(
        "--parity",
        type=int,
        metavar="CUSTOMERS",
        help="only the parity runs (issue 43), make_customers of this size",
    )
    parser.add_argument("--path", type=Path)
    parser.add_argument("--out")
    arguments = parser.parse_args()

    if arguments.child:
        with tempfile.TemporaryDirectory(prefix="lsh_frame_dask_") as folder:
            scratch = Path(folder)
            if arguments.child == "parity":
                result = run_parity(arguments.parity, arguments.memory_limit)
            elif arguments.child == "pandas":
                result = run_pandas(arguments.path, scratch)
            else:
                result = run_dask(
                    arguments.path, scratch, arguments.shuffle, arguments.memory_limit
                )
        Path(arguments.out).write_text(json.dumps(result), encoding="utf8")
        return 0

    log = common.log_to_stderr("dask_scale")
    header = common.report_header(
        "Dask scale-out benchmark", ["dask", "distributed", "pyarrow"]
    )
    if arguments.parity:
        found = common.run_child(
            __file__,
            [
                "--child",
                "parity",
                "--parity",
                str(arguments.parity),
                "--memory-limit",
                arguments.memory_limit,
            ],
        )
        print(header)
        print(
            f"ddf.lsh.pairs(columns) against df.lsh.pairs on a LocalCluster({WORKERS} "
            f"workers × 1 thread, memory_limit {arguments.memory_limit}); same: "
            "every pair, score, decision and attrs equal.\n"
        )
        _print_parity(found["parity"])
        return 0
    runs: dict[tuple[str, int], dict[str, Any]] = {}
    sizes = sorted(set(arguments.sizes) | set(arguments.pandas_sizes))
    for rows in sizes:
        log(f"data: {rows:,} records")
        path = _data(rows, arguments.seed, arguments.partition_rows, arguments.data)
        engines = (["pandas"] if rows in arguments.pandas_sizes else []) + (
            ["dask"] if rows in arguments.sizes else []
        )
        for engine in engines:
            log(f"{engine} on {rows:,} records")
            runs[engine, rows] = common.run_child(
                __file__,
                [
                    "--child",
                    engine,
                    "--path",
                    str(path),
                    "--shuffle",
                    arguments.shuffle,
                    "--memory-limit",
                    arguments.memory_limit,
                ],
            )
            log(f"{engine}: {runs[engine, rows]['total']:.1f} s")
    table = []
    for (engine, rows), run in runs.items():
        quality = run["quality"]
        table.append(
            [
                engine,
                f"{rows:,}",
                f"{run['total']:.1f} s",
                ", ".join(f"{k} {v:.1f}" for k, v in run["stages"].items()),
                ", ".join(f"{k} {_gb(v)}" for k, v in run["peak"].items()),
                f"{run['pairs']:,}",
                f"{run['matches']:,}",
                f"{quality['precision']:.4f} / {quality['recall']:.4f} / "
                f"{quality['f1']:.4f}",
            ]
        )
    print(header)
    print(
        f"Dask: LocalCluster({WORKERS} workers × 1 thread, memory_limit "
        f"{arguments.memory_limit}), shuffle {arguments.shuffle!r}, "
        "Parquet partitions of "
        f"{arguments.partition_rows:,} rows.\n"
    )
    print(
        common.markdown_table(
            [
                "engine",
                "records",
                "total",
                "stages (s)",
                "peak memory",
                "candidate pairs",
                "matches",
                "clusters P / R / F1",
            ],
            table,
            align="llrllrrl",
        )
    )
    print("\nTargets:")
    for (engine, rows), run in runs.items():
        if engine != "dask":
            continue
        pandas = runs.get(("pandas", rows))
        if pandas is not None:
            same = (
                pandas["quality"] == run["quality"]  # includes the ids' digest
                and pandas["pairs"] == run["pairs"]
                and pandas["matches"] == run["matches"]
            )
            print(
                f"- {rows:,}: same candidate pairs, matches and entity id of every "
                f"row as pandas (digest of all ids): {common.pass_miss(same)}"
            )
            ratio = run["total"] / pandas["total"]
            print(
                f"- {rows:,}: Dask ≤ 2× pandas wall time: {ratio:.2f}× — "
                f"{common.pass_miss(ratio <= 2)}"
            )
        reference = runs.get(("pandas", 1_000_000))
        if rows >= 5_000_000 and reference is not None:
            gap = run["quality"]["f1"] - reference["quality"]["f1"]
            print(
                f"- {rows:,} in ≤ 30 min: {run['total'] / 60:.1f} min — "
                f"{common.pass_miss(run['total'] <= 1800)}; F1 within 0.005 of "
                f"pandas at 1M: {run['quality']['f1']:.4f} vs "
                f"{reference['quality']['f1']:.4f} — "
                f"{common.pass_miss(gap >= -0.005)}"
            )
        if rows >= 5_000_000:
            workers = max(v for k, v in run["peak"].items() if k.startswith("worker"))
            client = run["peak"]["client"]
            print(
                f"- {rows:,} (issue 43): client peak {_gb(client)} ≤ 2 GB — "
                f"{common.pass_miss(client <= CLIENT_PEAK)}; each worker ≤ 8 GB "
                f"(largest {_gb(workers)}) — "
                f"{common.pass_miss(workers <= WORKER_PEAK)}; "
                f"pairs F1 ≥ {MIN_F1}: {run['quality']['f1']:.4f} — "
                f"{common.pass_miss(run['quality']['f1'] >= MIN_F1)}"
            )
        if run.get("client_by_step"):
            print(
                f"- {rows:,}: client RSS peak by step: "
                + ", ".join(f"{k} {_gb(v)}" for k, v in run["client_by_step"].items())
            )
        if run.get("restarts"):
            print(f"- {rows:,}: worker restarts logged: {run['restarts']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
