"""The neighbours key alone: each record's most similar records, at scale.

    python benchmarks/neighbours.py                     # 1M records, compiled kernels
    python benchmarks/neighbours.py --kernels compiled numpy --n 100000

Times ``lsh_frame.block.neighbours.neighbour_pairs`` (tokens, vocabulary, the
budgeted look-ups, the kept pairs) on the eight text columns of
``make_customers(n, seed=1)``, each kernel choice in its own fresh process
(``LSH_FRAME_KERNELS``), best and median of ``--repeat`` runs. The pairs of the
choices are compared: the kernels must give the same ones. Target (issue 40):
1M records in ≤ 3 s.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

import _common as common

HERE = Path(__file__).resolve().parent


def run_child(n: int, repeat: int) -> dict[str, Any]:
    """Time the key on ``make_customers(n)`` with the kernels of this process."""
    import numpy as np

    import lsh_frame as lf
    from lsh_frame._kernels import native
    from lsh_frame.block.neighbours import neighbour_pairs
    from lsh_frame.datasets.customers import TEXT_COLUMNS

    people = lf.datasets.make_customers(n, seed=1)[list(TEXT_COLUMNS)]
    measurement, found = common.measure(
        lambda: neighbour_pairs([people], list(TEXT_COLUMNS), owner="benchmark"),
        repeat=repeat,
        log=common.log_to_stderr("neighbours"),
    )
    digest = hashlib.sha256()
    for part in (found.left, found.right, found.cosine, found.kept_per_record):
        digest.update(np.ascontiguousarray(part).tobytes())
    return {
        "kernels": native.kernels_in_use()["kernels"],
        "seconds": measurement.seconds,
        "peak_rss": measurement.peak_rss,
        "others": measurement.other_cores,
        "pairs": int(found.left.size),
        "work": int(found.work),
        "digest": digest.hexdigest(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--kernels", nargs="+", default=["compiled"], choices=["compiled", "numpy"]
    )
    parser.add_argument("--child", action="store_true")
    parser.add_argument("--out")
    arguments = parser.parse_args()
    if arguments.child:
        result = run_child(arguments.n, arguments.repeat)
        Path(arguments.out).write_text(json.dumps(result), encoding="utf8")
        return 0
    header = common.report_header("Neighbours key benchmark", [])
    runs = {}
    for kernels in arguments.kernels:
        os.environ["LSH_FRAME_KERNELS"] = kernels
        runs[kernels] = common.run_child(
            HERE / "neighbours.py",
            ["--child", "--n", str(arguments.n), "--repeat", str(arguments.repeat)],
        )
    rows = [
        [
            name,
            f"{arguments.n:,}",
            f"{min(run['seconds']):.2f}",
            f"{statistics.median(run['seconds']):.2f}",
            f"{run['peak_rss'] / 1e9:.2f} GB",
            f"{run['pairs']:,}",
            f"{run['work']:,}",
            ", ".join(f"{other:.2f}" for other in run["others"] if other is not None),
        ]
        for name, run in runs.items()
    ]
    print(header)
    print(
        common.markdown_table(
            [
                "kernels",
                "records",
                "best (s)",
                "median (s)",
                "peak RSS",
                "pairs",
                "postings visited",
                "others' cores per run",
            ],
            rows,
            "llrrrrrl",
        )
    )
    digests = {run["digest"] for run in runs.values()}
    print()
    if len(runs) > 1:
        print(f"- Same pairs and cosines with every kernel: {len(digests) == 1}")
    if "compiled" in runs and arguments.n >= 1_000_000:
        best = min(runs["compiled"]["seconds"])
        verdict = common.pass_miss(best <= 3)
        print(f"- 1M records in ≤ 3 s: best {best:.2f} s — {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
