"""Run pyJedAI's filtering methods on one link; print JSON lines (see filtering.py).

Runs in an interpreter that has pyJedAI (its dependencies are heavy: give
``filtering.py --pyjedai-python`` a separate environment's python). Reads the
two tables and the truth from CSV files written by ``filtering.py`` (columns
``id`` and the compared columns; truth ``left``/``right``), and prints one JSON
object per configuration: method, settings, candidate pairs, true pairs found,
seconds.

    python _pyjedai_runner.py left.csv right.csv truth.csv name,description,price
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import time
import warnings

import pandas as pd

warnings.simplefilter("ignore")


def main() -> None:
    left_path, right_path, truth_path, columns = sys.argv[1:5]
    attributes = columns.split(",")
    left = pd.read_csv(left_path, dtype=str).fillna("")
    right = pd.read_csv(right_path, dtype=str).fillna("")
    truth = pd.read_csv(truth_path, dtype=str)
    wanted = set(zip(truth["left"], truth["right"], strict=True))

    from pyjedai.block_building import StandardBlocking
    from pyjedai.block_cleaning import BlockFiltering, BlockPurging
    from pyjedai.comparison_cleaning import (
        CardinalityNodePruning,
        ComparisonPropagation,
        WeightedNodePruning,
    )
    from pyjedai.datamodel import Data
    from pyjedai.joins import TopKJoin

    data = Data(
        dataset_1=left,
        id_column_name_1="id",
        attributes_1=attributes,
        dataset_2=right,
        id_column_name_2="id",
        attributes_2=attributes,
    )
    left_ids = data.dataset_1["id"].to_numpy()
    right_ids = data.dataset_2["id"].to_numpy()
    limit = data.dataset_limit

    def labelled(first: int, second: int) -> tuple[str, str]:
        low, high = min(first, second), max(first, second)
        return str(left_ids[low]), str(right_ids[high - limit])

    def report(method: str, settings: dict, pairs: set, seconds: float) -> None:
        found = len(pairs & wanted)
        print(
            json.dumps(
                {
                    "method": method,
                    "settings": settings,
                    "candidates": len(pairs),
                    "found": found,
                    "seconds": round(seconds, 2),
                }
            ),
            flush=True,
        )

    quiet = contextlib.redirect_stderr(io.StringIO())
    # Standard blocking workflow: token blocks, purging, filtering, then
    # comparison cleaning (propagation or meta-blocking), as the benchmark
    # tunes it.
    with quiet:
        start = time.perf_counter()
        blocks = StandardBlocking().build_blocks(data, tqdm_disable=True)
        blocks = BlockPurging().process(blocks, data, tqdm_disable=True)
        built = time.perf_counter() - start
    for ratio in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0):
        with quiet:
            start = time.perf_counter()
            filtered = BlockFiltering(ratio=ratio).process(
                blocks, data, tqdm_disable=True
            )
            filtering = time.perf_counter() - start
        cleaners = [("CP", None, ComparisonPropagation)]
        for scheme in ("CBS", "ECBS", "JS", "EJS", "X2"):
            cleaners.append(("CNP", scheme, CardinalityNodePruning))
            cleaners.append(("WNP", scheme, WeightedNodePruning))
        for name, scheme, cleaner in cleaners:
            with quiet:
                start = time.perf_counter()
                method = (
                    cleaner() if scheme is None else cleaner(weighting_scheme=scheme)
                )
                try:
                    candidates = method.process(filtered, data, tqdm_disable=True)
                except Exception:  # a scheme this version cannot run
                    continue
                seconds = built + filtering + time.perf_counter() - start
            pairs = {
                labelled(first, second)
                for first, others in candidates.items()
                for second in others
            }
            report(
                "standard blocking workflow",
                {"filtering": ratio, "cleaning": name, "weights": scheme},
                pairs,
                seconds,
            )
    # kNN-Join: each right record's K most similar left records.
    for tokenization, qgrams in (("qgrams", 3), ("standard", 1)):
        for k in (1, 2, 3, 5, 8, 10, 15, 20, 30):
            with quiet:
                start = time.perf_counter()
                join = TopKJoin(
                    K=k, metric="cosine", tokenization=tokenization, qgrams=qgrams
                )
                graph = join.fit(data, tqdm_disable=True)
                seconds = time.perf_counter() - start
            pairs = {labelled(int(a), int(b)) for a, b in graph.edges()}
            report(
                "kNN-Join",
                {"K": k, "tokens": tokenization if qgrams == 1 else f"{qgrams}-grams"},
                pairs,
                seconds,
            )


if __name__ == "__main__":
    main()
