"""The jobs on Dask: dedupe, drop_duplicates, duplicated, link."""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

import dask.dataframe as dd
import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed

from lsh_frame import _progress
from lsh_frame._validation import check_bool, check_progress
from lsh_frame.dask._cluster import _entity_ids
from lsh_frame.dask._pairs import _mapped, _pairs, _persisted, _range_divisions, _tables
from lsh_frame.dask._tables import check_shuffle, compute, shared_pieces, table
from lsh_frame.decide.matches import fallback_attrs
from lsh_frame.decide.one_to_one import check_one_to_one
from lsh_frame.errors import ConfigError
from lsh_frame.jobs.common import _check_new_column, _checked_decision, given_columns
from lsh_frame.jobs.dedupe import (
    _completeness,
    _first_per_entity,
    _kept_by_callable,
    check_keep,
)
from lsh_frame.jobs.link import _link_columns

if TYPE_CHECKING:
    from lsh_frame.dask._tables import Table


def _entities(
    tables: list[Table],
    fields: Any,
    options: dict[str, Any],
    method: str,
    npartitions: int | None,
    owner: str,
) -> tuple[npt.NDArray[np.int64], dict[str, Any]]:
    progress = check_progress(options["progress"], owner)
    options = {
        **options,
        "values": False,
        "estimate": False,
        "one_to_one": "auto",
        "min_score": _checked_decision(fields, options["min_score"], owner),
    }
    with _progress.reporting(progress, owner):
        scored, attrs = _pairs(tables, fields, options, method, npartitions, owner)
        scored = _persisted(scored)  # decided once, read twice below
        ids, _ = _entity_ids(tables, scored, None, 1_000, owner, method)
        matches = compute(
            *[delayed(_match_count)(part) for part in scored.to_delayed()]
        )
    info = {
        "pairs": int(sum(count[0] for count in matches)),
        "matches": int(sum(count[1] for count in matches)),
        "entities": int(np.unique(ids).size),
        "min_score": attrs.get("min_score"),
        "min_score_rule": attrs.get("min_score_rule"),
        "model": attrs.get("model"),
        **fallback_attrs(attrs),
    }
    return ids, info


def _match_count(part: pd.DataFrame) -> tuple[int, int]:
    return len(part), int(part["match"].sum())


def _with_entities(
    part: pd.DataFrame,
    ids: npt.NDArray[np.int64],
    sizes: npt.NDArray[np.int64],
    id_column: Hashable,
    size_column: Hashable,
    info: dict[str, Any],
) -> pd.DataFrame:
    added = pd.DataFrame({id_column: ids, size_column: sizes}, index=part.index)
    result = pd.concat([part, added], axis=1)
    result.attrs = {**part.attrs, "lsh_frame": info}
    return result


def _columns(frame: Any, fields: Any, subset: Any, owner: str) -> Any:
    """Return the columns given (or ``subset=``), else every column of the frame."""
    every = frame._meta if isinstance(frame, dd.DataFrame) else None
    return given_columns(fields, subset, "subset", owner, every)


def dedupe(
    frame: dd.DataFrame,
    fields: Any = None,
    /,
    *,
    subset: Any = None,
    threshold: float | None = None,
    min_score: Any = "auto",
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    id_column: Hashable = "cluster_id",
    size_column: Hashable = "cluster_size",
    progress: bool | None = None,
    shuffle_method: str = "tasks",
    npartitions: int | None = None,
) -> dd.DataFrame:
    """Every row with its entity, as :func:`lsh_frame.dedupe` (same partitions)."""
    owner = "dedupe"
    fields = _columns(frame, fields, subset, owner)
    method = check_shuffle(shuffle_method, owner)
    meta = frame._meta if isinstance(frame, dd.DataFrame) else None
    if meta is not None:
        _check_new_column(meta, id_column, "id_column", owner)
        _check_new_column(meta, size_column, "size_column", owner)
        if id_column == size_column:
            raise ConfigError(
                f"{owner} got the same label {id_column!r} for id_column and "
                "size_column."
            )
    tables = _tables(frame, None, owner)
    ids, info = _entities(tables, fields, locals(), method, npartitions, owner)
    sizes = np.bincount(ids)[ids].astype(np.int64) if ids.size else ids
    left = tables[0]
    parts = [
        delayed(_with_entities)(part, piece, size, id_column, size_column, info)
        for part, piece, size in zip(
            left.parts,
            shared_pieces(left.slices(ids)),
            shared_pieces(left.slices(sizes)),
            strict=True,
        )
    ]
    empty = np.empty(0, np.int64)
    result_meta = _with_entities(left.meta, empty, empty, id_column, size_column, {})
    return dd.from_delayed(
        parts, meta=result_meta, divisions=frame.divisions, verify_meta=False
    )


def _completeness_part(part: pd.DataFrame) -> npt.NDArray[np.int64]:
    return _completeness(part)


def _kept_rows(
    part: pd.DataFrame, local: npt.NDArray[np.int64], start: int | None, info: Any
) -> pd.DataFrame:
    kept = part.iloc[local]
    if start is not None:
        kept = kept.reset_index(drop=True)
        kept.index = pd.RangeIndex(start, start + len(kept))
    kept.attrs = {**part.attrs, "lsh_frame": info}
    return kept


def _kept(
    left: Table, ids: npt.NDArray[np.int64], keep: Any, owner: str
) -> npt.NDArray[np.int64]:
    """Positions of the rows ``keep`` keeps, as :func:`lsh_frame.drop_duplicates`.

    A ``keep`` function gets each entity with duplicates as a pandas frame:
    those rows are gathered on the client to call it.
    """
    sizes = np.bincount(ids) if ids.size else np.zeros(0, dtype=np.int64)
    positions = np.arange(ids.size, dtype=np.int64)
    if keep is False:
        return np.flatnonzero(sizes[ids] == 1)
    if keep == "first":
        return _first_per_entity(ids, positions)
    if keep == "last":
        return _first_per_entity(ids, -positions)
    if keep == "most_complete":
        filled = compute(*[delayed(_completeness_part)(part) for part in left.parts])
        return _first_per_entity(ids, -np.concatenate([np.empty(0, np.int64), *filled]))
    shared = np.flatnonzero(sizes[ids] > 1)
    rows = _gather(left, shared)
    chosen = _kept_by_callable(rows, ids[shared], sizes, keep, owner)
    return np.sort(np.concatenate([np.flatnonzero(sizes[ids] == 1), shared[chosen]]))


def drop_duplicates(
    frame: dd.DataFrame,
    fields: Any = None,
    /,
    *,
    subset: Any = None,
    keep: Any = "first",
    ignore_index: bool = False,
    threshold: float | None = None,
    min_score: Any = "auto",
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    progress: bool | None = None,
    shuffle_method: str = "tasks",
    npartitions: int | None = None,
) -> dd.DataFrame:
    """One row per entity, as :func:`lsh_frame.drop_duplicates`.

    A ``keep`` function gets each entity with duplicates as a pandas frame:
    those rows are gathered on the client to call it.
    """
    owner = "drop_duplicates"
    fields = _columns(frame, fields, subset, owner)
    method = check_shuffle(shuffle_method, owner)
    check_keep(keep, owner)
    ignore_index = check_bool(ignore_index, "ignore_index", owner)
    tables = _tables(frame, None, owner)
    ids, info = _entities(tables, fields, locals(), method, npartitions, owner)
    left = tables[0]
    kept = _kept(left, ids, keep, owner)
    where = left.partition_of(kept)
    counts = np.bincount(where, minlength=left.npartitions)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    parts = [
        delayed(_kept_rows)(
            part,
            kept[where == number] - left.offsets[number],
            int(starts[number]) if ignore_index else None,
            info,
        )
        for number, part in enumerate(left.parts)
    ]
    meta = _kept_rows(left.meta, np.empty(0, np.int64), 0 if ignore_index else None, {})
    divisions = _range_divisions(counts) if ignore_index else None
    return dd.from_delayed(parts, meta=meta, divisions=divisions, verify_meta=False)


def _marked(
    part: pd.DataFrame, marked: npt.NDArray[np.bool_], info: dict[str, Any]
) -> pd.Series:
    result = pd.Series(marked, index=part.index)
    result.attrs = {**part.attrs, "lsh_frame": info}
    return result


def duplicated(
    frame: dd.DataFrame,
    fields: Any = None,
    /,
    *,
    subset: Any = None,
    keep: Any = "first",
    threshold: float | None = None,
    min_score: Any = "auto",
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    progress: bool | None = None,
    shuffle_method: str = "tasks",
    npartitions: int | None = None,
) -> dd.Series:
    """Which rows duplicate another, as :func:`lsh_frame.duplicated`.

    A boolean Series with the frame's partitions.
    """
    owner = "duplicated"
    fields = _columns(frame, fields, subset, owner)
    method = check_shuffle(shuffle_method, owner)
    check_keep(keep, owner)
    tables = _tables(frame, None, owner)
    ids, info = _entities(tables, fields, locals(), method, npartitions, owner)
    left = tables[0]
    marked = np.ones(ids.size, dtype=bool)
    marked[_kept(left, ids, keep, owner)] = False
    parts = [
        delayed(_marked)(part, piece, info)
        for part, piece in zip(
            left.parts, shared_pieces(left.slices(marked)), strict=True
        )
    ]
    meta = _marked(left.meta, np.empty(0, dtype=bool), {})
    return dd.from_delayed(
        parts, meta=meta, divisions=frame.divisions, verify_meta=False
    )


def _gather(source: Table, positions: npt.NDArray[np.int64]) -> pd.DataFrame:
    """Gather the rows at some global positions, in that order, as one frame."""
    where = source.partition_of(positions)
    pieces = compute(
        *[
            delayed(_rows)(part, positions[where == number] - source.offsets[number])
            for number, part in enumerate(source.parts)
        ]
    )
    return pd.concat(pieces) if pieces else source.meta


def _rows(part: pd.DataFrame, local: npt.NDArray[np.int64]) -> pd.DataFrame:
    return part.iloc[local]


def _link_view(
    left: dd.DataFrame,
    right: dd.DataFrame,
    fields: Any,
    left_on: Any,
    right_on: Any,
    owner: str,
) -> tuple[Any, dd.DataFrame]:
    """:func:`lsh_frame.jobs.link._link_tables` for dask frames (checked on meta)."""
    for role, value in (("left", left), ("right", right)):
        if not isinstance(value, dd.DataFrame):
            table(value, role, owner)  # raises the type error
    fields, pairs = _link_columns(
        left._meta, right._meta, fields, left_on, right_on, owner
    )
    return fields, _mapped(right, pairs)


def _link_scored(
    left: dd.DataFrame,
    right: dd.DataFrame,
    fields: Any,
    options: dict[str, Any],
    owner: str,
) -> tuple[list[Table], dd.DataFrame, dict[str, Any]]:
    method = check_shuffle(options["shuffle_method"], owner)
    mapped, view = _link_view(
        left, right, fields, options["left_on"], options["right_on"], owner
    )
    options = {
        **options,
        "min_score": _checked_decision(mapped, options["min_score"], owner),
    }
    progress = check_progress(options["progress"], owner)
    tables = _tables(left, view, owner)
    with _progress.reporting(progress, owner):
        scored, attrs = _pairs(
            tables, mapped, options, method, options["npartitions"], owner
        )
    return tables, scored, attrs


def link(
    left: dd.DataFrame,
    right: dd.DataFrame,
    fields: Any = None,
    /,
    *,
    on: Any = None,
    left_on: Any = None,
    right_on: Any = None,
    threshold: float | None = None,
    min_score: Any = "auto",
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    values: bool = False,
    one_to_one: Any = "auto",
    progress: bool | None = None,
    shuffle_method: str = "tasks",
    npartitions: int | None = None,
) -> dd.DataFrame:
    """Scored pairs between two tables, as :func:`lsh_frame.link`."""
    fields = given_columns(fields, on, "on", "link")
    check_one_to_one(one_to_one, "link", link=True)
    options = {**locals(), "estimate": False}
    _, scored, _ = _link_scored(left, right, fields, options, "link")
    return scored
