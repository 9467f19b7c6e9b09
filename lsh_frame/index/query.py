"""Matching new records against a saved index: :meth:`Index.query`.

New records are keyed like the held ones, their candidates looked up in the
index's key tables and neighbour postings, scored with the index's score plan
and decided by its model; each new record keeps its ``k`` best matches.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame._kernels import neighbours as kernel
from lsh_frame._kernels.ranges import expand
from lsh_frame._validation import check_int
from lsh_frame.block.keys import is_compound_label, table_keys
from lsh_frame.block.neighbours import DEDUPE, _chunks
from lsh_frame.compare.fields import score_fields, without_straight
from lsh_frame.compare.plan import field_scores
from lsh_frame.decide.matches import decide, provisional_matches
from lsh_frame.index.tables import (
    FOUND_BY_DTYPES,
    QUERY_CHUNK,
    _joined,
    _norms,
    _token_pairs,
)
from lsh_frame.text.shingle import ColumnTexts

if TYPE_CHECKING:
    from lsh_frame.block.fields import BlockingKey
    from lsh_frame.decide.model import MatchModel
    from lsh_frame.index.index import Index


def _candidates(
    self: Index,
    new: pd.DataFrame,
    own: npt.NDArray[np.int64] | None = None,
    texts: ColumnTexts | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Return ``(new row, record position, keys bit mask)`` of each candidate.

    ``own`` holds the new rows' own positions when they are already in the
    index (resolving): a record is not its own candidate. ``texts`` holds
    the new records' columns' text once converted, for every stage.
    """
    owner = "Index.query"
    codes, masks = [], []
    n_positions = self._alive.size
    max_bucket = self._settings["max_bucket"]
    sides = table_keys(
        new,
        [key for key in self._keys if key.kind != "neighbours"],
        num_perm=self._settings["num_perm"],
        seed=self._settings["seed"],
        owner=owner,
        texts=texts,
    )
    sides_iter = iter(sides)
    for number, key in enumerate(self._keys):
        if key.kind == "neighbours":
            rows, positions = self._neighbours(new, key, own, texts)
        else:
            side = next(sides_iter)
            rows, positions = self._key_matches(
                number, side.keys, side.valid, max_bucket
            )
        codes.append(rows * np.int64(n_positions) + positions)
        masks.append(np.full(rows.size, 1 << number, dtype=np.int64))
    code = np.concatenate(codes)
    mask = np.concatenate(masks)
    if not code.size:
        empty = np.empty(0, np.int64)
        return empty, empty, empty
    order = np.argsort(code, kind="stable")
    code, mask = code[order], mask[order]
    heads = kernel.run_starts(code)
    starts = np.flatnonzero(heads)
    mask = np.bitwise_or.reduceat(mask, starts)
    code = code[starts]
    rows, positions = np.divmod(code, np.int64(n_positions))
    keep = self._alive[positions]
    if own is not None:
        keep &= positions != own[rows]
    return rows[keep], positions[keep], mask[keep]


def _key_matches(
    self: Index,
    number: int,
    keys: npt.NDArray[np.uint64],
    valid: npt.NDArray[np.bool_],
    max_bucket: int,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    rows = np.flatnonzero(valid)
    flat = keys[rows].ravel()
    owners = np.repeat(rows.astype(np.int64), keys.shape[1])
    found = [segment.keys[number].ranges(flat) for segment in self._segments]  # type: ignore[union-attr]
    total = sum(counts for _, counts in found)
    small = total < max_bucket  # the bucket with this record stays small
    rows_out, positions_out = [], []
    for segment, (starts, counts) in zip(self._segments, found, strict=True):
        table = segment.keys[number]
        assert table is not None
        owner, at = expand(starts[small], counts[small])
        rows_out.append(owners[small][owner])
        positions_out.append(table.positions[at])
    return np.concatenate(rows_out), np.concatenate(positions_out)


def _neighbours(
    self: Index,
    new: pd.DataFrame,
    key: BlockingKey,
    own: npt.NDArray[np.int64] | None,
    texts: ColumnTexts | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Each new record's most similar records (as the dedupe budget keeps)."""
    vocabulary, norms = self._vocabulary, self._norms
    assert vocabulary is not None and norms is not None
    records, hashes = _token_pairs(
        new, key.field.columns, "Index.query", texts, self._long_words
    )
    weights, looked_up = vocabulary.weigh(hashes)
    new_norms = _norms(records, weights, len(new))
    records, hashes = records[looked_up], hashes[looked_up]
    n_index = self._alive.size
    # A record keeps its neighbours by the budget of one table, as
    # deduplicating all the records would, over every segment at once.
    # Ranking only those the budget can keep (inside one segment) assumes
    # every neighbour counts: not with several segments, nor when
    # resolving, where a record meets itself (removed records are few).
    segments = [
        segment
        for segment in self._segments
        if segment.tokens is not None and segment.tokens.hashes.size
    ]
    budget = dataclasses.astuple(DEDUPE) if own is None and len(segments) == 1 else None
    queries, neighbours, cosines = [], [], []
    for segment in segments:
        tokens = segment.tokens
        assert tokens is not None
        # ``hashes`` are sorted: the searches run in order, in cache.
        at = np.searchsorted(tokens.hashes, hashes)
        at = np.minimum(at, tokens.hashes.size - 1)
        present = tokens.hashes[at] == hashes
        order = np.lexsort((at[present], records[present]))
        query_records = records[present][order]
        query_tokens = at[present][order].astype(np.int64)
        work = kernel.expansion_sizes(
            query_records, query_tokens, tokens.postings, len(new)
        )
        for first, stop in _chunks(work, n_index):
            query, neighbour, cosine = kernel.neighbour_lists(
                query_records,
                query_tokens,
                tokens.postings,
                tokens.weights,
                new_norms,
                norms,
                first=first,
                stop=stop,
                n_index=n_index,
                same_table=False,
                budget=budget,
            )
            # Removed records and a record itself (resolving) never count.
            keep = self._alive[neighbour]
            if own is not None:
                keep &= neighbour != own[query]
            queries.append(query[keep])
            neighbours.append(neighbour[keep])
            cosines.append(cosine[keep])
    query, neighbour = _joined(queries), _joined(neighbours)
    cosine = np.concatenate(cosines) if cosines else np.empty(0)
    if len(segments) > 1:  # each segment's lists are ranked on their own
        order = np.lexsort((neighbour, -cosine, query))
        query, neighbour, cosine = query[order], neighbour[order], cosine[order]
    kept, _ = kernel.select(query, cosine, **dataclasses.asdict(DEDUPE))
    return query[kept], neighbour[kept]


def _scored(
    self: Index,
    new: pd.DataFrame,
    rows: npt.NDArray[np.int64],
    positions: npt.NDArray[np.int64],
    mask: npt.NDArray[np.int64],
    texts: ColumnTexts | None = None,
) -> dict[str, Any]:
    """Field scores, ``score``, probability and ``match`` of some pairs."""
    owner = "Index.query"
    distinct, local = np.unique(positions, return_inverse=True)
    saved = self._rows(distinct)
    plan = self._plan
    columns = without_straight(
        score_fields(plan, saved, new, local.astype(np.int64), rows, owner, texts=texts)
    )
    levels = plan.levels(field_scores(plan, columns))
    model = plan.given_model
    alone = self._found_alone(mask, model)
    provisional = (
        None
        if model is not None
        else provisional_matches(plan, np.asarray(columns["score"]), None)
    )
    probability, match = decide(plan, model, levels, provisional, alone)
    if probability is not None:
        columns["match_probability"] = probability
    columns["match"] = match
    return columns


def _found_alone(
    self: Index, mask: npt.NDArray[np.int64], model: MatchModel | None
) -> npt.NDArray[np.bool_]:
    """Which pairs only one of the model's alone keys found, compound keys aside.

    As :func:`~lsh_frame.decide.weak_keys.found_only_by` reads ``found_by``:
    compound keys (always weak) do not count beside another key, and a pair only
    compound keys found is alone.
    """
    if model is None:
        return np.zeros(mask.size, dtype=bool)
    compound = sum(
        1 << number
        for number, key in enumerate(self._keys)
        if is_compound_label(key.label)
    )
    alone_bits = [
        1 << number
        for number, key in enumerate(self._keys)
        if key.label in model.alone_keys and not is_compound_label(key.label)
    ]
    others = mask & ~compound
    return np.isin(others, alone_bits) | ((others == 0) & (mask != 0))


def _found_by(self: Index, mask: npt.NDArray[np.int64]) -> pd.Categorical:
    distinct, inverse = np.unique(mask, return_inverse=True)
    # Building and checking the categories cost most of a query's ranking
    # (0.05 ms); the same few sets of keys recur, so their dtypes are kept.
    found = tuple(distinct.tolist())
    dtype = self._found_by_dtypes.get(found)
    if dtype is None:
        names = [
            "|".join(
                key.label
                for number, key in enumerate(self._keys)
                if value >> number & 1
            )
            for value in found
        ]
        dtype = pd.CategoricalDtype(pd.Index(names))
        if len(self._found_by_dtypes) < FOUND_BY_DTYPES:
            self._found_by_dtypes[found] = dtype
    # The codes are positions among the distinct masks: valid by making.
    return pd.Categorical.from_codes(inverse.ravel(), dtype=dtype, validate=False)


def query(self: Index, new: pd.DataFrame, k: int | None = 10) -> pd.DataFrame:
    """Each new record's best matches among the records held.

    The new records are keyed as the held ones were (the same exact and
    LSH keys, and their most similar records by weighted tokens), and
    every candidate is scored and decided by the index's fields and model.

    Parameters
    ----------
    new : DataFrame
        New records with (at least) the index's columns, under the same
        names. Index labels must be unique.
    k : int or None
        Candidates kept per new record, best first (``match_probability``,
        then ``score``, then the order records were added); None keeps
        every candidate.

    Returns
    -------
    DataFrame
        One row per (held record, new record) candidate, as
        ``saved.lsh.link(new)`` would give them: ``left`` (the held
        record's label), ``right`` (the new record's), ``rank`` (1 for the
        best), ``found_by``, each field's scores, ``score``,
        ``match_probability`` (with a model), ``match`` and ``entity_id``
        (the held record's). Sorted by new record (in ``new``'s order),
        then rank. New records without a candidate have no row.
    """
    owner = "Index.query"
    new = self._check_new(new, owner)
    if k is not None:
        k = check_int(k, "k", owner, minimum=1)
    parts = []
    # At least one chunk: no new records still give the result's columns.
    for first in range(0, max(len(new), 1), QUERY_CHUNK):
        chunk = (
            new if len(new) <= QUERY_CHUNK else new.iloc[first : first + QUERY_CHUNK]
        )
        # Keys, neighbours and scores read the same columns: once each.
        texts = ColumnTexts(chunk, owner=owner)
        rows, positions, mask = self._candidates(chunk, texts=texts)
        columns = self._scored(chunk, rows, positions, mask, texts)
        parts.append(self._ranked(chunk, rows, positions, mask, columns, k))
    result = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    result.attrs = {
        "lsh_frame": {
            "pairs": len(result),
            "matches": int(result["match"].sum()),
            "k": k,
        }
    }
    return result


def _ranked(
    self: Index,
    new: pd.DataFrame,
    rows: npt.NDArray[np.int64],
    positions: npt.NDArray[np.int64],
    mask: npt.NDArray[np.int64],
    columns: dict[str, Any],
    k: int | None,
) -> pd.DataFrame:
    probability = columns.get("match_probability")
    score = np.nan_to_num(np.asarray(columns["score"], dtype=np.float64), nan=-1.0)
    chance = (
        np.zeros(rows.size)
        if probability is None
        else np.nan_to_num(np.asarray(probability, dtype=np.float64), nan=-1.0)
    )
    order = np.lexsort((positions, -score, -chance, ~columns["match"], rows))
    group, heads = kernel.runs(rows[order])
    rank = np.arange(order.size, dtype=np.int64) - heads[group] + 1
    keep = order if k is None else order[rank <= k]
    rank = rank if k is None else rank[rank <= k]
    labels = self._all_labels()
    frame = {
        "left": labels[positions[keep]],
        "right": new.index[rows[keep]],
        "rank": rank,
        "found_by": self._found_by(mask[keep]),
    }
    for name, values in columns.items():
        frame[name] = np.asarray(values)[keep]
    frame["entity_id"] = self._entities[positions[keep]]
    return pd.DataFrame(frame)
