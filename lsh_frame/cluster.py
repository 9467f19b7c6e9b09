"""From matched pairs to entities: connected components with a numpy union-find."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame import _progress
from lsh_frame._kernels.components import components, first_appearance_ids
from lsh_frame._validation import check_int
from lsh_frame.blocking import _check_frame
from lsh_frame.blocking import label_rank as _label_rank
from lsh_frame.compare import _check_min_score, _check_pairs, _positions
from lsh_frame.errors import ColumnError, ConfigError
from lsh_frame.identical import IDENTICAL

__all__ = ["cluster"]


def _links(scored: pd.DataFrame, min_score: float | None, owner: str) -> pd.Series:
    """Which pairs link their records: score >= min_score, or the match column."""
    if min_score is not None:
        if "score" not in scored.columns:
            raise ColumnError(
                f"{owner} got min_score={min_score} but the pairs have no 'score' "
                "column. Score them first with score(), or leave min_score out to "
                "link every pair (or the pairs whose 'match' is true)."
            )
        return scored["score"].fillna(-1.0) >= min_score
    if "match" in scored.columns:
        return scored["match"].fillna(False).astype(bool)
    return pd.Series(True, index=scored.index)


def cluster(
    frame: pd.DataFrame,
    scored: pd.DataFrame,
    /,
    *,
    other: pd.DataFrame | None = None,
    min_score: float | None = None,
    warn_size: int = 1_000,
) -> Any:
    """Entity id per row: the connected components of the matched pairs.

    Parameters
    ----------
    frame : DataFrame
        The records (the left table when linking).
    scored : DataFrame
        Pairs with ``left`` and ``right`` columns of index labels, usually from
        :func:`lsh_frame.score`. Which pairs link two records: those with
        ``score >= min_score`` when ``min_score`` is given; otherwise those whose
        ``match`` is true; every pair when there is no ``match`` column.
    other : DataFrame, optional
        The right table when the pairs link two tables.
    min_score : float in [0, 1], optional
        Cut weak links: a pair links its records only if its ``score`` reaches
        this value. Every edge of a component then passes it (a chain of strong
        links can still join two records that are not similar to each other).
    warn_size : int
        Warn when an entity has more rows than this: a sign that weak links
        chain unrelated records together.

    Returns
    -------
    Series or tuple of two Series
        ``entity_id`` (int64) on ``frame``'s index; with ``other``, a second
        Series on ``other``'s index sharing the same ids. Ids are numbered 0, 1,
        2 ... in order of each entity's first row (``frame`` first, then
        ``other``) in the sorted order of the index labels, so they depend only
        on the labels and the links: not on the order of the pairs, nor of the
        rows (for labels that cannot be sorted, such as mixed types, the rows'
        order is used). Rows without a link are entities of their own.

    Examples
    --------
    >>> df = pd.DataFrame({"name": ["ann", "anne", "bob", "ann e"]},
    ...                   index=["a", "b", "c", "d"])
    >>> links = pd.DataFrame({"left": ["a", "b"], "right": ["b", "d"],
    ...                       "score": [0.9, 0.8]})
    >>> cluster(df, links).tolist()
    [0, 0, 1, 0]
    >>> cluster(df, links, min_score=0.85).tolist()
    [0, 0, 1, 2]
    """
    owner = "cluster"
    frame = _check_frame(frame, "frame", owner)
    if other is not None:
        other = _check_frame(other, "other", owner)
    scored = _check_pairs(scored, owner)
    min_score, warn_size = check_options(min_score, warn_size, owner)
    _progress.step("clustering")
    linked = scored[_links(scored, min_score, owner).to_numpy()]
    right_frame = frame if other is None else other
    first = _positions(linked["left"], frame.index, "left", owner)
    second = _positions(linked["right"], right_frame.index, "right", owner)
    ids = component_ids(
        frame.index, None if other is None else other.index, first, second
    )
    _warn_large(ids, warn_size, identical_members(linked, second))
    left_ids = pd.Series(ids[: len(frame)], index=frame.index, name="entity_id")
    if other is None:
        return left_ids
    right_ids = pd.Series(ids[len(frame) :], index=other.index, name="entity_id")
    return left_ids, right_ids


def check_options(
    min_score: Any, warn_size: Any, owner: str
) -> tuple[float | None, int]:
    """Check ``min_score`` (a number or None) and ``warn_size`` of :func:`cluster`."""
    if min_score is not None:
        checked = _check_min_score(min_score, owner)
        if not isinstance(checked, float):
            raise ConfigError(
                f"The 'min_score' parameter of {owner} must be a number in [0, 1] "
                f"or None (use the pairs' 'match' column). Got {min_score!r} instead."
            )
        min_score = checked
    return min_score, check_int(warn_size, "warn_size", owner, minimum=1)


def component_ids(
    left_index: pd.Index,
    right_index: pd.Index | None,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
) -> npt.NDArray[np.int64]:
    """Entity id of every record (left table, then right) from linked positions.

    ``first`` holds left-table positions, ``second`` positions in the right
    table (the left one when deduplicating). Nodes are numbered in the order
    of the index labels (left table first), so the ids do not change when the
    rows are reordered.
    """
    rank = _label_rank(left_index)
    first = rank[first]
    second = _label_rank(left_index if right_index is None else right_index)[second]
    nodes = len(left_index)
    if right_index is not None:
        second = second + len(left_index)
        nodes += len(right_index)
        rank = np.concatenate([rank, _label_rank(right_index) + len(left_index)])
    return first_appearance_ids(components(nodes, first, second))[rank]


def identical_members(
    linked: pd.DataFrame, second: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64] | None:
    """One end (a position) of each linked identical pair: one copy per pair."""
    if "found_by" not in linked.columns:
        return None
    copies = (linked["found_by"] == IDENTICAL).to_numpy(dtype=bool)
    return second[copies] if copies.any() else None


def _warn_large(
    ids: npt.NDArray[np.int64],
    warn_size: int,
    members: npt.NDArray[np.int64] | None = None,
) -> None:
    """Warn about entities larger than ``warn_size``.

    Identical copies count once (``members``: one end of each identical pair
    of a deduplicated frame): a hundred thousand copies chain nothing.
    """
    if ids.size == 0:
        return
    sizes = np.bincount(ids)
    if members is not None and members.size:
        # Each identical pair adds one copy to its entity (both ends are in it).
        sizes = sizes - np.bincount(ids[members], minlength=sizes.size)
    largest = int(sizes.argmax())
    if sizes[largest] > warn_size:
        over = int((sizes > warn_size).sum())
        warnings.warn(
            f"{over:,} entit{'y has' if over == 1 else 'ies have'} more than "
            f"{warn_size:,} rows (the largest, entity {largest}, has "
            f"{int(sizes[largest]):,}). Weak links may be chaining different records "
            "together: raise min_score, or block on more specific fields.",
            stacklevel=3,
        )
