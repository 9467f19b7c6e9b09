"""Stable 64-bit hashes of records: of their values, and of their labels' text.

Some choices need an order of the records that depends neither on the rows'
positions nor on how the records are labelled: the records sampled to choose a
threshold from the data, the order of equal-scoring neighbours. They hash the
records' values (:func:`hash_values`), and break ties between records of equal
values by a hash of their labels' text (:func:`hash_labels`), so that the label
``17`` and the label ``"17"`` (ids read from a CSV file as text) give the same
choice.

pandas hashes text stably (never Python's salted ``hash()``) and alike
whatever its dtype (object, ``str``, ``string[pyarrow]``, categorical).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import xxhash

from lsh_frame._kernels import native
from lsh_frame._kernels.hashing import splitmix64
from lsh_frame.errors import LshFrameError
from lsh_frame.text.typed import canonical_text

__all__ = ["hash_labels", "hash_values", "label_text"]

#: pandas' own default key.
_PANDAS_KEY = "0123456789123456"


def label_text(index: pd.Index) -> pd.Index:
    """Return the labels as text, the same whatever the index's dtype.

    Integers are written in decimal, so ``17`` and ``"17"`` read alike; floats
    that are all whole numbers (integer ids that became floats when a missing
    value joined them) are written as integers; every other label is ``str()``
    of itself (a tuple as its ``repr``).

    Examples
    --------
    >>> label_text(pd.Index([17, 2])).tolist()
    ['17', '2']
    >>> label_text(pd.Index([17.0, 2.0])).tolist()
    ['17', '2']
    >>> label_text(pd.Index(["17", "2"])).tolist()
    ['17', '2']
    """
    if isinstance(index, pd.MultiIndex):
        index = index.to_flat_index()
    if pd.api.types.is_float_dtype(index.dtype):
        values = index.to_numpy(dtype=np.float64, na_value=np.nan)
        if np.isfinite(values).all() and (values == np.round(values)).all():
            index = pd.Index(values.astype(np.int64))
    return pd.Index(index.astype(str), dtype=object)


def hash_labels(
    index: pd.Index, *, hash_key: str = _PANDAS_KEY
) -> npt.NDArray[np.uint64]:
    """Return a stable 64-bit hash of each label's text (see :func:`label_text`).

    The hash does not depend on the index's dtype: an integer label and its
    decimal text hash alike.

    Examples
    --------
    >>> as_int, as_text = pd.Index([3, 10]), pd.Index(["3", "10"])
    >>> bool((hash_labels(as_int) == hash_labels(as_text)).all())
    True
    >>> hash_labels(pd.Index([3, "b", ("t", 1)], dtype=object)).dtype
    dtype('uint64')
    """
    # Labels are distinct, as a rule: factorizing them first (pandas' default
    # for an Index) would only add work, and gives the same hashes.
    labels = np.asarray(label_text(index), dtype=object)
    if native.compiled is not None:
        try:
            text = pa.array(labels, type=pa.large_string())
        except (pa.ArrowException, UnicodeEncodeError):  # lone surrogates
            pass
        else:
            return _text_hashes(text, hash_key)
    return pd.util.hash_array(labels, hash_key=hash_key, categorize=False).astype(
        np.uint64, copy=False
    )


def _text_hashes(text: pa.Array, hash_key: str) -> npt.NDArray[np.uint64]:
    """``pd.util.hash_array`` of an Arrow text array's values (nulls: any value).

    With the compiled kernels, straight from the Arrow buffers (no Python
    string per value); the same hashes as pandas gives.
    """
    if native.compiled is None:
        return pd.util.hash_array(
            np.asarray(text.to_numpy(zero_copy_only=False), dtype=object),
            hash_key=hash_key,
            categorize=False,  # factorizing first is slower on typical columns
        ).astype(np.uint64, copy=False)
    text = text.cast(pa.large_string())
    _, offsets_buffer, data_buffer = text.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64)
    offsets = offsets[text.offset : text.offset + len(text) + 1]
    data = (
        np.frombuffer(data_buffer, dtype=np.uint8)
        if data_buffer is not None
        else np.zeros(1, dtype=np.uint8)
    )
    return native.hash_text(offsets, data, hash_key)


def hash_values(
    frame: pd.DataFrame, columns: Sequence[Hashable], *, hash_key: str = _PANDAS_KEY
) -> npt.NDArray[np.uint64] | None:
    """Return a stable 64-bit hash of each row's values in ``columns``.

    Each value is hashed by its canonical text (see :mod:`lsh_frame.text.typed`),
    the text every stage reads, so a typed column and the same values read as
    text (``1999`` and ``"1999"``) hash alike. Each present value's hash, salted
    by its column's name, is added up, so missing values count for nothing: a
    column with no values (or one more such column) changes no row's hash.
    Row-local (a row hashes alike in any frame, partition or order) and blind
    to the labels. None when there is no column, or when a column holds values
    without a text (stored signatures, vectors as lists): the caller then falls
    back on the labels.

    Examples
    --------
    >>> frame = pd.DataFrame({"name": ["ann", "bob", "ann"]}, index=[5, 6, 7])
    >>> hashed = hash_values(frame, ["name"])
    >>> bool(hashed[0] == hashed[2]), bool(hashed[0] == hashed[1])
    (True, False)
    >>> with_gap = frame.assign(notes=None)
    >>> bool((hash_values(with_gap, ["name", "notes"]) == hashed).all())
    True
    """
    if not columns:
        return None
    total = np.zeros(len(frame), dtype=np.uint64)
    for column in columns:
        try:
            text = canonical_text(frame[column], owner="sampling")
        except (LshFrameError, TypeError, ValueError, UnicodeEncodeError):
            return None
        present = ~np.asarray(text.is_null().to_numpy(zero_copy_only=False))
        hashed = _text_hashes(text, hash_key)
        salted = splitmix64(hashed ^ _column_salt(column))
        total += np.where(present, salted, np.uint64(0))
    return splitmix64(total)


def _column_salt(column: Hashable) -> np.uint64:
    return np.uint64(xxhash.xxh64_intdigest(repr(column).encode("utf-8")))
