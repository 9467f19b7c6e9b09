"""The Arrow boundary of SimHash fingerprints: matrix ↔ fingerprint column.

A fingerprint column is a pandas Series whose dtype wraps the Arrow extension
type ``lsh_frame.sketch``: storage ``uint64`` (32- and 64-bit fingerprints)
or ``fixed_size_list<uint64>[2]`` (128 bits), plus the
:class:`~lsh_frame.config.SimHashConfig` serialised as JSON, so the
configuration survives Parquet and Feather round trips like a MinHash
signature column's does (see :mod:`lsh_frame.sketch.minhash_arrow`).
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from lsh_frame.config import SIMHASH_FORMAT_VERSION
from lsh_frame.errors import ColumnTypeError, SignatureMismatchError
from lsh_frame.sketch.pandas_array import SketchDtype, sketch_series

if TYPE_CHECKING:
    from lsh_frame.config import SimHashConfig


EXTENSION_NAME = "lsh_frame.sketch"


def storage_type(bits: int) -> pa.DataType:
    """Arrow storage of one fingerprint."""
    return pa.uint64() if bits <= 64 else pa.list_(pa.uint64(), bits // 64)


class SimHashScalar(pa.ExtensionScalar):
    """Arrow scalar of a fingerprint column: ``as_py`` gives a Python int."""

    def as_py(self, **kwargs: Any) -> int | None:
        """Return the fingerprint as a Python int, or None when missing."""
        if not self.is_valid:
            return None
        value = self.value.as_py()
        if isinstance(value, list):
            return sum(int(word) << (64 * index) for index, word in enumerate(value))
        return int(value)


class SimHashType(pa.ExtensionType):
    """Arrow extension type of SimHash fingerprint columns."""

    def __init__(self, config: SimHashConfig) -> None:
        self.config = config
        super().__init__(storage_type(config.bits), EXTENSION_NAME)

    def __arrow_ext_serialize__(self) -> bytes:
        return json.dumps(self.config.to_dict(), sort_keys=True).encode()

    @classmethod
    def __arrow_ext_deserialize__(
        cls, storage_type: pa.DataType, serialized: bytes
    ) -> SimHashType:
        from lsh_frame.config import SimHashConfig

        spec = json.loads(serialized.decode())
        version = spec.get("format_version")
        if version != SIMHASH_FORMAT_VERSION:
            raise SignatureMismatchError(
                f"This fingerprint column has format version {version}, but this "
                f"version of lsh_frame reads format {SIMHASH_FORMAT_VERSION}. "
                "Recompute the fingerprints with this version."
            )
        return cls(SimHashConfig.from_dict(spec))

    def __arrow_ext_scalar_class__(self) -> type[pa.ExtensionScalar]:
        return SimHashScalar

    def __reduce__(self) -> tuple[Any, ...]:
        return SimHashType, (self.config,)

    def to_pandas_dtype(self) -> SketchDtype:
        """Return the pandas dtype of a fingerprint column."""
        return SketchDtype(self)

    def __str__(self) -> str:
        # No brackets, parentheses or commas: see MinHashType.__str__.
        config = self.config
        return (
            f"simhash<bits={config.bits} seed={config.seed} {config.weights} "
            f"{config.shingle.kind} k={config.shingle.k}>"
        )


def register() -> None:
    """Register the extension type with Arrow (once, on import of simhash)."""
    from lsh_frame.config import SimHashConfig

    with contextlib.suppress(pa.ArrowKeyError):  # registered already
        pa.register_extension_type(SimHashType(SimHashConfig()))


def fingerprints_to_series(
    matrix: npt.NDArray[np.uint64],
    valid: npt.NDArray[np.bool_],
    config: SimHashConfig,
    *,
    index: pd.Index,
    name: Any = None,
) -> pd.Series:
    """Wrap an ``(n, words)`` fingerprint matrix as a fingerprint Series."""
    mask = None if valid.all() else pa.array(~valid)
    if config.bits <= 64:
        storage = pa.array(
            np.ascontiguousarray(matrix[:, 0]),
            pa.uint64(),
            mask=None if valid.all() else ~valid,
        )
    else:
        flat = pa.array(np.ascontiguousarray(matrix).reshape(-1), pa.uint64())
        storage = pa.FixedSizeListArray.from_arrays(flat, matrix.shape[1], mask=mask)
    array = pa.ExtensionArray.from_storage(SimHashType(config), storage)
    return sketch_series(array, index, name)


def fingerprint_config(
    values: Any, *, owner: str, role: str = "fingerprints"
) -> SimHashConfig | None:
    """Return the configuration of a fingerprint Series (None for plain ints)."""
    dtype = getattr(values, "dtype", None)
    arrow_type = getattr(dtype, "pyarrow_dtype", None)
    if isinstance(arrow_type, SimHashType):
        return arrow_type.config
    return None


def fingerprint_matrix(
    values: pd.Series,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """Return ``(matrix, valid)`` of a fingerprint Series (rows of missing are 0)."""
    array = values.array._pa_array
    chunk = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    storage = chunk.storage
    valid = ~np.asarray(storage.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    if pa.types.is_fixed_size_list(storage.type):
        width = storage.type.list_size
        flat = storage.values.slice(storage.offset * width, len(storage) * width)
        flat = flat.fill_null(0) if flat.null_count else flat
        matrix = flat.to_numpy(zero_copy_only=False).reshape(len(storage), width)
    else:
        filled = storage.fill_null(0) if storage.null_count else storage
        matrix = filled.to_numpy(zero_copy_only=False).reshape(-1, 1)
    return np.ascontiguousarray(matrix, dtype=np.uint64), valid


def check_same_config(
    left: SimHashConfig | None,
    right: SimHashConfig | None,
    *,
    owner: str,
) -> None:
    """Raise :class:`SignatureMismatchError` unless two configurations agree."""
    if left is None or right is None or left == right:
        return
    left_spec, right_spec = left.to_dict(), right.to_dict()
    differences = ", ".join(
        f"{key}={left_spec[key]!r} vs {right_spec[key]!r}"
        for key in sorted(left_spec)
        if left_spec[key] != right_spec.get(key)
    )
    raise SignatureMismatchError(
        f"The fingerprints given to {owner} were built with {left.describe()} and "
        f"{right.describe()} (differences: {differences}). Recompute both with the "
        "same SimHashConfig."
    )


def not_fingerprints(values: Any, *, owner: str, role: str) -> ColumnTypeError:
    """Build the error for a value that holds no fingerprints."""
    dtype = getattr(values, "dtype", type(values).__name__)
    return ColumnTypeError(
        f"The '{role}' argument of {owner} must hold fingerprints: a Series made "
        "by lsh_frame.sketch or df.lsh.simhash, unsigned 64-bit integers, or a "
        f"2-D uint64 array. Got {dtype} instead. Compute them with "
        "lf.simhash(text)."
    )
