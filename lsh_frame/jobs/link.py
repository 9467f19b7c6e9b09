"""Linking two tables: the scored pairs behind a fuzzy join."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from lsh_frame import _progress
from lsh_frame._validation import (
    check_columns,
    check_frame,
    check_progress,
    present,
    refuse_set,
    right_columns,
)
from lsh_frame.block.fields import field_columns, mapped_columns
from lsh_frame.decide.one_to_one import check_one_to_one
from lsh_frame.errors import ColumnError, ConfigError
from lsh_frame.jobs.common import (
    _checked_decision,
    _pipeline_options,
    _scored,
    given_columns,
)

if TYPE_CHECKING:
    from lsh_frame.decide.matches import MinScore
    from lsh_frame.decide.one_to_one import OneToOne

__all__ = ["link"]


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
    labels: pd.DataFrame | None = None,
    values: bool = False,
    one_to_one: OneToOne = "auto",
    progress: bool | None = None,
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
    threshold, min_score, recall, num_perm, seed, max_bucket, max_pairs, labels
        As in :func:`~lsh_frame.pairs`.
    values : bool
        Also show both records' values of every field side by side.
    one_to_one : "auto", True or False
        Whether each record matches at most one record of the other table
        (see :func:`~lsh_frame.score`): ``"auto"`` (default) decides from the
        data, True always, False never.
    progress : bool or None
        Show the steps on a progress line on stderr (a widget in a notebook):
        True, False, or None (the default) to show it when stderr is a
        terminal or in a notebook, once the job has run five seconds.

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
    left = check_frame(left, "left", owner)
    right = check_frame(right, "right", owner)
    fields = given_columns(fields, on, "on", owner)
    progress = check_progress(progress, owner)
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
