"""Ranges of a flat array, taken element by element without a Python loop."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def expand(
    starts: npt.NDArray[np.int64], counts: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """For ranges ``[start, start + count)``: each element's range and position.

    Examples
    --------
    >>> owner, position = expand(np.array([10, 3]), np.array([2, 3]))
    >>> owner.tolist(), position.tolist()
    ([0, 0, 1, 1, 1], [10, 11, 3, 4, 5])
    """
    owner = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
    return owner, positions(starts, counts)


def positions(
    starts: npt.NDArray[np.int64], counts: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Return the elements of ranges ``[start, start + count)``, back to back.

    Examples
    --------
    >>> positions(np.array([10, 3]), np.array([2, 3])).tolist()
    [10, 11, 3, 4, 5]
    """
    # Element j of range i sits at starts[i] + (j - offsets[i]): one repeat of
    # the per-range shift instead of two gathers through the owners.
    ends = np.cumsum(counts)
    position = np.repeat(starts - (ends - counts), counts)
    position += np.arange(int(ends[-1]) if ends.size else 0, dtype=np.int64)
    return position
