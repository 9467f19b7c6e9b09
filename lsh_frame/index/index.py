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
files and a JSON manifest (no pickle) atomically, as a database file is
written (:mod:`lsh_frame.index.files`); :meth:`Index.load` checks them and
maps them into memory without copying. The records come back exactly as they
were given (:func:`~lsh_frame.index.tables.held_frame`).

Weights stay those of the table the index was built on: a token first seen in
added records weighs as a token held by one record. Rebuilding the index from
its records (:meth:`Index.build`) refreshes them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from lsh_frame import _progress
from lsh_frame._kernels import neighbours as kernel
from lsh_frame._validation import check_frame, check_int, check_progress
from lsh_frame._warn import warn
from lsh_frame.block.defaults import _FrameSource, decide_keys
from lsh_frame.block.fields import _as_fields, field_columns
from lsh_frame.block.keys import table_keys
from lsh_frame.block.neighbours import LONG_VALUE_WORDS, WORK_PER_RECORD, _cap
from lsh_frame.compare.plan import comparison_rows, count_documents, plan_score
from lsh_frame.compare.table_checks import check_tables
from lsh_frame.decide.matches import check_min_score
from lsh_frame.decide.model import MatchModel
from lsh_frame.errors import ColumnError, ConfigError
from lsh_frame.index import query as _query
from lsh_frame.index import store as _store
from lsh_frame.index import update as _update
from lsh_frame.index.tables import (
    _LABEL,
    _arrow_records,
    _given_entity_ids,
    _KeyTable,
    _neighbours_key,
    _Segment,
    _token_pairs,
    _Tokens,
    _Vocabulary,
    held_frame,
)

if TYPE_CHECKING:
    from lsh_frame.block.fields import BlockingKey, Field
    from lsh_frame.compare.plan import ScorePlan

__all__ = ["Index"]


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
        progress: bool | None = None,
        labels: pd.DataFrame | None = None,
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
        progress : bool or None
            Show the steps on a progress line on stderr (a widget in a notebook):
            True, False, or None (the default) to show it when stderr is a
            terminal or in a notebook, once the job has run five seconds.
        labels : DataFrame, optional
            A person's answers about pairs of the table's records (columns
            ``left``, ``right``, ``match``; see :func:`lsh_frame.uncertain_pairs`):
            they teach the model every later query decides with (see
            :func:`lsh_frame.score`).

        Returns
        -------
        Index
        """
        from lsh_frame.jobs.common import given_columns
        from lsh_frame.jobs.dedupe import _entities

        owner = "Index.build"
        frame = check_frame(frame, "frame", owner)
        fields = given_columns(fields, None, "subset", owner, frame)
        progress = check_progress(progress, owner)
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
            "labels": labels,
        }
        with _progress.reporting(progress, owner):
            decision: Any = min_score
            ids = given_ids
            taught = labels is not None
            if given_ids is None or min_score == "auto" or taught:
                found_ids, info = _entities(frame, fields, options, False, owner)
                ids = found_ids if given_ids is None else given_ids
                if min_score == "auto" or (taught and info.get("model") is not None):
                    decision = _learned_decision(info, len(frame), owner)
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

    @classmethod
    def from_dedupe(
        cls,
        deduped: pd.DataFrame,
        fields: Any = None,
        /,
        *,
        id_column: Hashable = "cluster_id",
        size_column: Hashable = "cluster_size",
        model: Any = None,
        threshold: float | None = None,
        recall: float = 0.95,
        num_perm: int = 128,
        seed: int = 1,
        max_bucket: int = 1_000,
        progress: bool | None = None,
    ) -> Index:
        """Index a table already deduplicated, with its entities and its model.

        The table a user keeps after :func:`lsh_frame.dedupe` (every row and
        its entity id) or :func:`lsh_frame.drop_duplicates` (one row per
        entity) holds few duplicates or none, so a model learned from its own
        pairs is weak or missing; the model the dedupe learned from the rows
        with their duplicates is the one to decide later queries with. This
        takes it, with the entity ids, in one step, without resolving again.

        Parameters
        ----------
        deduped : DataFrame
            What ``dedupe`` returned (the ``id_column`` holds the entity ids,
            the ``size_column`` is dropped), or ``drop_duplicates`` (no
            ``id_column``: every row is an entity of its own).
        fields : column label, Field, or a list of them, optional
            What the dedupe matched on; by default the model's fields, or
            every column but the two the dedupe added.
        id_column, size_column : column label
            The columns ``dedupe`` added.
        model : MatchModel, its dict, or a float, optional
            How later queries decide; by default the model the dedupe
            learned (``deduped.attrs["lsh_frame"]["model"]``, kept by pandas
            while the frame stays in memory). A table read back from a file
            has lost it: pass the model saved then (``MatchModel.from_dict``
            of ``lsh-frame dedupe --save-model``'s file, or
            ``info["model"]``), or let the index learn one from the table
            (``model="auto"``: the rows of ``dedupe``, with their duplicates,
            teach it; those of ``drop_duplicates`` do not).
        threshold, recall, num_perm, seed, max_bucket, progress
            As for :meth:`build`.

        Returns
        -------
        Index
            The records held with their entity ids (the ``id_column``'s, or
            0, 1, 2 ... in row order).

        Examples
        --------
        >>> import lsh_frame as lf
        >>> people = lf.datasets.make_customers(2_000, seed=5)
        >>> last, new = people.iloc[:1_900], people.iloc[1_900:]
        >>> columns = ["given_name", "surname", "date_of_birth", "postcode"]
        >>> deduped = last.lsh.dedupe(columns)  # the table a user keeps
        >>> index = lf.Index.from_dedupe(deduped, columns)
        >>> index.model is not None
        True
        """
        owner = "Index.from_dedupe"
        deduped = check_frame(deduped, "deduped", owner)
        added = [
            column for column in (id_column, size_column) if column in deduped.columns
        ]
        frame = deduped.drop(columns=added)
        if id_column in deduped.columns:
            entity_ids: Any = deduped[id_column].to_numpy()
        else:
            entity_ids = np.arange(len(frame), dtype=np.int64)
        if model is None:
            model = deduped.attrs.get("lsh_frame", {}).get("model")
            if model is None:
                raise ConfigError(
                    f"{owner} was given no model and the frame carries none (a "
                    "frame read back from a file has lost the attrs of the dedupe "
                    "that made it). Pass model= the model the dedupe learned "
                    "(info['model'], or MatchModel.from_dict of the file "
                    "'lsh-frame dedupe --save-model' wrote), or model='auto' to "
                    "learn one from this table's own pairs."
                )
        if isinstance(model, dict):
            model = MatchModel.from_dict(model)
        if fields is None and isinstance(model, MatchModel):
            learned_on = (set(model.m) | set(model.no_values)) - {model.codes}
            if learned_on <= set(frame.columns):
                fields = [column for column in frame.columns if column in learned_on]
        return cls.build(
            frame,
            fields,
            entity_ids=entity_ids,
            min_score=model,
            threshold=threshold,
            recall=recall,
            num_perm=num_perm,
            seed=seed,
            max_bucket=max_bucket,
            progress=progress,
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
            # each becomes pandas on its own, each column as it was given.
            parts.append(held_frame(rows))
            order.append(chosen)
        if not parts:
            empty = self._segments[0].records.drop_columns([_LABEL]).slice(0, 0)
            parts, order = [held_frame(empty)], [np.empty(0, np.int64)]
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

    # Defined in lsh_frame.index.query.
    _candidates = _query._candidates
    _key_matches = _query._key_matches
    _neighbours = _query._neighbours
    _scored = _query._scored
    _found_alone = _query._found_alone
    _found_by = _query._found_by
    query = _query.query
    _ranked = _query._ranked

    # -- changing the records held ------------------------------------------

    # Defined in lsh_frame.index.update.
    add = _update.add
    _check_labels_free = _update._check_labels_free
    _append = _update._append
    remove = _update.remove
    compact = _update.compact

    # -- resolving -----------------------------------------------------------

    # Defined in lsh_frame.index.update.
    resolve = _update.resolve
    relearn = _update.relearn
    _rebuild = _update._rebuild
    _assign = _update._assign

    @property
    def merges(self) -> pd.DataFrame:
        """Merges of existing entities :meth:`resolve` found and did not apply.

        One row per merge: ``into`` (the id the new records took),
        ``entities`` (the other ids they also matched) and ``records`` (the
        new records' labels).
        """
        return pd.DataFrame(self._merges, columns=["into", "entities", "records"])

    # -- saving ------------------------------------------------------------

    # Defined in lsh_frame.index.store.
    save = _store.save
    _manifest = _store._manifest
    _write_arrays = _store._write_arrays
    load = classmethod(_store.load)


#: A table where fewer than this share of the rows found a duplicate is
#: called deduplicated already: the pairs it gives teach a weak model.
FEW_DUPLICATES = 0.01


def _learned_decision(info: dict[str, Any], rows: int, owner: str) -> Any:
    """Return the decision ``"auto"`` learned from the table's pairs, said plainly.

    A table with (almost) no duplicates, such as one deduplicated already,
    teaches no model or a weak one: the later queries would miss records whose
    right match ranks first. The warning says what to do instead.
    """
    model = info.get("model")
    duplicated = rows - int(info.get("entities", rows))
    advice = (
        "A table with few duplicates, such as one deduplicated already, has "
        "none to learn from: index the rows before deduplication (the index "
        "resolves them itself), or build with Index.from_dedupe(the dedupe's "
        "output), or pass min_score= the model its dedupe learned "
        "(attrs['lsh_frame']['model'])."
    )
    if model is not None:
        if rows >= 1_000 and duplicated < FEW_DUPLICATES * rows:
            warn(
                f"{owner} learned its match model from a table where only "
                f"{duplicated:,} of {rows:,} rows have a duplicate: the model is "
                f"weak, and later queries may miss records that match. {advice}"
            )
        return MatchModel.from_dict(model)
    if info.get("min_score") is not None:
        return float(info["min_score"])
    # No model, and only identical copies matched: so do the queries.
    warn(
        f"{owner} learned no match model from this table: its queries match only "
        f"records that agree on every field. {advice}"
    )
    return 1.0


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
