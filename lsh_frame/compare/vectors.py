"""Vector comparisons: Hamming similarity of bit vectors, cosine of float vectors."""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame.sketch.vectors import (
    _PROJECT_ROWS,
    _check_width,
    bit_matrix,
    float_matrix,
)

__all__ = ["vector_scores"]


def vector_scores(
    left: pd.Series,
    right: pd.Series,
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
    kind: str,
    *,
    column: Hashable,
    owner: str,
) -> npt.NDArray[np.float64]:
    """Similarity in [0, 1] of the pairs: ``1 − d / D`` or ``max(cos, 0)``.

    NaN where either vector is missing.
    """
    if kind == "hamming":
        left_words, left_valid, left_bits = bit_matrix(left, column=column, owner=owner)
        right_words, right_valid, right_bits = (
            (left_words, left_valid, left_bits)
            if right is left
            else bit_matrix(right, column=column, owner=owner)
        )
        _check_width(left_bits, right_bits, column, owner)
        difference = left_words[left_positions] ^ right_words[right_positions]
        distance = np.bitwise_count(difference).sum(axis=1, dtype=np.int64)
        score = 1.0 - distance / max(left_bits, 1)
    else:
        left_vectors, left_valid = float_matrix(left, column=column, owner=owner)
        right_vectors, right_valid = (
            (left_vectors, left_valid)
            if right is left
            else float_matrix(right, column=column, owner=owner)
        )
        _check_width(left_vectors.shape[1], right_vectors.shape[1], column, owner)
        score = np.empty(left_positions.size, dtype=np.float64)
        for start in range(0, left_positions.size, _PROJECT_ROWS):
            part = slice(start, start + _PROJECT_ROWS)
            score[part] = np.einsum(
                "ij,ij->i",
                left_vectors[left_positions[part]],
                right_vectors[right_positions[part]],
            )
        score = np.clip(score, 0.0, 1.0)
    present = left_valid[left_positions] & right_valid[right_positions]
    return np.where(present, score, np.nan)
