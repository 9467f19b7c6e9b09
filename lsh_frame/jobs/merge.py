"""``merge``: a fuzzy join shaped like :func:`pandas.merge`."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame._validation import check_choice, check_frame, pair_positions
from lsh_frame.block.fields import _as_fields
from lsh_frame.decide.matches import fallback_attrs
from lsh_frame.decide.one_to_one import check_one_to_one, match_rank, one_to_one_edges
from lsh_frame.errors import ColumnError, ConfigError, ConfigTypeError, MergeError
from lsh_frame.jobs.common import _HOWS, _checked_decision, given_columns
from lsh_frame.jobs.link import _link_columns, _score_columns, link

if TYPE_CHECKING:
    from lsh_frame.decide.matches import MinScore
    from lsh_frame.decide.one_to_one import OneToOne

__all__ = ["merge"]


#: The merged frame's column holding each row's label in the right table.
RIGHT_LABEL = "index_right"

#: The name ``indicator=True`` gives the indicator column, as in pandas.
INDICATOR = "_merge"

#: The indicator's categories, in pandas' order.
INDICATOR_CATEGORIES = ("left_only", "right_only", "both")


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
    labels: pd.DataFrame | None = None,
    progress: bool | None = None,
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
    threshold, recall, num_perm, seed, max_bucket, max_pairs, progress, labels
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
    left = check_frame(left, "left", owner)
    right = check_frame(right, "right", owner)
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
        labels=labels,
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
            **({"labels": decision["labels"]} if "labels" in decision else {}),
            "one_to_one": decision.get("one_to_one"),
            **fallback_attrs(decision),
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
    left_pos = pair_positions(matched["left"], left_index, "left", owner)
    right_pos = pair_positions(matched["right"], right_index, "right", owner)
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
