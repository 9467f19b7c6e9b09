"""SimHash fingerprints of text columns and exact Hamming-distance search.

:func:`simhash` turns each value of a text column into a Charikar SimHash
fingerprint: tokens are hashed (the shingles of :mod:`lsh_frame.shingle`),
each token hash is a random ±1 vector, and the fingerprint keeps the sign of the
weighted sum in every bit. The Hamming distance of two fingerprints estimates
the angle between the records' token-count vectors: each bit differs with
probability ``θ / π``.

:func:`hamming_pairs` finds every pair of fingerprints within a Hamming
distance, exactly, with the permuted tables of Manku, Jain and Das Sarma (see
:mod:`lsh_frame._kernels.simhash`); :func:`hamming_nearest` finds the closest
fingerprints of an index for each new one.

SimHash suits near-identical long texts (web pages, articles, descriptions):
64 bits and distance 3 find copies with small edits. Short records with typos
(a name and an address) sit ten or more bits apart; MinHash blocking
(:func:`lsh_frame.candidates`) suits them better. See ``docs/simhash.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from lsh_frame import _arrow_simhash
from lsh_frame._arrow_simhash import (
    SIMHASH_FORMAT_VERSION,
    SimHashType,
    check_same_config,
    fingerprint_config,
    fingerprint_matrix,
    fingerprints_to_series,
    not_fingerprints,
)
from lsh_frame._kernels import hashing
from lsh_frame._kernels import simhash as kernels
from lsh_frame._kernels.neighbours import run_starts
from lsh_frame._validation import check_choice, check_int
from lsh_frame.config import ShingleConfig
from lsh_frame.errors import (
    ConfigError,
    ConfigTypeError,
    SignatureMismatchError,
    TooManyPairsError,
)
from lsh_frame.minhash import chunk_rows, default_workers, run_in_chunks
from lsh_frame.shingle import text_array, tokenize

__all__ = [
    "SimHashConfig",
    "SimHashType",
    "fingerprint_codes",
    "hamming_distance",
    "hamming_nearest",
    "hamming_pairs",
    "simhash",
]

Bits = Literal[32, 64, 128]
Weights = Literal["count", "idf"]
#: Pairs a Hamming search may return unless told otherwise.
DEFAULT_MAX_PAIRS = 50_000_000


@dataclass(frozen=True, kw_only=True)
class SimHashConfig:
    """Everything that decides a SimHash fingerprint.

    Two fingerprint columns can be compared only if their configurations are
    equal; the configuration travels with the column as Arrow metadata.

    Parameters
    ----------
    bits : {32, 64, 128}
        Fingerprint length.
    seed : int
        Seed of the token hashes (a non-negative int): the same text and seed
        give the same fingerprint in every process and on every platform.
    weights : {"count", "idf"}
        Weight of a token: ``"count"``, each occurrence counts once;
        ``"idf"``, each occurrence counts ``log((1 + n) / (1 + df)) + 1``,
        ``df`` the number of records of the column holding the token, so rare
        words decide more bits. IDF weights depend on the column they were
        computed on: fingerprint two tables that will be compared in one call.
    shingle : ShingleConfig
        How text becomes tokens (words by default).

    Examples
    --------
    >>> SimHashConfig(bits=128).describe()
    "bits=128, seed=1, weights='count', shingles='word' k=1"
    """

    bits: Bits = 64
    seed: int = 1
    weights: Weights = "count"
    shingle: ShingleConfig = field(default_factory=lambda: ShingleConfig(kind="word"))

    def __post_init__(self) -> None:
        owner = "SimHashConfig"
        if isinstance(self.bits, bool) or self.bits not in get_args(Bits):
            raise ConfigError(
                f"The 'bits' parameter of {owner} must be one of 32, 64, 128. "
                f"Got {self.bits!r} instead."
            )
        object.__setattr__(self, "bits", int(self.bits))
        object.__setattr__(self, "seed", check_int(self.seed, "seed", owner, minimum=0))
        check_choice(self.weights, "weights", owner, get_args(Weights))
        if not isinstance(self.shingle, ShingleConfig):
            raise ConfigTypeError(
                "The 'shingle' parameter of SimHashConfig must be a ShingleConfig. "
                f"Got {type(self.shingle).__name__} instead."
            )

    @property
    def words(self) -> int:
        """uint64 words per fingerprint."""
        return max(1, self.bits // 64)

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready description (stored with fingerprint columns)."""
        return {
            "format_version": SIMHASH_FORMAT_VERSION,
            "bits": self.bits,
            "seed": self.seed,
            "weights": self.weights,
            "shingle": self.shingle.to_dict(),
        }

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> SimHashConfig:
        """Rebuild a configuration from :meth:`to_dict` output."""
        return cls(
            bits=spec["bits"],
            seed=spec["seed"],
            weights=spec["weights"],
            shingle=ShingleConfig.from_dict(spec["shingle"]),
        )

    def describe(self) -> str:
        """One-line summary used in messages."""
        return (
            f"bits={self.bits}, seed={self.seed}, weights={self.weights!r}, "
            f"shingles={self.shingle.kind!r} k={self.shingle.k}"
        )


_arrow_simhash.register()


def _seed_tag(seed: int) -> np.uint64:
    """Return the 64-bit value mixed into every token hash for a seed."""
    value = np.array([(seed & 0xFFFFFFFFFFFFFFFF) ^ 0x5348_4153_4845_5F31], np.uint64)
    return np.uint64(hashing.splitmix64(value)[0])


def _make_config(
    config: SimHashConfig | None, *, owner: str, **options: Any
) -> SimHashConfig:
    given = {key: value for key, value in options.items() if value is not None}
    if config is not None:
        if not isinstance(config, SimHashConfig):
            raise ConfigTypeError(
                f"The 'config' parameter of {owner} must be a SimHashConfig. "
                f"Got {type(config).__name__} instead."
            )
        if given:
            raise ConfigError(
                f"{owner} got both 'config' and {', '.join(map(repr, given))}. "
                "Pass either a SimHashConfig or the individual parameters."
            )
        return config
    shingle_keys = set(ShingleConfig.__dataclass_fields__)
    own_keys = {"bits", "seed", "weights"}
    unknown = set(given) - shingle_keys - own_keys
    if unknown:
        raise ConfigTypeError(
            f"{owner} got unexpected parameter(s) {', '.join(sorted(unknown))}. "
            f"Allowed: {', '.join(sorted(shingle_keys | own_keys))}."
        )
    shingle_options = {k: v for k, v in given.items() if k in shingle_keys}
    shingle_options.setdefault("kind", "word")
    own = {k: v for k, v in given.items() if k in own_keys}
    return SimHashConfig(shingle=ShingleConfig(**shingle_options), **own)


def _idf_vocabulary(
    array: pa.Array, config: SimHashConfig, salt: int, chunk_size: int
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]]:
    """Distinct token hashes of a column and their quantised IDF weights."""
    distinct_parts, count_parts = [], []
    records = 0
    for start in range(0, len(array), chunk_size):
        tokens = tokenize(array.slice(start, chunk_size), config.shingle, salt=salt)
        counts = tokens.counts
        records += int((counts > 0).sum())
        owner = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
        # Tokens come in record order, so a stable sort by hash keeps each
        # hash's records in order and a record's repeats next to each other:
        # a token counts once per record.
        order = np.argsort(tokens.hashes, kind="stable")
        hashes, owners = tokens.hashes[order], owner[order]
        if hashes.size == 0:
            continue
        new_hash = run_starts(hashes)
        new_pair = new_hash | run_starts(owners)
        starts = np.flatnonzero(new_hash)
        distinct_parts.append(hashes[starts])
        count_parts.append(np.add.reduceat(new_pair.astype(np.int64), starts))
    if not distinct_parts:
        return np.empty(0, np.uint64), np.empty(0, np.uint64)
    every = np.concatenate(distinct_parts)
    order = np.argsort(every, kind="stable")
    every, counts = every[order], np.concatenate(count_parts)[order]
    first = np.ones(every.size, dtype=bool)
    first[1:] = every[1:] != every[:-1]
    starts = np.flatnonzero(first)
    frequency = np.add.reduceat(counts, starts) if starts.size else counts
    idf = np.log((1.0 + records) / (1.0 + frequency)) + 1.0
    top = np.log((1.0 + records) / 2.0) + 1.0
    weights = np.clip(np.rint(idf * (255.0 / max(top, 1.0))), 1, 255)
    return every[starts], weights.astype(np.uint64)


def fingerprint_array(
    array: pa.Array,
    config: SimHashConfig,
    *,
    salt: int = 0,
    chunk_size: int | None = None,
    workers: int | None = None,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """Fingerprint a ``large_string`` Arrow array; return ``(matrix, valid)``.

    Rows without a token (missing, empty, shorter than one shingle) are not
    valid and their matrix rows are zero. Chunks of ``chunk_size`` rows are
    processed by ``workers`` threads, which bounds the memory of intermediates.
    """
    n = len(array)
    chunk_size = chunk_rows(array, chunk_size)
    matrix = np.zeros((n, config.words), dtype=np.uint64)
    valid = np.zeros(n, dtype=bool)
    tag = _seed_tag(config.seed)
    vocabulary: tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64]] | None = None
    if config.weights == "idf":
        vocabulary = _idf_vocabulary(array, config, salt, chunk_size)

    def run(start: int) -> None:
        stop = min(start + chunk_size, n)
        tokens = tokenize(array.slice(start, stop - start), config.shingle, salt=salt)
        weights = None
        if vocabulary is not None:
            position = np.searchsorted(vocabulary[0], tokens.hashes)
            weights = vocabulary[1][position]
        matrix[start:stop] = kernels.fingerprints(
            tokens.hashes, tokens.offsets, bits=config.bits, seed_tag=tag,
            weights=weights,
        )  # fmt: skip
        valid[start:stop] = tokens.counts > 0

    run_in_chunks(n, chunk_size, workers, run)
    return matrix, valid


def simhash(
    values: pd.Series,
    /,
    *,
    bits: int | None = None,
    kind: str | None = None,
    k: int | None = None,
    weights: str | None = None,
    seed: int | None = None,
    config: SimHashConfig | None = None,
    chunk_size: int | None = None,
    workers: int | None = None,
    **normalization: Any,
) -> pd.Series:
    """Compute the SimHash fingerprint of every value of a text Series.

    Parameters
    ----------
    values : Series of str
        The text to fingerprint (typed columns are read as their canonical
        text, as everywhere in lsh_frame).
    bits : {32, 64, 128}, optional
        Fingerprint length (default 64).
    kind : {"word", "char", "stopword"}, optional
        Kind of token (default ``"word"``).
    k : int, optional
        Token length: words per word n-gram (default 1) or characters per
        character shingle (default 3).
    weights : {"count", "idf"}, optional
        Token weights (default ``"count"``), see :class:`SimHashConfig`.
    seed : int, optional
        Seed of the token hashes (default 1).
    config : SimHashConfig, optional
        A complete configuration, instead of the individual parameters.
    chunk_size : int, optional
        Rows processed per unit of work; bounds the memory of intermediates.
        By default about 1 MiB of text, at most 16,384 rows.
    workers : int, optional
        Threads to use; all available CPUs by default.
    **normalization
        Text normalisation options of :class:`~lsh_frame.ShingleConfig`.

    Returns
    -------
    Series
        On the input's index, named ``"<name>__simhash"``, with an Arrow
        extension dtype that carries the configuration (storage ``uint64``,
        or ``fixed_size_list<uint64>[2]`` for 128 bits). Missing, empty and
        too-short values get a missing fingerprint. Elements read as Python
        ints.

    Examples
    --------
    >>> import pandas as pd
    >>> text = pd.Series(["the quick brown fox jumps over the lazy dog",
    ...                   "the quick brown fox jumped over the lazy dog",
    ...                   "an entirely different sentence", None], name="text")
    >>> fingerprints = simhash(text)
    >>> fingerprints.name, fingerprints.isna().tolist()
    ('text__simhash', [False, False, False, True])
    >>> hamming_distance(fingerprints, fingerprints.iloc[0]).tolist()
    [0, 9, 34, <NA>]
    """
    owner = "simhash"
    resolved = _make_config(
        config, owner=owner, bits=bits, kind=kind, k=k, weights=weights, seed=seed,
        **normalization,
    )  # fmt: skip
    if chunk_size is not None:
        chunk_size = check_int(chunk_size, "chunk_size", owner, minimum=1)
    if workers is not None:
        workers = check_int(workers, "workers", owner, minimum=1)
    if not isinstance(values, pd.Series):
        raise ConfigTypeError(
            f"The 'values' argument of {owner} must be a pandas Series. "
            f"Got {type(values).__name__} instead."
        )
    array = text_array(values, owner=owner)
    matrix, valid = fingerprint_array(
        array, resolved, chunk_size=chunk_size, workers=workers
    )
    name = None if values.name is None else f"{values.name}__simhash"
    return fingerprints_to_series(
        matrix, valid, resolved, index=values.index, name=name
    )


# ----------------------------------------------------------------------------
# Reading fingerprints


@dataclass(frozen=True)
class Codes:
    """Fingerprints as an ``(n, words)`` uint64 matrix, with what they came from."""

    matrix: npt.NDArray[np.uint64]
    valid: npt.NDArray[np.bool_]
    bits: int
    config: SimHashConfig | None
    index: pd.Index


def fingerprint_codes(
    values: Any, /, *, owner: str = "fingerprint_codes", role: str = "fingerprints"
) -> Codes:
    """Read fingerprints from a SimHash Series, an integer Series or an array.

    Accepted: a Series made by :func:`simhash`; a Series or 1-D array of
    unsigned (or signed 64-bit) integers, read as 64-bit fingerprints; a 2-D
    uint64 array of ``words`` columns, read as ``64 × words``-bit
    fingerprints. Missing values are not valid.

    Examples
    --------
    >>> import numpy as np
    >>> codes = fingerprint_codes(np.array([1, 2, 3], dtype=np.uint64))
    >>> codes.bits, codes.matrix.shape
    (64, (3, 1))
    """
    config = fingerprint_config(values, owner=owner, role=role)
    if config is not None:
        matrix, valid = fingerprint_matrix(values)
        return Codes(matrix, valid, config.bits, config, values.index)
    if isinstance(values, pd.Series):
        index = values.index
        valid = ~values.isna().to_numpy()
        if not _is_integer_dtype(values.dtype):
            raise not_fingerprints(values, owner=owner, role=role)
        array = np.asarray(values.where(valid, 0).to_numpy())
        if array.dtype.kind not in "ui":
            array = array.astype(np.uint64 if (array >= 0).all() else np.int64)
    elif isinstance(values, np.ndarray) and values.ndim in (1, 2):
        array = values
        index = pd.RangeIndex(values.shape[0])
        valid = np.ones(values.shape[0], dtype=bool)
    else:
        raise not_fingerprints(values, owner=owner, role=role)
    if array.dtype.kind not in "ui":
        raise not_fingerprints(values, owner=owner, role=role)
    if array.dtype.kind == "i":
        if array.dtype.itemsize != 8 and (array < 0).any():
            raise not_fingerprints(values, owner=owner, role=role)
        # Signed 64-bit columns (databases, Parquet) hold the same 64 bits.
        array = array.astype(np.int64, copy=False).view(np.uint64)
    matrix = np.ascontiguousarray(array, dtype=np.uint64)
    if matrix.ndim == 1:
        matrix = matrix.reshape(-1, 1)
    return Codes(matrix, valid, 64 * matrix.shape[1], None, index)


def _is_integer_dtype(dtype: Any) -> bool:
    try:
        return bool(pd.api.types.is_integer_dtype(dtype)) and not (
            pd.api.types.is_bool_dtype(dtype)
        )
    except TypeError:  # pragma: no cover - exotic extension dtypes
        return False


def _check_pair(left: Codes, right: Codes, owner: str) -> None:
    check_same_config(left.config, right.config, owner=owner)
    if left.bits != right.bits:
        raise SignatureMismatchError(
            f"The fingerprints given to {owner} have different lengths: "
            f"{left.bits} and {right.bits} bits. Compute both with the same "
            "SimHashConfig."
        )


def hamming_distance(a: Any, b: Any, /) -> pd.Series | int:
    """Hamming distance between fingerprints, row by row or against one.

    Parameters
    ----------
    a, b : Series, int
        Two fingerprint Series of equal length (compared by position), one
        Series and one fingerprint (a Python int, e.g. ``series.iloc[0]``),
        or two ints.

    Returns
    -------
    Series or int
        ``Int64`` Series on the Series' index (missing where a fingerprint is
        missing), or an int.

    Examples
    --------
    >>> hamming_distance(0b1011, 0b0001)
    2
    """
    owner = "hamming_distance"
    a_series, b_series = isinstance(a, pd.Series), isinstance(b, pd.Series)
    if not a_series and not b_series:
        return bin(_as_int(a, "a", owner) ^ _as_int(b, "b", owner)).count("1")
    if a_series and b_series:
        left = fingerprint_codes(a, owner=owner, role="a")
        right = fingerprint_codes(b, owner=owner, role="b")
        _check_pair(left, right, owner)
        if left.matrix.shape[0] != right.matrix.shape[0]:
            raise SignatureMismatchError(
                f"{owner} compares row by row, so both Series must have the same "
                f"length. Got {left.matrix.shape[0]} and {right.matrix.shape[0]} "
                "rows instead."
            )
        distance = kernels.hamming(left.matrix, right.matrix)
        valid = left.valid & right.valid
        index = left.index
    else:
        series, single = (a, b) if a_series else (b, a)
        codes = fingerprint_codes(series, owner=owner, role="a" if a_series else "b")
        value = _as_int(single, "b" if a_series else "a", owner)
        words = np.array(
            [(value >> (64 * word)) & 0xFFFFFFFFFFFFFFFF
             for word in range(codes.matrix.shape[1])],
            dtype=np.uint64,
        )  # fmt: skip
        distance = kernels.hamming(codes.matrix, words[None, :])
        valid, index = codes.valid, codes.index
    result = pd.array(distance, dtype="Int64")
    result[~valid] = pd.NA
    return pd.Series(result, index=index, name="hamming_distance")


def _as_int(value: Any, role: str, owner: str) -> int:
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        number = int(value)
        if number >= 0:
            return number
        return number & 0xFFFFFFFFFFFFFFFF
    raise ConfigTypeError(
        f"The '{role}' argument of {owner} must be a fingerprint Series or one "
        f"fingerprint (an int). Got {type(value).__name__} instead."
    )


# ----------------------------------------------------------------------------
# Hamming search


def _check_distance(distance: Any, bits: int, owner: str) -> int:
    return check_int(distance, "distance", owner, minimum=0, maximum=bits // 4)


def _search(
    left: Codes,
    right: Codes | None,
    *,
    distance: int,
    max_pairs: int,
    blocks: int | None,
    workers: int | None,
    owner: str,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Positions (in each table) and distances of every pair within ``distance``."""
    left_rows = np.flatnonzero(left.valid)
    right_rows = None if right is None else np.flatnonzero(right.valid)
    try:
        first, second, found = kernels.search(
            left.matrix[left_rows],
            None if right is None else right.matrix[right_rows],
            bits=left.bits,
            distance=distance,
            max_pairs=max_pairs,
            blocks=blocks,
            workers=workers or default_workers(),
        )
    except kernels.PairLimitExceeded as error:
        raise TooManyPairsError(
            f"{owner} would return at least {error.found:,} pairs within Hamming "
            f"distance {distance}, more than max_pairs={max_pairs:,}. Lower "
            "'distance', or raise 'max_pairs' if the memory allows (about 24 "
            "bytes a pair)."
        ) from None
    if right_rows is None:
        return left_rows[first], left_rows[second], found
    return left_rows[first], right_rows[second], found


def hamming_pairs(
    fingerprints: Any,
    /,
    *,
    other: Any = None,
    distance: int = 3,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    blocks: int | None = None,
    workers: int | None = None,
) -> pd.DataFrame:
    """Every pair of fingerprints within a Hamming distance, exactly.

    The permuted-table search of Manku, Jain and Das Sarma: the bits are cut
    into ``B > distance`` blocks, and one sorted table per choice of ``B −
    distance`` blocks is probed for equal keys. A pair within the distance
    differs in at most ``distance`` blocks, so it shares a key in some table:
    nothing is missed, and every candidate is checked, so nothing too far is
    returned. ``B`` is chosen from the distance and the number of
    fingerprints (more blocks, more tables, fewer chance collisions).
    Identical fingerprints are searched once.

    Parameters
    ----------
    fingerprints : Series or array
        A fingerprint Series from :func:`simhash`, a Series or array of
        64-bit integers, or a 2-D uint64 array. Missing values pair with
        nothing.
    other : Series or array, optional
        Link: the fingerprints of a second table. Without it, dedupe.
    distance : int
        Largest Hamming distance of a pair, from 0 to ``bits / 4``.
    max_pairs : int
        Stop with :class:`~lsh_frame.TooManyPairsError` when more pairs than
        this are found (checked before they are built).
    blocks : int, optional
        Force the number of blocks (more than ``distance``).
    workers : int, optional
        Threads; all available CPUs by default.

    Returns
    -------
    DataFrame
        Columns ``left`` and ``right`` (index labels; for dedupe each pair
        once, ``left`` before ``right`` in the input's order) and
        ``distance`` (int64), sorted by position.

    Raises
    ------
    SignatureMismatchError
        When the two tables' fingerprints were built differently.

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([0b0000, 0b0111, 0b1111, 0xFFFF << 40], dtype=np.uint64)
    >>> hamming_pairs(codes, distance=3)
       left  right  distance
    0     0      1         3
    1     1      2         1
    """
    owner = "hamming_pairs"
    left = fingerprint_codes(fingerprints, owner=owner, role="fingerprints")
    right = None
    if other is not None:
        right = fingerprint_codes(other, owner=owner, role="other")
        _check_pair(left, right, owner)
    distance = _check_distance(distance, left.bits, owner)
    max_pairs = check_int(max_pairs, "max_pairs", owner, minimum=0)
    if blocks is not None:
        blocks = check_int(
            blocks, "blocks", owner, minimum=distance + 1, maximum=left.bits
        )
    if workers is not None:
        workers = check_int(workers, "workers", owner, minimum=1)
    first, second, found = _search(
        left, right, distance=distance, max_pairs=max_pairs, blocks=blocks,
        workers=workers, owner=owner,
    )  # fmt: skip
    right_index = left.index if right is None else right.index
    return pd.DataFrame(
        {
            "left": left.index.take(first),
            "right": right_index.take(second),
            "distance": found.astype(np.int64),
        }
    )


def hamming_nearest(
    queries: Any,
    index: Any,
    /,
    *,
    distance: int = 3,
    top: int = 1,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    workers: int | None = None,
) -> pd.DataFrame:
    """Find the closest fingerprints of an index for each new fingerprint.

    Finds, for every query, the ``top`` fingerprints of ``index`` nearest in
    Hamming distance among those within ``distance`` (exact, by the search of
    :func:`hamming_pairs`). Ties are broken by position in ``index``.

    Parameters
    ----------
    queries : Series or array
        Fingerprints of the new records.
    index : Series or array
        Fingerprints of the saved table.
    distance : int
        Largest Hamming distance considered.
    top : int
        Neighbours kept per query (at most).
    max_pairs, workers
        As for :func:`hamming_pairs` (``max_pairs`` bounds the pairs within
        ``distance`` before the ``top`` are kept).

    Returns
    -------
    DataFrame
        Columns ``left`` (query label), ``right`` (index label), ``distance``
        and ``rank`` (1 for the nearest), sorted by query position and rank.
        Queries with no fingerprint within ``distance`` have no row.

    Examples
    --------
    >>> import numpy as np
    >>> saved = np.array([0b0000, 0b0011, 0b1111], dtype=np.uint64)
    >>> new = np.array([0b0001, 0xFFFF << 40], dtype=np.uint64)
    >>> hamming_nearest(new, saved, distance=2, top=2)
       left  right  distance  rank
    0     0      0         1     1
    1     0      1         1     2
    """
    owner = "hamming_nearest"
    left = fingerprint_codes(queries, owner=owner, role="queries")
    right = fingerprint_codes(index, owner=owner, role="index")
    _check_pair(left, right, owner)
    distance = _check_distance(distance, left.bits, owner)
    top = check_int(top, "top", owner, minimum=1)
    max_pairs = check_int(max_pairs, "max_pairs", owner, minimum=0)
    if workers is not None:
        workers = check_int(workers, "workers", owner, minimum=1)
    first, second, found = _search(
        left, right, distance=distance, max_pairs=max_pairs, blocks=None,
        workers=workers, owner=owner,
    )  # fmt: skip
    order = np.lexsort((second, found, first))
    first, second, found = first[order], second[order], found[order]
    starts = np.flatnonzero(run_starts(first))
    group_start = np.repeat(starts, np.diff(np.append(starts, first.size)))
    rank = np.arange(first.size) - group_start + 1
    keep = rank <= top
    return pd.DataFrame(
        {
            "left": left.index.take(first[keep]),
            "right": right.index.take(second[keep]),
            "distance": found[keep].astype(np.int64),
            "rank": rank[keep].astype(np.int64),
        }
    )


def _column_codes(
    frame: pd.DataFrame, column: Any, options: dict[str, Any], owner: str
) -> pd.Series:
    values = frame[column]
    if fingerprint_config(values, owner=owner) is not None:
        if options:
            raise ConfigError(
                f"Column {column!r} holds fingerprints already, so {owner} cannot "
                f"apply {', '.join(map(repr, sorted(options)))}. Drop those "
                "options, or pass the text column instead."
            )
        return values
    return simhash(values, **options)


def frame_pairs(
    frame: pd.DataFrame,
    column: Any,
    /,
    *,
    other: pd.DataFrame | None = None,
    distance: int = 3,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    workers: int | None = None,
    **options: Any,
) -> pd.DataFrame:
    """Pairs of rows whose SimHash fingerprints are within ``distance``.

    ``column`` holds text (fingerprinted with ``options``, see
    :func:`simhash`) or fingerprints. With ``other`` (a frame with the same
    column) the two tables are linked; text of both tables is fingerprinted
    in one pass, so IDF weights are shared.
    """
    owner = "df.lsh.simhash_pairs"
    from lsh_frame._validation import check_columns

    (column,) = check_columns(frame, [column], owner)
    if other is None:
        codes = _column_codes(frame, column, options, owner)
        return hamming_pairs(
            codes, distance=distance, max_pairs=max_pairs, workers=workers
        )
    if not isinstance(other, pd.DataFrame):
        raise ConfigTypeError(
            f"The 'other' parameter of {owner} must be a DataFrame. "
            f"Got {type(other).__name__} instead."
        )
    check_columns(other, [column], owner, table="right table ('other')")
    left_values, right_values = frame[column], other[column]
    left_is_codes = fingerprint_config(left_values, owner=owner) is not None
    right_is_codes = fingerprint_config(right_values, owner=owner) is not None
    if left_is_codes or right_is_codes:
        left_codes = _column_codes(frame, column, options, owner)
        right_codes = _column_codes(other, column, options, owner)
    else:
        both = pd.concat(
            [left_values.reset_index(drop=True), right_values.reset_index(drop=True)],
            ignore_index=True,
        )
        fingerprinted = simhash(both, workers=workers, **options)
        left_codes = fingerprinted.iloc[: len(frame)].set_axis(frame.index)
        right_codes = fingerprinted.iloc[len(frame) :].set_axis(other.index)
    return hamming_pairs(
        left_codes, other=right_codes, distance=distance, max_pairs=max_pairs,
        workers=workers,
    )  # fmt: skip


def entities(
    frame: pd.DataFrame,
    columns: Any,
    /,
    *,
    distance: int = 3,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    **options: Any,
) -> tuple[npt.NDArray[np.int64], dict[str, int]]:
    """Entity id per row: rows whose SimHash is within ``distance`` are one entity.

    The text of ``columns`` (joined by a space, as a record-level field) is
    fingerprinted with ``options`` (see :func:`simhash`); every pair within
    ``distance`` links its rows, and entities are the connected components,
    numbered in order of first appearance. Returns the ids and counts
    (``records``, ``entities``, ``pairs``) for reports. Used by
    ``lsh-frame dedupe --method simhash``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"text": ["one two three four", "one two three four",
    ...                             "five six seven eight"]})
    >>> ids, counts = entities(df, ["text"], distance=2)
    >>> ids.tolist(), counts["entities"]
    ([0, 0, 1], 2)
    """
    from lsh_frame._kernels.components import components, first_appearance_ids
    from lsh_frame._validation import check_columns
    from lsh_frame.blocking import Field, _field_text

    owner = "simhash entities"
    labels = check_columns(frame, columns, owner)
    text = _field_text(frame, Field(labels), owner=owner)
    config = _make_config(None, owner=owner, **options)
    matrix, valid = fingerprint_array(text, config)
    codes = Codes(matrix, valid, config.bits, config, pd.RangeIndex(len(frame)))
    distance = _check_distance(distance, config.bits, owner)
    first, second, _ = _search(
        codes, None, distance=distance, max_pairs=max_pairs, blocks=None,
        workers=None, owner=owner,
    )  # fmt: skip
    roots = components(len(frame), first, second)
    ids = first_appearance_ids(roots)
    counts = {
        "records": len(frame),
        "entities": int(ids.max()) + 1 if ids.size else 0,
        "pairs": int(first.size),
    }
    return ids, counts
