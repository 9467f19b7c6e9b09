"""Blocking keys and comparisons for columns of bit vectors and float vectors.

Two LSH families, banded exactly like MinHash signatures (see :mod:`lsh_frame.lsh`):

- ``blocking="hamming"`` — **bit sampling** (Indyk and Motwani) on a column of
  fingerprints or bit vectors of ``D`` bits: a hash is one bit at a random
  position, so two vectors at Hamming distance ``d`` agree on it with
  probability ``1 − d / D``.
- ``blocking="cosine"`` — **random hyperplanes** (Charikar) on a column of
  float vectors: a hash is the side of a random hyperplane a vector lies on, so
  two vectors at angle ``θ`` agree with probability ``1 − θ / π``.

``bands × rows`` such hashes make ``bands`` keys per record; a pair is a
candidate when all ``rows`` hashes of some band agree. :func:`lsh_frame.plan`
with ``metric="hamming"`` or ``"cosine"`` maps the field's threshold to that
per-hash probability and plans ``bands × rows`` for the recall asked, so the
promise is the same as for MinHash: a pair at the threshold is found with at
least that probability.

Accepted columns: for ``"hamming"``, a SimHash Series (:func:`lsh_frame.simhash`),
integers (64-bit fingerprints), Arrow ``fixed_size_list<bool or integer 0/1>``
or numpy bool / 0-1 arrays in an object column; for ``"cosine"``, Arrow
``fixed_size_list`` or ``list`` of floats, or numpy arrays (or lists) of
floats in an object column. Every row must have the same length; missing rows
(and all-zero float vectors) get no key and a missing score.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from lsh_frame._kernels.hashing import splitmix64
from lsh_frame.errors import (
    ColumnTypeError,
    ConfigError,
    ConfigTypeError,
    SignatureMismatchError,
    TooManyPairsError,
)
from lsh_frame.neighbours import DEDUPE, LINK, NeighbourPairs, neighbour_pairs

__all__ = [
    "VECTOR_KINDS",
    "band_keys_from_bits",
    "bit_matrix",
    "check_vector_width",
    "cosine_nearest",
    "float_matrix",
    "hyperplane_bits",
    "key_neighbours",
    "sampled_bits",
    "vector_scores",
]

#: The blocking kinds (and comparisons) of this module.
VECTOR_KINDS = ("hamming", "cosine")
#: Rows of float vectors projected at a time (bounds the temporary matrix).
_PROJECT_ROWS = 65_536
_BAND_MIX = np.uint64(0x9E3779B97F4A7C15)


# ----------------------------------------------------------------------------
# Reading columns


def _pack_rows(bits: npt.NDArray[Any]) -> npt.NDArray[np.uint64]:
    """Pack an ``(n, D)`` 0/1 matrix into ``(n, ceil(D / 64))`` uint64 words."""
    n, width = bits.shape
    words = -(-width // 64)
    padded = np.zeros((n, words * 64), dtype=np.uint8)
    padded[:, :width] = bits != 0
    packed = np.packbits(padded, axis=1, bitorder="little")
    return np.ascontiguousarray(packed).view("<u8").astype(np.uint64).reshape(n, words)


def _list_values(
    values: pd.Series, column: Hashable, owner: str
) -> tuple[npt.NDArray[Any], npt.NDArray[np.bool_]] | None:
    """Return a list-like column as an ``(n, width)`` array (None if it is not)."""
    arrow_type = getattr(values.dtype, "pyarrow_dtype", None)
    valid = ~values.isna().to_numpy()
    if arrow_type is not None and (
        pa.types.is_fixed_size_list(arrow_type)
        or pa.types.is_list(arrow_type)
        or pa.types.is_large_list(arrow_type)
    ):
        array = values.array._pa_array.combine_chunks()
        if isinstance(array, pa.ExtensionArray):
            return None
        lengths = pa.compute.list_value_length(array).to_numpy(zero_copy_only=False)
        present = lengths[valid]
        width = int(present[0]) if present.size else 0
        if present.size and (present != width).any():
            raise _ragged(column, owner, present)
        flat = pa.compute.list_flatten(array.filter(pa.array(valid)))
        matrix = np.zeros((len(values), width), dtype=flat.type.to_pandas_dtype())
        if width:
            matrix[valid] = flat.to_numpy(zero_copy_only=False).reshape(-1, width)
        return matrix, valid
    if values.dtype == object:
        present = values[valid]
        if present.empty:
            return np.zeros((len(values), 0)), valid
        first = present.iloc[0]
        if not isinstance(first, (np.ndarray, list, tuple)):
            return None
        try:
            stacked = np.stack([np.asarray(item) for item in present.to_numpy()])
        except ValueError:
            lengths = np.array([len(item) for item in present.to_numpy()])
            raise _ragged(column, owner, lengths) from None
        if stacked.ndim != 2:
            return None
        matrix = np.zeros((len(values), stacked.shape[1]), dtype=stacked.dtype)
        matrix[valid] = stacked
        return matrix, valid
    return None


def _ragged(column: Hashable, owner: str, lengths: npt.NDArray[Any]) -> ConfigError:
    shown = ", ".join(str(int(length)) for length in np.unique(lengths)[:5])
    return ConfigError(
        f"Column {column!r} holds vectors of different lengths ({shown}) in "
        f"{owner}. Every vector of a column must have the same length."
    )


def bit_matrix(
    values: pd.Series, *, column: Hashable, owner: str
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_], int]:
    """Read a column of fingerprints or bit vectors: ``(words, valid, bits)``."""
    from lsh_frame.simhash import fingerprint_codes

    listed = _list_values(values, column, owner)
    if listed is not None:
        matrix, valid = listed
        if matrix.dtype.kind not in "biu":
            raise _not_vectors(values, column, owner, "hamming")
        if matrix.size and (matrix.max() > 1 or matrix.min() < 0):
            raise ColumnTypeError(
                f"Column {column!r} holds lists of integers other than 0 and 1, so "
                f"{owner} cannot read them as bit vectors. Use booleans or 0/1."
            )
        return _pack_rows(matrix), valid, matrix.shape[1]
    try:
        codes = fingerprint_codes(values, owner=owner, role=str(column))
    except ColumnTypeError:
        raise _not_vectors(values, column, owner, "hamming") from None
    return codes.matrix, codes.valid, codes.bits


def float_matrix(
    values: pd.Series, *, column: Hashable, owner: str
) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.bool_]]:
    """Read a column of float vectors as unit-length float32 rows.

    Rows that are missing, all zero or not finite are not valid (and zero).
    """
    listed = _list_values(values, column, owner)
    if listed is None or listed[0].dtype.kind not in "fiu":
        raise _not_vectors(values, column, owner, "cosine")
    matrix = listed[0].astype(np.float32)
    valid = listed[1].copy()
    with np.errstate(invalid="ignore", over="ignore"):
        norms = np.linalg.norm(matrix, axis=1)
    valid &= np.isfinite(norms) & (norms > 0)
    matrix[~valid] = 0
    matrix[valid] /= norms[valid, None]
    return matrix, valid


def _not_vectors(
    values: pd.Series, column: Hashable, owner: str, kind: str
) -> ColumnTypeError:
    wanted = (
        "fingerprints (lf.simhash), 64-bit integers or lists of booleans / 0-1"
        if kind == "hamming"
        else "vectors of floats (an Arrow list or fixed_size_list of floats, or "
        "numpy arrays in an object column)"
    )
    return ColumnTypeError(
        f"Column {column!r} has dtype {values.dtype}, but blocking or comparing "
        f"with {kind!r} in {owner} needs {wanted}. Convert the column, or use "
        "blocking='lsh' for text."
    )


# ----------------------------------------------------------------------------
# Hashes and band keys


def sampled_bits(
    words: npt.NDArray[np.uint64], bits: int, count: int, seed: int
) -> npt.NDArray[np.uint8]:
    """``count`` bits per row at positions drawn (with replacement) from ``bits``.

    The positions depend only on ``seed``, ``bits`` and ``count``, so two
    tables sample the same positions.
    """
    positions = np.random.default_rng([seed, bits, 0x5A]).integers(0, bits, count)
    word = positions // 64
    shift = (positions % 64).astype(np.uint64)
    result = np.empty((words.shape[0], count), dtype=np.uint8)
    # In blocks of rows: the gathered uint64 words are 8 bytes per sampled bit.
    for start in range(0, words.shape[0], _PROJECT_ROWS):
        block = words[start : start + _PROJECT_ROWS, word] >> shift
        result[start : start + _PROJECT_ROWS] = block & np.uint64(1)
    return result


def hyperplane_bits(
    vectors: npt.NDArray[np.float32], count: int, seed: int
) -> npt.NDArray[np.uint8]:
    """Return the side (1: non-negative) of ``count`` random hyperplanes per row."""
    dim = vectors.shape[1]
    planes = (
        np.random.default_rng([seed, dim, 0x48])
        .standard_normal((dim, count))
        .astype(np.float32)
    )
    result = np.empty((vectors.shape[0], count), dtype=np.uint8)
    for start in range(0, vectors.shape[0], _PROJECT_ROWS):
        stop = start + _PROJECT_ROWS
        result[start:stop] = vectors[start:stop] @ planes >= 0
    return result


def band_keys_from_bits(
    hashes: npt.NDArray[np.uint8], bands: int, rows: int, salt: int
) -> npt.NDArray[np.uint64]:
    """One 64-bit key per band: its ``rows`` hash bits, mixed with the band."""
    n = hashes.shape[0]
    keys = np.empty((n, bands), dtype=np.uint64)
    weights = np.uint64(1) << np.arange(64, dtype=np.uint64)
    for band in range(bands):
        part = hashes[:, band * rows : (band + 1) * rows]
        key = np.full(n, np.uint64(salt & 0xFFFFFFFFFFFFFFFF) ^ np.uint64(band))
        for start in range(0, rows, 64):
            chunk = part[:, start : start + 64].astype(np.uint64)
            packed = (chunk * weights[: chunk.shape[1]]).sum(axis=1, dtype=np.uint64)
            key = splitmix64(key * _BAND_MIX ^ packed)
        keys[:, band] = key
    return keys


def side_hashes(
    values: pd.Series, kind: str, count: int, seed: int, *, column: Hashable, owner: str
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.bool_], int]:
    """``count`` LSH hash bits per row of a vector column, its valid rows, width."""
    if kind == "hamming":
        words, valid, bits = bit_matrix(values, column=column, owner=owner)
        return sampled_bits(words, bits, count, seed), valid, bits
    vectors, valid = float_matrix(values, column=column, owner=owner)
    return hyperplane_bits(vectors, count, seed), valid, vectors.shape[1]


# ----------------------------------------------------------------------------
# Comparisons


def vector_scores(
    left: pd.Series,
    right: pd.Series,
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
    kind: str,
    *,
    column: Hashable,
    owner: str,
) -> npt.NDArray[np.float64]:
    """Similarity in [0, 1] of the pairs: ``1 − d / D`` or ``max(cos, 0)``.

    NaN where either vector is missing.
    """
    if kind == "hamming":
        left_words, left_valid, left_bits = bit_matrix(left, column=column, owner=owner)
        right_words, right_valid, right_bits = (
            (left_words, left_valid, left_bits)
            if right is left
            else bit_matrix(right, column=column, owner=owner)
        )
        _check_width(left_bits, right_bits, column, owner)
        difference = left_words[left_positions] ^ right_words[right_positions]
        distance = np.bitwise_count(difference).sum(axis=1, dtype=np.int64)
        score = 1.0 - distance / max(left_bits, 1)
    else:
        left_vectors, left_valid = float_matrix(left, column=column, owner=owner)
        right_vectors, right_valid = (
            (left_vectors, left_valid)
            if right is left
            else float_matrix(right, column=column, owner=owner)
        )
        _check_width(left_vectors.shape[1], right_vectors.shape[1], column, owner)
        score = np.empty(left_positions.size, dtype=np.float64)
        for start in range(0, left_positions.size, _PROJECT_ROWS):
            part = slice(start, start + _PROJECT_ROWS)
            score[part] = np.einsum(
                "ij,ij->i",
                left_vectors[left_positions[part]],
                right_vectors[right_positions[part]],
            )
        score = np.clip(score, 0.0, 1.0)
    present = left_valid[left_positions] & right_valid[right_positions]
    return np.where(present, score, np.nan)


def check_vector_width(
    left: int | None, right: int | None, column: Hashable, owner: str
) -> None:
    """Raise when two tables' vectors in one column differ in length."""
    if left is not None and right is not None:
        _check_width(left, right, column, owner)


def _check_width(left: int, right: int, column: Hashable, owner: str) -> None:
    if left != right:
        raise SignatureMismatchError(
            f"Column {column!r} holds vectors of {left} values in the left table "
            f"but {right} in the right one ({owner}). Both tables need vectors of "
            "the same kind and length."
        )


# ----------------------------------------------------------------------------
# Top-k neighbours of float vectors

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

    Returns ``(neighbours, similarity)``, both ``(n, top)``, best first; slots
    with no neighbour hold -1 and -inf.
    """
    self_search = index is None
    base = queries if index is None else index
    n_index = base.shape[0]
    n_queries = queries.shape[0]
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
        Neighbours per query.
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
    query = np.repeat(query_rows, top).reshape(-1, top)[found]
    rank = np.broadcast_to(np.arange(1, top + 1), neighbours.shape)[found]
    return pd.DataFrame(
        {
            "left": queries.index.take(query),
            "right": labels.take(index_rows[neighbours[found]]),
            "cosine": scores[found],
            "rank": rank.astype(np.int64),
        }
    )


# ----------------------------------------------------------------------------
# Top-k as a blocking key: Field(column, blocking="cosine", top=k)


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
    ``"neighbours"`` field goes to :func:`lsh_frame.neighbours.neighbour_pairs`.
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
        query = np.repeat(rows[query_side], top).reshape(-1, top)[found]
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
