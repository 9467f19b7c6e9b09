"""Connected components of matched pairs on Dask: collect when small, else stars.

Records are numbered by their rank in label order (the left table first), as
in :func:`lsh_frame.resolve.cluster.component_ids`, so a component's smallest number
is its first record in label order and numbering the components by it gives
the pandas path's ids.

- Up to ``COLLECT_EDGES`` matched pairs, the pairs' two numbers are gathered
  on the client and the pandas union-find runs there (16 bytes per pair).
- Above it, the alternating large-star / small-star algorithm (Kiveris et al.,
  "Connected Components in MapReduce and Beyond", 2014) runs on the cluster:
  large-star links every neighbour larger than a node to the smallest node
  of its neighbourhood, small-star links a node and its smaller neighbours to
  the smallest of them; repeated until nothing changes, every node points at
  its component's smallest node. Only (node, smallest node) of the records
  that have a match come back to the client.
"""

from __future__ import annotations

from typing import Any

import dask.dataframe as dd
import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed

from lsh_frame._kernels.components import components, first_appearance_ids
from lsh_frame.dask._tables import compute, persist

#: Matched pairs gathered on the client at most; more run large/small-star.
COLLECT_EDGES = 20_000_000
#: Rounds of large-star then small-star before giving up (they converge in
#: O(log n) rounds; record clusters are small and need a handful).
_MAX_ROUNDS = 64


def _meta() -> pd.DataFrame:
    return pd.DataFrame({"u": np.empty(0, np.int64), "v": np.empty(0, np.int64)})


def _large_star(edges: dd.DataFrame, partitions: int, method: str) -> dd.DataFrame:
    """Link each node's larger neighbours to the smallest node around it."""
    both = dd.concat([edges, edges.rename(columns={"u": "v", "v": "u"})])
    smallest = both.groupby("u").v.min(split_out=partitions, shuffle_method=method)
    joined = both.merge(
        smallest.rename("m").to_frame(),
        left_on="u",
        right_index=True,
        shuffle_method=method,
    )
    return joined.map_partitions(_larger_to_smallest, meta=_meta())


def _larger_to_smallest(part: pd.DataFrame) -> pd.DataFrame:
    u = part["u"].to_numpy(np.int64)
    v = part["v"].to_numpy(np.int64)
    m = np.minimum(part["m"].to_numpy(np.int64), u)
    larger = v > u
    return pd.DataFrame({"u": v[larger], "v": m[larger]})


def _small_star(edges: dd.DataFrame, partitions: int, method: str) -> dd.DataFrame:
    """Link each node and its smaller neighbours to the smallest of them."""
    oriented = edges.map_partitions(_oriented, meta=_meta())
    smallest = oriented.groupby("u").v.min(split_out=partitions, shuffle_method=method)
    joined = oriented.merge(
        smallest.rename("m").to_frame(),
        left_on="u",
        right_index=True,
        shuffle_method=method,
    )
    return joined.map_partitions(_smaller_to_smallest, meta=_meta())


def _oriented(part: pd.DataFrame) -> pd.DataFrame:
    """Edges as (larger node, smaller node), without self loops."""
    u = part["u"].to_numpy(np.int64)
    v = part["v"].to_numpy(np.int64)
    keep = u != v
    return pd.DataFrame({"u": np.maximum(u, v)[keep], "v": np.minimum(u, v)[keep]})


def _smaller_to_smallest(part: pd.DataFrame) -> pd.DataFrame:
    u = part["u"].to_numpy(np.int64)
    v = part["v"].to_numpy(np.int64)
    m = np.minimum(part["m"].to_numpy(np.int64), u)
    moved = v != m
    return pd.DataFrame(
        {"u": np.concatenate([v[moved], u]), "v": np.concatenate([m[moved], m])}
    )


def _distinct(part: pd.DataFrame) -> pd.DataFrame:
    return part.drop_duplicates(ignore_index=True)


def _checksum(part: pd.DataFrame) -> tuple[int, int]:
    """Order-free summary of a partition's edges (count, hash sum)."""
    mixed = pd.util.hash_pandas_object(part, index=False).to_numpy(np.uint64)
    return len(part), int(np.bitwise_xor.reduce(mixed)) if mixed.size else 0


def stars(edges: list[Any], method: str) -> pd.DataFrame:
    """(node, smallest node of its component) for every node of the edges."""
    partitions = max(1, len(edges))
    frame = dd.from_delayed(edges, meta=_meta(), verify_meta=False)
    frame = frame.map_partitions(_oriented, meta=_meta())
    previous = None
    for _ in range(_MAX_ROUNDS):
        frame = _large_star(frame, partitions, method)
        frame = _small_star(frame, partitions, method)
        frame = frame.shuffle(on="u", npartitions=partitions, shuffle_method=method)
        frame = frame.map_partitions(_distinct, meta=_meta())
        parts = persist(list(frame.to_delayed()))
        summary = compute(*[delayed(_checksum)(part) for part in parts])
        state = (
            sum(count for count, _ in summary),
            int(np.bitwise_xor.reduce(np.array([s for _, s in summary], np.uint64)))
            if summary
            else 0,
        )
        if state == previous:
            break
        previous = state
        frame = dd.from_delayed(parts, meta=_meta(), verify_meta=False)
    else:
        raise RuntimeError("Connected components did not converge.")
    links = pd.concat(compute(*parts), ignore_index=True)
    return links


def head_ids(
    nodes: int,
    first: npt.NDArray[np.int64] | None,
    second: npt.NDArray[np.int64] | None,
    links: pd.DataFrame | None,
) -> npt.NDArray[np.int64]:
    """Entity id of every node (in rank order), from edges or from star links."""
    if links is None:
        assert first is not None and second is not None
        return first_appearance_ids(components(nodes, first, second))
    head = np.arange(nodes, dtype=np.int64)
    np.minimum.at(head, links["u"].to_numpy(np.int64), links["v"].to_numpy(np.int64))
    return first_appearance_ids(head)
