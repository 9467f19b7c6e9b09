"""The everyday jobs in one call each: dedupe, drop duplicates, link, fuzzy merge.

Each job is the pipeline of the stages (:func:`~lsh_frame.candidates`,
:func:`~lsh_frame.score`, :func:`~lsh_frame.cluster`) with their defaults, shaped
like the pandas call it stands in for:

- :func:`dedupe` adds an entity id and the entity's size to every row;
- :func:`drop_duplicates` keeps one row per entity, like
  :meth:`pandas.DataFrame.drop_duplicates`, and :func:`duplicated` marks the
  others, like :meth:`pandas.DataFrame.duplicated`;
- :func:`link` returns the scored pairs between two tables;
- :func:`merge` joins two tables on similarity, like :func:`pandas.merge`.

They take the columns positionally or under pandas' keyword (``subset=`` for
the one-table jobs, ``on=`` for the two-table ones); without columns the
one-table jobs use every column, as pandas does.

The user's frames are never modified; outputs keep their index labels and the
dtypes of their columns (except, as in :func:`pandas.merge`, columns of the
right table that receive missing values for unmatched left rows).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame import _progress
from lsh_frame._validation import (
    check_bool,
    check_choice,
    check_columns,
    present,
    refuse_set,
    right_columns,
)
from lsh_frame.blocking import _as_fields, _check_frame, field_columns, mapped_columns
from lsh_frame.cluster import cluster
from lsh_frame.compare import MatchModel, MinScore, _check_min_score, _positions
from lsh_frame.compare import pairs as scored_pairs
from lsh_frame.errors import ColumnError, ConfigError, ConfigTypeError, MergeError
from lsh_frame.identical import filled_cells
from lsh_frame.one_to_one import (
    OneToOne,
    check_one_to_one,
    match_rank,
    one_to_one_edges,
)

__all__ = ["dedupe", "drop_duplicates", "duplicated", "link", "merge"]

Keep = Literal["first", "last", "most_complete"] | Literal[False] | Callable[..., Any]
_KEEP_CHOICES = ("first", "last", "most_complete")


def _scored(
    frame: pd.DataFrame,
    fields: Any,
    other: pd.DataFrame | None,
    options: dict[str, Any],
) -> pd.DataFrame:
    return scored_pairs(frame, fields, other=other, **options)


#: The blocking and scoring options every job passes on to the stages.
_PIPELINE_OPTIONS = (
    "threshold",
    "min_score",
    "recall",
    "num_perm",
    "seed",
    "max_bucket",
    "max_pairs",
)


def _pipeline_options(arguments: dict[str, Any]) -> dict[str, Any]:
    """Pick the pipeline options out of a job's arguments (its ``locals()``)."""
    return {name: arguments[name] for name in _PIPELINE_OPTIONS}


def _checked_decision(fields: Any, min_score: Any, owner: str) -> Any:
    """Check ``min_score`` (and a model's fields) before any expensive work."""
    decision = _check_min_score(min_score, owner)
    if isinstance(decision, MatchModel):
        decision.check_fields(_as_fields(fields, owner)[0], owner)
    return decision


def _check_new_column(
    frame: pd.DataFrame, name: Any, parameter: str, owner: str
) -> None:
    if not isinstance(name, Hashable) or name is None:
        raise ConfigTypeError(
            f"The '{parameter}' parameter of {owner} must be a column label. "
            f"Got {name!r} instead."
        )
    if name in frame.columns:
        raise ColumnError(
            f"{owner} would add a column {name!r}, but the frame already has one. "
            f"Pass {parameter}= to name the new column differently."
        )


def given_columns(
    fields: Any,
    keyword_value: Any,
    keyword: str,
    owner: str,
    every_column: pd.DataFrame | None = None,
) -> Any:
    """Return the columns given positionally or under pandas' keyword.

    ``every_column`` (the frame, for the one-table jobs) stands in when
    neither is given: all its columns, as pandas' ``subset=None``. Both given
    is an error, as in Python for an argument passed twice.
    """
    if fields is not None and keyword_value is not None:
        raise ConfigTypeError(
            f"{owner} got the columns twice: as its first argument ({fields!r}) and "
            f"as {keyword}={keyword_value!r}. Pass them once, either way."
        )
    chosen = fields if fields is not None else keyword_value
    if chosen is not None or every_column is None:
        return chosen
    if every_column.shape[1] == 0:
        raise ConfigError(
            f"{owner} was given no columns and the frame has none. Pass the "
            f"columns to compare ({keyword}=[...])."
        )
    return list(every_column.columns)


# ----------------------------------------------------------------------------
# Dedupe


#: Where :func:`_entities` also leaves the scored pairs, when someone asks
#: (:func:`keeping_scored_pairs`; the command line writes them for review).
_SCORED_SINK: ContextVar[list[pd.DataFrame] | None] = ContextVar(
    "lsh_frame_scored_pairs", default=None
)


@contextmanager
def keeping_scored_pairs() -> Iterator[list[pd.DataFrame]]:
    """Collect the scored pairs of the dedupe jobs run inside the block."""
    kept: list[pd.DataFrame] = []
    token = _SCORED_SINK.set(kept)
    try:
        yield kept
    finally:
        _SCORED_SINK.reset(token)


def _entities(
    frame: pd.DataFrame,
    fields: Any,
    options: dict[str, Any],
    progress: Any,
    owner: str,
) -> tuple[npt.NDArray[np.int64], dict[str, Any]]:
    """Entity id per row (candidates → scores → clusters) and a summary."""
    progress = check_bool(progress, "progress", owner)
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
    id_column: Hashable = "cluster_id",
    size_column: Hashable = "cluster_size",
    progress: bool = False,
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
    id_column, size_column : column label
        Names of the two columns added. A frame that already has a column of
        that name raises :class:`~lsh_frame.ColumnError`.
    progress : bool
        Show the steps on a progress line on stderr.

    Returns
    -------
    DataFrame
        A new frame: every row and column of ``frame`` in the same order with
        the same index and dtypes, plus ``id_column`` (int64 entity id, numbered
        0, 1, 2 ... by first appearance in label order, see
        :func:`~lsh_frame.cluster`) and ``size_column`` (int64, rows in the
        entity; 1 for a row without a duplicate). ``attrs["lsh_frame"]``
        records the number of candidate pairs, of matches and of entities, and
        the decision (``min_score`` and, with ``"auto"``, the learned model).

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
    frame = _check_frame(frame, "frame", owner)
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
    progress: bool = False,
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
    frame = _check_frame(frame, "frame", owner)
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
    progress: bool = False,
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
    frame = _check_frame(frame, "frame", owner)
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


# ----------------------------------------------------------------------------
# Link and merge


def _label_list(value: Any, name: str, owner: str) -> list[Any]:
    refuse_set(value, name, owner)
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        return [value]
    if not value:
        raise ConfigError(f"The '{name}' parameter of {owner} names no column.")
    return list(value)


def _link_columns(
    left: pd.DataFrame,
    right: pd.DataFrame,
    fields: Any,
    left_on: Any,
    right_on: Any,
    owner: str,
) -> tuple[Any, list[tuple[Hashable, Hashable]] | None]:
    """Return the fields, and which right column stands for each left column.

    ``fields`` name left columns. With ``right_on`` alone it gives the right
    table's names of the fields' columns; with ``left_on`` too, ``right_on[i]``
    stands for ``left_on[i]`` and ``fields`` default to ``left_on``. The pairs
    are those of :func:`~lsh_frame._validation.right_columns` (None: same
    names); ``left`` and ``right`` may be empty frames of the tables' columns.
    """
    if left_on is not None and right_on is None:
        raise ConfigError(
            f"{owner} takes 'left_on' and 'right_on' together. Got "
            f"left_on={left_on!r} and right_on={right_on!r}."
        )
    if left_on is None:
        if fields is None:
            raise ConfigError(
                f"{owner} needs the fields to match on: column labels present in "
                "both tables (or Field objects), positionally or as on=, or left "
                "columns with right_on= naming the right table's (or left_on= and "
                "right_on=)."
            )
        return fields, mapped_columns(left, fields, right, right_on, owner, "right")
    left_on = check_columns(left, _label_list(left_on, "left_on", owner), owner)
    if fields is None:
        fields = left_on
    named = set(field_columns(fields, owner))
    missing = sorted(map(str, named - set(left_on)))
    if missing:
        raise ColumnError(
            f"With left_on and right_on, the fields of {owner} name left columns "
            f"listed in left_on; {missing} are not. Add them to left_on and their "
            "right table columns to right_on."
        )
    pairs = right_columns(
        right, left_on, right_on, owner=owner, role="right", left_source="left_on"
    )
    return fields, pairs


def _link_tables(
    left: pd.DataFrame,
    right: pd.DataFrame,
    fields: Any,
    left_on: Any,
    right_on: Any,
    owner: str,
) -> tuple[Any, pd.DataFrame]:
    """Return the fields, and ``right`` seen under ``left``'s column names.

    The right table's mapped columns are presented under the left names (a new
    frame holding only those columns, sharing their data; ``right`` itself is
    untouched). See :func:`_link_columns`.
    """
    fields, pairs = _link_columns(left, right, fields, left_on, right_on, owner)
    return fields, right if pairs is None else present(right, pairs)


def link(
    left: pd.DataFrame,
    right: pd.DataFrame,
    fields: Any = None,
    /,
    *,
    on: Any = None,
    left_on: Any = None,
    right_on: Any = None,
    threshold: float | None = None,
    min_score: MinScore = "auto",
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    values: bool = False,
    one_to_one: OneToOne = "auto",
    progress: bool = False,
) -> pd.DataFrame:
    """Scored pairs of records of two tables that may be the same entity.

    :func:`~lsh_frame.pairs` with ``other=right``, plus column mapping.

    Parameters
    ----------
    left, right : DataFrame
        The two tables. Index labels must be unique within each.
    fields : column label, Field, or a list of them, optional
        What to block on and compare; columns present in both tables. With
        ``right_on`` they name left columns (``left_on`` by default when it is
        given).
    on : column label, Field, or a list of them, optional
        The same as ``fields``, under pandas' name; give one or the other.
    left_on, right_on : column label, list of labels, or dict, optional
        Columns to match when the names differ, as in :func:`pandas.merge`.
        ``right_on`` alone names the right table's column for each column of
        ``fields`` (flattened over the fields, each column once, in order), or
        is a mapping ``{left column: right column}`` (columns it leaves out
        keep their name). With ``left_on`` too, ``left_on[i]`` is matched with
        ``right_on[i]``. The result equals renaming the right table's columns
        first; ``right`` is not modified.
    threshold, min_score, recall, num_perm, seed, max_bucket, max_pairs
        As in :func:`~lsh_frame.pairs`.
    values : bool
        Also show both records' values of every field side by side.
    one_to_one : "auto", True or False
        Whether each record matches at most one record of the other table
        (see :func:`~lsh_frame.score`): ``"auto"`` (default) decides from the
        data, True always, False never.
    progress : bool
        Show the steps on a progress line on stderr.

    Returns
    -------
    DataFrame
        The scored pairs of :func:`~lsh_frame.score`: ``left`` holds labels of
        ``left``, ``right`` labels of ``right``; every candidate pair, with
        ``match`` saying which are matches. ``attrs["lsh_frame"]["one_to_one"]``
        says whether the one-to-one choice applied, and why.

    Examples
    --------
    >>> people = pd.DataFrame({"name": ["john smith", "mary jones"]})
    >>> staff = pd.DataFrame({"full_name": ["jon smith", "peter pan"]},
    ...                      index=["s1", "s2"])
    >>> linked = link(people, staff, left_on="name", right_on="full_name",
    ...               threshold=0.3, min_score=0.8)
    >>> linked[["left", "right", "name_score", "match"]].round(3)
       left right  name_score  match
    0     0    s1       0.947   True
    1     1    s1       0.526  False
    >>> same = link(people, staff, "name", right_on={"name": "full_name"},
    ...             threshold=0.3, min_score=0.8)
    >>> same.equals(linked)
    True
    """
    owner = "link"
    left = _check_frame(left, "left", owner)
    right = _check_frame(right, "right", owner)
    fields = given_columns(fields, on, "on", owner)
    progress = check_bool(progress, "progress", owner)
    one_to_one = check_one_to_one(one_to_one, owner, link=True)
    fields, view = _link_tables(left, right, fields, left_on, right_on, owner)
    min_score = _checked_decision(fields, min_score, owner)
    with _progress.reporting(progress, owner):
        return _scored(
            left,
            fields,
            view,
            {
                **_pipeline_options(locals()),
                "values": values,
                "one_to_one": one_to_one,
            },
        )


def _score_columns(scored: pd.DataFrame) -> list[str]:
    """Return the columns of the scored pairs a merge carries: scores, totals."""
    fields = [
        column
        for column in scored.columns
        if isinstance(column, str) and column.endswith("_score") and column != "score"
    ]
    totals = [c for c in ("score", "match_probability") if c in scored.columns]
    return fields + totals


#: The merged frame's column holding each row's label in the right table.
RIGHT_LABEL = "index_right"
#: The name ``indicator=True`` gives the indicator column, as in pandas.
INDICATOR = "_merge"
#: The indicator's categories, in pandas' order.
INDICATOR_CATEGORIES = ("left_only", "right_only", "both")
_HOWS = ("inner", "left", "right", "outer")
#: ``validate`` values, as in pandas: (left rows unique, right rows unique).
_VALIDATE = {
    "one_to_one": (True, True),
    "1:1": (True, True),
    "one_to_many": (True, False),
    "1:m": (True, False),
    "many_to_one": (False, True),
    "m:1": (False, True),
    "many_to_many": (False, False),
    "m:m": (False, False),
}


@dataclass(frozen=True)
class MergePlan:
    """What :func:`check_merge` read from a merge's options."""

    fields: Any  # as given (or ``on``), for link
    mapped: Any  # the fields, in the left table's names
    one_to_one: OneToOne
    indicator: Hashable | None
    validate: str | None


def check_merge(
    left: pd.DataFrame,
    right: pd.DataFrame,
    fields: Any,
    *,
    on: Any,
    left_on: Any,
    right_on: Any,
    how: Any,
    one_to_one: Any,
    suffixes: Any,
    indicator: Any,
    validate: Any,
    owner: str,
) -> MergePlan:
    """Check a merge's options and output names, before any expensive work.

    ``left`` and ``right`` may be empty frames of the tables' columns (Dask's
    meta).
    """
    fields = given_columns(fields, on, "on", owner)
    check_choice(how, "how", owner, _HOWS)
    if (
        not isinstance(suffixes, (tuple, list))
        or len(suffixes) != 2
        or not all(isinstance(suffix, str) for suffix in suffixes)
    ):
        raise ConfigTypeError(
            f"The 'suffixes' parameter of {owner} must be a pair of strings. "
            f"Got {suffixes!r} instead."
        )
    if suffixes[0] == suffixes[1]:
        raise ConfigError(
            f"The 'suffixes' of {owner} must differ. Got {tuple(suffixes)!r}."
        )
    flag = check_one_to_one(one_to_one, owner, link=True)
    if indicator is True:
        indicator = INDICATOR
    elif indicator is False or indicator is None:
        indicator = None
    elif not isinstance(indicator, str):
        raise ConfigTypeError(
            f"The 'indicator' parameter of {owner} must be True, False or the name "
            f"of the column to add. Got {indicator!r} instead."
        )
    if validate is not None:
        check_choice(validate, "validate", owner, _VALIDATE)
    mapped, _ = _link_columns(left, right, fields, left_on, right_on, owner)
    specs, _ = _as_fields(mapped, owner)
    left_names, right_names = _output_names(left, right, suffixes)
    added = [f"{spec.label}_score" for spec in specs]
    added += ["score", "match_probability", RIGHT_LABEL]
    if indicator is not None:
        added.append(indicator)
    _check_output_names(left_names + right_names, added, owner)
    return MergePlan(fields, mapped, flag, indicator, validate)


def merge(
    left: pd.DataFrame,
    right: pd.DataFrame,
    fields: Any = None,
    /,
    *,
    on: Any = None,
    how: Literal["inner", "left", "right", "outer"] = "inner",
    left_on: Any = None,
    right_on: Any = None,
    min_score: MinScore = "auto",
    one_to_one: OneToOne = False,
    suffixes: tuple[str, str] = ("_x", "_y"),
    indicator: bool | str = False,
    validate: str | None = None,
    threshold: float | None = None,
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    progress: bool = False,
) -> pd.DataFrame:
    """Join two tables on similarity, like :func:`pandas.merge`.

    Every matched pair of :func:`link` becomes a row holding the left record,
    the right record and the pair's scores; ``how`` adds the records without
    a match, as pandas adds the rows whose key has no partner.

    Parameters
    ----------
    left, right : DataFrame
        The two tables. Index labels must be unique within each.
    fields : column label, Field, or a list of them, optional
        What to match on (see :func:`link`).
    on : column label, Field, or a list of them, optional
        The same as ``fields``, under pandas' name; give one or the other.
    how : {"inner", "left", "right", "outer"}
        ``"inner"``: matched pairs only. ``"left"``: also every left row
        without a match, once, with missing values in the right columns.
        ``"right"``: the matched pairs and every right row without a match.
        ``"outer"``: both.
    left_on, right_on : column label, list of labels, or dict, optional
        Columns to match when the names differ: ``fields`` with ``right_on``
        (a list of the right table's names of the fields' columns, or a mapping
        ``{left column: right column}``), or ``left_on`` with ``right_on``
        (see :func:`link`).
    min_score : float in [0, 1], "auto", or a learned model
        How matches are decided (see :func:`~lsh_frame.score`).
    one_to_one : bool or "auto"
        Each record matches at most one record of the other table: the pairs
        are taken greedily from the most to the least likely
        (``match_probability``, then ``score``, then row order), skipping any
        pair whose left or right record is already taken. With ``how="left"``
        every left row then appears exactly once. ``"auto"`` does so when the
        data says that neither table holds duplicates (see
        :func:`~lsh_frame.score`).
    suffixes : (str, str)
        Added to column names present in both tables.
    indicator : bool or str
        Add a categorical column saying where each row comes from, as in
        :func:`pandas.merge`: ``"both"`` (a matched pair), ``"left_only"``
        or ``"right_only"``; named ``"_merge"``, or the name given.
    validate : {"one_to_one", "one_to_many", "many_to_one", "many_to_many"}, optional
        Check the matches, as pandas checks the keys (``"1:1"``, ``"1:m"``,
        ``"m:1"`` and ``"m:m"`` too): ``"one_to_one"``, no left row matches
        several right rows and no right row several left rows;
        ``"one_to_many"``, no right row matches several left rows;
        ``"many_to_one"``, no left row matches several right rows. Checked
        after ``one_to_one``; a broken rule raises
        :class:`~lsh_frame.MergeError` naming the records.
    threshold, recall, num_perm, seed, max_bucket, max_pairs, progress
        As in :func:`link`.

    Returns
    -------
    DataFrame
        Left columns, ``index_right`` (the right row's label), right columns
        (names in both tables get ``suffixes``), then each field's
        ``<field>_score``, ``score`` and ``match_probability`` (with
        ``min_score="auto"``), then the indicator if asked. The index holds
        the left row's label (repeated when a left row matches several right
        rows). Rows follow the left table's order, a left row's matches best
        first; with ``how="right"`` they follow the right table's order, a
        right row's matches best first; with ``how="outer"`` the right rows
        without a match come last, in the right table's order. Where a row
        has no left record (``"right"``, ``"outer"``) its index label is
        missing, and where it has no right record ``index_right`` is: as in
        :func:`pandas.merge`, the labels and the columns that receive missing
        values change dtype (integers become floats); other dtypes are kept.
        ``attrs["lsh_frame"]`` records ``pairs``, ``matches``, the decision and
        ``one_to_one``.

    Raises
    ------
    MergeError
        When the matches break ``validate``.

    Examples
    --------
    >>> people = pd.DataFrame({"name": ["john smith", "mary jones"],
    ...                        "city": ["leeds", "york"]}, index=["p1", "p2"])
    >>> staff = pd.DataFrame({"name": ["jon smith", "peter pan"],
    ...                       "team": ["sales", "ops"]}, index=["s1", "s2"])
    >>> merged = merge(people, staff, on="name", how="left", threshold=0.3,
    ...                min_score=0.8)
    >>> merged.round(3)
            name_x   city index_right     name_y   team  name_score  score
    p1  john smith  leeds          s1  jon smith  sales       0.947  0.947
    p2  mary jones   york         NaN        NaN    NaN         NaN    NaN
    >>> outer = merge(people, staff, on="name", how="outer", indicator=True,
    ...               threshold=0.3, min_score=0.8)
    >>> outer[["name_x", "index_right", "name_y", "_merge"]]
             name_x index_right     name_y      _merge
    p1   john smith          s1  jon smith        both
    p2   mary jones         NaN        NaN   left_only
    NaN         NaN          s2  peter pan  right_only
    """
    owner = "merge"
    left = _check_frame(left, "left", owner)
    right = _check_frame(right, "right", owner)
    # Everything that can be checked before blocking is: names and decision.
    plan = check_merge(
        left,
        right,
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
    min_score = _checked_decision(plan.mapped, min_score, owner)
    scored = link(
        left,
        right,
        plan.fields,
        left_on=left_on,
        right_on=right_on,
        threshold=threshold,
        min_score=min_score,
        recall=recall,
        num_perm=num_perm,
        seed=seed,
        max_bucket=max_bucket,
        max_pairs=max_pairs,
        one_to_one=plan.one_to_one,
        progress=progress,
    )
    left_pos, right_pos, scores, matches = merge_layout(
        scored,
        left.index,
        right.index,
        how,
        plan.one_to_one is True,
        owner,
        validate=plan.validate,
    )
    result = _joined(
        left,
        right,
        left_pos,
        right_pos,
        scores,
        labels_at(left.index, left_pos),
        labels_at(right.index, right_pos),
        suffixes,
        plan.indicator,
    )
    decision = scored.attrs.get("lsh_frame", {})
    result.attrs = {
        "lsh_frame": {
            "pairs": len(scored),
            "matches": matches,
            "min_score": decision.get("min_score"),
            "min_score_rule": decision.get("min_score_rule"),
            "model": decision.get("model"),
            "one_to_one": decision.get("one_to_one"),
        }
    }
    return result


def _several(
    records: npt.NDArray[np.int64],
    partners: npt.NDArray[np.int64],
    record_index: pd.Index,
    partner_index: pd.Index,
    side: str,
    other: str,
) -> str | None:
    """Say which records of one side match several of the other (None: none)."""
    counts = np.bincount(records, minlength=len(record_index))
    over = np.flatnonzero(counts > 1)
    if not over.size:
        return None
    examples = []
    labels = record_index.take(over[:3]).tolist()  # Python scalars, for repr
    for record, label in zip(over[:3], labels, strict=True):
        matched = partner_index.take(partners[records == record][:4]).tolist()
        shown = ", ".join(repr(partner) for partner in matched)
        more = ", ..." if counts[record] > 4 else ""
        examples.append(
            f"{side} row {label!r} matches {counts[record]} {other} rows "
            f"({shown}{more})"
        )
    rows = "row matches" if over.size == 1 else "rows match"
    return f"{over.size:,} {side} {rows} several {other} rows: " + "; ".join(examples)


def check_validate(
    validate: str | None,
    left_pos: npt.NDArray[np.int64],
    right_pos: npt.NDArray[np.int64],
    left_index: pd.Index,
    right_index: pd.Index,
    owner: str,
) -> None:
    """Raise :class:`MergeError` when the matched pairs break ``validate``."""
    if validate is None:
        return
    left_unique, right_unique = _VALIDATE[validate]
    problems = []
    if right_unique:
        problems.append(
            _several(left_pos, right_pos, left_index, right_index, "left", "right")
        )
    if left_unique:
        problems.append(
            _several(right_pos, left_pos, right_index, left_index, "right", "left")
        )
    found = [problem for problem in problems if problem is not None]
    if found:
        raise MergeError(
            f"The matches of {owner} are not {validate!r} (validate={validate!r}): "
            + ". ".join(found)
            + ". Keep each record's best match with one_to_one=True, raise "
            "min_score, or validate a looser rule ('one_to_many', 'many_to_one' "
            "or 'many_to_many')."
        )


def merge_layout(
    scored: pd.DataFrame,
    left_index: pd.Index,
    right_index: pd.Index,
    how: str,
    one_to_one: bool,
    owner: str,
    validate: str | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], pd.DataFrame, int]:
    """Rows of a merge: left and right positions (-1: none), scores, matches.

    ``scored`` needs only the matched pairs (other rows are ignored); rows come
    in the left table's order, a left row's matches best first (the right
    table's with ``how="right"``; ``"outer"`` puts the right rows without a
    match last). ``validate`` is checked on the pairs kept.
    """
    matched = scored[scored["match"].to_numpy(dtype=bool)]
    left_pos = _positions(matched["left"], left_index, "left", owner)
    right_pos = _positions(matched["right"], right_index, "right", owner)
    probability = (
        matched["match_probability"].to_numpy(dtype=np.float64)
        if "match_probability" in matched
        else np.zeros(len(matched))
    )
    score_values = matched["score"].to_numpy(dtype=np.float64)
    # Best first: most likely, then highest score, then row order.
    rank = match_rank(left_pos, right_pos, probability, score_values)
    if one_to_one:
        keep = one_to_one_edges(left_pos, right_pos, rank)
        left_pos, right_pos, rank = left_pos[keep], right_pos[keep], rank[keep]
        matched = matched[keep]
    check_validate(validate, left_pos, right_pos, left_index, right_index, owner)
    scores = matched[_score_columns(scored)].reset_index(drop=True)
    matches = len(matched)
    if how in ("left", "outer"):
        alone = np.setdiff1d(np.arange(len(left_index)), left_pos)
        left_pos = np.concatenate([left_pos, alone])
        right_pos = np.concatenate([right_pos, np.full(alone.size, -1)])
    if how in ("right", "outer"):
        alone = np.setdiff1d(np.arange(len(right_index)), right_pos)
        left_pos = np.concatenate([left_pos, np.full(alone.size, -1)])
        right_pos = np.concatenate([right_pos, alone])
    # Rows without a match have no rank to keep: one row per record.
    rank = np.concatenate([rank, np.full(left_pos.size - rank.size, rank.size)])
    scores = scores.reindex(np.arange(left_pos.size))
    if how == "right":
        home = right_pos
    else:
        home = np.where(left_pos >= 0, left_pos, len(left_index) + right_pos)
    order = np.lexsort((rank, home))
    scores = scores.iloc[order].reset_index(drop=True)
    return left_pos[order], right_pos[order], scores, matches


def labels_at(index: pd.Index, positions: npt.NDArray[np.int64]) -> pd.Index:
    """Return the labels at some positions; -1 gives a missing label (pd.merge's).

    With a missing label the dtype changes as pandas changes it (integers
    become floats); the name is kept.
    """
    if positions.size == 0 or (positions >= 0).all():
        return index.take(positions)
    name = index.name
    if isinstance(index, pd.MultiIndex):  # a tuple per label, and the gaps
        name, index = None, index.to_flat_index()
    labels = pd.Series(index, copy=False).reset_index(drop=True).reindex(positions)
    return pd.Index(labels, name=name)


def missing_dtypes(meta: pd.DataFrame, names: Sequence[Any]) -> dict[Any, Any]:
    """Return the dtypes of ``meta``'s columns once they hold a missing value.

    Categoricals are left out: they stay categorical (and under Dask their
    categories may be unknown, so they are not cast).
    """
    missing = meta.reset_index(drop=True).reindex([0]).dtypes
    return {
        name: dtype
        for name, dtype in zip(names, missing, strict=True)
        if not isinstance(dtype, pd.CategoricalDtype)
    }


def _output_names(
    left: pd.DataFrame, right: pd.DataFrame, suffixes: Sequence[str]
) -> tuple[list[Any], list[Any]]:
    """Column names of the left and right parts: names in both get suffixes."""
    shared = set(left.columns) & set(right.columns)

    def renamed(columns: pd.Index, suffix: str) -> list[Any]:
        return [
            f"{column}{suffix}" if column in shared else column for column in columns
        ]

    return renamed(left.columns, suffixes[0]), renamed(right.columns, suffixes[1])


def _check_output_names(names: list[Any], added: list[Any], owner: str) -> None:
    repeated = sorted({str(name) for name in names if names.count(name) > 1})
    if repeated:
        raise ColumnError(
            f"{owner} cannot name its output columns uniquely: {repeated} would "
            "appear twice after adding the suffixes. Choose other suffixes or "
            "rename those columns."
        )
    clash = sorted({str(name) for name in added if name in names})
    if clash:
        raise ColumnError(
            f"{owner} adds the columns {clash}, but a table already has columns "
            "of those names. Rename them first, for example with "
            "df.rename(columns={...}) (or name the indicator=)."
        )
    if len(set(added)) < len(added):
        raise ColumnError(
            f"{owner} would add two columns named alike: {added}. Name the "
            "indicator= differently."
        )


def _rows_at(frame: pd.DataFrame, positions: npt.NDArray[np.int64]) -> pd.DataFrame:
    """Return the rows at some positions, numbered from 0; -1 gives a missing row."""
    if (positions >= 0).all():
        return frame.iloc[positions].reset_index(drop=True)
    # Position -1 is not a row: reindex leaves it missing, as pd.merge does.
    return frame.reset_index(drop=True).reindex(positions).reset_index(drop=True)


def _joined(
    left: pd.DataFrame,
    right: pd.DataFrame,
    left_pos: npt.NDArray[np.int64],
    right_pos: npt.NDArray[np.int64],
    scores: pd.DataFrame,
    labels: pd.Index,
    right_labels: pd.Index,
    suffixes: Sequence[str],
    indicator: Hashable | None,
) -> pd.DataFrame:
    """Left rows, the right label, right rows, scores and the indicator.

    ``left_pos`` and ``right_pos`` are positions in ``left`` and ``right``
    (-1: none); ``labels`` become the index and ``right_labels`` the
    ``index_right`` column.
    """
    left_names, right_names = _output_names(left, right, suffixes)
    left_part = _rows_at(left, left_pos)
    left_part.columns = left_names
    right_part = _rows_at(right, right_pos)
    right_part.columns = right_names
    pieces = [
        left_part,
        pd.DataFrame({RIGHT_LABEL: right_labels}),
        right_part,
        scores,
    ]
    if indicator is not None:
        codes = np.where(left_pos < 0, 1, np.where(right_pos < 0, 0, 2))
        pieces.append(
            pd.DataFrame(
                {
                    indicator: pd.Categorical.from_codes(
                        codes, categories=pd.Index(INDICATOR_CATEGORIES)
                    )
                }
            )
        )
    result = pd.concat(pieces, axis=1)
    result.index = labels
    return result
