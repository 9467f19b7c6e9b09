"""The one-to-one choice on Dask: decided once, on the client, over all matches.

Matches are decided per partition, but which of a record's matches stays
depends on every match of the record, in any partition. The matched pairs are
few compared with the candidates, so they are gathered on the client (labels,
``score``, ``match_probability`` and where each sits) and
:func:`lsh_frame.decide.one_to_one.choose` runs on them as pandas runs it; the pairs
of best matches ``"auto"`` scores gather their few rows the same way. Each
partition then unmatches its own dropped pairs. The result equals pandas'.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed

from lsh_frame._kernels.pairs import sorted_unique
from lsh_frame._validation import pair_positions
from lsh_frame.compare.plan import ScorePlan
from lsh_frame.dask._tables import Table, compute
from lsh_frame.decide.matches import within_table_matches
from lsh_frame.decide.model import MatchModel
from lsh_frame.decide.one_to_one import OneToOne, choose

_ROW = "__lsh_row"


def _matched(part: pd.DataFrame) -> pd.DataFrame:
    """Return the part's matched pairs: labels, totals, row numbers in the part."""
    rows = np.flatnonzero(part["match"].to_numpy(dtype=bool))
    columns = [
        name for name in ("left", "right", "score", "match_probability") if name in part
    ]
    matched = part[columns].iloc[rows].reset_index(drop=True)
    matched[_ROW] = rows
    return matched


def _rows(part: pd.DataFrame, local: npt.NDArray[np.int64], columns: list[Any]) -> Any:
    return part[columns].iloc[local]


def _gathered(
    source: Table, positions: npt.NDArray[np.int64], columns: list[Any]
) -> pd.DataFrame:
    """Gather the rows at some sorted global positions, in order, as one frame."""
    where = source.partition_of(positions)
    pieces = compute(
        *[
            delayed(_rows)(part, positions[where == number] - offset, columns)
            for number, (part, offset) in enumerate(
                zip(source.parts, source.offsets, strict=False)
            )
            if (where == number).any()
        ]
    )
    return pd.concat(pieces) if pieces else source.meta[columns]


def with_match(
    part: pd.DataFrame,
    rows: npt.NDArray[np.int64],
    value: bool,
    attrs: dict[str, Any],
) -> pd.DataFrame:
    """Return the partition with ``match`` set to ``value`` at ``rows``, and attrs."""
    if rows.size:
        match = part["match"].to_numpy(dtype=bool).copy()
        match[rows] = value
        part = part.assign(match=match)
    part.attrs = {**part.attrs, "lsh_frame": attrs}
    return part


def no_choice(rule: OneToOne, link: bool) -> dict[str, Any]:
    """Return the record of a one-to-one choice that has nothing to look at."""
    empty = np.empty(0, dtype=np.int64)
    return choose(
        rule,
        link=link,
        left=empty,
        right=empty,
        probability=None,
        score=np.empty(0),
        within=lambda *_: (np.empty(0, dtype=bool), None, np.empty(0)),
    )[1]


def one_to_one_parts(
    decided: list[Any],
    tables: list[Table],
    rule: OneToOne,
    plan: ScorePlan,
    model: MatchModel | None,
    cut: float | None,
    columns: list[Any],
    attrs: dict[str, Any],
    owner: str,
    shape: dict[str, Any] | None = None,
) -> tuple[list[Any], dict[str, Any]]:
    """Decided pair partitions after the one-to-one choice, and the new attrs.

    ``decided`` are persisted, decided pair partitions of a link; ``columns``
    those the fields read (to gather rows for ``"auto"``).
    """
    matched = compute(*[delayed(_matched)(part) for part in decided])
    sizes = np.array([len(part) for part in matched], dtype=np.int64)
    every = pd.concat(matched, ignore_index=True)
    parts_of = np.repeat(np.arange(len(matched)), sizes)
    left = pair_positions(every["left"], tables[0].index, "left", owner)
    right = pair_positions(every["right"], tables[-1].index, "right", owner)
    probability = (
        every["match_probability"].to_numpy(dtype=np.float64)
        if "match_probability" in every
        else None
    )

    def within(
        side: str, first: npt.NDArray[np.int64], second: npt.NDArray[np.int64]
    ) -> Any:
        source = tables[0] if side == "left" else tables[-1]
        rows = sorted_unique(np.concatenate([first, second]))
        gathered = _gathered(source, rows, columns)
        return within_table_matches(
            plan,
            model,
            cut,
            gathered,
            np.searchsorted(rows, first),
            np.searchsorted(rows, second),
            owner,
        )

    keep, info = choose(
        rule,
        link=True,
        left=left,
        right=right,
        probability=probability,
        score=every["score"].to_numpy(dtype=np.float64),
        within=within,
        shape=shape,
    )
    attrs = {**attrs, "one_to_one": info}
    local = every[_ROW].to_numpy(dtype=np.int64)
    dropped = ~keep
    result = [
        delayed(with_match)(part, local[dropped & (parts_of == number)], False, attrs)
        for number, part in enumerate(decided)
    ]
    return result, attrs
