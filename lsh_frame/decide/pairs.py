"""Candidates, scores and decisions in one call; a second look through the matches."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from lsh_frame._validation import check_frame
from lsh_frame.block.candidates import candidates
from lsh_frame.block.fields import other_table
from lsh_frame.decide.closing import check_transitive
from lsh_frame.decide.labels import check_labels, place_answers, unfound_pairs
from lsh_frame.decide.one_to_one import check_one_to_one
from lsh_frame.decide.score import reusing_plans, score
from lsh_frame.decide.through_matches import _with_pairs_through_matches

if TYPE_CHECKING:
    from lsh_frame.decide.closing import Transitive
    from lsh_frame.decide.labels import Placed
    from lsh_frame.decide.matches import MinScore
    from lsh_frame.decide.one_to_one import OneToOne

__all__ = ["pairs"]


def pairs(
    frame: pd.DataFrame,
    fields: Any,
    /,
    *,
    other: pd.DataFrame | None = None,
    right_on: Any = None,
    threshold: float | None = None,
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    min_score: MinScore = "auto",
    values: bool = False,
    estimate: bool = False,
    one_to_one: OneToOne = "auto",
    transitive: Transitive = "auto",
    labels: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Candidate pairs and their scores in one call.

    :func:`lsh_frame.candidates` with the blocking options and
    ``collapse_identical=True`` (a large group of identical rows is one
    representative plus ``"identical"`` pairs, see
    :mod:`lsh_frame.block.identical`), then :func:`score` with the scoring options,
    on the same ``fields``. With
    ``other``, ``right_on`` gives its names of the fields' columns when they
    differ from ``frame``'s (see :func:`lsh_frame.candidates`).
    ``one_to_one`` (only with ``other``) lets each record match at most one
    record of the other table: ``"auto"`` (default) when the data says so, see
    :func:`score`. ``transitive`` (only without ``other``) makes a pair whose
    records share most of their matches a match too, ``"auto"`` (default)
    when the matches form clusters, see :func:`score`. When it applies,
    ``pairs`` then looks once more: the pairs whose two records match one same
    record, that blocking did not find, are scored and added after the
    candidates (``found_by`` ``"through_matches"``), decided by that rule
    alone; counted first, and skipped with a warning when they would carry
    the frame past ``max_pairs`` (see :mod:`lsh_frame.decide.closing`).
    ``labels`` (a person's answers, see :func:`score`) teach the model, and
    the answered pairs that blocking did not find are added to the
    candidates (``found_by`` ``"labels"``), so every answer is honoured.

    Examples
    --------
    >>> df = pd.DataFrame({"name": ["john smith", "jon smith", "mary jones"],
    ...                    "dob": ["1980-01-02", "1980-01-02", "1975-05-06"]})
    >>> scored = pairs(df, ["name", "dob"], min_score=0.8)
    >>> scored[["left", "right", "found_by", "score", "match"]].round(3)
       left  right                      found_by  score  match
    0     0      1  dob|record|record_neighbours  0.974   True
    1     1      2             record_neighbours  0.563  False
    """
    other = other_table(frame, fields, other, right_on, "pairs")
    check_one_to_one(one_to_one, "pairs", link=other is not None)
    check_transitive(transitive, "pairs", link=other is not None)
    answers = check_labels(labels, "pairs")
    placed = (
        None
        if answers is None
        else place_answers(
            answers,
            check_frame(frame, "frame", "pairs"),
            None if other is None else check_frame(other, "other", "pairs"),
            "pairs",
        )
    )
    with reusing_plans():
        return _candidates_scored(
            frame,
            fields,
            other=other,
            threshold=threshold,
            recall=recall,
            num_perm=num_perm,
            seed=seed,
            max_bucket=max_bucket,
            max_pairs=max_pairs,
            min_score=min_score,
            values=values,
            estimate=estimate,
            one_to_one=one_to_one,
            transitive=transitive,
            labels=labels,
            placed=placed,
        )


def _candidates_scored(
    frame: pd.DataFrame,
    fields: Any,
    *,
    other: pd.DataFrame | None,
    threshold: float | None,
    recall: float,
    num_perm: int,
    seed: int,
    max_bucket: int,
    max_pairs: int,
    min_score: MinScore,
    values: bool,
    estimate: bool,
    one_to_one: OneToOne,
    transitive: Transitive,
    labels: Any,
    placed: Placed | None,
) -> pd.DataFrame:
    candidate_pairs = candidates(
        frame,
        fields,
        other=other,
        threshold=threshold,
        recall=recall,
        num_perm=num_perm,
        seed=seed,
        max_bucket=max_bucket,
        max_pairs=max_pairs,
        collapse_identical=True,
    )
    if placed is not None:
        candidate_pairs = _with_answered(candidate_pairs, placed, frame, other)
    scored = score(
        frame,
        candidate_pairs,
        fields,
        other=other,
        min_score=min_score,
        values=values,
        estimate=estimate,
        num_perm=num_perm,
        seed=seed,
        one_to_one=one_to_one,
        transitive=transitive,
        labels=labels,
    )
    if other is not None:
        return scored
    return _with_pairs_through_matches(
        frame,
        scored,
        fields,
        room=max_pairs - len(scored),
        values=values,
        estimate=estimate,
        num_perm=num_perm,
        seed=seed,
    )


def _with_answered(
    candidate_pairs: pd.DataFrame,
    placed: Placed,
    frame: pd.DataFrame,
    other: pd.DataFrame | None,
) -> pd.DataFrame:
    """Add the answered pairs blocking did not find after the candidates."""
    right_frame = frame if other is None else other
    left = frame.index.get_indexer_for(pd.Index(candidate_pairs["left"]))
    right = right_frame.index.get_indexer_for(pd.Index(candidate_pairs["right"]))
    added = unfound_pairs(
        placed,
        np.asarray(left, dtype=np.int64),
        np.asarray(right, dtype=np.int64),
        frame,
        other,
    )
    if added.empty:
        return candidate_pairs
    found_by = candidate_pairs["found_by"]
    joined: Any = (
        pd.api.types.union_categoricals(
            [found_by, added["found_by"].astype("category")], ignore_order=True
        )
        if isinstance(found_by.dtype, pd.CategoricalDtype)
        else pd.concat([found_by, added["found_by"]], ignore_index=True)
    )
    result = pd.concat([candidate_pairs, added], ignore_index=True)
    result["found_by"] = pd.Series(joined, index=result.index)
    result.attrs = candidate_pairs.attrs
    return result
