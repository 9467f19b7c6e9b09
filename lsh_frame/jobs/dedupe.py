"""Deduplicating one table: ``dedupe``, ``drop_duplicates``, ``duplicated``."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame import _progress
from lsh_frame._validation import check_bool, check_frame, check_progress
from lsh_frame.block.identical import filled_cells
from lsh_frame.decide.matches import fallback_attrs
from lsh_frame.errors import ConfigError
from lsh_frame.jobs.common import (
    _KEEP_CHOICES,
    _SCORED_SINK,
    _check_new_column,
    _checked_decision,
    _pipeline_options,
    _scored,
    given_columns,
)
from lsh_frame.resolve.cluster import cluster

if TYPE_CHECKING:
    from lsh_frame.decide.matches import MinScore
    from lsh_frame.jobs.common import Keep

__all__ = ["dedupe", "drop_duplicates", "duplicated"]


def _entities(
    frame: pd.DataFrame,
    fields: Any,
    options: dict[str, Any],
    progress: Any,
    owner: str,
) -> tuple[npt.NDArray[np.int64], dict[str, Any]]:
    """Entity id per row (candidates → scores → clusters) and a summary."""
    progress = check_progress(progress, owner)
    options = {
        **options,
        "min_score": _checked_decision(fields, options["min_score"], owner),
    }
    with _progress.reporting(progress, owner):
        scored = _scored(frame, fields, None, options)
        ids = cluster(frame, scored).to_numpy()
    sink = _SCORED_SINK.get()
    if sink is not None:
        sink.append(scored)
    decision = scored.attrs.get("lsh_frame", {})
    info = {
        "pairs": len(scored),
        "matches": int(scored["match"].sum()),
        "entities": int(np.unique(ids).size),
        "min_score": decision.get("min_score"),
        "min_score_rule": decision.get("min_score_rule"),
        "model": decision.get("model"),
        **({"labels": decision["labels"]} if "labels" in decision else {}),
        **fallback_attrs(decision),
    }
    return ids, info


def dedupe(
    frame: pd.DataFrame,
    fields: Any = None,
    /,
    *,
    subset: Any = None,
    threshold: float | None = None,
    min_score: MinScore = "auto",
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    labels: pd.DataFrame | None = None,
    id_column: Hashable = "cluster_id",
    size_column: Hashable = "cluster_size",
    progress: bool | None = None,
) -> pd.DataFrame:
    """Find who is the same as whom: the frame with every row's entity.

    Blocks the frame into candidate pairs (:func:`~lsh_frame.candidates`),
    scores and decides them (:func:`~lsh_frame.score`) and groups the matches
    into entities (:func:`~lsh_frame.cluster`).

    Parameters
    ----------
    frame : DataFrame
        The records. Index labels must be unique.
    fields : column label, Field, or a list of them, optional
        What to block on and compare (see :func:`~lsh_frame.candidates`):
        plain column names let the data decide. Every column of the frame
        when neither ``fields`` nor ``subset`` is given.
    subset : column label, Field, or a list of them, optional
        The same as ``fields``, under pandas' name; give one or the other.
    threshold : float, optional
        Jaccard similarity the LSH keys are planned for; chosen from the data
        by default.
    min_score : float in [0, 1], "auto", or a learned model
        How matches are decided (see :func:`~lsh_frame.score`).
    recall, num_perm, seed, max_bucket, max_pairs
        Blocking options, as in :func:`~lsh_frame.candidates`.
    labels : DataFrame, optional
        A person's answers about pairs (columns ``left``, ``right``,
        ``match``; see :func:`~lsh_frame.uncertain_pairs`): they teach the
        model and every answered pair is decided by its answer (see
        :func:`~lsh_frame.score`).
    id_column, size_column : column label
        Names of the two columns added. A frame that already has a column of
        that name raises :class:`~lsh_frame.ColumnError`.
    progress : bool or None
        Show the steps on a progress line on stderr (a widget in a notebook):
        True, False, or None (the default) to show it when stderr is a
        terminal or in a notebook, once the job has run five seconds.

    Returns
    -------
    DataFrame
        A new frame: every row and column of ``frame`` in the same order with
        the same index and dtypes, plus ``id_column`` (int64 entity id, numbered
        0, 1, 2 ... by first appearance in label order, see
        :func:`~lsh_frame.cluster`) and ``size_column`` (int64, rows in the
        entity; 1 for a row without a duplicate). ``attrs["lsh_frame"]``
        records the number of candidate pairs, of matches and of entities, and
        the decision (``min_score`` and, with ``"auto"``, the learned model;
        where too few pairs leave nothing to learn from, ``fallback`` says
        what decided and ``identifying`` which fields can join two records
        on their own).

    Examples
    --------
    >>> df = pd.DataFrame({"name": ["john smith", "jon smith", "mary jones"],
    ...                    "dob": ["1980-01-02", "1980-01-02", "1975-05-06"]})
    >>> dedupe(df, ["name", "dob"], min_score=0.8)
             name         dob  cluster_id  cluster_size
    0  john smith  1980-01-02           0             2
    1   jon smith  1980-01-02           0             2
    2  mary jones  1975-05-06           1             1
    """
    owner = "dedupe"
    frame = check_frame(frame, "frame", owner)
    fields = given_columns(fields, subset, "subset", owner, frame)
    _check_new_column(frame, id_column, "id_column", owner)
    _check_new_column(frame, size_column, "size_column", owner)
    if id_column == size_column:
        raise ConfigError(
            f"{owner} got the same label {id_column!r} for id_column and size_column."
        )
    ids, info = _entities(
        frame,
        fields,
        _pipeline_options(locals()),
        progress,
        owner,
    )
    sizes = np.bincount(ids)
    added = pd.DataFrame(
        {id_column: ids, size_column: sizes[ids].astype(np.int64)},
        index=frame.index,
    )
    result = pd.concat([frame, added], axis=1)
    result.attrs = {**frame.attrs, "lsh_frame": info}
    return result


def _completeness(frame: pd.DataFrame) -> npt.NDArray[np.int64]:
    """Per row, how many cells hold a value (not missing, not blank text)."""
    return filled_cells(frame)


def check_keep(keep: Any, owner: str) -> None:
    """Check the ``keep`` of :func:`drop_duplicates`."""
    if not callable(keep) and not (
        keep is False or (isinstance(keep, str) and keep in _KEEP_CHOICES)
    ):
        raise ConfigError(
            f"The 'keep' parameter of {owner} must be 'first', 'last', "
            f"'most_complete', False or a function. Got {keep!r} instead."
        )


def _first_per_entity(
    ids: npt.NDArray[np.int64], priority: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Position of each entity's row with the smallest priority (ties: first)."""
    order = np.lexsort((np.arange(ids.size), priority, ids))
    first = np.ones(order.size, dtype=bool)
    first[1:] = ids[order[1:]] != ids[order[:-1]]
    return np.sort(order[first])


def _kept_by_callable(
    frame: pd.DataFrame,
    ids: npt.NDArray[np.int64],
    sizes: npt.NDArray[np.int64],
    keep: Callable[..., Any],
    owner: str,
) -> npt.NDArray[np.int64]:
    """Positions chosen by ``keep(group)`` for each entity with duplicates."""
    single = np.flatnonzero(sizes[ids] == 1)
    shared = np.flatnonzero(sizes[ids] > 1)
    order = shared[np.argsort(ids[shared], kind="stable")]
    bounds = np.flatnonzero(np.diff(ids[order])) + 1
    chosen = []
    # One call per entity with duplicates: the user's function is Python anyway.
    for group_positions in np.split(order, bounds) if order.size else []:
        group = frame.iloc[group_positions]
        label = keep(group)
        if isinstance(label, pd.Series):
            label = label.name
        try:
            found = group.index.get_indexer([label])
        except TypeError:
            found = np.array([-1])
        if found[0] < 0:
            raise ConfigError(
                f"The 'keep' function given to {owner} must return the index label "
                f"of a row of the group it is given. Got {label!r} for the group "
                f"with labels {list(group.index[:5])}."
            )
        chosen.append(group_positions[found[0]])
    return np.sort(np.concatenate([single, np.asarray(chosen, dtype=np.int64)]))


def _kept_positions(
    frame: pd.DataFrame, ids: npt.NDArray[np.int64], keep: Keep, owner: str
) -> npt.NDArray[np.int64]:
    """Positions of the rows ``keep`` keeps, ascending (see drop_duplicates)."""
    sizes = np.bincount(ids) if ids.size else np.zeros(0, dtype=np.int64)
    positions = np.arange(ids.size, dtype=np.int64)
    if keep is False:
        return np.flatnonzero(sizes[ids] == 1)
    if keep == "first":
        return _first_per_entity(ids, positions)
    if keep == "last":
        return _first_per_entity(ids, -positions)
    if keep == "most_complete":
        return _first_per_entity(ids, -_completeness(frame))
    assert callable(keep)
    return _kept_by_callable(frame, ids, sizes, keep, owner)


def drop_duplicates(
    frame: pd.DataFrame,
    fields: Any = None,
    /,
    *,
    subset: Any = None,
    keep: Keep = "first",
    ignore_index: bool = False,
    threshold: float | None = None,
    min_score: MinScore = "auto",
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    labels: pd.DataFrame | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """One row per entity, like :meth:`pandas.DataFrame.drop_duplicates`.

    Rows are duplicates when :func:`dedupe` puts them in one entity; the
    result is ``frame[~duplicated(frame, ...)]``. Rows equal in every compared
    column are always duplicates, so on exact copies the result is pandas'
    (except rows whose compared values are all missing: they hold nothing to
    compare and are never duplicates).

    Parameters
    ----------
    frame : DataFrame
        The records. Index labels must be unique.
    fields : column label, Field, or a list of them, optional
        What to block on and compare (see :func:`dedupe`); every column of the
        frame when neither ``fields`` nor ``subset`` is given, as in pandas.
    subset : column label, Field, or a list of them, optional
        The same as ``fields``, under pandas' name; give one or the other.
    keep : {"first", "last", "most_complete", False} or callable
        Which row of an entity stays: the first or last in the frame's order;
        ``"most_complete"``, the one with the most filled cells (not missing,
        not blank; ties go to the first); ``False`` drops every row that has a
        duplicate. A callable gets each entity with duplicates as a DataFrame
        (rows in frame order) and returns the index label of the row to keep.
    ignore_index : bool
        Number the result 0, 1, 2 ... instead of keeping the labels.
    threshold, min_score, recall, num_perm, seed, max_bucket, max_pairs, progress
        As in :func:`dedupe`.
    labels : DataFrame, optional
        A person's answers, as in :func:`dedupe`.

    Returns
    -------
    DataFrame
        The kept rows in the frame's order, with the frame's columns, dtypes and
        (unless ``ignore_index``) index labels.

    Examples
    --------
    >>> df = pd.DataFrame({"name": ["jon smith", "john smith", "mary jones"],
    ...                    "dob": [None, "1980-01-02", "1975-05-06"]})
    >>> drop_duplicates(df, subset="name", min_score=0.8).index.tolist()
    [0, 2]
    >>> drop_duplicates(df, "name", min_score=0.8, keep="most_complete")
             name         dob
    1  john smith  1980-01-02
    2  mary jones  1975-05-06
    """
    owner = "drop_duplicates"
    frame = check_frame(frame, "frame", owner)
    fields = given_columns(fields, subset, "subset", owner, frame)
    check_keep(keep, owner)
    ignore_index = check_bool(ignore_index, "ignore_index", owner)
    ids, info = _entities(
        frame,
        fields,
        _pipeline_options(locals()),
        progress,
        owner,
    )
    result = frame.iloc[_kept_positions(frame, ids, keep, owner)]
    if ignore_index:
        result = result.reset_index(drop=True)
    result.attrs = {**frame.attrs, "lsh_frame": info}
    return result


def duplicated(
    frame: pd.DataFrame,
    fields: Any = None,
    /,
    *,
    subset: Any = None,
    keep: Keep = "first",
    threshold: float | None = None,
    min_score: MinScore = "auto",
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    labels: pd.DataFrame | None = None,
    progress: bool | None = None,
) -> pd.Series:
    """Which rows duplicate another, like :meth:`pandas.DataFrame.duplicated`.

    True for every row :func:`drop_duplicates` with the same options drops:
    ``drop_duplicates(frame, ...)`` equals ``frame[~duplicated(frame, ...)]``.
    On rows equal in every compared column the answer is pandas' (except rows
    whose compared values are all missing, never duplicates).

    Parameters
    ----------
    frame : DataFrame
        The records. Index labels must be unique.
    fields, subset : column label, Field, or a list of them, optional
        What to compare, as in :func:`drop_duplicates` (every column when
        neither is given).
    keep : {"first", "last", "most_complete", False} or callable
        The row of each entity that is not a duplicate, as in
        :func:`drop_duplicates`: ``"first"`` marks every row of an entity but
        its first in the frame's order, ``"last"`` all but its last, ``False``
        every row of an entity with several rows.
    threshold, min_score, recall, num_perm, seed, max_bucket, max_pairs, progress
        As in :func:`dedupe`.
    labels : DataFrame, optional
        A person's answers, as in :func:`dedupe`.

    Returns
    -------
    Series
        Booleans on the frame's index, in its order. ``attrs["lsh_frame"]``
        is that of :func:`dedupe`.

    Examples
    --------
    >>> df = pd.DataFrame({"name": ["jon smith", "john smith", "mary jones"]})
    >>> duplicated(df, subset="name", min_score=0.8).tolist()
    [False, True, False]
    >>> duplicated(df, "name", keep=False, min_score=0.8).tolist()
    [True, True, False]
    """
    owner = "duplicated"
    frame = check_frame(frame, "frame", owner)
    fields = given_columns(fields, subset, "subset", owner, frame)
    check_keep(keep, owner)
    ids, info = _entities(
        frame,
        fields,
        _pipeline_options(locals()),
        progress,
        owner,
    )
    marked = np.ones(ids.size, dtype=bool)
    marked[_kept_positions(frame, ids, keep, owner)] = False
    result = pd.Series(marked, index=frame.index)
    result.attrs = {**frame.attrs, "lsh_frame": info}
    return result
