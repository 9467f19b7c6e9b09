"""Stable 64-bit hashes of index labels, whatever the labels hold.

Records are sampled and ranked by a hash of their label, so that the choice
depends on the records, not on their order. pandas hashes labels stably (never
Python's salted ``hash()``) but fails on labels that are sequences, such as a
tuple in an object index; those are hashed by a text form of their own.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = ["hash_labels"]

#: pandas' own default key, so plain labels keep the hashes they always had.
_PANDAS_KEY = "0123456789123456"


def hash_labels(
    index: pd.Index, *, hash_key: str = _PANDAS_KEY
) -> npt.NDArray[np.uint64]:
    """Return a stable 64-bit hash of each label of ``index``.

    Labels pandas can hash get pandas' hash. In an object index holding labels
    that are not scalars (a tuple, a frozenset), those labels are replaced by
    their type's name and ``repr`` first, which is the same in every process
    for the tuples of strings and numbers that such labels usually are; the
    other labels keep the hash they would have had anyway.

    Examples
    --------
    >>> index = pd.Index([3, "b", ("t", 1)], dtype=object)
    >>> hash_labels(index).dtype
    dtype('uint64')
    """
    try:
        hashed = pd.util.hash_pandas_object(index, index=False, hash_key=hash_key)
    except (TypeError, ValueError):
        if index.dtype != object:
            raise
        # Only reached for such indexes: plain ones stay one vectorised call.
        values = index.to_numpy(dtype=object)
        nested = ~np.frompyfunc(pd.api.types.is_scalar, 1, 1)(values).astype(bool)
        values = values.copy()
        values[nested] = [_text_form(value) for value in values[nested]]
        hashed = pd.util.hash_pandas_object(
            pd.Index(values, dtype=object), index=False, hash_key=hash_key
        )
    return np.asarray(hashed, dtype=np.uint64)


def _text_form(value: object) -> str:
    kind = type(value)
    return f"<{kind.__module__}.{kind.__qualname__}>{value!r}"
