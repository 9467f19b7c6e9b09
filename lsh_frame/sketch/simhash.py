"""SimHash fingerprints of text columns, and their Hamming distances.

:func:`simhash` turns each value of a text column into a Charikar SimHash
fingerprint: tokens are hashed (the shingles of :mod:`lsh_frame.text.shingle`),
each token hash is a random ±1 vector, and the fingerprint keeps the sign of the
weighted sum in every bit. The Hamming distance of two fingerprints estimates
the angle between the records' token-count vectors: each bit differs with
probability ``θ / π``.

:func:`hamming_distance` gives the distance of fingerprints. The exact search
within a distance (:func:`~lsh_frame.hamming_pairs`,
:func:`~lsh_frame.hamming_nearest`) is blocking, in :mod:`lsh_frame.block.hamming`.

SimHash suits near-identical long texts (web pages, articles, descriptions):
64 bits and distance 3 find copies with small edits. Short records with typos
(a name and an address) sit ten or more bits apart; MinHash blocking
(:func:`lsh_frame.candidates`) suits them better. See ``docs/simhash.md``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from lsh_frame._kernels import hashing
from lsh_frame._kernels import simhash as kernels
from lsh_frame._kernels.neighbours import run_starts
from lsh_frame._validation import check_int
from lsh_frame.config import ShingleConfig, SimHashConfig
from lsh_frame.errors import ConfigError, ConfigTypeError, SignatureMismatchError
from lsh_frame.sketch import simhash_arrow as _arrow_simhash
from lsh_frame.sketch.minhash import chunk_rows, run_in_chunks
from lsh_frame.sketch.simhash_arrow import (
    check_same_config,
    fingerprint_config,
    fingerprint_matrix,
    fingerprints_to_series,
    not_fingerprints,
)
from lsh_frame.text.shingle import text_array, tokenize

__all__ = ["fingerprint_codes", "hamming_distance", "simhash"]


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

    Raises
    ------
    ConfigError
        When the one fingerprint is wider than the Series' fingerprints
        (``2**40`` against 32-bit ones): its extra bits would be dropped or
        counted as differing.

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
        role = "b" if a_series else "a"
        value = _as_int(single, role, owner)
        if value >> codes.bits:
            # Bits the fingerprints do not have: dropped, or counted as
            # differing bits, the distance would be wrong either way.
            raise ConfigError(
                f"The '{role}' argument of {owner} is {single!r}, a fingerprint of "
                f"{value.bit_length()} bits, but the Series' fingerprints have "
                f"{codes.bits} bits. Give a fingerprint of their width (an int from "
                f"0 to 2**{codes.bits} - 1), for example series.iloc[0]."
            )
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
