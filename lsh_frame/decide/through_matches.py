"""Pairs through the matches: a second look among records that match one same record.

Evidence that turns it on: deduplicating, when the closing rule of
:mod:`lsh_frame.decide.closing` applies (``transitive="auto"`` finds that the
matches form clusters). :func:`lsh_frame.pairs` then scores every pair of
records that both match one same record but that blocking did not find
(``found_by`` :data:`~lsh_frame.decide.closing.THROUGH_MATCHES`), in rounds
until no new pair is found; only the closing rule decides them. Where it was
measured, and why only the rule decides: see :mod:`lsh_frame.decide.closing`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame import _progress
from lsh_frame._validation import pair_positions
from lsh_frame._warn import warn
from lsh_frame.decide.closing import (
    THROUGH_MATCHES,
    decide_found,
    found_pairs,
    held_among,
    pair_codes,
    path_pairs,
    through_matches,
)
from lsh_frame.decide.model import MatchModel
from lsh_frame.decide.score import score


def round_scoring(attrs: dict[str, Any]) -> MatchModel | float:
    """Return what decides the pairs found through the matches, as before.

    The learned model when there is one, else the score cut that decided.
    """
    learned = attrs.get("model")
    if isinstance(learned, dict) and "match_cut" in learned:
        return MatchModel.from_dict(learned)
    return float(attrs["min_score"])


def round_skipped(info: dict[str, Any], paths: int, room: int) -> dict[str, Any]:
    """Return the ``transitive`` record when the pairs are too many to look for."""
    message = (
        f"pairs() did not look for pairs through the matches: {paths:,} pairs of "
        f"records share a matched record, more than the {room:,} that max_pairs "
        "leaves after the candidates. Raise max_pairs to look."
    )
    warn(message)
    return {**info, "through_matches": {"pairs": 0, "closed": 0, "skipped": message}}


def round_info(info: dict[str, Any], found: int, closed: int) -> dict[str, Any]:
    """Return the ``transitive`` record with the pairs found through the matches."""
    return {
        **info,
        "added": int(info["added"]) + closed,
        "through_matches": {"pairs": found, "closed": closed},
    }


def round_pairs(
    index: pd.Index,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    start: int,
) -> pd.DataFrame:
    """Return the pairs found through the matches, to score: rows from ``start``."""
    return pd.DataFrame(
        {"left": index[first], "right": index[second], "found_by": THROUGH_MATCHES},
        index=pd.RangeIndex(start, start + first.size),
    )


def round_decision(
    graph: Any,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    found: pd.DataFrame,
    decider: MatchModel | float,
) -> npt.NDArray[np.bool_]:
    """Return which scored pairs found through the matches the rule closes."""
    return decide_found(
        graph,
        first,
        second,
        found["match_probability"].to_numpy(dtype=np.float64, na_value=np.nan)
        if "match_probability" in found
        else None,
        found["match"].fillna(False).to_numpy(dtype=bool),
        decider.match_cut if isinstance(decider, MatchModel) else None,
    )


def round_categories(dtype: Any) -> pd.Index | None:
    """Return the ``found_by`` categories with :data:`THROUGH_MATCHES` added.

    None when ``found_by`` is not categorical.
    """
    if not isinstance(dtype, pd.CategoricalDtype):
        return None
    return dtype.categories.union(pd.Index([THROUGH_MATCHES]), sort=False)


def in_categories(frame: pd.DataFrame, categories: pd.Index | None) -> pd.DataFrame:
    """Return ``frame`` with ``found_by`` in ``categories`` (None: as it is)."""
    if categories is None:
        return frame
    return frame.assign(
        found_by=pd.Categorical(frame["found_by"].astype(object), categories)
    )


def round_frame(
    scored: pd.DataFrame,
    found: pd.DataFrame,
    match: npt.NDArray[np.bool_],
    categories: pd.Index | None,
) -> pd.DataFrame:
    """Return the pairs found through the matches, scored, as rows of ``scored``.

    ``categories``: those of the candidates' ``found_by`` with
    :data:`THROUGH_MATCHES` (:func:`round_categories`; None when it is not
    categorical).
    """
    # Decided by a number (no model was learned), the new pairs have no
    # match_probability; the candidates' column holds NaN: so do theirs.
    return in_categories(
        found.assign(match=match).reindex(columns=scored.columns), categories
    )


def _with_pairs_through_matches(
    frame: pd.DataFrame,
    scored: pd.DataFrame,
    fields: Any,
    *,
    room: int,
    values: bool,
    estimate: bool,
    num_perm: int,
    seed: int,
) -> pd.DataFrame:
    """``scored`` and, when the rule applied, the pairs found through the matches.

    See :mod:`lsh_frame.decide.closing`: the pairs whose records both match one same
    record, that blocking did not find, are scored as the others were (the
    same model, or the same cut) and decided by the rule alone.
    """
    attrs = scored.attrs["lsh_frame"]
    info = attrs["transitive"]
    if not info["applied"]:
        return scored
    first = pair_positions(scored["left"], frame.index, "left", "pairs")
    second = pair_positions(scored["right"], frame.index, "right", "pairs")
    graph = found_pairs(scored, first, second)
    paths = path_pairs(graph)
    if paths > room:
        scored.attrs = {
            **scored.attrs,
            "lsh_frame": {**attrs, "transitive": round_skipped(info, paths, room)},
        }
        return scored
    _progress.step("pairs through the matches")
    new_first, new_second = through_matches(graph)
    known = pair_codes(first, second, len(frame))
    fresh = ~held_among(pair_codes(new_first, new_second, len(frame)), known)
    new_first, new_second = new_first[fresh], new_second[fresh]
    closed = 0
    if new_first.size:
        decider = round_scoring(attrs)
        found = score(
            frame,
            round_pairs(frame.index, new_first, new_second, len(scored)),
            fields,
            min_score=decider,
            values=values,
            estimate=estimate,
            num_perm=num_perm,
            seed=seed,
            transitive=False,
        )
        match = round_decision(graph, new_first, new_second, found, decider)
        closed = int(match.sum())
        categories = round_categories(scored["found_by"].dtype)
        scored = in_categories(scored, categories)
        scored = pd.concat([scored, round_frame(scored, found, match, categories)])
    scored.attrs = {
        "lsh_frame": {
            **attrs,
            "transitive": round_info(info, int(new_first.size), closed),
        }
    }
    return scored
