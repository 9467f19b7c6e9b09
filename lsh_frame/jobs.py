"""The everyday jobs in one call each: dedupe, drop duplicates, link, fuzzy merge.

Each job is the pipeline of the stages (:func:`~lsh_frame.candidates`,
:func:`~lsh_frame.score`, :func:`~lsh_frame.cluster`) with their defaults, shaped
like the pandas call it stands in for:

- :func:`dedupe` adds an entity id and the entity's size to every row;
- :func:`drop_duplicates` keeps one row per entity, like
  :meth:`pandas.DataFrame.drop_duplicates`;
- :func:`link` returns the scored pairs between two tables;
- :func:`merge` joins two tables on similarity, like :func:`pandas.merge`.

The user's frames are never modified; outputs keep their index labels and the
dtypes of their columns (except, as in :func:`pandas.merge`, columns of the
right table that receive missing values for unmatched left rows).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
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
from lsh_frame.errors import ColumnError, ConfigError, ConfigTypeError
from lsh_frame.identical import filled_cells
from lsh_frame.one_to_one import (
    OneToOne,
    check_one_to_one,
    match_rank,
    one_to_one_edges,
)

__all__ = ["dedupe", "drop_duplicates", "link", "merge"]

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


# ----------------------------------------------------------------------------
# Dedupe


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
    fields: Any,
    /,
    *,
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
    fields : column label, Field, or a list of them
        What to block on and compare (see :func:`~lsh_frame.candidates`):
        plain column names let the data decide.
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


def drop_duplicates(
    frame: pd.DataFrame,
    fields: Any,
    /,
    *,
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

    Rows are duplicates when :func:`dedupe` puts them in one entity.

    Parameters
    ----------
    frame : DataFrame
        The records. Index labels must be unique.
    fields : column label, Field, or a list of them
        What to block on and compare (see :func:`dedupe`).
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
    >>> drop_duplicates(df, "name", min_score=0.8).index.tolist()
    [0, 2]
    >>> drop_duplicates(df, "name", min_score=0.8, keep="most_complete")
             name         dob
    1  john smith  1980-01-02
    2  mary jones  1975-05-06
    """
    owner = "drop_duplicates"
    frame = _check_frame(frame, "frame", owner)
    check_keep(keep, owner)
    ignore_index = check_bool(ignore_index, "ignore_index", owner)
    ids, info = _entities(
        frame,
        fields,
        _pipeline_options(locals()),
        progress,
        owner,
    )
    sizes = np.bincount(ids) if ids.size else np.zeros(0, dtype=np.int64)
    positions = np.arange(ids.size, dtype=np.int64)
    if keep is False:
        kept = np.flatnonzero(sizes[ids] == 1)
    elif keep == "first":
        kept = _first_per_entity(ids, positions)
    elif keep == "last":
        kept = _first_per_entity(ids, -positions)
    elif keep == "most_complete":
        kept = _first_per_entity(ids, -_completeness(frame))
    else:
        kept = _kept_by_callable(frame, ids, sizes, keep, owner)
    result = frame.iloc[kept]
    if ignore_index:
        result = result.reset_index(drop=True)
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
                "both tables (or Field objects), or left columns with right_on= "
                "naming the right table's (or left_on= and right_on=)."
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


def check_merge_options(
    how: Any, one_to_one: Any, suffixes: Any, owner: str
) -> OneToOne:
    """Check ``how``, ``suffixes`` and ``one_to_one`` of :func:`merge`."""
    check_choice(how, "how", owner, ("inner", "left"))
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
    return check_one_to_one(one_to_one, owner, link=True)


def merge(
    left: pd.DataFrame,
    right: pd.DataFrame,
    fields: Any = None,
    /,
    *,
    how: Literal["inner", "left"] = "inner",
    left_on: Any = None,
    right_on: Any = None,
    min_score: MinScore = "auto",
    one_to_one: OneToOne = False,
    suffixes: tuple[str, str] = ("_x", "_y"),
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
    the right record and the pair's scores.

    Parameters
    ----------
    left, right : DataFrame
        The two tables. Index labels must be unique within each.
    fields : column label, Field, or a list of them, optional
        What to match on (see :func:`link`).
    how : {"inner", "left"}
        ``"inner"``: matched pairs only. ``"left"``: also every left row
        without a match, once, with missing values in the right columns.
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
    threshold, recall, num_perm, seed, max_bucket, max_pairs, progress
        As in :func:`link`.

    Returns
    -------
    DataFrame
        Left columns, right columns (names in both get ``suffixes``), then each
        field's ``<field>_score``, ``score`` and ``match_probability`` (with
        ``min_score="auto"``). Rows follow the left table's order, a left row's
        matches best first; the index holds the left row's label (repeated
        when a left row matches several right rows). Dtypes are kept, except
        right columns that receive missing values for unmatched left rows
        (``how="left"``), which change as in :func:`pandas.merge`. Use
        :func:`link` for the pairs' labels on both sides.

    Examples
    --------
    >>> people = pd.DataFrame({"name": ["john smith", "mary jones"],
    ...                        "city": ["leeds", "york"]})
    >>> staff = pd.DataFrame({"name": ["jon smith", "peter pan"],
    ...                       "team": ["sales", "ops"]})
    >>> merged = merge(people, staff, "name", how="left", threshold=0.3,
    ...                min_score=0.8)
    >>> merged.round(3)
         name_x   city     name_y   team  name_score  score
    0  john smith  leeds  jon smith  sales       0.947  0.947
    1  mary jones   york        NaN    NaN         NaN    NaN
    """
    owner = "merge"
    left = _check_frame(left, "left", owner)
    right = _check_frame(right, "right", owner)
    one_to_one_flag = check_merge_options(how, one_to_one, suffixes, owner)
    # Everything that can be checked before blocking is: names and decision.
    mapped_fields, _ = _link_columns(left, right, fields, left_on, right_on, owner)
    specs, _ = _as_fields(mapped_fields, owner)
    left_names, right_names = _output_names(left, right, suffixes)
    score_names = [f"{spec.label}_score" for spec in specs]
    score_names += ["score", "match_probability"]
    _check_output_names(left_names + right_names, score_names, owner)
    min_score = _checked_decision(mapped_fields, min_score, owner)
    scored = link(
        left,
        right,
        fields,
        left_on=left_on,
        right_on=right_on,
        threshold=threshold,
        min_score=min_score,
        recall=recall,
        num_perm=num_perm,
        seed=seed,
        max_bucket=max_bucket,
        max_pairs=max_pairs,
        one_to_one=one_to_one_flag,
        progress=progress,
    )
    left_pos, right_pos, scores, matches = merge_layout(
        scored, left.index, right.index, how, one_to_one_flag is True, owner
    )
    result = _joined(left, right, left_pos, right_pos, scores, suffixes)
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


def merge_layout(
    scored: pd.DataFrame,
    left_index: pd.Index,
    right_index: pd.Index,
    how: str,
    one_to_one: bool,
    owner: str,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], pd.DataFrame, int]:
    """Rows of a merge: left and right positions (-1: none), scores, matches.

    ``scored`` needs only the matched pairs (other rows are ignored); rows come
    in the left table's order, a left row's matches best first.
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
    scores = matched[_score_columns(scored)].reset_index(drop=True)
    if how == "left":
        unmatched = np.setdiff1d(np.arange(len(left_index)), left_pos)
        left_pos = np.concatenate([left_pos, unmatched])
        right_pos = np.concatenate([right_pos, np.full(unmatched.size, -1)])
        rank = np.concatenate([rank, np.full(unmatched.size, rank.size)])
        scores = scores.reindex(np.arange(left_pos.size))
    order = np.lexsort((rank, left_pos))
    scores = scores.iloc[order].reset_index(drop=True)
    return left_pos[order], right_pos[order], scores, len(matched)


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


def _check_output_names(names: list[Any], score_names: list[str], owner: str) -> None:
    repeated = sorted({str(name) for name in names if names.count(name) > 1})
    if repeated:
        raise ColumnError(
            f"{owner} cannot name its output columns uniquely: {repeated} would "
            "appear twice after adding the suffixes. Choose other suffixes or "
            "rename those columns."
        )
    clash = sorted({str(name) for name in score_names if name in names})
    if clash:
        raise ColumnError(
            f"{owner} adds the score columns {clash}, but a table already has "
            "columns of those names. Rename them first, for example with "
            "df.rename(columns={...})."
        )


def _joined(
    left: pd.DataFrame,
    right: pd.DataFrame,
    left_pos: npt.NDArray[np.int64],
    right_pos: npt.NDArray[np.int64],
    scores: pd.DataFrame,
    suffixes: Sequence[str],
) -> pd.DataFrame:
    """Left rows, right rows (missing where ``right_pos`` is -1) and scores."""
    left_names, right_names = _output_names(left, right, suffixes)
    left_part = left.iloc[left_pos].reset_index(drop=True)
    left_part.columns = left_names
    if (right_pos >= 0).all():
        right_part = right.iloc[right_pos].reset_index(drop=True)
    else:
        # Position -1 is not a row: reindex leaves it missing, as pd.merge does.
        right_part = right.reset_index(drop=True).reindex(right_pos)
        right_part = right_part.reset_index(drop=True)
    right_part.columns = right_names
    result = pd.concat([left_part, right_part, scores], axis=1)
    result.index = left.index.take(left_pos)
    return result
