"""Rows for pairs on Dask: each pair partition fetches the records it scores.

Each pair partition asks for the rows it needs: requests (row position,
asking partition, pair number) are routed to the partition holding the row,
answered with the row's columns, and routed back; the answers are checked to
be exactly one per pair.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed

from lsh_frame._validation import check_pairs, pair_positions
from lsh_frame.dask._keys import LEFT_POSITION, RIGHT_POSITION
from lsh_frame.dask._tables import TARGET, check_moved, route

if TYPE_CHECKING:
    from lsh_frame.dask._tables import Table


_ASKER, _NUMBER, _POSITION = "__lsh_asker", "__lsh_number", "__lsh_position"


def _requests(
    part: pd.DataFrame, column: str, asker: int, offsets: npt.NDArray[np.int64]
) -> pd.DataFrame:
    positions = part[column].to_numpy(np.int64)
    return pd.DataFrame(
        {
            _POSITION: positions,
            _ASKER: np.full(positions.size, asker, dtype=np.int64),
            _NUMBER: np.arange(positions.size, dtype=np.int64),
            TARGET: np.searchsorted(offsets, positions, side="right") - 1,
        }
    )


def _answer(
    requests: pd.DataFrame, part: pd.DataFrame, offset: int, columns: list[Any]
) -> pd.DataFrame:
    local = requests[_POSITION].to_numpy(np.int64) - offset
    rows = part[columns].iloc[local].reset_index(drop=True)
    rows[_NUMBER] = requests[_NUMBER].to_numpy(np.int64)
    rows[TARGET] = requests[_ASKER].to_numpy(np.int64)
    return rows


def _aligned(answers: pd.DataFrame, expected: int, method: str) -> pd.DataFrame:
    number = answers[_NUMBER].to_numpy(np.int64)
    order = np.argsort(number, kind="stable")
    if number.size != expected or not np.array_equal(
        number[order], np.arange(expected)
    ):
        check_moved(expected, number.size, "rows joined to pairs", method)
        check_moved(expected, -1, "rows joined to pairs (some twice)", method)
    return answers.drop(columns=_NUMBER).iloc[order].reset_index(drop=True)


def _local_rows(
    pairs: pd.DataFrame,
    column: str,
    part: pd.DataFrame,
    offset: int,
    columns: list[Any],
) -> pd.DataFrame:
    local = pairs[column].to_numpy(np.int64) - offset
    return part[columns].iloc[local].reset_index(drop=True)


def fetch(
    pair_parts: list[Any],
    lengths: npt.NDArray[np.int64],
    column: str,
    source: Table,
    columns: list[Any],
    method: str,
    *,
    aligned: bool = False,
) -> list[Any]:
    """For every pair partition, the ``columns`` of the rows its pairs name.

    ``column`` holds the rows' positions in ``source``. With ``aligned``, pair
    partition ``i`` names only rows of ``source`` partition ``i`` (candidates
    are built that way for their left rows) and nothing moves.
    """
    if aligned:
        return [
            delayed(_local_rows)(pairs, column, part, int(offset), columns)
            for pairs, part, offset in zip(
                pair_parts, source.parts, source.offsets, strict=False
            )
        ]
    requests = [
        delayed(_requests)(pairs, column, asker, source.offsets)
        for asker, pairs in enumerate(pair_parts)
    ]
    meta = _requests(
        pd.DataFrame({column: np.empty(0, np.int64)}), column, 0, source.offsets
    )
    routed = route(requests, meta, source.npartitions, method)
    answers = [
        delayed(_answer)(asked, part, int(offset), columns)
        for asked, part, offset in zip(
            routed, source.parts, source.offsets, strict=False
        )
    ]
    answer_meta = _answer(meta, source.meta, 0, columns)
    back = route(answers, answer_meta, len(pair_parts), method)
    return [
        delayed(_aligned)(answers_part, int(expected), method)
        for answers_part, expected in zip(back, lengths, strict=True)
    ]


def _with_positions(
    part: pd.DataFrame, left_index: pd.Index, right_index: pd.Index, owner: str
) -> pd.DataFrame:
    part = check_pairs(part, owner)
    return part.assign(
        **{
            LEFT_POSITION: pair_positions(part["left"], left_index, "left", owner),
            RIGHT_POSITION: pair_positions(part["right"], right_index, "right", owner),
        }
    )
