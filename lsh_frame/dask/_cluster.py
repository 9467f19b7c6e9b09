"""Entity ids on Dask: connected components of the matches."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import dask.dataframe as dd
import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed

from lsh_frame import _progress
from lsh_frame._validation import check_bool, pair_positions
from lsh_frame.block.candidates import label_rank as _label_rank
from lsh_frame.dask import _components
from lsh_frame.dask._pairs import _shared_indexes, _tables
from lsh_frame.dask._tables import (
    check_shuffle,
    compute,
    persist,
    shared,
    shared_pieces,
)
from lsh_frame.resolve.cluster import (
    Links,
    _links,
    _warn_large,
    check_options,
    entity_ids,
    link_counts,
    oversized,
    sparse_of,
    warn_review,
)

if TYPE_CHECKING:
    from lsh_frame.dask._tables import Table


def _edges(
    part: pd.DataFrame,
    min_score: float | None,
    left_index: pd.Index,
    right_index: pd.Index,
    left_rows: int | None,
    owner: str,
) -> Links:
    linked = part[_links(part, min_score, owner).to_numpy()]
    first = pair_positions(linked["left"], left_index, "left", owner)
    second = pair_positions(linked["right"], right_index, "right", owner)
    return Links.of(linked, first, second, left_rows)


def _edge_count(edges: Links) -> tuple[int, bool]:
    return int(edges.first.size), edges.strength is not None


def _members(edges: Links) -> npt.NDArray[np.int64]:
    copies = edges.copies
    return np.empty(0, np.int64) if copies is None else copies


def _ranked_edges(
    edges: Links,
    ranks: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
) -> pd.DataFrame:
    """Linked records numbered by label rank (the right table after the left)."""
    return pd.DataFrame({"u": ranks[0][edges.first], "v": ranks[1][edges.second]})


def _entity_ids(
    tables: list[Table],
    scored: dd.DataFrame,
    min_score: Any,
    warn_size: int,
    owner: str,
    method: str = "tasks",
    split: bool = True,
) -> tuple[npt.NDArray[np.int64], dict[str, Any]]:
    """Entity id of every row (left table, then right), on the client; the review.

    Up to ``_components.COLLECT_EDGES`` matched pairs, their positions are
    gathered and the pandas path runs on the client; above it, large-star /
    small-star finds the components on the cluster, and only the links of the
    sparse entities are gathered to split them (see :func:`lsh_frame.cluster`).
    Either way the ids and the review equal the pandas path's.
    """
    min_score, warn_size = check_options(min_score, warn_size, owner)
    if isinstance(scored, pd.DataFrame):
        scored = dd.from_pandas(scored, npartitions=1, sort=False)
    left_index, right_index = _shared_indexes(tables)
    left_rows = tables[0].rows if len(tables) > 1 else None
    _progress.step("clustering")
    edges = persist(
        [
            delayed(_edges)(part, min_score, left_index, right_index, left_rows, owner)
            for part in scored.to_delayed()
        ]
    )
    counts = compute(*[delayed(_edge_count)(edge) for edge in edges])
    total = int(sum(count for count, _ in counts))
    right = tables[1].index if len(tables) > 1 else None
    splits = split and min_score is None and all(known for _, known in counts)
    if total <= _components.COLLECT_EDGES:
        links = Links.join(list(compute(*edges)), left_rows)
        ids, review = entity_ids(tables[0].index, right, links, splits)
        _warn_large(ids, warn_size, links.copies)
        warn_review(review)
        return ids, review
    left_rank = _label_rank(tables[0].index)
    right_rank = left_rank if right is None else _label_rank(right) + len(left_rank)
    ranks = shared((left_rank, right_rank))
    ranked = [delayed(_ranked_edges)(edge, ranks) for edge in edges]
    star_links = _components.stars(ranked, method)
    nodes = tables[0].rows + (tables[1].rows if len(tables) > 1 else 0)
    in_rank_order = _components.head_ids(nodes, None, None, star_links)
    rank = left_rank if right is None else np.concatenate([left_rank, right_rank])
    ids = in_rank_order[rank]
    # Which entities are sparse, from counts that add up over partitions; only
    # their links (few) come to the client to be split as pandas splits them.
    shared_ids = shared(ids)
    counted = compute(*[delayed(link_counts)(shared_ids, edge) for edge in edges])
    sparse = sparse_of(
        ids,
        np.sum([links_of_part for links_of_part, _ in counted], axis=0),
        np.sum([copies for _, copies in counted], axis=0),
        left_rows,
    )
    members = np.concatenate(
        [np.empty(0, np.int64), *compute(*[delayed(_members)(e) for e in edges])]
    )
    copies = members if len(tables) == 1 else None
    to_review = np.flatnonzero(sparse | oversized(ids, copies))
    review = {"links_cut": 0, "review": to_review.tolist()}
    if splits and sparse.any():
        shared_sparse = shared(sparse)
        inside = Links.join(
            list(
                compute(
                    *[
                        delayed(_links_in)(edge, shared_ids, shared_sparse)
                        for edge in edges
                    ]
                )
            ),
            left_rows,
        )
        ids, review = entity_ids(
            tables[0].index,
            right,
            inside,
            True,
            base=ids,
            copies=np.empty(0, np.int64) if copies is None else copies,
        )
    _warn_large(ids, warn_size, copies)
    warn_review(review)
    return ids, review


def _links_in(
    edges: Links, ids: npt.NDArray[np.int64], sparse: npt.NDArray[np.bool_]
) -> Links:
    """Keep the links of some partition that lie in the sparse entities."""
    within = sparse[ids[edges.first]]
    return Links(
        edges.first[within],
        edges.second[within],
        None if edges.strength is None else edges.strength[within],
        edges.identical[within],
        edges.left_rows,
    )


def _id_series(
    part: pd.DataFrame, ids: npt.NDArray[np.int64], review: dict[str, Any]
) -> pd.Series:
    series = pd.Series(ids, index=part.index, name="entity_id")
    series.attrs["lsh_frame"] = review
    return series


def _ids_on(
    table_: Table, ids: npt.NDArray[np.int64], review: dict[str, Any]
) -> dd.Series:
    parts = [
        delayed(_id_series)(part, piece, review)
        for part, piece in zip(
            table_.parts, shared_pieces(table_.slices(ids)), strict=True
        )
    ]
    meta = pd.Series(np.empty(0, np.int64), index=table_.meta.index, name="entity_id")
    return dd.from_delayed(
        parts, meta=meta, divisions=table_.frame.divisions, verify_meta=False
    )


def cluster(
    frame: dd.DataFrame,
    scored: dd.DataFrame,
    /,
    *,
    other: dd.DataFrame | None = None,
    min_score: float | None = None,
    warn_size: int = 1_000,
    split: bool = True,
    shuffle_method: str = "tasks",
) -> Any:
    """Entity id per row, as :func:`lsh_frame.cluster` (same ids)."""
    owner = "cluster"
    method = check_shuffle(shuffle_method, owner)
    split = check_bool(split, "split", owner)
    tables = _tables(frame, other, owner)
    ids, review = _entity_ids(
        tables, scored, min_score, warn_size, owner, method, split
    )
    left_ids = _ids_on(tables[0], ids[: tables[0].rows], review)
    if other is None:
        return left_ids
    return left_ids, _ids_on(tables[1], ids[tables[0].rows :], review)
