"""From matched pairs to entities: connected components with a numpy union-find."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame import _progress
from lsh_frame._kernels.components import components, first_appearance_ids
from lsh_frame._validation import (
    check_bool,
    check_frame,
    check_int,
    check_pairs,
    pair_positions,
)
from lsh_frame._warn import warn, warn_giant
from lsh_frame.block.candidates import label_rank as _label_rank
from lsh_frame.block.identical import found_identical
from lsh_frame.decide.closing import THROUGH_MATCHES, closed_pairs
from lsh_frame.decide.matches import check_min_score
from lsh_frame.errors import ColumnError, ConfigError

__all__ = ["cluster"]

#: An entity is *sparse* when it holds at least this many records (identical
#: copies counted once) and its links join fewer than ``SPARSE_DENSITY`` of its
#: pairs of records (of a left and a right record when linking): records
#: chained to one another through a few links, not a group that agrees. Such
#: entities were nearly all mixtures: 85 of 87 on historical_50k (one of them
#: 25,003 records long), all 3 on fake_1000; an entity of one person had a
#: density of 0.57 or more there, and none was sparse on FEBRL, Cora or
#: make_customers.
SPARSE_MIN_RECORDS = 5
SPARSE_DENSITY = 0.4
#: A sparse entity keeps only its links of at least these match probabilities,
#: one after the other, for as long as it stays sparse. historical_50k: pair F1
#: of its entities 0.002 -> 0.868 (0.865 with the first step alone); fake_1000
#: 0.937 -> 0.961.
SPLIT_PROBABILITIES = (0.9, 0.99, 0.999)
#: An entity is also listed for review, not split, when it holds at least
#: ``LARGE_MIN_RECORDS`` records and more than ``LARGE_FACTOR`` times the 99th
#: percentile of the entities of several records (identical copies once):
#: far larger than the rest. None was on any benchmark table after splitting
#: (largest 103 records on Cora, whose 99th percentile is 84).
LARGE_MIN_RECORDS = 20
LARGE_FACTOR = 5
#: Entity ids named in the warning about sparse entities (all are in attrs).
_NAMED = 10


def _links(scored: pd.DataFrame, min_score: float | None, owner: str) -> pd.Series:
    """Which pairs link their records: score >= min_score, or the match column."""
    if min_score is not None:
        if "score" not in scored.columns:
            raise ColumnError(
                f"{owner} got min_score={min_score} but the pairs have no 'score' "
                "column. Score them first with score(), or leave min_score out to "
                "link every pair (or the pairs whose 'match' is true)."
            )
        # Pairs found through the matches were never candidates: a cut on the
        # score reads the candidates, as it did before pairs() added them.
        linked = scored["score"].fillna(-1.0) >= min_score
        if "found_by" in scored.columns:
            linked &= scored["found_by"] != THROUGH_MATCHES
        return linked
    if "match" in scored.columns:
        # Matches their clusters closed join records already joined: left
        # out, they change no component and make no entity look dense.
        return scored["match"].fillna(False).astype(bool) & ~closed_pairs(scored)
    return pd.Series(True, index=scored.index)


def cluster(
    frame: pd.DataFrame,
    scored: pd.DataFrame,
    /,
    *,
    other: pd.DataFrame | None = None,
    min_score: float | None = None,
    warn_size: int = 1_000,
    split: bool = True,
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
    split : bool
        Split *sparse* entities: at least 5 records whose links join fewer than
        40% of their pairs of records — records chained through a few links
        rather than a group that agrees. Such an entity keeps only its links of
        match probability 0.9 or more, then 0.99, then 0.999, while it stays
        sparse. It applies to pairs decided by the match model (with a
        ``match_probability`` column and no ``min_score`` here). Entities still
        sparse afterwards (or when nothing can be split) are listed in a
        warning and in ``ids.attrs["lsh_frame"]["review"]``, and the number of
        links cut in ``["links_cut"]``.

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
    frame = check_frame(frame, "frame", owner)
    if other is not None:
        other = check_frame(other, "other", owner)
    scored = check_pairs(scored, owner)
    min_score, warn_size = check_options(min_score, warn_size, owner)
    split = check_bool(split, "split", owner)
    # Two parts, reported as each ends: the links' record positions (a hash
    # look-up of every label), then the entities.
    _progress.step("clustering", total=2)
    linked = scored[_links(scored, min_score, owner).to_numpy()]
    right_frame = frame if other is None else other
    first = pair_positions(linked["left"], frame.index, "left", owner)
    second = pair_positions(linked["right"], right_frame.index, "right", owner)
    links = Links.of(linked, first, second, None if other is None else len(frame))
    _progress.advance(1)
    ids, review = entity_ids(
        frame.index,
        None if other is None else other.index,
        links,
        split and min_score is None,
    )
    _progress.advance(1)
    _warn_large(ids, warn_size, links.copies)
    warn_review(review)
    left_ids = pd.Series(ids[: len(frame)], index=frame.index, name="entity_id")
    left_ids.attrs["lsh_frame"] = review
    if other is None:
        return left_ids
    right_ids = pd.Series(ids[len(frame) :], index=other.index, name="entity_id")
    right_ids.attrs["lsh_frame"] = review
    return left_ids, right_ids


@dataclass(frozen=True)
class Links:
    """Linked record positions, their match probability, and identical copies.

    ``first`` holds left-table positions, ``second`` positions in the right
    table (the left one when deduplicating); ``left_rows`` is the left table's
    length when linking (right records are numbered after it), else None.
    """

    first: npt.NDArray[np.int64]
    second: npt.NDArray[np.int64]
    strength: npt.NDArray[np.float64] | None
    identical: npt.NDArray[np.bool_]
    left_rows: int | None

    @classmethod
    def of(
        cls,
        linked: pd.DataFrame,
        first: npt.NDArray[np.int64],
        second: npt.NDArray[np.int64],
        left_rows: int | None,
    ) -> Links:
        """Gather the links of some pairs (``first``, ``second``: their positions)."""
        strength = (
            linked["match_probability"].to_numpy(dtype=np.float64, na_value=np.nan)
            if "match_probability" in linked.columns
            else None
        )
        return cls(first, second, strength, found_identical(linked), left_rows)

    @classmethod
    def join(cls, parts: list[Links], left_rows: int | None) -> Links:
        """Put the links of several parts together."""
        strengths = [part.strength for part in parts]
        known = all(strength is not None for strength in strengths)
        return cls(
            np.concatenate([np.empty(0, np.int64), *[p.first for p in parts]]),
            np.concatenate([np.empty(0, np.int64), *[p.second for p in parts]]),
            np.concatenate([np.empty(0), *strengths]) if known else None,
            np.concatenate([np.empty(0, bool), *[p.identical for p in parts]]),
            left_rows,
        )

    @property
    def copies(self) -> npt.NDArray[np.int64] | None:
        """One end of each identical pair of a deduplicated frame, or None."""
        if self.left_rows is not None or not self.identical.any():
            return None
        return self.second[self.identical]

    def nodes(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Both ends as record numbers (right records after the left ones)."""
        shift = 0 if self.left_rows is None else self.left_rows
        return self.first, self.second + shift


def entity_ids(
    left_index: pd.Index,
    right_index: pd.Index | None,
    links: Links,
    split: bool,
    base: npt.NDArray[np.int64] | None = None,
    copies: npt.NDArray[np.int64] | None = None,
) -> tuple[npt.NDArray[np.int64], dict[str, Any]]:
    """Entity ids (left records, then right), splitting sparse entities.

    ``links`` are every link; or, with ``base`` (the ids of the components of
    every link, found elsewhere: Dask's large-star), only the links of the
    entities of ``base`` that are sparse, which are all that splitting reads;
    ``copies`` then gives one end of every identical pair (by default those
    of ``links``). Returns the ids and the review: ``links_cut`` and the ids of
    the entities still sparse or far larger than the rest.
    """
    keep = np.ones(links.first.size, dtype=bool)
    left_rows = len(left_index)
    inside: npt.NDArray[np.bool_] | None = None  # None: every record's links are here
    if base is None:
        ids = component_ids(left_index, right_index, links.first, links.second)
    else:
        ids = base
        inside = np.zeros(ids.size, dtype=bool)
        for ends in links.nodes():
            inside[ends] = True

    def components_of(kept: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        found = component_ids(
            left_index, right_index, links.first[kept], links.second[kept]
        )
        if inside is None or base is None:
            return found
        # The entities without a link here keep their base components (ids
        # offset past any of ``found``).
        return _renumbered(
            left_index, right_index, np.where(inside, found, base + ids.size)
        )

    def sparse_now() -> npt.NDArray[np.bool_]:
        sparse = sparse_entities(ids, links, keep, left_rows)
        if inside is not None:  # only the entities whose links are here
            sparse &= np.bincount(ids[inside], minlength=sparse.size) > 0
        return sparse

    if split and links.strength is not None:
        for bar in SPLIT_PROBABILITIES:
            sparse = sparse_now()
            if not sparse.any():
                break
            # A link without a probability (NaN) is not known to be weak: kept.
            weak = keep & sparse[ids[links.first]] & (links.strength < bar)
            if weak.any():
                keep &= ~weak
                ids = components_of(keep)
    review = np.flatnonzero(
        sparse_now() | oversized(ids, links.copies if copies is None else copies)
    )
    return ids, {"links_cut": int((~keep).sum()), "review": review.tolist()}


def oversized(
    ids: npt.NDArray[np.int64], copies: npt.NDArray[np.int64] | None
) -> npt.NDArray[np.bool_]:
    """Entities far larger than the rest (see ``LARGE_FACTOR``), by entity id.

    ``copies`` (one end of each identical pair) count once: a thousand copies
    of one row are not an entity to review.
    """
    sizes = np.bincount(ids)
    if copies is not None and copies.size:
        sizes = sizes - np.bincount(ids[copies], minlength=sizes.size)
    several = sizes[sizes >= 2]
    if not several.size:
        return np.zeros(sizes.size, dtype=bool)
    typical = float(np.quantile(several, 0.99))
    return (sizes >= LARGE_MIN_RECORDS) & (sizes > LARGE_FACTOR * typical)


def _renumbered(
    left_index: pd.Index, right_index: pd.Index | None, labels: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """Ids 0, 1, 2 ... for groups of records, as :func:`component_ids` numbers them.

    ``labels`` names each record's group (left records, then right); ids
    follow the first record of each group in the order of the index labels.
    """
    rank = _record_ranks(left_index, right_index)
    in_rank_order = np.empty_like(labels)
    in_rank_order[rank] = labels
    codes = pd.factorize(in_rank_order)[0]  # by first appearance
    return codes.astype(np.int64)[rank]


def sparse_entities(
    ids: npt.NDArray[np.int64],
    links: Links,
    keep: npt.NDArray[np.bool_],
    left_rows: int,
) -> npt.NDArray[np.bool_]:
    """Which entities are sparse (see ``SPARSE_DENSITY``), by entity id."""
    edges, copies = link_counts(ids, links, keep)
    return sparse_of(ids, edges, copies, None if links.left_rows is None else left_rows)


def link_counts(
    ids: npt.NDArray[np.int64],
    links: Links,
    keep: npt.NDArray[np.bool_] | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Kept links (identical copies aside) and identical copies, per entity."""
    entities = int(ids.max()) + 1 if ids.size else 0
    kept = ~links.identical if keep is None else keep & ~links.identical
    edges = np.bincount(ids[links.first[kept]], minlength=entities)
    copies = links.copies
    if copies is None:
        return edges, np.zeros(entities, dtype=np.int64)
    return edges, np.bincount(ids[copies], minlength=entities)


def sparse_of(
    ids: npt.NDArray[np.int64],
    edges: npt.NDArray[np.int64],
    copies: npt.NDArray[np.int64],
    left_rows: int | None,
) -> npt.NDArray[np.bool_]:
    """Sparse entities from their links and copies (see ``SPARSE_DENSITY``).

    ``left_rows`` is the left table's length when linking, else None.
    """
    entities = edges.size
    if left_rows is None:
        records = np.bincount(ids, minlength=entities) - copies  # copies count once
        possible = records * (records - 1) / 2
    else:
        left = np.bincount(ids[:left_rows], minlength=entities)
        records = np.bincount(ids[left_rows:], minlength=entities) + left
        possible = left * (records - left)
    return (records >= SPARSE_MIN_RECORDS) & (edges < SPARSE_DENSITY * possible)


def warn_review(review: dict[str, Any]) -> None:
    """Warn about the entities to review, naming the first few."""
    sparse = review["review"]
    if not sparse:
        return
    named = ", ".join(map(str, sparse[:_NAMED]))
    more = f" and {len(sparse) - _NAMED:,} more" if len(sparse) > _NAMED else ""
    warn(
        f"{len(sparse):,} entit{'y is' if len(sparse) == 1 else 'ies are'} sparsely "
        "linked (records chained through few links) or far larger than the rest: "
        f"entity ids {named}{more}. Look at their records and pairs before "
        "trusting them; all ids are in ids.attrs['lsh_frame']['review']."
    )


def check_options(
    min_score: Any, warn_size: Any, owner: str
) -> tuple[float | None, int]:
    """Check ``min_score`` (a number or None) and ``warn_size`` of :func:`cluster`."""
    if min_score is not None:
        checked = check_min_score(min_score, owner)
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
    rank = _record_ranks(left_index, right_index)
    shift = 0 if right_index is None else len(left_index)
    first, second = rank[first], rank[second + shift]
    return first_appearance_ids(components(rank.size, first, second))[rank]


def _record_ranks(
    left_index: pd.Index, right_index: pd.Index | None
) -> npt.NDArray[np.int64]:
    """Each record's place in the order of the index labels, left table first."""
    rank = _label_rank(left_index)
    if right_index is None:
        return rank
    return np.concatenate([rank, _label_rank(right_index) + len(left_index)])


def identical_members(
    linked: pd.DataFrame, second: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64] | None:
    """One end (a position) of each linked identical pair: one copy per pair."""
    copies = found_identical(linked)
    return second[copies] if copies.any() else None


def _warn_large(
    ids: npt.NDArray[np.int64],
    warn_size: int,
    members: npt.NDArray[np.int64] | None = None,
) -> None:
    """Warn about entities larger than ``warn_size``, or giant (``warn_giant``).

    Identical copies count once (``members``: one end of each identical pair
    of a deduplicated frame): a hundred thousand copies chain nothing.
    """
    if ids.size == 0:
        return
    sizes = np.bincount(ids)
    if members is not None and members.size:
        # Each identical pair adds one copy to its entity (both ends are in it).
        sizes = sizes - np.bincount(ids[members], minlength=sizes.size)
    warn_giant(sizes, int(sizes.sum()), warn_size)
