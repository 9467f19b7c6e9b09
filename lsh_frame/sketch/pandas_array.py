"""Signature and fingerprint columns in pandas: compared, grouped and sorted by value.

pandas runs the operations of an Arrow-backed column through
``pyarrow.compute``, which has no kernels for extension types: on a
``lf.minhash`` or ``lf.simhash`` Series, ``s == s.copy()`` said every value
differs, and ``unique``, ``value_counts``, ``drop_duplicates``, ``groupby`` and
``sort_values`` raised ``ArrowNotImplementedError``. Grouping rows by an
identical fingerprint is a natural first step with SimHash.

A sketch column's dtype is a :class:`SketchDtype` (a :class:`pandas.ArrowDtype`
of the sketch's extension type: every check of ``dtype.pyarrow_dtype`` holds)
whose array, :class:`SketchArray`, runs these operations on the values the
sketch stores, whole arrays at a time:

- ``==`` and ``!=`` compare by value (and by configuration: sketches built
  differently are never equal), missing where either side is, as other Arrow
  columns do; ``<`` and the other orders raise ``TypeError``.
- ``factorize`` (and so ``unique``, ``nunique``, ``value_counts``,
  ``duplicated``, ``drop_duplicates``, ``groupby``) encodes each row's stored
  bytes: a fingerprint's 64-bit integer, a signature's ``num_perm`` values.
- ``argsort`` (``sort_values``) orders rows by their stored values, the first
  value first (a fingerprint: as an unsigned integer).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from pandas.arrays import ArrowExtensionArray

#: Names of the Arrow extension types whose columns are sketches.
SKETCH_TYPES = ("lsh_frame.sketch.minhash", "lsh_frame.sketch")


def is_sketch(arrow_type: pa.DataType) -> bool:
    """Whether ``arrow_type`` is a signature's or a fingerprint's type."""
    return (
        isinstance(arrow_type, pa.ExtensionType)
        and arrow_type.extension_name in SKETCH_TYPES
    )


class SketchDtype(pd.ArrowDtype):
    """The pandas dtype of signature and fingerprint columns (see the module)."""

    def construct_array_type(self) -> type[SketchArray]:
        """Return :class:`SketchArray`."""
        return SketchArray

    def __eq__(self, other: object) -> bool:
        # pandas.ArrowDtype of the same type is the same dtype, both ways round.
        if isinstance(other, pd.ArrowDtype):
            return bool(self.pyarrow_dtype == other.pyarrow_dtype)
        return super().__eq__(other)

    def __hash__(self) -> int:
        return super().__hash__()


class SketchArray(ArrowExtensionArray):
    """Array of a sketch column: pandas' operations by value (see the module)."""

    _pa_array: pa.ChunkedArray
    _dtype: pd.ArrowDtype

    def __init__(self, values: pa.Array | pa.ChunkedArray) -> None:
        super().__init__(values)
        if is_sketch(self._pa_array.type):
            self._dtype = SketchDtype(self._pa_array.type)

    def _sketch(self) -> bool:
        return is_sketch(self._pa_array.type)

    def _storage(self) -> pa.Array:
        chunked = self._pa_array
        if chunked.num_chunks == 1:
            array = chunked.chunk(0)
        elif chunked.num_chunks == 0:
            array = pa.array([], type=chunked.type.storage_type)
            return array
        else:
            array = chunked.combine_chunks()
        return array.storage

    def _stored(self) -> tuple[npt.NDArray[Any], npt.NDArray[np.bool_]]:
        """Return ``(matrix, valid)``: each row's stored values (0 where missing)."""
        storage = self._storage()
        valid = np.asarray(storage.is_valid().to_numpy(zero_copy_only=False), bool)
        if pa.types.is_fixed_size_list(storage.type):
            width = storage.type.list_size
            flat = storage.values.slice(storage.offset * width, len(storage) * width)
            flat = flat.fill_null(0) if flat.null_count else flat
            matrix = flat.to_numpy(zero_copy_only=False).reshape(len(storage), width)
        else:
            filled = storage.fill_null(0) if storage.null_count else storage
            matrix = filled.to_numpy(zero_copy_only=False).reshape(-1, 1)
        return np.ascontiguousarray(matrix), valid

    def _keys(self) -> pa.Array:
        """One comparable Arrow value per row (null where missing): its bytes."""
        matrix, valid = self._stored()
        if matrix.shape[1] == 1:
            keys = pa.array(matrix[:, 0])
        else:
            keys = pa.Array.from_buffers(
                pa.binary(matrix.shape[1] * matrix.itemsize),
                matrix.shape[0],
                [None, pa.py_buffer(matrix)],
            )
        if not valid.all():
            keys = pc.if_else(pa.array(valid), keys, pa.scalar(None, keys.type))
        return keys

    def _other_keys(self, other: Any) -> pa.Array | pa.Scalar | None:
        """Return the keys of what rows are compared with (None: nothing equal)."""
        if isinstance(other, SketchArray) and other._sketch():
            if len(other) != len(self):
                raise ValueError("Lengths must match to compare")
            if other._pa_array.type != self._pa_array.type:
                return None  # built differently: never equal
            return other._keys()
        if pd.api.types.is_list_like(other) and not hasattr(other, "config"):
            if len(other) != len(self):
                raise ValueError("Lengths must match to compare")
            return None
        one = self._one(other)
        return None if one is None else one._keys()[0]

    def _one(self, value: Any) -> SketchArray | None:
        """Return a one-row array of one signature or fingerprint (None: not one)."""
        arrow_type = self._pa_array.type
        storage_type = arrow_type.storage_type
        config = getattr(arrow_type, "config", None)
        if getattr(value, "config", None) is not None:
            if value.config != config:
                return None
            words = [np.asarray(value).tolist()]
        elif isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            number, bits = int(value), getattr(config, "bits", 0)
            if not 0 <= number < 1 << bits:
                return None
            if pa.types.is_fixed_size_list(storage_type):
                size = storage_type.list_size
                words = [[(number >> (64 * at)) & (2**64 - 1) for at in range(size)]]
            else:
                words = [number]
        else:
            return None
        storage = pa.array(words, type=storage_type)
        return type(self)(pa.ExtensionArray.from_storage(arrow_type, storage))

    def _cmp_method(self, other: Any, op: Any) -> ArrowExtensionArray:
        if not self._sketch():
            return super()._cmp_method(other, op)  # type: ignore[misc]
        if op not in (operator.eq, operator.ne):
            raise TypeError(
                f"Values of a {self.dtype} column have no order: compare them with "
                "== and != only (sort_values sorts them by their stored values). "
                "For near fingerprints use lf.hamming_distance or lf.hamming_pairs."
            )
        keys = self._other_keys(other)
        if keys is None:
            result = pa.array(np.full(len(self), op is operator.ne))
        else:
            function = pc.equal if op is operator.eq else pc.not_equal
            result = function(self._keys(), keys)
        return ArrowExtensionArray(result)

    def factorize(
        self, use_na_sentinel: bool = True
    ) -> tuple[npt.NDArray[np.intp], SketchArray]:
        """Encode the rows by value (see :meth:`pandas.api.extensions.ExtensionArray.factorize`)."""  # noqa: E501
        if not self._sketch():
            return super().factorize(use_na_sentinel)
        encoded = self._keys().dictionary_encode(
            null_encoding="mask" if use_na_sentinel else "encode"
        )
        indices = encoded.indices
        if indices.null_count:
            indices = indices.fill_null(-1)
        codes = indices.to_numpy(zero_copy_only=False).astype(np.intp)
        rows = np.flatnonzero(codes >= 0)
        # Dictionary entries are numbered in order of appearance.
        _, first = np.unique(codes[rows], return_index=True)
        return codes, self.take(rows[first])

    def unique(self) -> SketchArray:
        """Return the distinct values (missing once, if any), in order of appearance."""
        if not self._sketch():
            return super().unique()
        return self.factorize(use_na_sentinel=False)[1]

    def value_counts(self, dropna: bool = True) -> pd.Series:
        """Return the number of rows of each distinct value."""
        if not self._sketch():
            return super().value_counts(dropna)  # type: ignore[misc]
        codes, uniques = self.factorize(use_na_sentinel=dropna)
        counts = np.bincount(codes[codes >= 0], minlength=len(uniques))
        return pd.Series(
            ArrowExtensionArray(pa.array(counts.astype(np.int64))),
            index=pd.Index(uniques),
            name="count",
            copy=False,
        )

    def argsort(
        self,
        *,
        ascending: bool = True,
        kind: str = "quicksort",
        na_position: str = "last",
        **kwargs: Any,
    ) -> npt.NDArray[np.intp]:
        """Order rows by their stored values, first value first (stable)."""
        if not self._sketch():
            return super().argsort(
                ascending=ascending, kind=kind, na_position=na_position, **kwargs
            )
        if na_position not in ("first", "last"):
            raise ValueError(f"invalid na_position: {na_position}")
        matrix, valid = self._stored()
        rows = np.flatnonzero(valid)
        columns = matrix[rows].T[::-1]  # lexsort sorts by the last key first
        if not ascending:
            columns = ~columns  # unsigned: reverses the order, ties kept stable
        order = rows[np.lexsort(columns)] if rows.size else rows
        missing = np.flatnonzero(~valid)
        parts = [missing, order] if na_position == "first" else [order, missing]
        return np.concatenate(parts).astype(np.intp)


def sketch_series(array: pa.ExtensionArray, index: pd.Index, name: Any) -> pd.Series:
    """Return a sketch column as a Series of :class:`SketchDtype`."""
    return pd.Series(SketchArray(array), index=index, name=name)
