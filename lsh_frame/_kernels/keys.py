"""Blocking keys as uint64: LSH band keys from signatures, exact keys from text."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from lsh_frame._kernels.hashing import MULTIPLIER, splitmix64

U64 = np.uint64


def band_keys(
    signatures: npt.NDArray, bands: int, rows: int, salt: int = 0
) -> npt.NDArray[np.uint64]:
    """Hash each band of ``rows`` signature values, with the band index, to uint64.

    Parameters
    ----------
    signatures : ndarray, shape (n, num_perm)
        uint32 or uint64 MinHash values; ``bands * rows <= num_perm``.
    bands, rows : int
        The banding; band ``j`` uses columns ``j * rows`` to ``(j + 1) * rows``.
    salt : int
        Separates the keys of different fields.

    Returns
    -------
    ndarray of uint64, shape (n, bands)
        Equal keys in the same column mean the whole band agrees (up to 64-bit
        hash collisions); keys of different bands never share a column.
    """
    n = signatures.shape[0]
    seeds = np.arange(bands, dtype=U64) ^ U64(salt & 0xFFFFFFFFFFFFFFFF)
    keys = np.empty((n, bands), dtype=U64)
    keys[:] = splitmix64(seeds)[None, :]
    values = signatures[:, : bands * rows].reshape(n, bands, rows)
    for row in range(rows):
        keys *= MULTIPLIER
        keys += values[:, :, row].astype(U64)
        keys = splitmix64(keys) if row == rows - 1 else keys
    return keys
