"""The one Arrow boundary: signature matrices ↔ signature columns.

A signature column is a pandas Series whose dtype wraps the Arrow extension
type ``lsh_frame.sketch.minhash``: storage ``fixed_size_list<uint32 or uint64>
[num_perm]`` plus the :class:`~lsh_frame.MinHashConfig` serialised as JSON. The
configuration therefore survives Parquet and Feather round trips, and two
columns built differently can be told apart before they are compared.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from lsh_frame.config import FORMAT_VERSION, MinHashConfig
from lsh_frame.errors import ColumnTypeError, SignatureMismatchError
from lsh_frame.sketch.pandas_array import SketchDtype, sketch_series

EXTENSION_NAME = "lsh_frame.sketch.minhash"


def value_type(scheme: str) -> pa.DataType:
    """Arrow type of one signature value for a scheme."""
    return pa.uint64() if scheme == "mersenne61" else pa.uint32()


class MinHashSignature:
    """One record's MinHash signature together with its configuration.

    Returned when a single element of a signature column is read (for
    example ``signatures.iloc[0]``). Behaves like a read-only 1-D array.
    """

    __slots__ = ("config", "values")

    def __init__(self, values: npt.ArrayLike, config: MinHashConfig) -> None:
        array = np.array(values, dtype=value_type(config.scheme).to_pandas_dtype())
        array.setflags(write=False)
        self.values = array
        self.config = config

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        return self.values if dtype is None else self.values.astype(dtype)

    def __len__(self) -> int:
        return int(self.values.size)

    def __getitem__(self, item: Any) -> Any:
        return self.values[item]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MinHashSignature):
            return NotImplemented
        return self.config == other.config and bool(
            np.array_equal(self.values, other.values)
        )

    def __hash__(self) -> int:
        return hash((self.values.tobytes(), self.config))

    def __repr__(self) -> str:
        head = ", ".join(str(int(v)) for v in self.values[:3])
        more = ", …" if self.values.size > 3 else ""
        return f"MinHashSignature([{head}{more}], {self.config.describe()})"


class MinHashScalar(pa.ExtensionScalar):
    """Arrow scalar of a signature column; ``as_py`` keeps the configuration."""

    def as_py(self, **kwargs: Any) -> MinHashSignature | None:
        """Return the signature with its configuration, or None when missing."""
        if not self.is_valid:
            return None
        storage = self.value
        assert isinstance(self.type, MinHashType)
        return MinHashSignature(storage.values.to_numpy(), self.type.config)


class MinHashType(pa.ExtensionType):
    """Arrow extension type of MinHash signature columns."""

    def __init__(self, config: MinHashConfig) -> None:
        self.config = config
        storage = pa.list_(value_type(config.scheme), config.num_perm)
        super().__init__(storage, EXTENSION_NAME)

    def __arrow_ext_serialize__(self) -> bytes:
        return json.dumps(self.config.to_dict(), sort_keys=True).encode()

    @classmethod
    def __arrow_ext_deserialize__(
        cls, storage_type: pa.DataType, serialized: bytes
    ) -> MinHashType:
        spec = json.loads(serialized.decode())
        version = spec.get("format_version")
        if version != FORMAT_VERSION:
            raise SignatureMismatchError(
                f"This signature column has format version {version}, but this "
                f"version of lsh_frame reads format {FORMAT_VERSION}. Recompute "
                "the signatures with this version."
            )
        return cls(MinHashConfig.from_dict(spec))

    def __arrow_ext_scalar_class__(self) -> type[pa.ExtensionScalar]:
        return MinHashScalar

    def __reduce__(self) -> tuple[Any, ...]:
        return MinHashType, (self.config,)

    def to_pandas_dtype(self) -> SketchDtype:
        """Return the pandas dtype of a signature column."""
        return SketchDtype(self)

    def __str__(self) -> str:
        # pandas 2.2 rebuilds dtypes from this string when reading Parquet and only
        # falls back to the Arrow type on TypeError: brackets, parentheses or commas
        # would make it raise something else, so the summary uses none of them.
        config = self.config
        return (
            f"minhash<num_perm={config.num_perm} seed={config.seed} "
            f"{config.scheme} {config.shingle.kind} k={config.shingle.k}>"
        )


pa.register_extension_type(MinHashType(MinHashConfig()))


def signatures_to_series(
    matrix: npt.NDArray,
    valid: npt.NDArray[np.bool_],
    config: MinHashConfig,
    *,
    index: pd.Index,
    name: Any = None,
) -> pd.Series:
    """Wrap an ``(n, num_perm)`` matrix as a signature Series (no copy)."""
    flat = pa.array(np.ascontiguousarray(matrix).reshape(-1))
    mask = None if valid.all() else pa.array(~valid)
    storage = pa.FixedSizeListArray.from_arrays(flat, config.num_perm, mask=mask)
    array = pa.ExtensionArray.from_storage(MinHashType(config), storage)
    return sketch_series(array, index, name)


def signature_config(values: Any, *, owner: str, role: str = "values") -> MinHashConfig:
    """Return the configuration of a signature Series, or raise a clear error."""
    dtype = getattr(values, "dtype", None)
    arrow_type = getattr(dtype, "pyarrow_dtype", None)
    if not isinstance(arrow_type, MinHashType):
        raise ColumnTypeError(
            f"The '{role}' argument of {owner} must be a signature Series made by "
            f"lsh_frame.sketch.minhash or df.lsh.minhash. Got dtype {dtype} instead."
        )
    return arrow_type.config


def signature_matrix(
    values: pd.Series,
) -> tuple[npt.NDArray, npt.NDArray[np.bool_]]:
    """Return ``(matrix, valid)`` of a signature Series, zero-copy when possible.

    Rows of missing signatures hold arbitrary values; use ``valid``.
    """
    array = values.array._pa_array
    chunk = array.combine_chunks() if array.num_chunks != 1 else array.chunk(0)
    storage = chunk.storage
    width = storage.type.list_size
    flat = storage.values.slice(storage.offset * width, len(storage) * width)
    if flat.null_count:
        # Writers such as Parquet store missing signatures as null values.
        flat = flat.fill_null(0)
    matrix = flat.to_numpy(zero_copy_only=False).reshape(len(storage), width)
    valid = ~np.asarray(storage.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    return matrix, valid


def _flatten(spec: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in spec.items():
        if isinstance(value, dict):
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def check_compatible(
    left: MinHashConfig, right: MinHashConfig, *, left_name: Any, right_name: Any
) -> None:
    """Raise :class:`SignatureMismatchError` unless two configurations agree."""
    if left == right:
        return
    left_spec, right_spec = _flatten(left.to_dict()), _flatten(right.to_dict())
    differences = ", ".join(
        f"{key}={left_spec[key]!r} vs {right_spec[key]!r}"
        for key in sorted(left_spec)
        if left_spec[key] != right_spec.get(key)
    )
    raise SignatureMismatchError(
        f"Signatures {left_name!r} were built with {left.describe()} but "
        f"{right_name!r} with {right.describe()} (differences: {differences}). "
        "Recompute both with the same MinHashConfig."
    )
