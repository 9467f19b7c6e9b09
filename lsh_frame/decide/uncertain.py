"""The questions worth asking a person: :func:`uncertain_pairs`.

A pair teaches the model most when the model is least sure of it (its
probability near 1/2, where an answer moves the fitted shifts most) and
when many candidates look like it: the pairs at the same level of
every field share every weight an answer moves, so one answer speaks for all
of them. A level pattern already asked about is worth less the more answers it
holds. Each batch asks about distinct patterns and distinct records.

The doubt is the model's as it learned from the data, before any answer:
questions chosen by a model the answers already moved would chase its own
corrections (answers about pairs it now finds doubtful move it further the
same way), so a taught model's pairs are ranked by its learned weights.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame._validation import check_frame, check_int, check_pairs
from lsh_frame.block.fields import mapped_columns
from lsh_frame.decide.labels import LABELS_KEY, check_labels, pair_codes
from lsh_frame.decide.matches import matched_probability
from lsh_frame.decide.model import MatchModel
from lsh_frame.decide.weak_keys import found_only_by
from lsh_frame.errors import ColumnError, ConfigError

__all__ = ["uncertain_pairs"]


def uncertain_pairs(
    scored: pd.DataFrame,
    frame: pd.DataFrame | None = None,
    other: pd.DataFrame | None = None,
    /,
    *,
    n: int = 10,
    labels: pd.DataFrame | None = None,
    right_on: Any = None,
    seed: int = 1,
) -> pd.DataFrame:
    """Return the candidate pairs whose answers would teach the model most.

    Parameters
    ----------
    scored : DataFrame
        Scored pairs with ``match_probability``: from :func:`lsh_frame.pairs`
        or :func:`lsh_frame.score` with ``min_score="auto"`` or a model (the
        frames the jobs' ``keeping_scored_pairs`` or ``--pairs-output`` keep
        serve too).
    frame, other : DataFrame, optional
        The records (and the right table of a link): their values of the
        compared columns are shown beside each pair, ``<column>_left`` and
        ``<column>_right``, so a person can answer.
    n : int
        How many pairs to return (fewer when fewer are left to ask).
    labels : DataFrame, optional
        The answers given so far (columns ``left``, ``right``, ``match``):
        those pairs, unsure ones included, are not asked again, and pairs
        like them are worth less.
    right_on : list or dict, optional
        ``other``'s names of the compared columns, as given to
        :func:`lsh_frame.pairs`.
    seed : int
        Chooses among equally useful pairs (the pairs of one pattern of field
        levels are equally useful): a seeded random sample of them, so the
        answers about a pattern speak for all of it, not for the pairs that
        come first in the frame.

    Returns
    -------
    DataFrame
        The chosen rows of ``scored`` (same index), most useful first:
        ``left``, ``right``, ``match_probability``, ``match``, ``score`` and
        ``found_by`` where ``scored`` has them, then the records' values.
        Answer each and pass the answers as ``labels=`` (columns ``left``,
        ``right``, ``match``) to the same call.

    Examples
    --------
    >>> import lsh_frame as lf
    >>> people = lf.datasets.make_customers(300, seed=3)
    >>> scored = lf.pairs(people, ["given_name", "surname", "date_of_birth", "city"])
    >>> asked = lf.uncertain_pairs(scored, people, n=3)
    >>> list(asked.columns[:4])
    ['left', 'right', 'match_probability', 'match']
    >>> len(asked)
    3
    """
    owner = "uncertain_pairs"
    scored = check_pairs(scored, owner)
    n = check_int(n, "n", owner, minimum=1)
    if "match_probability" not in scored or scored["match_probability"].isna().all():
        raise ConfigError(
            "The pairs passed to uncertain_pairs have no match probabilities "
            "(no model decided them). Score them with min_score='auto' on enough "
            "pairs to learn from, or with a learned model, first."
        )
    attrs = scored.attrs.get("lsh_frame", {})
    model = _model(attrs)
    probability = _learned_probability(scored, model)
    patterns = _patterns(scored, model)
    link = bool(attrs.get("link", other is not None))
    asked = _asked(scored, labels, owner, link=link)
    value = _usefulness(probability, patterns, asked)
    chosen = _choose(value, patterns, scored, n, check_int(seed, "seed", owner), link)
    result = scored.iloc[chosen]
    shown = [
        name
        for name in ("left", "right", "match_probability", "match", "score", "found_by")
        if name in result
    ]
    result = result[shown]
    if frame is not None:
        result = _with_values(result, attrs, frame, other, right_on, owner)
    return result


def _model(attrs: dict[str, Any]) -> MatchModel | None:
    """Return the model that decided the pairs (None: none, or no attrs)."""
    learned = attrs.get("model")
    if not isinstance(learned, dict):
        return None
    try:
        return MatchModel.from_dict(learned, "uncertain_pairs")
    except ConfigError:
        return None


def _levels(
    scored: pd.DataFrame, model: MatchModel | None
) -> dict[str, npt.NDArray[np.intp]] | None:
    """Each pair's level on every field of the model (None: no such scores)."""
    if model is None or not all(f"{label}_score" in scored for label in model.m):
        return None
    return {
        label: model.levels(
            scored[f"{label}_score"].to_numpy(dtype=np.float64), model.cuts_of(label)
        )
        for label in model.m
    }


def _learned_probability(
    scored: pd.DataFrame, model: MatchModel | None
) -> npt.NDArray[np.float64]:
    """Each pair's probability under the model's weights before any answer."""
    probability = scored["match_probability"].to_numpy(dtype=np.float64)
    levels = _levels(scored, model)
    if model is None or model.taught is None or levels is None:
        return probability
    learned = dataclasses.replace(model, taught=None)
    if learned.matching is not None:
        left = pd.factorize(scored["left"].to_numpy())[0].astype(np.int64)
        right = pd.factorize(scored["right"].to_numpy())[0].astype(np.int64)
        again = matched_probability(learned, levels, left, right)
    else:
        again = learned.probability_of_levels(levels)
        alone = found_only_by(scored, learned.alone_keys)
        if learned.alone_prior is not None and alone.any():
            other = dataclasses.replace(learned, prior=learned.alone_prior)
            again[alone] = other.probability_of_levels(
                {label: level[alone] for label, level in levels.items()}
            )
    # Identical copies and answered pairs keep what decided them.
    return np.where(np.isnan(probability), probability, again)


def _patterns(scored: pd.DataFrame, model: MatchModel | None) -> npt.NDArray[np.int64]:
    """One number per pair: its level on every field of the model.

    Without a model (a frame that lost its attrs), the field scores rounded to
    a twentieth stand in for the levels.
    """
    levels = _levels(scored, model)
    columns: list[npt.NDArray[np.int64]] = []
    if model is not None and levels is not None:
        columns = [level.astype(np.int64) for level in levels.values()]
    else:
        for name in scored.columns:
            if str(name).endswith("_score"):
                values = scored[name].to_numpy(dtype=np.float64)
                columns.append(np.where(np.isnan(values), -1, np.round(values * 20)))
    if not columns:
        return np.zeros(len(scored), dtype=np.int64)
    stacked = np.column_stack(columns).astype(np.int64)
    return np.unique(stacked, axis=0, return_inverse=True)[1].reshape(-1)


def _asked(
    scored: pd.DataFrame, labels: Any, owner: str, link: bool
) -> npt.NDArray[np.bool_]:
    """Which pairs were answered already (or added for an answer)."""
    asked = np.zeros(len(scored), dtype=bool)
    if "found_by" in scored:
        asked |= scored["found_by"].eq(LABELS_KEY).to_numpy(dtype=bool, na_value=False)
    answers = check_labels(labels, owner)
    if answers is None or not len(answers):
        return asked
    if link:
        left_labels = pd.Index(pd.unique(scored["left"].to_numpy()))
        right_labels = pd.Index(pd.unique(scored["right"].to_numpy()))
    else:
        both = np.concatenate([scored["left"].to_numpy(), scored["right"].to_numpy()])
        left_labels = right_labels = pd.Index(pd.unique(both))
    size = len(right_labels)
    left = np.asarray(left_labels.get_indexer(pd.Index(scored["left"])), np.int64)
    right = np.asarray(right_labels.get_indexer(pd.Index(scored["right"])), np.int64)
    answer_left = np.asarray(left_labels.get_indexer(answers.left), np.int64)
    answer_right = np.asarray(right_labels.get_indexer(answers.right), np.int64)
    known = (answer_left >= 0) & (answer_right >= 0)
    answered = pair_codes(answer_left[known], answer_right[known], size, link)
    return asked | np.isin(pair_codes(left, right, size, link), answered)


def _usefulness(
    probability: npt.NDArray[np.float64],
    patterns: npt.NDArray[np.int64],
    asked: npt.NDArray[np.bool_],
) -> npt.NDArray[np.float64]:
    """How much an answer about each pair would teach (-1: not to be asked)."""
    counts = np.bincount(patterns).astype(np.float64)
    answered = np.bincount(patterns[asked], minlength=counts.size).astype(np.float64)
    sure = np.nan_to_num(probability * (1 - probability), nan=0.0)
    value = sure * np.sqrt(counts[patterns]) / (1.0 + answered[patterns])
    value[asked] = -1.0
    return value


def _choose(
    value: npt.NDArray[np.float64],
    patterns: npt.NDArray[np.int64],
    scored: pd.DataFrame,
    n: int,
    seed: int = 1,
    link: bool = False,
) -> npt.NDArray[np.int64]:
    """Pick the ``n`` most useful pairs, one per pattern and record while they last.

    Ties (a pattern's pairs) are broken by a seeded random order.
    """
    shuffled = np.random.default_rng(seed).permutation(value.size)
    order = np.lexsort((shuffled, -value))
    order = order[value[order] > 0]
    if link:
        left = pd.factorize(scored["left"].to_numpy())[0]
        right = pd.factorize(scored["right"].to_numpy())[0] + left.max(initial=-1) + 1
    else:  # one table: a record is the same whichever side it is on
        both = pd.factorize(
            np.concatenate([scored["left"].to_numpy(), scored["right"].to_numpy()])
        )[0]
        left, right = both[: len(scored)], both[len(scored) :]
    # The strict pass reads each pattern's most useful pairs (a few, in case
    # their records are taken), best first; the second pass reads them all.
    rank = np.empty(order.size, dtype=np.int64)
    sorted_patterns = patterns[order]
    by_pattern = np.argsort(sorted_patterns, kind="stable")
    starts = np.flatnonzero(
        np.r_[True, sorted_patterns[by_pattern][1:] != sorted_patterns[by_pattern][:-1]]
    )
    rank[by_pattern] = np.arange(order.size) - np.repeat(
        starts, np.diff(np.r_[starts, order.size])
    )
    leading = order[rank < 4 * n]
    chosen: list[int] = []
    used_patterns: set[int] = set()
    used_records: set[int] = set()
    # First distinct patterns and records, then distinct records among the
    # most useful pairs, then whatever is most useful.
    passes = (
        (leading, True, True),
        (order[: max(256 * n, 4096)], False, True),
        (order, False, False),
    )
    for rows, new_pattern, new_records in passes:
        for row in rows:
            if len(chosen) == n:
                break
            if row in chosen:
                continue
            if new_pattern and patterns[row] in used_patterns:
                continue
            if new_records and (
                left[row] in used_records or right[row] in used_records
            ):
                continue
            chosen.append(int(row))
            used_patterns.add(int(patterns[row]))
            used_records.update((int(left[row]), int(right[row])))
    return np.asarray(chosen, dtype=np.int64)


def _with_values(
    result: pd.DataFrame,
    attrs: dict[str, Any],
    frame: pd.DataFrame,
    other: pd.DataFrame | None,
    right_on: Any,
    owner: str,
) -> pd.DataFrame:
    """Add both records' values of the compared columns."""
    frame = check_frame(frame, "frame", owner)
    columns = list(
        dict.fromkeys(
            column for given in attrs.get("columns", {}).values() for column in given
        )
    ) or list(frame.columns)
    right_frame = frame
    right_names = {column: column for column in columns}
    if other is not None:
        right_frame = check_frame(other, "other", owner)
        mapped = mapped_columns(frame, columns, right_frame, right_on, owner)
        if mapped is not None:
            right_names = dict(mapped)
    missing = [column for column in columns if column not in frame]
    if missing:
        raise ColumnError(
            f"The frame passed to {owner} has no column {missing[0]!r}, which the "
            "pairs compared. Pass the frame the pairs were scored on."
        )
    values = {}
    for column in columns:
        values[f"{column}_left"] = frame[column].reindex(result["left"]).to_numpy()
        values[f"{column}_right"] = (
            right_frame[right_names[column]].reindex(result["right"]).to_numpy()
        )
    return pd.concat([result, pd.DataFrame(values, index=result.index)], axis=1)
