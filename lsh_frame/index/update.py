"""Changing a saved index: add, remove, resolve, compact, relearn.

:meth:`Index.resolve` gives new records entity ids without renumbering held
entities; :meth:`Index.add` and :meth:`Index.remove` change the held records
in segments, merged by :meth:`Index.compact`; :meth:`Index.relearn` learns the
model again from everything held.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame._kernels.components import components
from lsh_frame._validation import check_bool
from lsh_frame.block.keys import table_keys
from lsh_frame.errors import ColumnError, ConfigError
from lsh_frame.index.tables import (
    _LABEL,
    QUERY_CHUNK,
    SUPPORT,
    _arrow_records,
    _given_entity_ids,
    _joined,
    _KeyTable,
    _label_array,
    _neighbours_key,
    _norms,
    _Segment,
    _token_pairs,
    _tokens_of,
)
from lsh_frame.text.shingle import ColumnTexts

if TYPE_CHECKING:
    from lsh_frame.index.index import Index


#: resolve() decides the keys and model again when a batch makes the index
#: this many times as large as the records they were decided on.
RELEARN_GROWTH = 2.0


#: Segments of added records kept apart before :meth:`Index.add` merges them.
MAX_SEGMENTS = 16


def add(self: Index, new: pd.DataFrame, entity_ids: Any = None) -> Index:
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


def _check_labels_free(self: Index, labels: pd.Index, owner: str) -> None:
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
    self: Index, new: pd.DataFrame, ids: npt.NDArray[np.int64], *, compact: bool = True
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


def remove(self: Index, labels: Any, *, errors: str = "raise") -> Index:
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


def compact(self: Index) -> Index:
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


def resolve(
    self: Index,
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
        match = np.asarray(self._scored(chunk, rows, positions, mask, texts)["match"])
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


def relearn(self: Index) -> Index:
    """Decide the keys, weights and model again from every record held.

    As :meth:`build` on :meth:`records` with the entity ids held: the
    keys the data decides (plain column names) and the token weights
    follow the records now held, and a model learned by ``"auto"`` is
    learned again (a given ``min_score`` stays). Entity ids, labels and
    the merges reported so far do not change. Returns the index itself.
    """
    self._rebuild(None)
    return self


def _rebuild(self: Index, new: pd.DataFrame | None) -> None:
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
    rebuilt = type(self).build(
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
    self: Index,
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
        winner = pd.Series(chosen["entity"].to_numpy(), index=chosen["root"].to_numpy())
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
