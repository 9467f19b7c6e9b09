"""``merge`` on Dask: a fuzzy join shaped like :func:`pandas.merge`."""

from __future__ import annotations

from typing import Any

import dask.dataframe as dd
import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed

from lsh_frame.dask._fetch import fetch
from lsh_frame.dask._jobs import _link_scored
from lsh_frame.dask._keys import RIGHT_POSITION
from lsh_frame.dask._pairs import _empty, _persisted
from lsh_frame.dask._tables import check_shuffle, compute, table
from lsh_frame.decide.matches import fallback_attrs
from lsh_frame.jobs.link import _score_columns
from lsh_frame.jobs.merge import (
    _joined,
    _output_names,
    check_merge,
    labels_at,
    merge_layout,
    missing_dtypes,
)


def _matched(part: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    return part.loc[part["match"].to_numpy(dtype=bool), columns]


def _merged_part(
    left_rows: pd.DataFrame,
    right_rows: pd.DataFrame,
    left_at: npt.NDArray[np.int64],
    right_at: npt.NDArray[np.int64],
    scores: pd.DataFrame,
    labels: pd.Index,
    right_labels: pd.Index,
    suffixes: tuple[str, str],
    indicator: Any,
    dtypes: dict[Any, Any],
    info: dict[str, Any],
) -> pd.DataFrame:
    result = _joined(
        left_rows,
        right_rows,
        left_at,
        right_at,
        scores,
        labels,
        right_labels,
        suffixes,
        indicator,
    )
    if dtypes:
        result = result.astype(dtypes)
    result.attrs = {"lsh_frame": info}
    return result


def _fetched_at(
    positions: npt.NDArray[np.int64],
) -> tuple[pd.DataFrame, npt.NDArray[np.int64]]:
    """Return a request for the rows at ``positions`` (-1: none), where each lands."""
    present = positions >= 0
    at = np.full(positions.size, -1, dtype=np.int64)
    at[present] = np.arange(int(present.sum()))
    return pd.DataFrame({RIGHT_POSITION: positions[present]}), at


def merge(
    left: dd.DataFrame,
    right: dd.DataFrame,
    fields: Any = None,
    /,
    *,
    on: Any = None,
    how: str = "inner",
    left_on: Any = None,
    right_on: Any = None,
    min_score: Any = "auto",
    one_to_one: Any = False,
    suffixes: tuple[str, str] = ("_x", "_y"),
    indicator: bool | str = False,
    validate: str | None = None,
    threshold: float | None = None,
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    progress: bool | None = None,
    shuffle_method: str = "tasks",
    npartitions: int | None = None,
) -> dd.DataFrame:
    """Join two tables on similarity, as :func:`lsh_frame.merge`.

    The matched pairs' positions and scores are laid out on the client (as
    pandas does); the rows are joined per partition of the table whose order
    the rows follow (the left table's; the right table's with ``how="right"``,
    and for the right rows without a match of ``how="outer"``), the other
    table's rows fetched by a shuffle.
    """
    owner = "merge"
    for role, value in (("left", left), ("right", right)):
        if not isinstance(value, dd.DataFrame):
            table(value, role, owner)  # raises the type error
    plan = check_merge(
        left._meta,
        right._meta,
        fields,
        on=on,
        left_on=left_on,
        right_on=right_on,
        how=how,
        one_to_one=one_to_one,
        suffixes=suffixes,
        indicator=indicator,
        validate=validate,
        owner=owner,
    )
    method = check_shuffle(shuffle_method, owner)
    options = {
        **locals(),
        "values": False,
        "estimate": False,
        "one_to_one": plan.one_to_one,
    }
    tables, scored, attrs = _link_scored(left, right, plan.fields, options, owner)
    scored = _persisted(scored)  # decided once, read twice below
    score_names = _score_columns(scored._meta)
    keep = ["left", "right", "match", *score_names]
    matched = pd.concat(
        compute(*[delayed(_matched)(part, keep) for part in scored.to_delayed()])
    )
    total = int(sum(compute(*[delayed(len)(part) for part in scored.to_delayed()])))
    left_table = tables[0]  # its labels are read already
    right_table = table(right, "right", owner)
    left_pos, right_pos, scores, matches = merge_layout(
        matched,
        left_table.index,
        right_table.index,
        how,
        plan.one_to_one is True,
        owner,
        validate=plan.validate,
    )
    info = {
        "pairs": total,
        "matches": matches,
        "min_score": attrs.get("min_score"),
        "min_score_rule": attrs.get("min_score_rule"),
        "model": attrs.get("model"),
        "one_to_one": attrs.get("one_to_one"),
        **fallback_attrs(attrs),
    }
    labels = labels_at(left_table.index, left_pos)
    right_labels = labels_at(right_table.index, right_pos)
    # As in pandas: missing values change a side's dtypes in every partition,
    # not only in those that hold a row without that side.
    left_names, right_names = _output_names(left._meta, right._meta, suffixes)
    dtypes: dict[Any, Any] = {}
    if (left_pos < 0).any():
        dtypes.update(missing_dtypes(left._meta, left_names))
    if (right_pos < 0).any():
        dtypes.update(missing_dtypes(right._meta, right_names))
    # Each output partition is the rows of one partition of the table whose
    # order they follow ("home"); the other table's rows are fetched.
    segments = (
        [(False, np.arange(left_pos.size))]
        if how == "right"
        else [(True, np.flatnonzero(left_pos >= 0))]
        + ([(False, np.flatnonzero(left_pos < 0))] if how == "outer" else [])
    )
    pieces: list[tuple[bool, int, npt.NDArray[np.int64]]] = []
    for home_is_left, rows in segments:
        home = left_table if home_is_left else right_table
        where = home.partition_of((left_pos if home_is_left else right_pos)[rows])
        pieces += [
            (home_is_left, number, rows[where == number])
            for number in range(home.npartitions)
        ]
    requests: dict[bool, list[Any]] = {True: [], False: []}
    landing = []
    for home_is_left, _, rows in pieces:
        other_pos = right_pos[rows] if home_is_left else left_pos[rows]
        request, at = _fetched_at(other_pos)
        requests[home_is_left].append(request)
        landing.append(at)
    fetched: dict[bool, list[Any]] = {}
    for home_is_left, asked in requests.items():
        source = right_table if home_is_left else left_table
        lengths = np.array([len(request) for request in asked], np.int64)
        if not asked:
            continue
        if lengths.sum() == 0:  # nothing to fetch (e.g. outer's right-only rows)
            # A partition's own empty rows: Dask's meta may hold placeholder
            # categories that would join the result's.
            fetched[home_is_left] = [delayed(_empty)(source.parts[0])] * len(asked)
            continue
        fetched[home_is_left] = fetch(
            [delayed(request) for request in asked],
            lengths,
            RIGHT_POSITION,
            source,
            list(source.meta.columns),
            method,
        )
    taken = {True: 0, False: 0}
    parts = []
    for (home_is_left, number, rows), at in zip(pieces, landing, strict=True):
        home = left_table if home_is_left else right_table
        local = (left_pos if home_is_left else right_pos)[rows] - home.offsets[number]
        other = fetched[home_is_left][taken[home_is_left]]
        taken[home_is_left] += 1
        sides = (
            (home.parts[number], other, local, at)
            if home_is_left
            else (other, home.parts[number], at, local)
        )
        parts.append(
            delayed(_merged_part)(
                *sides,
                scores.iloc[rows].reset_index(drop=True),
                labels[rows],
                right_labels[rows],
                (suffixes[0], suffixes[1]),
                plan.indicator,
                dtypes,
                info,
            )
        )
    empty = np.empty(0, np.int64)
    meta = _merged_part(
        left._meta,
        right._meta,
        empty,
        empty,
        scores.iloc[:0],
        labels[:0],
        right_labels[:0],
        (suffixes[0], suffixes[1]),
        plan.indicator,
        dtypes,
        info,
    )
    return dd.from_delayed(parts, meta=meta, verify_meta=False)
