"""Bits of vectors: bit sampling and random hyperplanes, banded like MinHash.

Two LSH families, banded exactly like MinHash signatures (see
:mod:`lsh_frame.sketch.banding`):

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

The keys built from these bits are in :mod:`lsh_frame.block.keys`, the
comparisons in :mod:`lsh_frame.compare.vectors`, the nearest-neighbour search
of float vectors in :mod:`lsh_frame.block.vectors`.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from lsh_frame._kernels.hashing import splitmix64
from lsh_frame.errors import ColumnTypeError, ConfigError, SignatureMismatchError

__all__ = [
    "VECTOR_KINDS",
    "band_keys_from_bits",
    "bit_matrix",
    "check_vector_width",
    "float_matrix",
    "hyperplane_bits",
    "sampled_bits",
]


#: The blocking kinds (and comparisons) of this module.
VECTOR_KINDS = ("hamming", "cosine")

#: Rows of float vectors projected at a time (bounds the temporary matrix).
_PROJECT_ROWS = 65_536

_BAND_MIX = np.uint64(0x9E3779B97F4A7C15)


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
        # An object column holds a Python object per row: read one by one.
        arrays = [
            np.asarray(item) if isinstance(item, (np.ndarray, list, tuple)) else None
            for item in present.to_numpy()
        ]
        for row, array in enumerate(arrays):
            if array is None or array.ndim != 1:
                raise _stray_value(column, owner, present.index[row], present.iloc[row])
        lengths = np.array([array.size for array in arrays if array is not None])
        if (lengths != lengths[0]).any():
            raise _ragged(column, owner, lengths)
        stacked = np.stack([array for array in arrays if array is not None])
        matrix = np.zeros((len(values), stacked.shape[1]), dtype=stacked.dtype)
        matrix[valid] = stacked
        return matrix, valid
    return None


def _stray_value(
    column: Hashable, owner: str, label: Hashable, value: Any
) -> ColumnTypeError:
    if isinstance(label, np.generic):
        label = label.item()
    shown = " ".join(repr(value).split())  # one line
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    return ColumnTypeError(
        f"Column {column!r} passed to {owner} holds vectors, but its row "
        f"{label!r} holds {shown} ({type(value).__name__}), which is not a "
        "vector. Each value must be a 1-D array, list or tuple of numbers, all "
        "of one length, or missing (None); fix or drop that row."
    )


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
    from lsh_frame.sketch.simhash import fingerprint_codes

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
