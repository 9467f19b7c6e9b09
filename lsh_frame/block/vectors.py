"""Nearest neighbours of float vectors by cosine, and the vectors' neighbour key.

Spherical k-means cuts the vectors into cells; each query probes its nearest
cells and keeps its ``top`` most similar vectors there (:func:`cosine_nearest`).
:func:`key_neighbours` is the blocking key built on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame.block.neighbours import DEDUPE, LINK, NeighbourPairs, neighbour_pairs
from lsh_frame.errors import ConfigTypeError, TooManyPairsError
from lsh_frame.sketch.vectors import VECTOR_KINDS, _check_width, float_matrix

__all__ = ["cosine_nearest", "key_neighbours"]


#: Rows of a similarity block computed at a time (bounds its memory).
_BLOCK_ROWS = 4_096


def _spherical_kmeans(
    vectors: npt.NDArray[np.float32], clusters: int, seed: int, iterations: int = 6
) -> npt.NDArray[np.float32]:
    """Find unit centroids of ``clusters`` groups of unit vectors (seeded)."""
    rng = np.random.default_rng([seed, 0x4B4D])
    sample_size = min(vectors.shape[0], 16 * clusters)
    sample = vectors[rng.choice(vectors.shape[0], sample_size, replace=False)]
    centroids = sample[rng.choice(sample_size, clusters, replace=False)].copy()
    for _ in range(iterations):
        nearest = np.argmax(sample @ centroids.T, axis=1)
        order = np.argsort(nearest, kind="stable")
        starts = np.searchsorted(nearest[order], np.arange(clusters))
        filled = np.diff(np.append(starts, sample_size)) > 0
        sums = np.zeros_like(centroids)
        sums[filled] = np.add.reduceat(sample[order], starts[filled], axis=0)
        norms = np.linalg.norm(sums, axis=1)
        empty = norms == 0
        # An empty cluster restarts at a random sample vector.
        sums[empty] = sample[rng.choice(sample_size, int(empty.sum()))]
        norms[empty] = 1.0
        centroids = (sums / norms[:, None]).astype(np.float32)
    return centroids


def _nearest_centroids(
    vectors: npt.NDArray[np.float32], centroids: npt.NDArray[np.float32], count: int
) -> npt.NDArray[np.int64]:
    """Find the ``count`` most similar centroids of every vector, in blocks."""
    result = np.empty((vectors.shape[0], count), dtype=np.int64)
    for start in range(0, vectors.shape[0], _BLOCK_ROWS * 4):
        similarity = vectors[start : start + _BLOCK_ROWS * 4] @ centroids.T
        if count < centroids.shape[0]:
            part = np.argpartition(-similarity, count - 1, axis=1)[:, :count]
        else:
            part = np.broadcast_to(np.arange(count), similarity.shape)
        result[start : start + _BLOCK_ROWS * 4] = part
    return result


def top_k_neighbours(
    queries: npt.NDArray[np.float32],
    index: npt.NDArray[np.float32] | None,
    *,
    top: int,
    probes: int,
    clusters: int | None,
    seed: int,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]:
    """Approximate ``top`` most cosine-similar rows of ``index`` for each query.

    An inverted file: the index is cut into ``clusters`` groups by spherical
    k-means; each query is compared exactly (matrix products) with the members
    of its ``probes`` nearest groups, and the best ``top`` are kept. With
    ``probes == clusters`` the result is exact. Without ``index`` the queries
    search themselves and never find their own row.

    Returns ``(neighbours, similarity)``, both ``(n, k)``, best first, where
    ``k`` is ``top`` capped at the rows a query can find (the index's, less
    itself when searching itself): the arrays merged per probed cluster are
    ``n × k``, so a ``top`` beyond the table's size would only cost time and
    memory. Slots with no neighbour hold -1 and -inf.
    """
    self_search = index is None
    base = queries if index is None else index
    n_index = base.shape[0]
    n_queries = queries.shape[0]
    top = max(1, min(top, n_index - 1 if self_search else n_index))
    best_index = np.full((n_queries, top), -1, dtype=np.int64)
    best_score = np.full((n_queries, top), -np.inf, dtype=np.float32)
    if n_index == 0 or n_queries == 0:
        return best_index, best_score
    if clusters is None:
        clusters = max(1, round(4 * float(np.sqrt(n_index))))
    clusters = min(clusters, n_index)
    probes = min(probes, clusters)
    centroids = _spherical_kmeans(base, clusters, seed)
    home = _nearest_centroids(base, centroids, 1)[:, 0]
    members_order = np.argsort(home, kind="stable")
    member_starts = np.searchsorted(home[members_order], np.arange(clusters + 1))
    probed = _nearest_centroids(queries, centroids, probes)
    probe_query = np.repeat(np.arange(n_queries), probes)
    probe_cluster = probed.reshape(-1)
    by_cluster = np.argsort(probe_cluster, kind="stable")
    query_starts = np.searchsorted(probe_cluster[by_cluster], np.arange(clusters + 1))
    for cluster in range(clusters):
        members = members_order[member_starts[cluster] : member_starts[cluster + 1]]
        asking = probe_query[
            by_cluster[query_starts[cluster] : query_starts[cluster + 1]]
        ]
        if members.size == 0 or asking.size == 0:
            continue
        member_vectors = base[members]
        for start in range(0, asking.size, _BLOCK_ROWS):
            rows = asking[start : start + _BLOCK_ROWS]
            scores = queries[rows] @ member_vectors.T
            if self_search:
                scores[rows[:, None] == members[None, :]] = -np.inf
            keep = min(top, members.size)
            if keep < members.size:
                part = np.argpartition(-scores, keep - 1, axis=1)[:, :keep]
            else:
                part = np.broadcast_to(np.arange(keep), (rows.size, keep))
            new_scores = np.take_along_axis(scores, part, axis=1)
            merged_score = np.concatenate([best_score[rows], new_scores], axis=1)
            merged_index = np.concatenate([best_index[rows], members[part]], axis=1)
            order = np.argsort(-merged_score, axis=1, kind="stable")[:, :top]
            best_score[rows] = np.take_along_axis(merged_score, order, axis=1)
            best_index[rows] = np.take_along_axis(merged_index, order, axis=1)
    best_index[~np.isfinite(best_score)] = -1
    return best_index, best_score


def cosine_nearest(
    queries: pd.Series,
    index: pd.Series | None = None,
    /,
    *,
    top: int = 10,
    probes: int = 24,
    clusters: int | None = None,
    seed: int = 1,
) -> pd.DataFrame:
    """Find the ``top`` most cosine-similar vectors of each: a per-record budget.

    Threshold keys (``Field(..., blocking="cosine")``) find every pair above a
    cosine, however many that is; on embeddings, where unrelated records
    often sit at cosine 0.5–0.8, a threshold low enough to find the true
    pairs admits very many others. A top-k search gives every record the same
    budget: its ``top`` nearest records.

    The search is an inverted file (see :func:`top_k_neighbours`): spherical
    k-means into ``clusters`` groups (``4 sqrt(n)`` by default, trained on a
    seeded sample), then exact cosines against the members of each query's
    ``probes`` nearest groups. More probes: higher recall, more time;
    ``probes >= clusters`` is exact.

    Parameters
    ----------
    queries : Series of vectors
        Float vectors (Arrow lists or numpy arrays in an object column).
    index : Series of vectors, optional
        The vectors to search; without it each query searches the others
        (dedupe) and never returns itself.
    top : int
        Neighbours per query (at most the vectors searched: a larger ``top``
        costs nothing more).
    probes, clusters, seed : int
        The inverted file's settings (see above).

    Returns
    -------
    DataFrame
        ``left`` (query label), ``right`` (neighbour label), ``cosine``
        (float32) and ``rank`` (1 for the nearest), sorted by query position
        and rank. Missing or all-zero vectors find and are found by nothing.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> vectors = pd.Series([np.array([1.0, 0.0]), np.array([0.9, 0.1]),
    ...                      np.array([0.0, 1.0])])
    >>> cosine_nearest(vectors, top=1).round(3)
       left  right  cosine  rank
    0     0      1   0.994     1
    1     1      0   0.994     1
    2     2      1   0.110     1
    """
    from lsh_frame._validation import check_int

    owner = "cosine_nearest"
    top = check_int(top, "top", owner, minimum=1)
    probes = check_int(probes, "probes", owner, minimum=1)
    seed = check_int(seed, "seed", owner, minimum=0)
    if clusters is not None:
        clusters = check_int(clusters, "clusters", owner, minimum=1)
    for role, value in (("queries", queries), ("index", index)):
        if value is not None and not isinstance(value, pd.Series):
            raise ConfigTypeError(
                f"The '{role}' argument of {owner} must be a pandas Series of "
                f"vectors. Got {type(value).__name__} instead."
            )
    query_vectors, query_valid = float_matrix(queries, column="queries", owner=owner)
    query_rows = np.flatnonzero(query_valid)
    if index is None:
        index_vectors, index_rows, labels = None, query_rows, queries.index
    else:
        vectors, valid = float_matrix(index, column="index", owner=owner)
        _check_width(query_vectors.shape[1], vectors.shape[1], "vectors", owner)
        index_rows = np.flatnonzero(valid)
        index_vectors, labels = vectors[index_rows], index.index
    neighbours, scores = top_k_neighbours(
        query_vectors[query_rows], index_vectors, top=top, probes=probes,
        clusters=clusters, seed=seed,
    )  # fmt: skip
    found = neighbours >= 0
    width = neighbours.shape[1]  # top, capped at the vectors there are
    query = np.repeat(query_rows, width).reshape(-1, width)[found]
    rank = np.broadcast_to(np.arange(1, width + 1), neighbours.shape)[found]
    return pd.DataFrame(
        {
            "left": queries.index.take(query),
            "right": labels.take(index_rows[neighbours[found]]),
            "cosine": scores[found],
            "rank": rank.astype(np.int64),
        }
    )


@dataclass(frozen=True)
class VectorNeighbourPairs(NeighbourPairs):
    """The pairs of a top-k cosine key (a neighbours key over float vectors)."""

    top: int = 10

    def describe(self) -> str:
        """One line on what was decided."""
        return (
            f"top-{self.top} cosine key: each record's {self.top} most cosine-"
            f"similar records (inverted file, exact cosines); {self.left.size:,} pairs"
        )


def key_neighbours(
    frames: list[pd.DataFrame],
    spec: Any,
    *,
    owner: str,
    max_pairs: int | None = None,
    seed: int = 1,
) -> NeighbourPairs:
    """Pairs of a neighbours-style key: token neighbours, or top-k vectors.

    A field with ``blocking="cosine"`` and ``top`` gives each record its ``top``
    most cosine-similar records (both ways when linking); any other
    ``"neighbours"`` field goes to :func:`lsh_frame.block.neighbours.neighbour_pairs`.
    """
    if spec.blocking not in VECTOR_KINDS:
        return neighbour_pairs(frames, spec.columns, owner=owner, max_pairs=max_pairs)
    (column,) = spec.columns
    read = [float_matrix(frame[column], column=column, owner=owner) for frame in frames]
    rows = [np.flatnonzero(valid) for _, valid in read]
    top = int(spec.top)
    link = len(frames) == 2
    if link:
        _check_width(read[0][0].shape[1], read[1][0].shape[1], column, owner)
    searches = [(0, 1), (1, 0)] if link else [(0, 0)]
    lefts, rights, cosines = [], [], []
    for query_side, index_side in searches:
        neighbours, scores = top_k_neighbours(
            read[query_side][0][rows[query_side]],
            None if not link else read[index_side][0][rows[index_side]],
            top=top, probes=24, clusters=None, seed=seed,
        )  # fmt: skip
        found = neighbours >= 0
        width = neighbours.shape[1]  # top, capped at the vectors there are
        query = np.repeat(rows[query_side], width).reshape(-1, width)[found]
        match = rows[index_side][neighbours[found]]
        if query_side == 1:
            query, match = match, query
        lefts.append(query)
        rights.append(match)
        cosines.append(scores[found].astype(np.float64))
    left, right = np.concatenate(lefts), np.concatenate(rights)
    cosine = np.concatenate(cosines)
    if not link:
        left, right = np.minimum(left, right), np.maximum(left, right)
    width = len(frames[-1])
    code = left * max(width, 1) + right
    code, first = np.unique(code, return_index=True)
    left, right, cosine = left[first], right[first], cosine[first]
    if max_pairs is not None and left.size > max_pairs:
        raise TooManyPairsError(
            f"The top-{top} cosine key of {owner} found {left.size:,} pairs, more "
            f"than max_pairs={max_pairs:,}. Lower 'top' or raise max_pairs."
        )
    kept = np.bincount(np.concatenate([left, right]), minlength=len(frames[0]))
    return VectorNeighbourPairs(
        left=left,
        right=right,
        cosine=cosine,
        keyed=[valid for _, valid in read],
        cap=0,
        work=0,
        kept_per_record=kept,
        budget=LINK if link else DEDUPE,
        top=top,
    )
