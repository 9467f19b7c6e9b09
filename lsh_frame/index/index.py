"""A saved index of resolved records: new records matched in milliseconds.

Matching a batch of new records against a table already resolved should not
re-sign and re-band the whole table, nor renumber its entities. An
:class:`Index` holds what every later batch needs, computed once:

- the blocking keys the defaults decide for the table (exact keys, banded LSH
  keys) as sorted arrays of ``(key, record)``, looked up by binary search;
- the neighbours key as an inverted index of tokens (words, character
  3-shingles and whole values) with their IDF weights and the records' norms,
  frozen when the index is built (see :mod:`lsh_frame.block.neighbours`);
- the fields' comparisons, their TF-IDF statistics and the learned match model;
- every record's values, label and entity id.

Records added later form *segments* of their own (nothing is rebuilt);
removed records are marked and skipped. :meth:`Index.save` writes Arrow IPC
files and a JSON manifest (no pickle); :meth:`Index.load` maps them into
memory without copying.

Weights stay those of the table the index was built on: a token first seen in
added records weighs as a token held by one record. Rebuilding the index from
its records (:meth:`Index.build`) refreshes them.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import tempfile
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from lsh_frame import _progress
from lsh_frame._kernels import neighbours as kernel
from lsh_frame._kernels.components import components
from lsh_frame._kernels.ranges import expand
from lsh_frame._validation import check_bool, check_frame, check_int
from lsh_frame.block.defaults import _FrameSource, decide_keys
from lsh_frame.block.fields import BlockingKey, Field, _as_fields, field_columns
from lsh_frame.block.keys import is_compound_label, table_keys
from lsh_frame.block.neighbours import (
    DEDUPE,
    LONG_VALUE_WORDS,
    WORK_PER_RECORD,
    _cap,
    _chunks,
)
from lsh_frame.compare.fields import score_fields, without_straight
from lsh_frame.compare.plan import (
    ScorePlan,
    comparison_rows,
    count_documents,
    field_scores,
    plan_score,
)
from lsh_frame.compare.table_checks import check_tables
from lsh_frame.compare.tfidf import DocumentFrequencies
from lsh_frame.decide.matches import check_min_score, decide, provisional_matches
from lsh_frame.decide.model import MatchModel, placeholders_dict, read_placeholders
from lsh_frame.errors import ColumnError, ConfigError, ConfigTypeError
from lsh_frame.index.store import (
    _check_json_label,
    _field_arguments,
    _field_dict,
    _json_value,
    _plan_dict,
    _read,
    _read_table,
    _write,
    _write_table,
)
from lsh_frame.index.tables import (
    _LABEL,
    _arrow_records,
    _KeyTable,
    _label_array,
    _norms,
    _Segment,
    _token_pairs,
    _Tokens,
    _tokens_of,
    _Vocabulary,
)
from lsh_frame.sketch.banding import LshPlan
from lsh_frame.text.shingle import ColumnTexts

__all__ = ["Index"]


#: Name and version of the saved format (``index.json``).
FORMAT = "lsh_frame.index"

FORMAT_VERSION = 1


#: New records looked up at a time: bounds the temporary arrays of a batch.
QUERY_CHUNK = 20_000

#: resolve() decides the keys and model again when a batch makes the index
#: this many times as large as the records they were decided on.
RELEARN_GROWTH = 2.0

#: Segments of added records kept apart before :meth:`Index.add` merges them.
MAX_SEGMENTS = 16


#: ``found_by`` dtypes an index keeps (sets of keys that found a query's pairs).
FOUND_BY_DTYPES = 256

#: A new record joins an existing entity when it matches at least this share
#: of the entity's records it was compared with (one false link to a relative
#: does not make it a member). make_customers in ten batches, pair F1 (before
#: weak keys and relearning): 20,000 records 0.9758 -> 0.9776, 50,000 0.9271
#: -> 0.9320, 100,000 0.7859 -> 0.7943.
SUPPORT = 0.5


class Index:
    """Resolved records, held for matching new ones (see the module docstring).

    Build one with :meth:`build` (or ``df.lsh.index(columns)``), or read a
    saved one with :meth:`load`. Then :meth:`query` finds each new record's
    best matches, :meth:`resolve` gives new records entity ids (an existing
    entity's when they match one), :meth:`add` and :meth:`remove` change the
    records held without rebuilding, and :meth:`save` writes it to a folder.

    Examples
    --------
    >>> import lsh_frame as lf
    >>> people = lf.datasets.make_customers(2_000, seed=5)
    >>> saved, new = people.iloc[:1_900], people.iloc[1_900:]
    >>> columns = ["given_name", "surname", "date_of_birth", "postcode"]
    >>> index = lf.Index.build(saved.drop(columns="entity_id"), columns)
    >>> found = index.query(new.drop(columns="entity_id"), k=1)
    >>> int(found["match"].sum()) > 0
    True
    """

    def __init__(
        self,
        *,
        fields: list[Field],
        keys: list[BlockingKey],
        plan: ScorePlan,
        vocabulary: _Vocabulary | None,
        segments: list[_Segment],
        alive: npt.NDArray[np.bool_],
        entities: npt.NDArray[np.int64],
        norms: npt.NDArray[np.float64] | None,
        next_id: int,
        settings: dict[str, Any],
    ) -> None:
        self._fields = fields
        self._keys = keys
        self._long_words: int | None = settings.get("long_value_words")
        self._plan = plan
        self._vocabulary = vocabulary
        self._segments = segments
        self._alive = alive
        self._entities = entities
        self._norms = norms
        self._next_id = next_id
        self._settings = settings
        self._labels: pd.Index | None = None
        self._merges: list[dict[str, Any]] = []
        #: ``found_by`` dtypes by the key masks they name (see _found_by).
        self._found_by_dtypes: dict[tuple[int, ...], pd.CategoricalDtype] = {}

    # -- building ------------------------------------------------------------

    @classmethod
    def build(
        cls,
        frame: pd.DataFrame,
        fields: Any = None,
        /,
        *,
        entity_ids: Any = None,
        min_score: Any = "auto",
        threshold: float | None = None,
        recall: float = 0.95,
        num_perm: int = 128,
        seed: int = 1,
        max_bucket: int = 1_000,
        progress: bool = False,
    ) -> Index:
        """Resolve a table and hold it for matching new records.

        Parameters
        ----------
        frame : DataFrame
            The records. Index labels must be unique; they name the records in
            every later result.
        fields : column label, Field, or a list of them, optional
            What to block on and compare, as for :func:`lsh_frame.dedupe`
            (plain column names let the data decide); every column by default.
        entity_ids : column label or array-like of int, optional
            The records' entity ids when the table is already resolved (a
            column of ``frame``, or one integer per row). By default the table
            is deduplicated (:func:`lsh_frame.dedupe`) and its entities
            numbered 0, 1, 2 ...
        min_score : "auto", float or a learned model
            How matches are decided (see :func:`lsh_frame.score`). ``"auto"``
            learns the model from the table's own pairs once, here; every
            later query decides with it.
        threshold, recall, num_perm, seed, max_bucket
            Blocking options, as for :func:`lsh_frame.candidates`.
        progress : bool
            Show the steps on a progress line on stderr.

        Returns
        -------
        Index
        """
        from lsh_frame.jobs.common import given_columns
        from lsh_frame.jobs.dedupe import _entities

        owner = "Index.build"
        frame = check_frame(frame, "frame", owner)
        fields = given_columns(fields, None, "subset", owner, frame)
        progress = check_bool(progress, "progress", owner)
        max_bucket = check_int(max_bucket, "max_bucket", owner, minimum=2)
        given_ids = _given_entity_ids(frame, entity_ids, owner)
        columns = field_columns(fields, owner)
        options = {
            "threshold": threshold,
            "min_score": min_score,
            "recall": recall,
            "num_perm": num_perm,
            "seed": seed,
            "max_bucket": max_bucket,
            "max_pairs": 50_000_000,
        }
        with _progress.reporting(progress, owner):
            decision: Any = min_score
            ids = given_ids
            if given_ids is None or min_score == "auto":
                found_ids, info = _entities(frame, fields, options, False, owner)
                ids = found_ids if given_ids is None else given_ids
                if min_score == "auto":
                    model = info.get("model")
                    decision = (
                        MatchModel.from_dict(model)
                        if model is not None
                        else float(info["min_score"])
                    )
            assert ids is not None
            source = _FrameSource(frame, None, owner, columns)
            keys, _ = decide_keys(
                source,
                fields,
                threshold=threshold,
                recall=recall,
                num_perm=num_perm,
                seed=seed,
                owner=owner,
            )
            _check_keys(keys, owner)
            sides = table_keys(
                frame,
                keys,
                num_perm=num_perm,
                seed=seed,
                owner=owner,
                exact={label: sides[0] for label, sides in source.exact.items()},
                signatures={
                    label: sides[0] for label, sides in source.signatures.items()
                },
            )
            specs, plain = _as_fields(fields, owner)
            plan = plan_score(
                [frame],
                [comparison_rows(frame)],
                specs,
                min_score=check_min_score(decision, owner),
                values=False,
                estimate=False,
                num_perm=num_perm,
                seed=seed,
                owner=owner,
            )
            plan = dataclasses.replace(plan, link=True)
            plan = check_tables(count_documents(plan, [frame], owner), [frame], owner)
            vocabulary, tokens, norms = None, None, None
            neighbours = _neighbours_key(keys)
            if neighbours is not None:
                _progress.step("indexing tokens")
                records, hashes = _token_pairs(frame, neighbours.field.columns, owner)
                vocabulary = _build_vocabulary(hashes, len(frame))
                norms = _built_norms(records, vocabulary, len(frame))
                tokens = _built_tokens(records, vocabulary)
                del records, hashes
            segment = _Segment(
                first=0,
                records=_arrow_records(frame, columns, owner),
                keys=[
                    None
                    if key.kind == "neighbours"
                    else _KeyTable.of(side.keys, side.valid, 0)
                    for key, side in zip(keys, sides, strict=True)
                ],
                tokens=tokens,
            )
        ids = np.array(ids, dtype=np.int64)  # ours to change (resolve)
        return cls(
            fields=specs,
            keys=keys,
            plan=plan,
            vocabulary=vocabulary,
            segments=[segment],
            alive=np.ones(len(frame), dtype=bool),
            entities=ids,
            norms=norms,
            next_id=int(ids.max(initial=-1)) + 1,
            settings={
                "columns": columns,
                # Plain column names: relearn() lets the data decide the keys
                # again (as build did); Field objects are kept as they are.
                "plain": plain,
                # Plain Python numbers: the settings are written as JSON.
                "threshold": None if threshold is None else float(threshold),
                "recall": float(recall),
                "num_perm": int(num_perm),
                "seed": int(seed),
                "max_bucket": int(max_bucket),
                "index_name": frame.index.name,
                # Values of this many words give no shingles to the tokens
                # (an index saved before the rule has none: every value does).
                "long_value_words": LONG_VALUE_WORDS,
                # "auto" learned the model here (relearn() learns it again).
                "learned": isinstance(min_score, str) and min_score == "auto",
                "built_on": len(frame),
            },
        )

    # -- what it holds -------------------------------------------------------

    def __len__(self) -> int:
        return int(self._alive.sum())

    def __repr__(self) -> str:
        return (
            f"<lsh_frame.Index: {len(self):,} records, {self.entities:,} entities, "
            f"keys {', '.join(key.label for key in self._keys)}; "
            f"{len(self._segments)} segment{'s' if len(self._segments) != 1 else ''}>"
        )

    @property
    def entities(self) -> int:
        """Distinct entities among the records held."""
        return int(np.unique(self._entities[self._alive]).size)

    @property
    def nbytes(self) -> int:
        """Bytes held by the index's arrays (mapped files count too)."""
        total = self._alive.nbytes + self._entities.nbytes
        if self._norms is not None:
            total += self._norms.nbytes
        if self._vocabulary is not None:
            vocabulary = self._vocabulary
            total += (
                vocabulary.hashes.nbytes
                + vocabulary.weights.nbytes
                + vocabulary.frequency.nbytes
            )
        return total + sum(segment.nbytes for segment in self._segments)

    @property
    def labels(self) -> pd.Index:
        """Labels of the records held, in the order they were added."""
        return self._all_labels()[self._alive]

    @property
    def entity_ids(self) -> pd.Series:
        """Entity id of each record held, by label."""
        return pd.Series(
            self._entities[self._alive],
            index=self.labels,
            name="cluster_id",
            dtype=np.int64,
        )

    @property
    def model(self) -> MatchModel | None:
        """The learned match model that decides (None: a cut on ``score``)."""
        return self._plan.given_model

    @property
    def keys(self) -> list[str]:
        """The blocking keys, with how each is made."""
        return [f"{key.label}: {key.describe()}" for key in self._keys]

    def records(self) -> pd.DataFrame:
        """Return the records held: the fields' columns, by label."""
        frame = self._rows(np.flatnonzero(self._alive))
        frame.index = self.labels
        return frame

    def _all_labels(self) -> pd.Index:
        if self._labels is None:
            # Segments may hold labels of different types (int, then text).
            parts = [
                pd.Index(segment.records.column(_LABEL).to_pandas())
                for segment in self._segments
            ]
            labels = parts[0].append(parts[1:]) if len(parts) > 1 else parts[0]
            self._labels = labels.rename(self._settings["index_name"])
        return self._labels

    def _rows(self, positions: npt.NDArray[np.int64]) -> pd.DataFrame:
        """Return the fields' columns of some records (any order) as a frame."""
        columns = self._settings["columns"]
        firsts = np.array([segment.first for segment in self._segments])
        which = np.searchsorted(firsts, positions, side="right") - 1
        parts, order = [], []
        for number in np.unique(which):
            chosen = np.flatnonzero(which == number)
            segment = self._segments[int(number)]
            local = positions[chosen] - segment.first
            rows = segment.records.drop_columns([_LABEL]).take(pa.array(local))
            # Segments may type a column differently (all missing in a batch):
            # each becomes pandas on its own. A block per column (as pandas
            # holds text columns anyway) skips consolidating them: a query's
            # candidates 0.15 -> 0.09 ms.
            parts.append(rows.to_pandas(split_blocks=True))
            order.append(chosen)
        if not parts:
            empty = self._segments[0].records.drop_columns([_LABEL]).slice(0, 0)
            parts, order = [empty.to_pandas()], [np.empty(0, np.int64)]
        frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        frame.columns = pd.Index(columns)
        if len(parts) > 1:
            back = np.empty(positions.size, dtype=np.int64)
            back[np.concatenate(order)] = np.arange(positions.size)
            frame = frame.iloc[back].reset_index(drop=True)
        return frame

    # -- looking up ----------------------------------------------------------

    def _check_new(self, new: Any, owner: str) -> pd.DataFrame:
        new = check_frame(new, "new", owner)
        missing = [column for column in self._settings["columns"] if column not in new]
        if missing:
            raise ColumnError(
                f"{owner} needs the index's columns {self._settings['columns']!r}; "
                f"the new records lack {missing!r}."
            )
        return new

    def _candidates(
        self,
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
        self,
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
        self,
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
        budget = (
            dataclasses.astuple(DEDUPE) if own is None and len(segments) == 1 else None
        )
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
        self,
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
            score_fields(
                plan, saved, new, local.astype(np.int64), rows, owner, texts=texts
            )
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
        self, mask: npt.NDArray[np.int64], model: MatchModel | None
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

    def _found_by(self, mask: npt.NDArray[np.int64]) -> pd.Categorical:
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

    def query(self, new: pd.DataFrame, k: int | None = 10) -> pd.DataFrame:
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
                new
                if len(new) <= QUERY_CHUNK
                else new.iloc[first : first + QUERY_CHUNK]
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
        self,
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

    # -- changing the records held ------------------------------------------

    def add(self, new: pd.DataFrame, entity_ids: Any = None) -> Index:
        """Hold more records, without rebuilding (returns the index itself).

        ``entity_ids`` gives their entities (a column of ``new`` or one integer
        per row); by default each starts an entity of its own, numbered after
        every id given so far. To give new records the entity they match, use
        :meth:`resolve`. A label already held, or labels of another type than
        the index's (text among integers), raise :class:`~lsh_frame.ColumnError`.
        """
        owner = "Index.add"
        new = self._check_new(new, owner)
        ids = _given_entity_ids(new, entity_ids, owner)
        self._check_labels_free(new.index, owner)
        if not len(new):
            return self
        if ids is None:
            ids = np.arange(self._next_id, self._next_id + len(new), dtype=np.int64)
        self._append(new, np.asarray(ids, dtype=np.int64))
        return self

    def _check_labels_free(self, labels: pd.Index, owner: str) -> None:
        """Refuse labels the index holds, or of another type than its own."""
        held_type = self._segments[0].records.schema.field(_LABEL).type
        if len(labels):
            new_type = _label_array(labels, owner).type
            if new_type != held_type and len(self._all_labels()):
                raise ColumnError(
                    f"{owner} got records labelled with {new_type} values, but the "
                    f"index's labels are {held_type} values. Give the new records "
                    "labels of the same type (for example with .astype() on the "
                    "index): the labels are kept in one Arrow column."
                )
        held = self.labels
        taken = labels[labels.isin(held)]
        if len(taken):
            raise ColumnError(
                f"{owner} got records whose labels the index already holds (for "
                f"example {taken[:3].tolist()}). Remove them first, or give the new "
                "records other labels."
            )

    def _append(
        self, new: pd.DataFrame, ids: npt.NDArray[np.int64], *, compact: bool = True
    ) -> None:
        owner = "Index.add"
        first = self._alive.size
        columns = self._settings["columns"]
        non_neighbour = [key for key in self._keys if key.kind != "neighbours"]
        sides = iter(
            table_keys(
                new,
                non_neighbour,
                num_perm=self._settings["num_perm"],
                seed=self._settings["seed"],
                owner=owner,
            )
        )
        keys: list[_KeyTable | None] = []
        for key in self._keys:
            if key.kind == "neighbours":
                keys.append(None)
            else:
                side = next(sides)
                keys.append(_KeyTable.of(side.keys, side.valid, first))
        tokens = None
        norms = self._norms
        neighbours = _neighbours_key(self._keys)
        if neighbours is not None:
            assert self._vocabulary is not None and norms is not None
            records, hashes = _token_pairs(
                new, neighbours.field.columns, owner, long_words=self._long_words
            )
            weights, looked_up = self._vocabulary.weigh(hashes)
            norms = np.concatenate([norms, _norms(records, weights, len(new))])
            tokens = _tokens_of(records, hashes, weights, looked_up, first)
        self._segments.append(
            _Segment(first, _arrow_records(new, columns, owner), keys, tokens)
        )
        self._alive = np.concatenate([self._alive, np.ones(len(new), dtype=bool)])
        self._entities = np.concatenate([self._entities, ids])
        self._norms = norms
        self._next_id = max(self._next_id, int(ids.max(initial=-1)) + 1)
        self._labels = None
        if compact and len(self._segments) > MAX_SEGMENTS:
            self.compact()

    def remove(self, labels: Any, *, errors: str = "raise") -> Index:
        """Stop holding some records (returns the index itself).

        ``labels`` is one label or a list of them. A label the index does not
        hold raises ``KeyError`` unless ``errors="ignore"`` (as
        :meth:`pandas.DataFrame.drop`). Their space is given back by
        :meth:`compact`.
        """
        if errors not in ("raise", "ignore"):
            raise ConfigError(
                "The 'errors' parameter of Index.remove must be 'raise' or 'ignore'. "
                f"Got {errors!r} instead."
            )
        if isinstance(labels, (str, bytes, tuple)) or not isinstance(
            labels, (Sequence, pd.Index, pd.Series, np.ndarray)
        ):
            labels = [labels]  # one label (a tuple too, as pandas' drop)
        wanted = pd.Index(list(labels), tupleize_cols=False)
        held = self._all_labels()
        if errors == "raise":
            missing = wanted[~wanted.isin(held[self._alive])]
            if len(missing):
                raise KeyError(f"{missing[:5].tolist()} not held by the index")
        # A label added again after a removal is held twice: the live copy goes.
        self._alive[self._alive & held.isin(wanted)] = False
        return self

    def compact(self) -> Index:
        """Merge the segments into one and drop removed records' space.

        Record positions change, labels and entity ids do not. Weights stay
        those the index was built with.
        """
        keep = np.flatnonzero(self._alive)
        frame = self._rows(keep)
        frame.index = self._all_labels()[keep]
        ids = self._entities[keep]
        before = dict(self.__dict__)
        self._segments = []
        self._alive = np.zeros(0, dtype=bool)
        self._entities = np.zeros(0, dtype=np.int64)
        self._norms = None if self._norms is None else np.zeros(0)
        self._labels = None
        try:
            self._append(frame, ids, compact=False)
        except BaseException:
            self.__dict__.clear()  # nothing half done: the index as it was
            self.__dict__.update(before)
            raise
        return self

    # -- resolving -----------------------------------------------------------

    def resolve(
        self,
        new: pd.DataFrame,
        *,
        id_column: Hashable = "cluster_id",
        relearn: bool = True,
    ) -> pd.DataFrame:
        """Give new records entity ids and hold them.

        Each new record matched (by the index's model) to held records, or
        to other new records that are, gets their entity's id; the others
        start new entities, numbered after every id given so far in the order
        of ``new``. Existing entities are never renumbered: when new records
        join two or more existing entities, they take the one they match most
        often (ties: the smallest id) and the merge is *reported*, not
        applied, in ``attrs["lsh_frame"]["merges"]`` (and :attr:`merges`).

        With ``relearn`` (default), when the batch would make the index twice
        as large as the records its keys and model were decided on, they are
        decided again from every record held and the batch first (as
        :meth:`relearn`): a model learned on the first few thousand records
        would otherwise decide every later batch (make_customers in ten
        batches, pair F1: 50,000 records 0.981 -> 0.991, 100,000 0.984 ->
        0.988). It costs about one :func:`lsh_frame.dedupe` of the records
        held, at each doubling.

        Returns ``new`` with ``id_column`` added (int64); ``attrs["lsh_frame"]``
        counts the records ``matched`` to existing entities, the
        ``new_entities``, lists the ``merges`` and says whether the index
        ``relearned``.
        """
        owner = "Index.resolve"
        relearn = check_bool(relearn, "relearn", owner)
        new = self._check_new(new, owner)
        if id_column in new.columns:
            raise ColumnError(
                f"{owner} adds the column {id_column!r}, but the new records already "
                "have one. Give another id_column."
            )
        self._check_labels_free(new.index, owner)
        n = len(new)
        # Twice the records the keys and model were decided on: decide them
        # again with this batch among the records, before it is decided.
        grows = (
            relearn
            and n > 0
            and len(self) + n
            >= RELEARN_GROWTH * self._settings.get("built_on", len(self) + n)
        )
        if grows:
            self._rebuild(new)
        elif n:  # no records, no segment
            self._append(new, np.full(n, -1, dtype=np.int64))
        # The new records are the last ones (compacting keeps the order).
        base = self._alive.size - n
        own = np.arange(base, base + n, dtype=np.int64)
        firsts, seconds, matched_rows, matched_ids = [], [], [], []
        candidate_rows, candidate_ids = [], []
        for start in range(0, n, QUERY_CHUNK):
            chunk = new.iloc[start : start + QUERY_CHUNK]
            texts = ColumnTexts(chunk, owner=owner)
            rows, positions, mask = self._candidates(
                chunk, own[start : start + QUERY_CHUNK], texts
            )
            match = np.asarray(
                self._scored(chunk, rows, positions, mask, texts)["match"]
            )
            rows = rows + start
            held = positions < base
            candidate_rows.append(rows[held])
            candidate_ids.append(self._entities[positions[held]])
            rows, positions = rows[match], positions[match]
            among_new = positions >= base
            firsts.append(rows[among_new])
            seconds.append(positions[among_new] - base)
            matched_rows.append(rows[~among_new])
            matched_ids.append(self._entities[positions[~among_new]])
        roots = components(n, _joined(firsts), _joined(seconds))
        ids, merges = self._assign(
            roots,
            _joined(matched_rows),
            _joined(matched_ids),
            new.index,
            (_joined(candidate_rows), _joined(candidate_ids)),
        )
        matched = ids < self._next_id  # an existing entity's id
        self._entities[own] = ids
        self._next_id = max(self._next_id, int(ids.max(initial=-1)) + 1)
        result = new.copy()
        result[id_column] = ids
        result.attrs = {
            **new.attrs,
            "lsh_frame": {
                "records": n,
                "matched": int(matched.sum()),
                "new_entities": int(np.unique(ids[~matched]).size),
                "merges": merges,
                "relearned": grows,
            },
        }
        self._merges.extend(merges)
        return result

    def relearn(self) -> Index:
        """Decide the keys, weights and model again from every record held.

        As :meth:`build` on :meth:`records` with the entity ids held: the
        keys the data decides (plain column names) and the token weights
        follow the records now held, and a model learned by ``"auto"`` is
        learned again (a given ``min_score`` stays). Entity ids, labels and
        the merges reported so far do not change. Returns the index itself.
        """
        self._rebuild(None)
        return self

    def _rebuild(self, new: pd.DataFrame | None) -> None:
        """Build the index again from its records (and ``new``, held last).

        ``new`` records get provisional ids (:meth:`resolve` gives theirs).
        """
        settings = self._settings
        given: Any = (
            settings["columns"] if settings.get("plain", False) else list(self._fields)
        )
        decision: Any = (
            "auto"
            if settings.get("learned", False)
            else (self._plan.given_model or self._plan.min_score)
        )
        frame = self.records()
        ids = self._entities[self._alive]
        if new is not None:
            frame = pd.concat([frame, new[settings["columns"]]])
            provisional = np.arange(len(new), dtype=np.int64) + self._next_id
            ids = np.concatenate([ids, provisional])
        frame.index = frame.index.rename(settings["index_name"])
        rebuilt = Index.build(
            frame,
            given,
            entity_ids=ids,
            min_score=decision,
            threshold=settings.get("threshold"),
            recall=settings.get("recall", 0.95),
            num_perm=settings["num_perm"],
            seed=settings["seed"],
            max_bucket=settings["max_bucket"],
        )
        merges, next_id = self._merges, self._next_id
        self.__dict__.update(rebuilt.__dict__)
        self._merges = merges
        self._next_id = next_id
        self._settings = {**rebuilt._settings, "learned": settings.get("learned")}

    def _assign(
        self,
        roots: npt.NDArray[np.int64],
        matched_rows: npt.NDArray[np.int64],
        matched_ids: npt.NDArray[np.int64],
        labels: pd.Index,
        candidates: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    ) -> tuple[npt.NDArray[np.int64], list[dict[str, Any]]]:
        """Entity id of each new record, and the merges it would take.

        ``roots`` groups the new records (component roots); ``matched_rows``
        and ``matched_ids`` are the matches of new records to held entities.
        """
        n = roots.size
        ids = np.full(n, -1, dtype=np.int64)
        merges: list[dict[str, Any]] = []
        if matched_rows.size:
            votes = pd.DataFrame(
                {"root": roots[matched_rows], "entity": matched_ids}
            ).value_counts()
            votes = votes.rename("links").reset_index()
            compared = (
                pd.DataFrame({"root": roots[candidates[0]], "entity": candidates[1]})
                .value_counts()
                .rename("compared")
                .reset_index()
            )
            votes = votes.merge(compared, on=["root", "entity"], how="left")
            votes = votes[votes["links"] >= SUPPORT * votes["compared"]]
            # Most links first, then the smallest id: the entity kept.
            votes = votes.sort_values(
                ["root", "links", "entity"], ascending=[True, False, True]
            )
            chosen = votes.drop_duplicates("root")
            winner = pd.Series(
                chosen["entity"].to_numpy(), index=chosen["root"].to_numpy()
            )
            joined = np.isin(roots, winner.index.to_numpy())
            ids[joined] = winner.loc[roots[joined]].to_numpy()
            for root, group in votes.groupby("root", sort=True):
                if len(group) > 1:
                    entities = group["entity"].to_numpy()
                    merges.append(
                        {
                            "into": int(entities[0]),
                            "entities": sorted(int(e) for e in entities[1:]),
                            "records": labels[roots == root].tolist(),
                        }
                    )
        alone = ids < 0
        if alone.any():
            _, inverse = np.unique(roots[alone], return_inverse=True)
            ids[alone] = self._next_id + inverse.ravel()
        return ids, merges

    @property
    def merges(self) -> pd.DataFrame:
        """Merges of existing entities :meth:`resolve` found and did not apply.

        One row per merge: ``into`` (the id the new records took),
        ``entities`` (the other ids they also matched) and ``records`` (the
        new records' labels).
        """
        return pd.DataFrame(self._merges, columns=["into", "entities", "records"])

    # -- saving ------------------------------------------------------------

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write the index to a folder: Arrow IPC files and ``index.json``.

        Nothing is pickled: the manifest holds the format version, every
        setting, the fields, keys, comparisons and the model as JSON; the
        arrays are uncompressed Arrow files that :meth:`load` maps into memory.
        An existing folder raises ``FileExistsError`` unless ``overwrite``.
        The folder is written beside its final place and moved there at the
        end, so a failed save leaves any earlier one intact.
        """
        owner = "Index.save"
        overwrite = check_bool(overwrite, "overwrite", owner)
        target = Path(path)
        if target.exists() and not overwrite:
            raise FileExistsError(
                f"{target} exists. Give overwrite=True to replace it."
            )
        manifest = self._manifest(owner)
        target.parent.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix=".lsh_frame-", dir=target.parent))
        try:
            self._write_arrays(work)
            (work / "index.json").write_text(json.dumps(manifest, indent=1))
            if target.exists():
                shutil.rmtree(target)
            work.rename(target)
        except BaseException:
            shutil.rmtree(work, ignore_errors=True)
            raise

    def _manifest(self, owner: str) -> dict[str, Any]:
        from lsh_frame._version import __version__

        settings = self._settings
        for column in settings["columns"]:
            _check_json_label(column, owner)
        model = self._plan.given_model
        vocabulary = self._vocabulary
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "lsh_frame": __version__,
            "settings": {
                **settings,
                "index_name": (
                    [_json_value(part) for part in settings["index_name"]]
                    if isinstance(settings["index_name"], tuple)
                    else _json_value(settings["index_name"])
                ),
            },
            "fields": [_field_dict(spec) for spec in self._fields],
            "keys": [
                {
                    "field": _field_dict(key.field),
                    "kind": key.kind,
                    "plan": None if key.plan is None else _plan_dict(key.plan),
                }
                for key in self._keys
            ],
            "comparisons": self._plan.comparisons,
            # Fields scored crossed when they match better so (older
            # indexes have none).
            "swaps": [list(pair) for pair in self._plan.swaps],
            "shifts": [list(pair) for pair in self._plan.shifts],
            "nicknames": list(self._plan.nicknames),
            # Placeholder days of date fields (older indexes have none).
            "placeholders": placeholders_dict(self._plan.placeholders),
            "year_fields": list(self._plan.year_fields),
            "decision": (
                {"model": model.to_dict()}
                if model is not None
                else {"min_score": float(self._plan.min_score)}  # type: ignore[arg-type]
            ),
            "tfidf": {
                label: frequencies.documents
                for label, frequencies in self._plan.frequencies.items()
            },
            "vocabulary": (
                None
                if vocabulary is None
                else {"records": vocabulary.records, "cap": vocabulary.cap}
            ),
            "segments": [segment.first for segment in self._segments],
            "next_id": self._next_id,
            # Labels other than text and numbers (dates) are written as text.
            "merges": [
                {**merge, "records": [_json_value(label) for label in merge["records"]]}
                for merge in self._merges
            ],
        }

    def _write_arrays(self, folder: Path) -> None:
        state: dict[str, npt.NDArray[Any]] = {
            "alive": self._alive,
            "entities": self._entities,
        }
        if self._norms is not None:
            state["norms"] = self._norms
        _write(folder / "state.arrow", state)
        if self._vocabulary is not None:
            vocabulary = self._vocabulary
            _write(
                folder / "vocabulary.arrow",
                {
                    "hashes": vocabulary.hashes,
                    "weights": vocabulary.weights,
                    "frequency": vocabulary.frequency,
                },
            )
        for number, frequencies in enumerate(self._plan.frequencies.values()):
            _write(
                folder / f"tfidf-{number}.arrow",
                {"tokens": frequencies.tokens, "counts": frequencies.counts},
            )
        for number, segment in enumerate(self._segments):
            _write_table(folder / f"records-{number}.arrow", segment.records)
            for key_number, table in enumerate(segment.keys):
                if table is not None:
                    _write(
                        folder / f"keys-{number}-{key_number}.arrow",
                        {"keys": table.keys, "positions": table.positions},
                    )
            if segment.tokens is not None:
                tokens = segment.tokens
                _write(
                    folder / f"tokens-{number}.arrow",
                    {
                        "hashes": tokens.hashes,
                        "weights": tokens.weights,
                        "starts": tokens.postings.starts,
                        "counts": tokens.postings.counts,
                    },
                )
                _write(
                    folder / f"postings-{number}.arrow",
                    {"records": tokens.postings.records},
                )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Index:
        """Read an index :meth:`save` wrote (its arrays mapped, not copied).

        Raises ``FileNotFoundError`` when the folder holds no index and
        :class:`~lsh_frame.ConfigError` for another format or a newer version.
        """
        folder = Path(path)
        manifest_path = folder / "index.json"
        if not manifest_path.is_file():
            raise FileNotFoundError(
                f"{folder} holds no lsh_frame index (no index.json)."
            )
        manifest = json.loads(manifest_path.read_text())
        if manifest.get("format") != FORMAT:
            raise ConfigError(f"{manifest_path} is not an lsh_frame index.")
        if manifest.get("version") != FORMAT_VERSION:
            raise ConfigError(
                f"{folder} is an index of format version {manifest.get('version')!r}, "
                f"written by lsh_frame {manifest.get('lsh_frame')}; this lsh_frame "
                f"reads version {FORMAT_VERSION}. Build the index again."
            )
        settings = manifest["settings"]
        if isinstance(settings.get("index_name"), list):  # JSON has no tuples
            settings["index_name"] = tuple(settings["index_name"])
        fields = [Field(**_field_arguments(spec)) for spec in manifest["fields"]]
        keys = [
            BlockingKey(
                Field(**_field_arguments(key["field"])),
                key["kind"],
                None if key["plan"] is None else LshPlan(**key["plan"]),
            )
            for key in manifest["keys"]
        ]
        decision = manifest["decision"]
        min_score: Any = (
            MatchModel.from_dict(decision["model"])
            if "model" in decision
            else float(decision["min_score"])
        )
        frequencies = {}
        for number, (label, documents) in enumerate(manifest["tfidf"].items()):
            arrays = _read(folder / f"tfidf-{number}.arrow")
            frequencies[label] = DocumentFrequencies(
                arrays["tokens"], arrays["counts"], int(documents)
            )
        plan = ScorePlan(
            specs=fields,
            min_score=min_score,
            comparisons=dict(manifest["comparisons"]),
            values=False,
            estimate=None,
            link=True,
            frequencies=frequencies,
            swaps=tuple((first, second) for first, second in manifest.get("swaps", [])),
            shifts=tuple(
                (first, second) for first, second in manifest.get("shifts", [])
            ),
            nicknames=tuple(manifest.get("nicknames", [])),
            placeholders=read_placeholders(
                manifest.get("placeholders", {}), manifest["comparisons"], "Index.load"
            ),
            year_fields=tuple(manifest.get("year_fields", [])),
        )
        state = _read(folder / "state.arrow")
        vocabulary = None
        if manifest["vocabulary"] is not None:
            arrays = _read(folder / "vocabulary.arrow")
            vocabulary = _Vocabulary(
                hashes=arrays["hashes"],
                weights=arrays["weights"],
                frequency=arrays["frequency"],
                **manifest["vocabulary"],
            )
        segments = []
        for number, first in enumerate(manifest["segments"]):
            records = _read_table(folder / f"records-{number}.arrow")
            tables: list[_KeyTable | None] = []
            for key_number, key in enumerate(keys):
                if key.kind == "neighbours":
                    tables.append(None)
                    continue
                arrays = _read(folder / f"keys-{number}-{key_number}.arrow")
                tables.append(_KeyTable(arrays["keys"], arrays["positions"]))
            tokens = None
            if vocabulary is not None:
                arrays = _read(folder / f"tokens-{number}.arrow")
                postings = _read(folder / f"postings-{number}.arrow")
                tokens = _Tokens(
                    arrays["hashes"],
                    arrays["weights"],
                    kernel.Postings(
                        postings["records"], arrays["starts"], arrays["counts"]
                    ),
                )
            segments.append(_Segment(int(first), records, tables, tokens))
        index = cls(
            fields=fields,
            keys=keys,
            plan=plan,
            vocabulary=vocabulary,
            segments=segments,
            alive=np.array(state["alive"], dtype=bool),
            entities=np.array(state["entities"], dtype=np.int64),
            norms=state.get("norms"),
            next_id=int(manifest["next_id"]),
            settings=settings,
        )
        index._merges = list(manifest["merges"])
        return index


def _joined(parts: list[npt.NDArray[np.int64]]) -> npt.NDArray[np.int64]:
    return np.concatenate(parts) if parts else np.empty(0, np.int64)


def _neighbours_key(keys: list[BlockingKey]) -> BlockingKey | None:
    for key in keys:
        if key.kind == "neighbours":
            return key
    return None


def _check_keys(keys: list[BlockingKey], owner: str) -> None:
    neighbours = [key for key in keys if key.kind == "neighbours"]
    if any(key.field.blocking == "cosine" for key in neighbours) or len(neighbours) > 1:
        raise ConfigError(
            f"{owner} holds at most one neighbours key over text columns; a "
            "top-k cosine key over vectors is not supported by an index yet. Use "
            "blocking='cosine' with a threshold instead."
        )


def _build_vocabulary(hashes: npt.NDArray[np.uint64], records: int) -> _Vocabulary:
    """Return the vocabulary of the sorted token ``hashes`` of distinct records."""
    starts = np.flatnonzero(kernel.run_starts(hashes))
    distinct = hashes[starts]
    # A token's run holds each of its records once: its length is the frequency.
    frequency = np.diff(np.append(starts, hashes.size)).astype(np.int64)
    # A new record looks up at most WORK_PER_RECORD postings on average (as
    # in a table of a million records, whatever the index's size).
    cap = _cap([frequency], False, WORK_PER_RECORD * records)
    return _Vocabulary(
        hashes=distinct,
        weights=kernel.quantised_weights(frequency, records),
        frequency=frequency,
        records=records,
        cap=cap,
    )


def _built_norms(
    records: npt.NDArray[np.int64], vocabulary: _Vocabulary, n: int
) -> npt.NDArray[np.float64]:
    """Norms of the built table's records (tokens sorted as the vocabulary).

    Slice by slice, each token's weight repeated over its run of records: no
    array of a weight per token and record (see kernel.SLICE). The weights
    are integers, so the sums are exact in any order.
    """
    ends = np.cumsum(vocabulary.frequency)
    weights = vocabulary.weights.astype(np.float64)
    sums = np.zeros(n, dtype=np.float64)
    for start in range(0, records.size, kernel.SLICE):
        stop = min(start + kernel.SLICE, records.size)
        first = int(np.searchsorted(ends, start, side="right"))
        last = int(np.searchsorted(ends, stop, side="left")) + 1
        counts = np.minimum(ends[first:last], stop) - np.maximum(
            ends[first:last] - vocabulary.frequency[first:last], start
        )
        sums += np.bincount(
            records[start:stop],
            weights=np.repeat(weights[first:last], counts),
            minlength=n,
        )
    return np.sqrt(sums)


def _built_tokens(records: npt.NDArray[np.int64], vocabulary: _Vocabulary) -> _Tokens:
    """Index the looked-up tokens of the built table (tokens sorted as it).

    As :func:`_tokens_of` with every token known: a token is looked up or not
    as a whole, so its run of records is kept or dropped. The kept records
    are copied out (about a tenth of them at a million records): the index
    keeps no view of the whole array.
    """
    kept = vocabulary.frequency <= vocabulary.cap
    records = records[np.repeat(kept, vocabulary.frequency)]
    counts = vocabulary.frequency[kept]
    postings = kernel.Postings(records, np.cumsum(counts) - counts, counts)
    return _Tokens(vocabulary.hashes[kept], vocabulary.weights[kept], postings)


def _given_entity_ids(
    frame: pd.DataFrame, entity_ids: Any, owner: str
) -> npt.NDArray[np.int64] | None:
    """Return the entity ids a caller gave (a column or one per row), checked."""
    if entity_ids is None:
        return None
    if (
        isinstance(entity_ids, Hashable)
        and not isinstance(entity_ids, tuple)
        and (entity_ids in frame.columns)
    ):
        values = frame[entity_ids]
    elif isinstance(entity_ids, pd.Series):
        # By label, as pandas aligns a Series (not by position).
        values = entity_ids.reindex(frame.index)
        if values.isna().any():
            raise ConfigError(
                f"The 'entity_ids' Series given to {owner} has no id for some "
                f"records (for example {frame.index[values.isna()][:3].tolist()})."
            )
    else:
        values = entity_ids
    array = np.asarray(values)
    if array.shape != (len(frame),):
        raise ConfigError(
            f"The 'entity_ids' of {owner} must be a column of the frame or one id "
            f"per row ({len(frame):,}). Got {entity_ids!r}."
        )
    if array.dtype.kind not in "iu" or (array.size and array.min() < 0):
        raise ConfigTypeError(
            f"The 'entity_ids' of {owner} must be integers >= 0. Got dtype "
            f"{array.dtype}; number string ids first, for example with "
            "pd.factorize()."
        )
    return array.astype(np.int64)
