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

from typing import TYPE_CHECKING, Any

import dask.dataframe as dd
import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed

from lsh_frame import _progress
from lsh_frame._validation import check_bool, check_int, present
from lsh_frame.block.fields import mapped_columns
from lsh_frame.dask._candidates import build_candidates, labelled
from lsh_frame.dask._report import report
from lsh_frame.dask._score import score_parts
from lsh_frame.dask._tables import check_shuffle, compute, persist, shared, table
from lsh_frame.dask._transitive import (
    decided_rounds,
    new_pairs,
    pair_frame,
    through_graph,
)
from lsh_frame.decide.closing import check_transitive
from lsh_frame.decide.one_to_one import check_one_to_one
from lsh_frame.decide.through_matches import (
    in_categories,
    round_categories,
    round_info,
    round_scoring,
    round_skipped,
)
from lsh_frame.sketch.minhash import minhash as _minhash

if TYPE_CHECKING:
    from lsh_frame.block.report import BlockingReport
    from lsh_frame.dask._candidates import Candidates
    from lsh_frame.dask._tables import Table


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

    With ``one_to_one`` (two tables) the matched pairs are gathered on the
    client to decide over all partitions, as pandas does; ``transitive`` (one
    table) is decided on the workers (:mod:`lsh_frame.dask._transitive`).
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
    """As pandas' ``pairs``: the pairs found through the matches, more parts.

    The graph, the new pairs and their decision stay on the workers (see
    :mod:`lsh_frame.dask._transitive`); the new pairs are scored by the same
    model or cut, one part per partition of the table, after the candidates.
    """
    owner = "pairs"
    parts = persist(list(scored.to_delayed()))
    info = attrs["transitive"]
    graph = through_graph(parts, table, method, owner)
    _, paths = graph.paths()
    room = int(options["max_pairs"]) - rows
    if paths > room:
        attrs = {**attrs, "transitive": round_skipped(info, paths, room)}
        return _frame(
            [delayed(_with_attrs)(part, attrs, None) for part in parts],
            scored.divisions,
        ), attrs
    _progress.step("pairs through the matches")
    through = new_pairs(parts, table, graph, owner)
    total = int(through.lengths.sum())
    if not total:
        attrs = {**attrs, "transitive": round_info(info, 0, 0)}
        return _frame(
            [delayed(_with_attrs)(part, attrs, None) for part in parts],
            scored.divisions,
        ), attrs
    decider = round_scoring(attrs)
    index = shared(table.index)
    starts = rows + np.concatenate([[0], np.cumsum(through.lengths)[:-1]])
    to_score = persist(
        [
            delayed(pair_frame)(pairs, index, int(start))
            for pairs, start in zip(through.parts, starts, strict=True)
        ]
    )
    found, _ = _scored(
        [table],
        to_score,
        through.lengths,
        fields,
        {**options, "min_score": decider, "transitive": False},
        method,
        owner,
        internal=True,
    )
    categories = round_categories(scored.dtypes["found_by"])
    added, closed = decided_rounds(
        through, list(found.to_delayed()), decider, scored._meta, categories
    )
    attrs = {**attrs, "transitive": round_info(info, total, closed)}
    kept = [part for part, length in zip(added, through.lengths, strict=True) if length]
    divisions = (
        (
            *scored.divisions[:-1],
            *starts[through.lengths > 0].tolist(),
            rows + total - 1,
        )
        if scored.known_divisions
        else None
    )
    return _frame(
        [delayed(_with_attrs)(part, attrs, categories) for part in parts]
        + [delayed(_with_attrs)(part, attrs, None) for part in kept],
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
