"""The functions behind ``ddf.lsh``: the pandas API on dask DataFrames.

Each takes the parameters of its pandas namesake plus ``shuffle_method`` (Dask's
shuffle: ``"tasks"``, the default, ``"p2p"`` or ``"disk"``) and, where keys are
shuffled, ``npartitions`` (partitions of the key shuffle; by default those of
the larger table). Results are dask DataFrames (or Series) whose computed
values equal the pandas results: the same pairs in the same order, the same
scores, the same entity ids. Decisions that need the whole data (thresholds,
the match model, entities) are computed when the function is called; the
returned collection holds the rest.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import dask.dataframe as dd
import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed

from lsh_frame import _progress
from lsh_frame._validation import check_bool, check_int, present
from lsh_frame.blocking import BlockingReport, mapped_columns
from lsh_frame.cluster import (
    Links,
    _label_rank,
    _links,
    _warn_large,
    check_options,
    entity_ids,
    link_counts,
    oversized,
    sparse_of,
    warn_review,
)
from lsh_frame.compare import (
    _positions,
    in_categories,
    round_categories,
    round_decision,
    round_frame,
    round_info,
    round_pairs,
    round_scoring,
    round_skipped,
)
from lsh_frame.dask import _components
from lsh_frame.dask._blocking import (
    RIGHT_POSITION,
    Candidates,
    build_candidates,
    labelled,
    report,
)
from lsh_frame.dask._score import fetch, score_parts
from lsh_frame.dask._tables import (
    Table,
    check_shuffle,
    compute,
    persist,
    shared,
    shared_pieces,
    table,
)
from lsh_frame.dask._transitive import new_pairs, round_graph
from lsh_frame.errors import ConfigError
from lsh_frame.jobs import (
    _check_new_column,
    _checked_decision,
    _completeness,
    _first_per_entity,
    _joined,
    _kept_by_callable,
    _link_columns,
    _output_names,
    _score_columns,
    check_keep,
    check_merge,
    given_columns,
    labels_at,
    merge_layout,
    missing_dtypes,
)
from lsh_frame.minhash import minhash as _minhash
from lsh_frame.one_to_one import check_one_to_one
from lsh_frame.transitive import (
    check_transitive,
    path_pairs,
)

_BLOCKING = ("threshold", "recall", "num_perm", "seed", "max_bucket", "max_pairs")
_SCORING = ("min_score", "values", "estimate", "num_perm", "seed", "one_to_one")


def _tables(frame: Any, other: Any, owner: str) -> list[Table]:
    tables = [table(frame, "frame", owner)]
    if other is not None:
        tables.append(table(other, "other", owner))
    return tables


def _mapped(frame: dd.DataFrame, pairs: list[Any] | None) -> dd.DataFrame:
    """Return the right table's mapped columns under the left names, per partition."""
    if pairs is None:
        return frame
    return frame.map_partitions(present, pairs, meta=present(frame._meta, pairs))


def _two_tables(
    frame: Any, fields: Any, other: Any, right_on: Any, owner: str
) -> list[Table]:
    """Both tables, ``other`` seen under ``frame``'s names (see ``right_on``)."""
    tables = _tables(frame, other, owner)
    if other is None and right_on is None:
        return tables
    pairs = mapped_columns(
        frame._meta, fields, None if other is None else other._meta, right_on, owner
    )
    if pairs is None:
        return tables
    return [tables[0], table(_mapped(other, pairs), "other", owner)]


def _frame(parts: list[Any], divisions: Any = None) -> dd.DataFrame:
    """Make a dask DataFrame of delayed pandas parts (meta from the first part)."""
    (meta,) = compute(delayed(_empty)(parts[0]))
    return dd.from_delayed(parts, meta=meta, divisions=divisions, verify_meta=False)


def _empty(part: pd.DataFrame) -> pd.DataFrame:
    return part.iloc[:0]


def _shared_indexes(tables: list[Table]) -> tuple[Any, Any]:
    """Both tables' index labels, sent once to each worker (once when deduping)."""
    left = shared(tables[0].index)
    return left, (left if len(tables) == 1 else shared(tables[1].index))


def _persisted(frame: dd.DataFrame) -> dd.DataFrame:
    """Return the same collection with its partitions computed and kept."""
    parts = persist(list(frame.to_delayed()))
    return dd.from_delayed(
        parts, meta=frame._meta, divisions=frame.divisions, verify_meta=False
    )


def _npartitions(value: Any, owner: str) -> int | None:
    if value is None:
        return None
    return check_int(value, "npartitions", owner, minimum=1)


def _range_divisions(lengths: npt.NDArray[np.int64]) -> Any:
    """Divisions of parts numbered 0, 1, 2 ... in order (None with an empty part)."""
    if lengths.size == 0 or (lengths == 0).any():
        return None
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    return (*starts.tolist(), int(lengths.sum()) - 1)


# ----------------------------------------------------------------------------
# Stages


def _candidates(
    tables: list[Table],
    fields: Any,
    options: dict[str, Any],
    method: str,
    npartitions: int | None,
    owner: str,
    keep_positions: bool,
    collapse_identical: bool = True,
) -> tuple[list[Any], Candidates]:
    found = build_candidates(
        tables,
        fields,
        **{name: options[name] for name in _BLOCKING},
        collapse_identical=collapse_identical,
        npartitions=_npartitions(npartitions, owner),
        method=method,
        owner=owner,
    )
    left_index, right_index = _shared_indexes(tables)
    starts = np.concatenate([[0], np.cumsum(found.lengths)[:-1]])
    parts = [
        delayed(labelled)(
            part,
            left_index,
            right_index,
            found.labels,
            found.present,
            int(start),
            keep_positions,
            len(tables) > 1,
        )
        for part, start in zip(found.parts, starts, strict=True)
    ]
    return parts, found


def candidates(
    frame: dd.DataFrame,
    fields: Any,
    /,
    *,
    other: dd.DataFrame | None = None,
    right_on: Any = None,
    threshold: float | None = None,
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    collapse_identical: bool = False,
    shuffle_method: str = "tasks",
    npartitions: int | None = None,
) -> dd.DataFrame:
    """Candidate pairs, as :func:`lsh_frame.candidates` (a part per left partition)."""
    owner = "candidates"
    collapse_identical = check_bool(collapse_identical, "collapse_identical", owner)
    method = check_shuffle(shuffle_method, owner)
    tables = _two_tables(frame, fields, other, right_on, owner)
    parts, found = _candidates(
        tables,
        fields,
        locals(),
        method,
        npartitions,
        owner,
        keep_positions=False,
        collapse_identical=collapse_identical,
    )
    return _frame(persist(parts), _range_divisions(found.lengths))


def blocking_report(
    frame: dd.DataFrame,
    fields: Any,
    /,
    *,
    other: dd.DataFrame | None = None,
    right_on: Any = None,
    threshold: float | None = None,
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    true_pairs: Any = None,
    shuffle_method: str = "tasks",
    npartitions: int | None = None,
) -> BlockingReport:
    """Report what each key costs and finds, as :func:`lsh_frame.blocking_report`."""
    owner = "blocking_report"
    method = check_shuffle(shuffle_method, owner)
    tables = _two_tables(frame, fields, other, right_on, owner)
    return report(
        tables,
        fields,
        threshold=threshold,
        recall=recall,
        num_perm=num_perm,
        seed=seed,
        max_bucket=max_bucket,
        true_pairs=true_pairs,
        npartitions=_npartitions(npartitions, owner),
        method=method,
        owner=owner,
    )


def _scored(
    tables: list[Table],
    pair_parts: list[Any],
    lengths: npt.NDArray[np.int64],
    fields: Any,
    options: dict[str, Any],
    method: str,
    owner: str,
    *,
    internal: bool,
) -> tuple[dd.DataFrame, dict[str, Any]]:
    decided, attrs = score_parts(
        tables,
        pair_parts,
        lengths,
        fields,
        **{name: options[name] for name in _SCORING},
        transitive=options.get("transitive", "auto"),
        method=method,
        owner=owner,
        positions_known=internal,
        left_aligned=internal,
    )
    # Candidates are numbered 0, 1, 2 ... in order; given pairs keep their index.
    return _frame(decided, _range_divisions(lengths) if internal else None), attrs


def score(
    frame: dd.DataFrame,
    pairs: dd.DataFrame,
    fields: Any,
    /,
    *,
    other: dd.DataFrame | None = None,
    right_on: Any = None,
    min_score: Any = "auto",
    values: bool = False,
    estimate: bool = False,
    num_perm: int = 128,
    seed: int = 1,
    one_to_one: Any = "auto",
    transitive: Any = "auto",
    shuffle_method: str = "tasks",
) -> dd.DataFrame:
    """Score candidate pairs, as :func:`lsh_frame.score` (pairs keep their parts).

    With ``one_to_one`` (two tables) or ``transitive`` (one table), the matched
    pairs are gathered on the client to decide over all partitions, as pandas
    does.
    """
    owner = "score"
    method = check_shuffle(shuffle_method, owner)
    check_one_to_one(one_to_one, owner, link=other is not None)
    check_transitive(transitive, owner, link=other is not None)
    tables = _two_tables(frame, fields, other, right_on, owner)
    if not isinstance(pairs, dd.DataFrame):
        pairs = (
            dd.from_pandas(pairs, npartitions=1, sort=False)
            if isinstance(pairs, pd.DataFrame)
            else pairs
        )
    pair_parts = persist(list(pairs.to_delayed()))
    lengths = np.array(compute(*[delayed(len)(part) for part in pair_parts]), np.int64)
    scored, _ = _scored(
        tables, pair_parts, lengths, fields, locals(), method, owner, internal=False
    )
    return scored


def _pairs(
    tables: list[Table],
    fields: Any,
    options: dict[str, Any],
    method: str,
    npartitions: int | None,
    owner: str,
) -> tuple[dd.DataFrame, dict[str, Any]]:
    parts, found = _candidates(
        tables, fields, options, method, npartitions, owner, keep_positions=True
    )
    scored, attrs = _scored(
        tables,
        persist(parts),
        found.lengths,
        fields,
        options,
        method,
        owner,
        internal=True,
    )
    if len(tables) > 1 or not attrs["transitive"]["applied"]:
        return scored, attrs
    return _with_pairs_through_matches(
        tables[0], scored, int(found.lengths.sum()), attrs, fields, options, method
    )


def _with_attrs(
    part: pd.DataFrame, attrs: dict[str, Any], categories: pd.Index | None
) -> pd.DataFrame:
    """Return the partition with ``attrs`` (and ``found_by`` in ``categories``)."""
    part = in_categories(part, categories)
    part.attrs = {**part.attrs, "lsh_frame": attrs}
    return part


def _with_pairs_through_matches(
    table: Table,
    scored: dd.DataFrame,
    rows: int,
    attrs: dict[str, Any],
    fields: Any,
    options: dict[str, Any],
    method: str,
) -> tuple[dd.DataFrame, dict[str, Any]]:
    """As pandas' ``pairs``: the pairs found through the matches, one more part.

    The graph and the new pairs are found on the client (see
    :mod:`lsh_frame.dask._transitive`); the new pairs are scored by the same
    model or cut, then decided on the client by the rule alone.
    """
    owner = "pairs"
    parts = persist(list(scored.to_delayed()))
    info = attrs["transitive"]
    index = shared(table.index)
    graph = round_graph(parts, index, owner)
    paths = path_pairs(graph)
    room = int(options["max_pairs"]) - rows
    if paths > room:
        attrs = {**attrs, "transitive": round_skipped(info, paths, room)}
        return _frame(
            [delayed(_with_attrs)(part, attrs, None) for part in parts],
            scored.divisions,
        ), attrs
    _progress.step("pairs through the matches")
    first, second = new_pairs(parts, index, table.rows, graph, owner)
    if not first.size:
        attrs = {**attrs, "transitive": round_info(info, 0, 0)}
        return _frame(
            [delayed(_with_attrs)(part, attrs, None) for part in parts],
            scored.divisions,
        ), attrs
    decider = round_scoring(attrs)
    found, _ = _scored(
        [table],
        [delayed(round_pairs(table.index, first, second, rows))],
        np.array([first.size], dtype=np.int64),
        fields,
        {**options, "min_score": decider, "transitive": False},
        method,
        owner,
        internal=False,
    )
    (found,) = compute(found)
    match = round_decision(graph, first, second, found, decider)
    attrs = {
        **attrs,
        "transitive": round_info(info, int(first.size), int(match.sum())),
    }
    categories = round_categories(scored.dtypes["found_by"])
    meta = scored._meta
    added = _with_attrs(round_frame(meta, found, match, categories), attrs, None)
    divisions = (
        (*scored.divisions[:-1], rows, rows + first.size - 1)
        if scored.known_divisions
        else None
    )
    return _frame(
        [delayed(_with_attrs)(part, attrs, categories) for part in parts]
        + [delayed(added)],
        divisions,
    ), attrs


def pairs(
    frame: dd.DataFrame,
    fields: Any,
    /,
    *,
    other: dd.DataFrame | None = None,
    right_on: Any = None,
    threshold: float | None = None,
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    min_score: Any = "auto",
    values: bool = False,
    estimate: bool = False,
    one_to_one: Any = "auto",
    transitive: Any = "auto",
    shuffle_method: str = "tasks",
    npartitions: int | None = None,
) -> dd.DataFrame:
    """Candidate pairs and their scores, as :func:`lsh_frame.pairs`."""
    owner = "pairs"
    method = check_shuffle(shuffle_method, owner)
    check_one_to_one(one_to_one, owner, link=other is not None)
    check_transitive(transitive, owner, link=other is not None)
    tables = _two_tables(frame, fields, other, right_on, owner)
    scored, _ = _pairs(tables, fields, locals(), method, npartitions, owner)
    return scored


def _edges(
    part: pd.DataFrame,
    min_score: float | None,
    left_index: pd.Index,
    right_index: pd.Index,
    left_rows: int | None,
    owner: str,
) -> Links:
    linked = part[_links(part, min_score, owner).to_numpy()]
    first = _positions(linked["left"], left_index, "left", owner)
    second = _positions(linked["right"], right_index, "right", owner)
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


def minhash(
    frame: dd.DataFrame, columns: Any, /, **options: Any
) -> dd.Series | dd.DataFrame:
    """MinHash signatures per partition, as ``df.lsh.minhash`` (same values)."""
    from lsh_frame._validation import check_columns

    single = isinstance(columns, str) or not isinstance(columns, (list, tuple))
    labels = check_columns(frame._meta, columns, "minhash")

    def sign(part: pd.DataFrame) -> Any:
        signed = [_minhash(part[label], **options) for label in labels]
        return signed[0] if single else pd.concat(signed, axis=1)

    return frame.map_partitions(sign, meta=sign(frame._meta))


# ----------------------------------------------------------------------------
# Jobs


def _entities(
    tables: list[Table],
    fields: Any,
    options: dict[str, Any],
    method: str,
    npartitions: int | None,
    owner: str,
) -> tuple[npt.NDArray[np.int64], dict[str, Any]]:
    progress = check_bool(options["progress"], "progress", owner)
    options = {
        **options,
        "values": False,
        "estimate": False,
        "one_to_one": "auto",
        "min_score": _checked_decision(fields, options["min_score"], owner),
    }
    with _progress.reporting(progress, owner):
        scored, attrs = _pairs(tables, fields, options, method, npartitions, owner)
        scored = _persisted(scored)  # decided once, read twice below
        ids, _ = _entity_ids(tables, scored, None, 1_000, owner, method)
        matches = compute(
            *[delayed(_match_count)(part) for part in scored.to_delayed()]
        )
    info = {
        "pairs": int(sum(count[0] for count in matches)),
        "matches": int(sum(count[1] for count in matches)),
        "entities": int(np.unique(ids).size),
        "min_score": attrs.get("min_score"),
        "min_score_rule": attrs.get("min_score_rule"),
        "model": attrs.get("model"),
    }
    return ids, info


def _match_count(part: pd.DataFrame) -> tuple[int, int]:
    return len(part), int(part["match"].sum())


def _with_entities(
    part: pd.DataFrame,
    ids: npt.NDArray[np.int64],
    sizes: npt.NDArray[np.int64],
    id_column: Hashable,
    size_column: Hashable,
    info: dict[str, Any],
) -> pd.DataFrame:
    added = pd.DataFrame({id_column: ids, size_column: sizes}, index=part.index)
    result = pd.concat([part, added], axis=1)
    result.attrs = {**part.attrs, "lsh_frame": info}
    return result


def _columns(frame: Any, fields: Any, subset: Any, owner: str) -> Any:
    """Return the columns given (or ``subset=``), else every column of the frame."""
    every = frame._meta if isinstance(frame, dd.DataFrame) else None
    return given_columns(fields, subset, "subset", owner, every)


def dedupe(
    frame: dd.DataFrame,
    fields: Any = None,
    /,
    *,
    subset: Any = None,
    threshold: float | None = None,
    min_score: Any = "auto",
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    id_column: Hashable = "cluster_id",
    size_column: Hashable = "cluster_size",
    progress: bool = False,
    shuffle_method: str = "tasks",
    npartitions: int | None = None,
) -> dd.DataFrame:
    """Every row with its entity, as :func:`lsh_frame.dedupe` (same partitions)."""
    owner = "dedupe"
    fields = _columns(frame, fields, subset, owner)
    method = check_shuffle(shuffle_method, owner)
    meta = frame._meta if isinstance(frame, dd.DataFrame) else None
    if meta is not None:
        _check_new_column(meta, id_column, "id_column", owner)
        _check_new_column(meta, size_column, "size_column", owner)
        if id_column == size_column:
            raise ConfigError(
                f"{owner} got the same label {id_column!r} for id_column and "
                "size_column."
            )
    tables = _tables(frame, None, owner)
    ids, info = _entities(tables, fields, locals(), method, npartitions, owner)
    sizes = np.bincount(ids)[ids].astype(np.int64) if ids.size else ids
    left = tables[0]
    parts = [
        delayed(_with_entities)(part, piece, size, id_column, size_column, info)
        for part, piece, size in zip(
            left.parts,
            shared_pieces(left.slices(ids)),
            shared_pieces(left.slices(sizes)),
            strict=True,
        )
    ]
    empty = np.empty(0, np.int64)
    result_meta = _with_entities(left.meta, empty, empty, id_column, size_column, {})
    return dd.from_delayed(
        parts, meta=result_meta, divisions=frame.divisions, verify_meta=False
    )


def _completeness_part(part: pd.DataFrame) -> npt.NDArray[np.int64]:
    return _completeness(part)


def _kept_rows(
    part: pd.DataFrame, local: npt.NDArray[np.int64], start: int | None, info: Any
) -> pd.DataFrame:
    kept = part.iloc[local]
    if start is not None:
        kept = kept.reset_index(drop=True)
        kept.index = pd.RangeIndex(start, start + len(kept))
    kept.attrs = {**part.attrs, "lsh_frame": info}
    return kept


def _kept(
    left: Table, ids: npt.NDArray[np.int64], keep: Any, owner: str
) -> npt.NDArray[np.int64]:
    """Positions of the rows ``keep`` keeps, as :func:`lsh_frame.drop_duplicates`.

    A ``keep`` function gets each entity with duplicates as a pandas frame:
    those rows are gathered on the client to call it.
    """
    sizes = np.bincount(ids) if ids.size else np.zeros(0, dtype=np.int64)
    positions = np.arange(ids.size, dtype=np.int64)
    if keep is False:
        return np.flatnonzero(sizes[ids] == 1)
    if keep == "first":
        return _first_per_entity(ids, positions)
    if keep == "last":
        return _first_per_entity(ids, -positions)
    if keep == "most_complete":
        filled = compute(*[delayed(_completeness_part)(part) for part in left.parts])
        return _first_per_entity(ids, -np.concatenate([np.empty(0, np.int64), *filled]))
    shared = np.flatnonzero(sizes[ids] > 1)
    rows = _gather(left, shared)
    chosen = _kept_by_callable(rows, ids[shared], sizes, keep, owner)
    return np.sort(np.concatenate([np.flatnonzero(sizes[ids] == 1), shared[chosen]]))


def drop_duplicates(
    frame: dd.DataFrame,
    fields: Any = None,
    /,
    *,
    subset: Any = None,
    keep: Any = "first",
    ignore_index: bool = False,
    threshold: float | None = None,
    min_score: Any = "auto",
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    progress: bool = False,
    shuffle_method: str = "tasks",
    npartitions: int | None = None,
) -> dd.DataFrame:
    """One row per entity, as :func:`lsh_frame.drop_duplicates`.

    A ``keep`` function gets each entity with duplicates as a pandas frame:
    those rows are gathered on the client to call it.
    """
    owner = "drop_duplicates"
    fields = _columns(frame, fields, subset, owner)
    method = check_shuffle(shuffle_method, owner)
    check_keep(keep, owner)
    ignore_index = check_bool(ignore_index, "ignore_index", owner)
    tables = _tables(frame, None, owner)
    ids, info = _entities(tables, fields, locals(), method, npartitions, owner)
    left = tables[0]
    kept = _kept(left, ids, keep, owner)
    where = left.partition_of(kept)
    counts = np.bincount(where, minlength=left.npartitions)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    parts = [
        delayed(_kept_rows)(
            part,
            kept[where == number] - left.offsets[number],
            int(starts[number]) if ignore_index else None,
            info,
        )
        for number, part in enumerate(left.parts)
    ]
    meta = _kept_rows(left.meta, np.empty(0, np.int64), 0 if ignore_index else None, {})
    divisions = _range_divisions(counts) if ignore_index else None
    return dd.from_delayed(parts, meta=meta, divisions=divisions, verify_meta=False)


def _marked(
    part: pd.DataFrame, marked: npt.NDArray[np.bool_], info: dict[str, Any]
) -> pd.Series:
    result = pd.Series(marked, index=part.index)
    result.attrs = {**part.attrs, "lsh_frame": info}
    return result


def duplicated(
    frame: dd.DataFrame,
    fields: Any = None,
    /,
    *,
    subset: Any = None,
    keep: Any = "first",
    threshold: float | None = None,
    min_score: Any = "auto",
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    progress: bool = False,
    shuffle_method: str = "tasks",
    npartitions: int | None = None,
) -> dd.Series:
    """Which rows duplicate another, as :func:`lsh_frame.duplicated`.

    A boolean Series with the frame's partitions.
    """
    owner = "duplicated"
    fields = _columns(frame, fields, subset, owner)
    method = check_shuffle(shuffle_method, owner)
    check_keep(keep, owner)
    tables = _tables(frame, None, owner)
    ids, info = _entities(tables, fields, locals(), method, npartitions, owner)
    left = tables[0]
    marked = np.ones(ids.size, dtype=bool)
    marked[_kept(left, ids, keep, owner)] = False
    parts = [
        delayed(_marked)(part, piece, info)
        for part, piece in zip(
            left.parts, shared_pieces(left.slices(marked)), strict=True
        )
    ]
    meta = _marked(left.meta, np.empty(0, dtype=bool), {})
    return dd.from_delayed(
        parts, meta=meta, divisions=frame.divisions, verify_meta=False
    )


def _gather(source: Table, positions: npt.NDArray[np.int64]) -> pd.DataFrame:
    """Gather the rows at some global positions, in that order, as one frame."""
    where = source.partition_of(positions)
    pieces = compute(
        *[
            delayed(_rows)(part, positions[where == number] - source.offsets[number])
            for number, part in enumerate(source.parts)
        ]
    )
    return pd.concat(pieces) if pieces else source.meta


def _rows(part: pd.DataFrame, local: npt.NDArray[np.int64]) -> pd.DataFrame:
    return part.iloc[local]


def _link_view(
    left: dd.DataFrame,
    right: dd.DataFrame,
    fields: Any,
    left_on: Any,
    right_on: Any,
    owner: str,
) -> tuple[Any, dd.DataFrame]:
    """:func:`lsh_frame.jobs._link_tables` for dask frames (checked on meta)."""
    for role, value in (("left", left), ("right", right)):
        if not isinstance(value, dd.DataFrame):
            table(value, role, owner)  # raises the type error
    fields, pairs = _link_columns(
        left._meta, right._meta, fields, left_on, right_on, owner
    )
    return fields, _mapped(right, pairs)


def _link_scored(
    left: dd.DataFrame,
    right: dd.DataFrame,
    fields: Any,
    options: dict[str, Any],
    owner: str,
) -> tuple[list[Table], dd.DataFrame, dict[str, Any]]:
    method = check_shuffle(options["shuffle_method"], owner)
    mapped, view = _link_view(
        left, right, fields, options["left_on"], options["right_on"], owner
    )
    options = {
        **options,
        "min_score": _checked_decision(mapped, options["min_score"], owner),
    }
    progress = check_bool(options["progress"], "progress", owner)
    tables = _tables(left, view, owner)
    with _progress.reporting(progress, owner):
        scored, attrs = _pairs(
            tables, mapped, options, method, options["npartitions"], owner
        )
    return tables, scored, attrs


def link(
    left: dd.DataFrame,
    right: dd.DataFrame,
    fields: Any = None,
    /,
    *,
    on: Any = None,
    left_on: Any = None,
    right_on: Any = None,
    threshold: float | None = None,
    min_score: Any = "auto",
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    values: bool = False,
    one_to_one: Any = "auto",
    progress: bool = False,
    shuffle_method: str = "tasks",
    npartitions: int | None = None,
) -> dd.DataFrame:
    """Scored pairs between two tables, as :func:`lsh_frame.link`."""
    fields = given_columns(fields, on, "on", "link")
    check_one_to_one(one_to_one, "link", link=True)
    options = {**locals(), "estimate": False}
    _, scored, _ = _link_scored(left, right, fields, options, "link")
    return scored


def _matched(part: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    return part.loc[part["match"].to_numpy(dtype=bool), columns]


def _merged_part(
    left_rows: pd.DataFrame,
    right_rows: pd.DataFrame,
    left_at: npt.NDArray[np.int64],
    right_at: npt.NDArray[np.int64],
    scores: pd.DataFrame,
    labels: pd.Index,
    right_labels: pd.Index,
    suffixes: tuple[str, str],
    indicator: Any,
    dtypes: dict[Any, Any],
    info: dict[str, Any],
) -> pd.DataFrame:
    result = _joined(
        left_rows,
        right_rows,
        left_at,
        right_at,
        scores,
        labels,
        right_labels,
        suffixes,
        indicator,
    )
    if dtypes:
        result = result.astype(dtypes)
    result.attrs = {"lsh_frame": info}
    return result


def _fetched_at(
    positions: npt.NDArray[np.int64],
) -> tuple[pd.DataFrame, npt.NDArray[np.int64]]:
    """Return a request for the rows at ``positions`` (-1: none), where each lands."""
    present = positions >= 0
    at = np.full(positions.size, -1, dtype=np.int64)
    at[present] = np.arange(int(present.sum()))
    return pd.DataFrame({RIGHT_POSITION: positions[present]}), at


def merge(
    left: dd.DataFrame,
    right: dd.DataFrame,
    fields: Any = None,
    /,
    *,
    on: Any = None,
    how: str = "inner",
    left_on: Any = None,
    right_on: Any = None,
    min_score: Any = "auto",
    one_to_one: Any = False,
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
    shuffle_method: str = "tasks",
    npartitions: int | None = None,
) -> dd.DataFrame:
    """Join two tables on similarity, as :func:`lsh_frame.merge`.

    The matched pairs' positions and scores are laid out on the client (as
    pandas does); the rows are joined per partition of the table whose order
    the rows follow (the left table's; the right table's with ``how="right"``,
    and for the right rows without a match of ``how="outer"``), the other
    table's rows fetched by a shuffle.
    """
    owner = "merge"
    for role, value in (("left", left), ("right", right)):
        if not isinstance(value, dd.DataFrame):
            table(value, role, owner)  # raises the type error
    plan = check_merge(
        left._meta,
        right._meta,
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
    method = check_shuffle(shuffle_method, owner)
    options = {
        **locals(),
        "values": False,
        "estimate": False,
        "one_to_one": plan.one_to_one,
    }
    tables, scored, attrs = _link_scored(left, right, plan.fields, options, owner)
    scored = _persisted(scored)  # decided once, read twice below
    score_names = _score_columns(scored._meta)
    keep = ["left", "right", "match", *score_names]
    matched = pd.concat(
        compute(*[delayed(_matched)(part, keep) for part in scored.to_delayed()])
    )
    total = int(sum(compute(*[delayed(len)(part) for part in scored.to_delayed()])))
    left_table = tables[0]  # its labels are read already
    right_table = table(right, "right", owner)
    left_pos, right_pos, scores, matches = merge_layout(
        matched,
        left_table.index,
        right_table.index,
        how,
        plan.one_to_one is True,
        owner,
        validate=plan.validate,
    )
    info = {
        "pairs": total,
        "matches": matches,
        "min_score": attrs.get("min_score"),
        "min_score_rule": attrs.get("min_score_rule"),
        "model": attrs.get("model"),
        "one_to_one": attrs.get("one_to_one"),
    }
    labels = labels_at(left_table.index, left_pos)
    right_labels = labels_at(right_table.index, right_pos)
    # As in pandas: missing values change a side's dtypes in every partition,
    # not only in those that hold a row without that side.
    left_names, right_names = _output_names(left._meta, right._meta, suffixes)
    dtypes: dict[Any, Any] = {}
    if (left_pos < 0).any():
        dtypes.update(missing_dtypes(left._meta, left_names))
    if (right_pos < 0).any():
        dtypes.update(missing_dtypes(right._meta, right_names))
    # Each output partition is the rows of one partition of the table whose
    # order they follow ("home"); the other table's rows are fetched.
    segments = (
        [(False, np.arange(left_pos.size))]
        if how == "right"
        else [(True, np.flatnonzero(left_pos >= 0))]
        + ([(False, np.flatnonzero(left_pos < 0))] if how == "outer" else [])
    )
    pieces: list[tuple[bool, int, npt.NDArray[np.int64]]] = []
    for home_is_left, rows in segments:
        home = left_table if home_is_left else right_table
        where = home.partition_of((left_pos if home_is_left else right_pos)[rows])
        pieces += [
            (home_is_left, number, rows[where == number])
            for number in range(home.npartitions)
        ]
    requests: dict[bool, list[Any]] = {True: [], False: []}
    landing = []
    for home_is_left, _, rows in pieces:
        other_pos = right_pos[rows] if home_is_left else left_pos[rows]
        request, at = _fetched_at(other_pos)
        requests[home_is_left].append(request)
        landing.append(at)
    fetched: dict[bool, list[Any]] = {}
    for home_is_left, asked in requests.items():
        source = right_table if home_is_left else left_table
        lengths = np.array([len(request) for request in asked], np.int64)
        if not asked:
            continue
        if lengths.sum() == 0:  # nothing to fetch (e.g. outer's right-only rows)
            # A partition's own empty rows: Dask's meta may hold placeholder
            # categories that would join the result's.
            fetched[home_is_left] = [delayed(_empty)(source.parts[0])] * len(asked)
            continue
        fetched[home_is_left] = fetch(
            [delayed(request) for request in asked],
            lengths,
            RIGHT_POSITION,
            source,
            list(source.meta.columns),
            method,
        )
    taken = {True: 0, False: 0}
    parts = []
    for (home_is_left, number, rows), at in zip(pieces, landing, strict=True):
        home = left_table if home_is_left else right_table
        local = (left_pos if home_is_left else right_pos)[rows] - home.offsets[number]
        other = fetched[home_is_left][taken[home_is_left]]
        taken[home_is_left] += 1
        sides = (
            (home.parts[number], other, local, at)
            if home_is_left
            else (other, home.parts[number], at, local)
        )
        parts.append(
            delayed(_merged_part)(
                *sides,
                scores.iloc[rows].reset_index(drop=True),
                labels[rows],
                right_labels[rows],
                (suffixes[0], suffixes[1]),
                plan.indicator,
                dtypes,
                info,
            )
        )
    empty = np.empty(0, np.int64)
    meta = _merged_part(
        left._meta,
        right._meta,
        empty,
        empty,
        scores.iloc[:0],
        labels[:0],
        right_labels[:0],
        (suffixes[0], suffixes[1]),
        plan.indicator,
        dtypes,
        info,
    )
    return dd.from_delayed(parts, meta=meta, verify_meta=False)
