"""The arrays an index holds: keys, vocabulary, tokens, segments."""

from __future__ import annotations

import functools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa

from lsh_frame._kernels import neighbours as kernel
from lsh_frame.block.neighbours import LONG_VALUE_WORDS, record_tokens
from lsh_frame.errors import ColumnError, ConfigError, ConfigTypeError

if TYPE_CHECKING:
    from lsh_frame.block.fields import BlockingKey
    from lsh_frame.text.shingle import ColumnTexts


#: Bits of a record's position in a packed token: a token's hash keeps the
#: other 40 bits (two tokens of a million-record vocabulary share them with
#: probability about 5e-7), and at most 2**24 records are tokenised at a time.
TOKEN_RECORD_BITS = 24


_LABEL = "__label__"


@dataclass(frozen=True)
class _KeyTable:
    """One key's ``(key, record)`` pairs of a segment, sorted by key."""

    keys: npt.NDArray[np.uint64]
    positions: npt.NDArray[np.int64]

    @classmethod
    def of(
        cls, keys: npt.NDArray[np.uint64], valid: npt.NDArray[np.bool_], first: int
    ) -> _KeyTable:
        rows = np.flatnonzero(valid)
        flat = keys[rows].ravel()
        positions = np.repeat(rows.astype(np.int64) + first, keys.shape[1])
        order = np.lexsort((positions, flat))
        return cls(np.ascontiguousarray(flat[order]), positions[order])

    def ranges(
        self, keys: npt.NDArray[np.uint64]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Start and length of each key's run."""
        # Sorted needles search far faster (each search starts where the last
        # ended, in cache) than keys in record order.
        order = np.argsort(keys, kind="stable")
        needles = keys[order]
        starts = np.empty(keys.size, dtype=np.int64)
        stops = np.empty(keys.size, dtype=np.int64)
        starts[order] = np.searchsorted(self.keys, needles, side="left")
        stops[order] = np.searchsorted(self.keys, needles, side="right")
        return starts, stops - starts


@dataclass(frozen=True)
class _Vocabulary:
    """The neighbours key's tokens at build time: their weights and frequencies."""

    hashes: npt.NDArray[np.uint64]  # sorted, distinct
    weights: npt.NDArray[np.uint64]  # quantised squared IDF weights
    frequency: npt.NDArray[np.int64]
    records: int  # records the weights were counted over
    cap: int  # tokens held by more records are not looked up

    @functools.cached_property
    def unseen_weight(self) -> np.uint64:
        """Weight of a token the built table did not hold (as if held once)."""
        return kernel.quantised_weights(np.ones(1, np.int64), self.records)[0]

    def weigh(
        self, hashes: npt.NDArray[np.uint64]
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
        """Weight of each token, and whether it is looked up (not too common)."""
        if not self.hashes.size:  # the built table had no token at all
            return (
                np.full(hashes.size, self.unseen_weight, dtype=np.uint64),
                np.ones(hashes.size, dtype=bool),
            )
        at = np.minimum(np.searchsorted(self.hashes, hashes), self.hashes.size - 1)
        known = self.hashes[at] == hashes
        weights = np.where(known, self.weights[at], self.unseen_weight)
        looked_up = ~known | (self.frequency[at] <= self.cap)
        return weights.astype(np.uint64), looked_up


@dataclass(frozen=True)
class _Tokens:
    """A segment's inverted index: the records holding each token."""

    hashes: npt.NDArray[np.uint64]  # sorted, distinct
    weights: npt.NDArray[np.uint64]
    postings: kernel.Postings  # records by position in ``hashes``


def _token_pairs(
    frame: pd.DataFrame,
    columns: Sequence[Hashable],
    owner: str,
    texts: ColumnTexts | None = None,
    long_words: int | None = LONG_VALUE_WORDS,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64]]:
    """Distinct ``(record, token hash)`` of a frame, sorted by hash then record.

    ``texts`` holds the frame's columns' text when already converted;
    ``long_words`` is the index's rule for long values (see
    :func:`~lsh_frame.block.neighbours.record_tokens`).
    """
    step = 1 << TOKEN_RECORD_BITS
    records, hashes = [], []
    for first in range(0, len(frame), step):
        record, hashed = _unpacked(
            record_tokens(
                frame if len(frame) <= step else frame.iloc[first : first + step],
                columns,
                owner=owner,
                record_bits=TOKEN_RECORD_BITS,
                texts=texts,
                long_words=long_words,
            )
        )
        records.append(record + first if first else record)
        hashes.append(hashed)
    if len(records) <= 1:
        return (
            (records[0], hashes[0])
            if records
            else (np.empty(0, np.int64), np.empty(0, np.uint64))
        )
    record, token = np.concatenate(records), np.concatenate(hashes)
    order = np.lexsort((record, token))
    return record[order], token[order]


def _unpacked(
    packed: npt.NDArray[np.uint64],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.uint64]]:
    """Distinct ``(record, token hash)`` of packed tokens, sorted by hash.

    In place (see kernel.SLICE): the hashes are the sorted packed tokens
    shifted, the records read off a slice at a time beside them.
    """
    packed.sort()
    packed = kernel.compact_sorted(packed)
    record = np.empty(packed.size, dtype=np.int64)
    mask = np.uint64((1 << TOKEN_RECORD_BITS) - 1)
    for start in range(0, packed.size, kernel.SLICE):
        stop = start + kernel.SLICE
        np.bitwise_and(packed[start:stop], mask, out=record[start:stop].view(np.uint64))
    np.right_shift(packed, np.uint64(TOKEN_RECORD_BITS), out=packed)
    return record, packed


def _norms(
    records: npt.NDArray[np.int64], weights: npt.NDArray[np.uint64], n: int
) -> npt.NDArray[np.float64]:
    return np.sqrt(
        np.bincount(records, weights=weights.astype(np.float64), minlength=n)
    )


def _tokens_of(
    records: npt.NDArray[np.int64],
    hashes: npt.NDArray[np.uint64],
    weights: npt.NDArray[np.uint64],
    looked_up: npt.NDArray[np.bool_],
    first: int,
) -> _Tokens:
    """Index the records holding each looked-up token."""
    records, hashes, weights = records[looked_up], hashes[looked_up], weights[looked_up]
    token_id, starts = kernel.runs(hashes)
    postings = kernel.Postings.build(records + first, token_id, int(starts.size))
    return _Tokens(hashes[starts], weights[starts], postings)


@dataclass
class _Segment:
    """Records added together: their values and their lookup tables."""

    first: int  # position of its first record
    records: pa.Table  # the fields' columns (named c0, c1, ...) and labels
    keys: list[_KeyTable | None]  # per blocking key (None: the neighbours key)
    tokens: _Tokens | None

    @property
    def size(self) -> int:
        return self.records.num_rows

    @property
    def nbytes(self) -> int:
        total = self.records.nbytes
        for table in self.keys:
            if table is not None:
                total += table.keys.nbytes + table.positions.nbytes
        if self.tokens is not None:
            postings = self.tokens.postings
            total += self.tokens.hashes.nbytes + self.tokens.weights.nbytes
            total += (
                postings.records.nbytes
                + postings.starts.nbytes
                + postings.counts.nbytes
            )
        return total


#: Field metadata of a held column: the pandas dtype it was given with.
_DTYPE = b"lsh_frame.dtype"


def _arrow_records(
    frame: pd.DataFrame, columns: list[Hashable], owner: str
) -> pa.Table:
    """Return the fields' columns and the labels as an Arrow table (c0, c1, ...).

    Each column's field keeps the pandas dtype it was given with, so that
    :func:`held_frame` gives it back as given (see there).
    """
    arrays, fields = [], []
    for number, column in enumerate(columns):
        values = frame[column]
        try:
            array = pa.array(values, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            # Mixed Python objects: kept as their text, as they are compared.
            text = values.astype("string")
            array = pa.array(text, from_pandas=True)
        arrays.append(array)
        fields.append(
            pa.field(f"c{number}", array.type, metadata={_DTYPE: str(values.dtype)})
        )
    arrays.append(_label_array(frame.index, owner))
    fields.append(pa.field(_LABEL, arrays[-1].type))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def _given_dtype(field: pa.Field) -> Any:
    """Return the pandas dtype a held column was given with (None: not known)."""
    given = (field.metadata or {}).get(_DTYPE)
    if given is None:
        return None
    try:
        return pd.api.types.pandas_dtype(given.decode())
    except (TypeError, ValueError, UnicodeDecodeError):
        return None


def _held_column(column: pa.ChunkedArray, field: pa.Field) -> Any:
    """Return one held column as pandas values exactly as given (None: plain).

    Arrow keeps integers with missing values exactly, but a plain
    ``to_pandas()`` makes them float64, rounding integers above 2**53
    (account numbers, 19-digit ids) and changing their text: a pair's score
    would then depend on whether the other records fetched with it hold a
    missing value. Nullable dtypes (``Int64``, ``boolean``, Arrow-backed,
    ...) come back as themselves; other integers with missing values as
    Python ints in an object column when given so, else as nullable
    integers.
    """
    given = _given_dtype(field)
    if (
        isinstance(given, pd.api.extensions.ExtensionDtype)
        and not isinstance(given, pd.CategoricalDtype)
        and hasattr(given, "__from_arrow__")
    ):
        try:
            return given.__from_arrow__(column)
        except (TypeError, ValueError, NotImplementedError, pa.ArrowException):
            pass  # kept as text (mixed objects): read as plain
    if not pa.types.is_integer(field.type) or not column.null_count:
        return None
    if given is not None and given == np.dtype(object):
        return column.to_pandas(integer_object_nulls=True).array
    nullable = pd.api.types.pandas_dtype(
        f"{'U' if pa.types.is_unsigned_integer(field.type) else ''}"
        f"Int{field.type.bit_width}"
    )
    return nullable.__from_arrow__(column)  # type: ignore[union-attr]


def held_frame(table: pa.Table) -> pd.DataFrame:
    """Return held columns as a frame, each as given (see :func:`_held_column`).

    Plain columns (text, numbers without missing values) are converted
    together, a block per column: a query's candidates 0.15 -> 0.09 ms.
    """
    special = {}
    for field, column in zip(table.schema, table.columns, strict=True):
        values = _held_column(column, field)
        if values is not None:
            special[field.name] = values
    plain = [name for name in table.column_names if name not in special]
    frame = table.select(plain).to_pandas(split_blocks=True)
    if not special:
        return frame
    for name, values in special.items():
        frame[name] = pd.Series(values, index=frame.index, copy=False)
    return frame[table.column_names]


def _label_array(labels: pd.Index, owner: str) -> pa.Array:
    """Return the records' labels as one Arrow array (of one type)."""
    try:
        return pa.array(labels.to_numpy(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as error:
        raise ColumnError(
            f"{owner} keeps the records' index labels in Arrow files, but these "
            f"labels do not convert ({error}). Use labels of one type (numbers or "
            "text), for example with reset_index()."
        ) from None


#: New records looked up at a time: bounds the temporary arrays of a batch.
QUERY_CHUNK = 20_000


#: ``found_by`` dtypes an index keeps (sets of keys that found a query's pairs).
FOUND_BY_DTYPES = 256


#: A new record joins an existing entity when it matches at least this share
#: of the entity's records it was compared with (one false link to a relative
#: does not make it a member). make_customers in ten batches, pair F1 (before
#: weak keys and relearning): 20,000 records 0.9758 -> 0.9776, 50,000 0.9271
#: -> 0.9320, 100,000 0.7859 -> 0.7943.
SUPPORT = 0.5


def _joined(parts: list[npt.NDArray[np.int64]]) -> npt.NDArray[np.int64]:
    return np.concatenate(parts) if parts else np.empty(0, np.int64)


def _neighbours_key(keys: list[BlockingKey]) -> BlockingKey | None:
    for key in keys:
        if key.kind == "neighbours":
            return key
    return None


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
