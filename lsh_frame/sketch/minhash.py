"""MinHash signatures of text columns, and similarity estimates from them."""

from __future__ import annotations

import functools
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lsh_frame import _progress
from lsh_frame._kernels import minhash as kernels
from lsh_frame._kernels import native, sketch
from lsh_frame._validation import check_int
from lsh_frame.config import MinHashConfig, ShingleConfig
from lsh_frame.errors import ConfigError, ConfigTypeError, SignatureMismatchError
from lsh_frame.sketch.minhash_arrow import (
    MinHashSignature,
    check_compatible,
    signature_config,
    signature_matrix,
    signatures_to_series,
    value_type,
)
from lsh_frame.text.shingle import text_array, tokenize

__all__ = ["estimate_jaccard", "make_config", "minhash", "sign_array"]

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")

#: Rows per unit of work at most: small enough to keep intermediates in
#: cache-sized arrays and memory bounded, large enough to amortise per-call
#: overhead.
DEFAULT_CHUNK_SIZE = 16_384
#: Text per unit of work when rows are long: about 1 MiB keeps a chunk's
#: temporaries in the processor's caches (64-bit SimHash of 1M ~280-character
#: texts ran 2.5x faster at 3,700 rows per chunk than at 16,384).
CHUNK_TEXT_BYTES = 1 << 20
_MIN_CHUNK_ROWS = 256
#: Columns of at least this many rows are signed per distinct value when at most
#: this share of their values are distinct (the copy then costs less than signing).
_DEDUPE_MIN_ROWS = 4_096
_DEDUPE_MAX_SHARE = 0.5


def default_workers() -> int:
    """Threads to use: the CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def chunk_rows(array: pa.Array, chunk_size: int | None) -> int:
    """Rows per chunk: ``chunk_size`` when given, else about 1 MiB of text.

    The automatic size is ``CHUNK_TEXT_BYTES`` over the mean text length,
    between 256 and ``DEFAULT_CHUNK_SIZE`` rows.
    """
    if chunk_size is not None:
        return chunk_size
    n = len(array)
    if n == 0:
        return DEFAULT_CHUNK_SIZE
    text_bytes = pc.sum(pc.binary_length(array)).as_py() or 0
    rows = CHUNK_TEXT_BYTES * n // max(text_bytes, 1)
    return int(min(max(rows, _MIN_CHUNK_ROWS), DEFAULT_CHUNK_SIZE))


def run_in_chunks(
    n: int, chunk_size: int, workers: int | None, work: Callable[[int], None]
) -> None:
    """Call ``work(start)`` for every chunk start of ``n`` rows, on several threads.

    The kernels release the GIL in numpy, so chunks run side by side; each
    writes only its own rows of the output.
    """
    starts = range(0, n, chunk_size)
    threads = min(workers or default_workers(), len(starts))
    if threads <= 1:
        for start in starts:
            work(start)
            _progress.advance(min(chunk_size, n - start))
    else:
        with ThreadPoolExecutor(threads) as pool:
            # Results come back in order on this thread, which reports them.
            for start, _ in zip(starts, pool.map(work, starts), strict=True):
                _progress.advance(min(chunk_size, n - start))


def in_order(
    work: Callable[[_Item], _Result],
    items: Sequence[_Item],
    workers: int | None = None,
) -> Iterator[_Result]:
    """Yield ``work(item)`` for every item, in order, computed on several threads.

    The kernels release the GIL in numpy, so items run side by side; at most
    ``2 * threads`` results are under way or waiting, so the memory stays
    bounded, and nothing more is started once the caller stops reading.
    """
    threads = min(workers or default_workers(), len(items))
    if threads <= 1:
        for item in items:
            yield work(item)
        return
    with ThreadPoolExecutor(threads) as pool:
        pending: deque[Future[_Result]] = deque()
        try:
            for item in items:
                if len(pending) >= 2 * threads:
                    yield pending.popleft().result()
                pending.append(pool.submit(work, item))
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


def make_config(
    config: MinHashConfig | None,
    *,
    owner: str,
    **options: Any,
) -> MinHashConfig:
    """Build a :class:`MinHashConfig` from a config object or loose keywords."""
    given = {key: value for key, value in options.items() if value is not None}
    if config is not None:
        if not isinstance(config, MinHashConfig):
            raise ConfigTypeError(
                f"The 'config' parameter of {owner} must be a MinHashConfig. "
                f"Got {type(config).__name__} instead."
            )
        if given:
            raise ConfigError(
                f"{owner} got both 'config' and {', '.join(map(repr, given))}. "
                "Pass either a MinHashConfig or the individual parameters."
            )
        return config
    shingle_keys = set(ShingleConfig.__dataclass_fields__)
    shingle_options = {k: v for k, v in given.items() if k in shingle_keys}
    hash_options = {k: v for k, v in given.items() if k not in shingle_keys}
    hash_keys = set(MinHashConfig.__dataclass_fields__) - {"shingle"}
    unknown = set(hash_options) - hash_keys
    if unknown:
        raise ConfigTypeError(
            f"{owner} got unexpected parameter(s) {', '.join(sorted(unknown))}. "
            f"Allowed: {', '.join(sorted(shingle_keys | hash_keys))}."
        )
    return MinHashConfig(shingle=ShingleConfig(**shingle_options), **hash_options)


Signer = Callable[[npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray], None]


def signer(config: MinHashConfig) -> Signer:
    """Return ``sign(token_hashes, offsets, out)`` for the configuration's scheme."""
    return _signer(config.scheme, config.seed, config.num_perm)


# Drawing the parameters and laying out their blocks cost 27 us, as much as
# signing a new record: a batch of one record reuses them. The signers only
# read them, so threads share them (as the chunks of one call always have).
@functools.lru_cache(maxsize=8)
def _signer(scheme: str, seed: int, num_perm: int) -> Signer:
    a: npt.NDArray[Any]
    b: npt.NDArray[Any]
    if scheme == "fss32":
        a, b = sketch.parameters(seed, num_perm)

        def sign_numpy(hashes: Any, offsets: Any, out: Any) -> None:
            sketch.sketch(kernels.fold32(hashes), offsets, a, b, out)

    elif scheme == "affine32":
        a, b = kernels.affine32_parameters(seed, num_perm)
        affine32 = kernels.affine32_permute(a, b)

        def sign_numpy(hashes: Any, offsets: Any, out: Any) -> None:
            kernels.minhash(kernels.fold32(hashes), offsets, affine32, out)

    else:
        a61, b61 = kernels.mersenne61_parameters(seed, num_perm)
        mersenne61 = kernels.mersenne61_permute(a61, b61)
        a, b = a61, b61

        def sign_numpy(hashes: Any, offsets: Any, out: Any) -> None:
            kernels.minhash(kernels.reduce_mersenne61(hashes), offsets, mersenne61, out)

    def sign(hashes: Any, offsets: Any, out: Any) -> None:
        # Chosen at every call, so that the choice can change (in tests).
        if native.compiled is not None and out.flags.c_contiguous:
            native.sign(scheme, hashes, offsets, a, b, out)
        else:
            sign_numpy(hashes, offsets, out)

    return sign


def sign_array(
    array: pa.Array,
    config: MinHashConfig,
    *,
    salt: int = 0,
    chunk_size: int | None = None,
    workers: int | None = None,
    minimum_into: npt.NDArray | None = None,
    _deduplicated: bool = False,
) -> tuple[npt.NDArray, npt.NDArray[np.bool_]]:
    """Sign a ``large_string`` Arrow array; return ``(matrix, valid)``.

    Rows with no shingle (missing, empty or shorter than one shingle) are not
    valid and their matrix rows are zero. When values repeat (names, cities,
    dates), each distinct value is signed once and its signature copied to
    every row that holds it.

    With ``minimum_into`` (classic MinHash), the signatures are not returned
    but lower that matrix element-wise, a chunk at a time (rows without a
    shingle leave it as it is), and it is returned in their place: the
    signature of a field's pooled columns without a matrix per column.
    """
    n = len(array)
    dtype = value_type(config.scheme).to_pandas_dtype()
    top = np.iinfo(dtype).max
    if not _deduplicated and n >= _DEDUPE_MIN_ROWS:
        encoded = pc.dictionary_encode(array)
        distinct = encoded.dictionary
        if 0 < len(distinct) <= _DEDUPE_MAX_SHARE * n:
            signed, signed_valid = sign_array(
                distinct,
                config,
                salt=salt,
                chunk_size=chunk_size,
                workers=workers,
                _deduplicated=True,
            )
            present = encoded.indices.is_valid().to_numpy(zero_copy_only=False)
            codes = pc.fill_null(encoded.indices, 0).to_numpy(zero_copy_only=False)
            _progress.advance(n - len(distinct))  # the rows that copy a signature
            valid = signed_valid[codes] & present
            if minimum_into is None:
                matrix = signed[codes]
                matrix[~present] = 0
                return matrix, valid
            signed[~signed_valid] = top
            for start in range(0, n, DEFAULT_CHUNK_SIZE):
                stop = min(start + DEFAULT_CHUNK_SIZE, n)
                rows = signed[codes[start:stop]]
                rows[~present[start:stop]] = top
                into = minimum_into[start:stop]
                np.minimum(into, rows, out=into)
            return minimum_into, valid
    chunk_size = chunk_rows(array, chunk_size)
    matrix = (
        np.zeros((n, config.num_perm), dtype=dtype)
        if minimum_into is None
        else minimum_into
    )
    valid = np.zeros(n, dtype=bool)
    sign = signer(config)

    def sign_chunk(start: int) -> None:
        stop = min(start + chunk_size, n)
        tokens = tokenize(array.slice(start, stop - start), config.shingle, salt=salt)
        if minimum_into is None:
            sign(tokens.hashes, tokens.offsets, matrix[start:stop])
        else:
            # The signer leaves the rows of records without a shingle alone.
            part = np.full((stop - start, config.num_perm), top, dtype=dtype)
            sign(tokens.hashes, tokens.offsets, part)
            into = matrix[start:stop]
            np.minimum(into, part, out=into)
        valid[start:stop] = tokens.counts > 0

    run_in_chunks(n, chunk_size, workers, sign_chunk)
    return matrix, valid


def minhash(
    values: pd.Series,
    /,
    *,
    k: int | None = None,
    kind: str | None = None,
    num_perm: int | None = None,
    seed: int | None = None,
    scheme: str | None = None,
    config: MinHashConfig | None = None,
    chunk_size: int | None = None,
    workers: int | None = None,
    **normalization: Any,
) -> pd.Series:
    """Compute the MinHash signature of every value of a text Series.

    Parameters
    ----------
    values : Series of str
        The text to sign.
    k : int, optional
        Shingle length (default 3 for character shingles).
    kind : {"char", "word", "stopword"}, optional
        Kind of shingle (default ``"char"``).
    num_perm : int, optional
        Signature length (default 128).
    seed : int, optional
        Seed of the hash functions (default 1).
    scheme : {"affine32", "mersenne61", "fss32"}, optional
        Hash family or sketch (default ``"affine32"``), see :class:`MinHashConfig`.
    config : MinHashConfig, optional
        A complete configuration, instead of the individual parameters.
    chunk_size : int, optional
        Rows processed per unit of work; bounds the memory of intermediates.
        By default about 1 MiB of text, at most 16,384 rows.
    workers : int, optional
        Threads to use; all available CPUs by default.
    **normalization
        Text normalisation options of :class:`ShingleConfig`.

    Returns
    -------
    Series
        On the input's index, named ``"<name>__minhash"``, with an Arrow
        extension dtype (storage ``fixed_size_list<uint32>[num_perm]``, or
        uint64 for ``"mersenne61"``) that carries the configuration. Missing,
        empty and too-short values get a missing signature.

    Examples
    --------
    >>> import pandas as pd
    >>> names = pd.Series(["john smith", "jon smith", None], name="name")
    >>> signatures = minhash(names)
    >>> signatures.name, signatures.isna().tolist()
    ('name__minhash', [False, False, True])

    The two names share 5 of their 10 distinct 3-shingles (Jaccard 0.5):

    >>> round(estimate_jaccard(signatures.iloc[0], signatures.iloc[1]), 2)
    0.52
    """
    owner = "minhash"
    resolved = make_config(
        config,
        owner=owner,
        k=k,
        kind=kind,
        num_perm=num_perm,
        seed=seed,
        scheme=scheme,
        **normalization,
    )
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
    matrix, valid = sign_array(array, resolved, chunk_size=chunk_size, workers=workers)
    name = None if values.name is None else f"{values.name}__minhash"
    return signatures_to_series(matrix, valid, resolved, index=values.index, name=name)


def _as_single(value: Any, role: str) -> tuple[npt.NDArray, MinHashConfig | None]:
    if isinstance(value, MinHashSignature):
        return value.values, value.config
    array = np.asarray(value)
    if array.ndim != 1 or array.size == 0 or array.dtype.kind not in "ui":
        raise ConfigTypeError(
            f"The '{role}' argument of estimate_jaccard must be a signature "
            "Series or one signature (a 1-D array of unsigned integers). "
            f"Got {type(value).__name__} with shape {array.shape} instead."
        )
    return array, None


def estimate_jaccard(a: Any, b: Any, /) -> pd.Series | float:
    """Estimate Jaccard similarity from MinHash signatures.

    The estimate is the fraction of positions where two signatures agree; its
    standard error is ``sqrt(J * (1 - J) / num_perm)``.

    Parameters
    ----------
    a, b : Series or signature
        Two signature Series of equal length (compared row by row, by
        position), two single signatures (``series.iloc[i]``), or one of each
        (every row compared with the single signature).

    Returns
    -------
    Series or float
        A float Series on ``a``'s index (or ``b``'s when ``a`` is single), NaN
        where a signature is missing; a float for two single signatures.

    Raises
    ------
    SignatureMismatchError
        When the signatures were built with different parameters or lengths.

    Examples
    --------
    >>> import pandas as pd
    >>> s = minhash(pd.Series(["apple pie", "apple pies", "banana"]))
    >>> estimate_jaccard(s, s.iloc[0]).round(2).tolist()  # exact: 1, 7/8, 0
    [1.0, 0.92, 0.0]
    """
    owner = "estimate_jaccard"
    a_is_series, b_is_series = isinstance(a, pd.Series), isinstance(b, pd.Series)
    if a_is_series and b_is_series:
        config_a = signature_config(a, owner=owner, role="a")
        config_b = signature_config(b, owner=owner, role="b")
        check_compatible(config_a, config_b, left_name=a.name, right_name=b.name)
        if len(a) != len(b):
            raise SignatureMismatchError(
                f"estimate_jaccard compares row by row, so both Series must have "
                f"the same length. Got {len(a)} and {len(b)} rows instead."
            )
        matrix_a, valid_a = signature_matrix(a)
        matrix_b, valid_b = signature_matrix(b)
        result = _agreement(matrix_a, matrix_b)
        result[~(valid_a & valid_b)] = np.nan
        return pd.Series(result, index=a.index, name="jaccard_estimate")
    if a_is_series or b_is_series:
        series, single = (a, b) if a_is_series else (b, a)
        config = signature_config(series, owner=owner, role="a" if a_is_series else "b")
        values, single_config = _as_single(single, "b" if a_is_series else "a")
        if single_config is not None:
            check_compatible(
                config, single_config, left_name=series.name, right_name="signature"
            )
        elif values.size != config.num_perm:
            raise SignatureMismatchError(
                f"The single signature has {values.size} values but the Series' "
                f"signatures have num_perm={config.num_perm}. Compute both with "
                "the same MinHashConfig."
            )
        matrix, valid = signature_matrix(series)
        result = _agreement(matrix, values[None, :])
        result[~valid] = np.nan
        return pd.Series(result, index=series.index, name="jaccard_estimate")
    values_a, single_a = _as_single(a, "a")
    values_b, single_b = _as_single(b, "b")
    if single_a is not None and single_b is not None:
        check_compatible(single_a, single_b, left_name="a", right_name="b")
    if values_a.size != values_b.size:
        raise SignatureMismatchError(
            f"The signatures have different lengths ({values_a.size} and "
            f"{values_b.size}). Compute both with the same MinHashConfig."
        )
    return float(np.mean(values_a == values_b))


def _agreement(
    left: npt.NDArray, right: npt.NDArray, rows_per_block: int = 65_536
) -> npt.NDArray[np.float64]:
    """Row-wise fraction of equal positions, in blocks to bound memory."""
    n = max(left.shape[0], right.shape[0])
    result = np.empty(n, dtype=np.float64)
    for start in range(0, n, rows_per_block):
        stop = min(start + rows_per_block, n)
        block_right = right if right.shape[0] == 1 else right[start:stop]
        equal = left[start:stop] == block_right
        result[start:stop] = np.count_nonzero(equal, axis=1) / left.shape[1]
    return result
