"""Threshold keys against top-k on embeddings (the table in docs/simhash.md).

Run from the repository root:

    python docs/scripts/embedding_blocking.py        # 20,000 vectors, a minute

Data: 20,000 clustered 384-d float32 vectors (the generator of
benchmarks/simhash.py: 1,000 centres plus noise). The pairs to find are each
vector's exact 10 nearest by cosine. For random-hyperplane threshold keys
(``Field("emb", blocking="cosine", threshold=t)``, planned for recall 0.95 at
``t``) and for ``lf.cosine_nearest(top=10)``: candidate pairs per record and the
share of the true top-10 pairs found.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

import lsh_frame as lf


def _benchmark_vectors():  # type: ignore[no-untyped-def]
    """Load the vector generator of benchmarks/simhash.py (its name is taken)."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "simhash.py"
    sys.path.insert(0, str(path.parent))
    spec = importlib.util.spec_from_file_location("simhash_benchmark", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.vectors


vectors = _benchmark_vectors()

N = 20_000


def main() -> None:
    """Print the table."""
    data = vectors(N)
    unit = data / np.linalg.norm(data, axis=1, keepdims=True)
    truth = set()
    cosines = []
    for start in range(0, N, 2_000):
        scores = unit[start : start + 2_000] @ unit.T
        rows = np.arange(scores.shape[0])
        scores[rows, start + rows] = -2
        top = np.argpartition(-scores, 10, axis=1)[:, :10]
        cosines.append(np.take_along_axis(scores, top, axis=1))
        for row, neighbours in enumerate(top):
            for other in neighbours:
                truth.add((min(start + row, int(other)), max(start + row, int(other))))
    tenth = np.sort(np.concatenate(cosines), axis=1)[:, 0]
    print(
        f"{N:,} vectors; cosine of the 10th neighbour: median {np.median(tenth):.2f}, "
        f"5th percentile {np.percentile(tenth, 5):.2f}; {len(truth):,} true pairs"
    )
    frame = pd.DataFrame({"emb": pd.Series(list(data), dtype=object)})
    print("| blocking | candidate pairs per record | top-10 pairs found | seconds |")
    print("|---|---|---|---|")
    for threshold in (0.7, 0.6, 0.5, 0.4):
        start = time.perf_counter()
        try:
            pairs = frame.lsh.candidates(
                [lf.Field("emb", blocking="cosine", threshold=threshold)],
                max_pairs=20_000_000,
            )
        except lf.TooManyPairsError:
            print(f"| cosine key, threshold {threshold} | > 1,000 | | |")
            continue
        seconds = time.perf_counter() - start
        found = set(zip(pairs["left"], pairs["right"], strict=True))
        print(
            f"| cosine key, threshold {threshold} | {len(pairs) / N:,.1f} | "
            f"{len(found & truth) / len(truth):.3f} | {seconds:.1f} |"
        )
    start = time.perf_counter()
    nearest = lf.cosine_nearest(frame["emb"], top=10)
    seconds = time.perf_counter() - start
    found = {
        (min(a, b), max(a, b))
        for a, b in zip(nearest["left"], nearest["right"], strict=True)
    }
    print(
        f"| cosine_nearest, top=10 | {len(found) / N:,.1f} | "
        f"{len(found & truth) / len(truth):.3f} | {seconds:.1f} |"
    )


if __name__ == "__main__":
    main()
