"""Blocking: keys per field, candidate pairs, and a report of what each key costs.

A *key* groups records into buckets; every pair of records sharing a bucket is a
candidate. Keys come from fields:

- ``blocking="lsh"``: the field's MinHash signature split into bands (see
  :func:`lsh_frame.plan`); one bucket per band value.
- ``blocking="exact"``: one bucket per normalised value.

The candidates of all keys are united; each pair records which keys found it.
Missing, empty and too-short values get no key (they are counted, never pooled
into one giant bucket), buckets larger than ``max_bucket`` are dropped and
reported, and the number of pairs is computed before any pair is built.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import warnings
from collections.abc import Hashable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from lsh_frame import _progress
from lsh_frame._arrow import MinHashType, check_compatible, signature_matrix, value_type
from lsh_frame._kernels import hashing
from lsh_frame._kernels import keys as key_kernels
from lsh_frame._kernels import pairs as pair_kernels
from lsh_frame._labels import hash_labels, hash_values
from lsh_frame._validation import (
    check_bool,
    check_choice,
    check_columns,
    check_fraction,
    check_int,
    present,
    refuse_set,
    right_columns,
)
from lsh_frame.config import (
    NEIGHBOURS_KEY,
    RECORD_KEY,
    Comparison,
    MinHashConfig,
    ShingleConfig,
    ShingleKind,
)
from lsh_frame.errors import (
    ColumnError,
    ConfigError,
    ConfigTypeError,
    TooManyPairsError,
)
from lsh_frame.identical import IDENTICAL, IdenticalRows, group_rows, row_hashes
from lsh_frame.lsh import LshPlan, plan, plan_for_budget
from lsh_frame.minhash import in_order, sign_array, signer
from lsh_frame.neighbours import NeighbourPairs
from lsh_frame.shingle import (
    SMALL_BATCH_VALUES,
    ColumnTexts,
    column_text,
    normalize,
    normalized_codepoints,
)
from lsh_frame.vectors import (
    VECTOR_KINDS,
    band_keys_from_bits,
    check_vector_width,
    key_neighbours,
    side_hashes,
)

__all__ = ["BlockingReport", "Field", "blocking_report", "candidates"]

BlockingKind = Literal["lsh", "exact", "neighbours", "hamming", "cosine"]
#: What a Field may ask for: a kind of key, or "auto" (the data decides).
FieldBlocking = Literal["auto", "lsh", "exact", "neighbours", "hamming", "cosine"]
#: Field parameters that only plan a key of the field's own (MinHash LSH):
#: giving one with blocking="auto" asks for that key.
_LSH_PARAMETERS = ("threshold", "recall", "bands", "rows", "k")

#: Pairs emitted at a time: bounds the temporary arrays of pair generation.
_EMIT_PAIRS = 4_000_000
#: Bits of a coded pair that hold the index of the key that found it.
_KEY_BITS = 6
#: Pairs of random records sampled to see how similar unrelated records are.
_SIMILARITY_SAMPLE = 20_000
#: Records sampled (by a hash of their values) to draw those pairs from.
_SAMPLE_RECORDS = 2 * _SIMILARITY_SAMPLE
#: A column is an identifier when 99% of its values are shared by at most this
#: many records of a table: a value shared by more does not single out an entity.
IDENTIFIER_BUCKET = 10
#: With the neighbours record key, which finds records that share a rare value
#: of a column anyway, an exact key is only for true identifiers: 99% of values
#: shared by at most this many records of a table (a record and its few
#: duplicates, or a household's phone). FEBRL4's addresses (99% within 9) then
#: add no key: 26,182 candidates became 13,537 at the same completeness (1.0).
NEIGHBOURS_IDENTIFIER_BUCKET = 5
#: ... and when an exact key on it yields at most this many pairs per record.
IDENTIFIER_PAIRS_PER_RECORD = 2
#: Plain columns without an exact key of their own get one on two of them
#: together (a surname and a date of birth, ``"surname&&date_of_birth"``) when
#: the two identify records as an identifier does; all such keys together
#: yield at most this many pairs per record (the fewest-pair ones first). At
#: a million customer records, where a date of birth alone no longer
#: identifies anyone, they find the people whose every other field changed.
COMPOUND_PAIRS_PER_RECORD = 1.0
#: Compound keys are tried among at most this many plain columns (28 pairs).
COMPOUND_MAX_COLUMNS = 8
#: Joins the columns in a compound key's label and marks it in ``found_by``
#: (``"surname&&date_of_birth"``); no other key's label may hold it.
COMPOUND_SEPARATOR = "&&"


@dataclass(frozen=True)
class Field:
    """A column (or several) to block on and compare.

    Parameters
    ----------
    columns : column label or sequence of labels
        Several columns form one record-level field: for blocking their
        shingles are pooled into one set, so it does not matter in which column
        a word stands (swapped given name and surname still match), unless
        ``tag_columns``; for scoring, their text is joined by a space.
        A single column of MinHash signatures (from :func:`lsh_frame.minhash`)
        is used as it is: its signatures make the LSH key.
    shingle : {"char", "word", "stopword"}
        Kind of shingle for LSH blocking and Jaccard scores.
    k : int, optional
        Shingle length; 3 characters or 1 word by default.
    blocking : {"auto", "lsh", "exact", "neighbours", "hamming", "cosine"} or None
        ``"auto"`` (the default): the data decides, as for a plain column
        name: the columns of every ``"auto"`` field are blocked together by
        the keys :func:`lsh_frame.candidates` describes (exact keys on columns
        that identify records, keys on two of them together, one record-level
        key over all of them), so that asking for another comparison or weight
        does not change the blocking. Giving ``threshold``, ``recall``,
        ``bands``, ``rows``, ``k`` or a ``shingle`` other than ``"char"``
        asks for an LSH key of the field's own (``"lsh"``), as does a column
        of MinHash signatures.
        ``"lsh"``: banded MinHash keys; ``"exact"``: one key per normalised
        value; ``"neighbours"``: each record's most similar records by
        IDF-weighted token cosine over the field's columns (see
        :mod:`lsh_frame.neighbours`); ``"hamming"``: bit sampling on one
        column of fingerprints or bit vectors, ``threshold`` the share of
        equal bits; ``"cosine"``: random hyperplanes on one column of float
        vectors, ``threshold`` the cosine similarity (see
        :mod:`lsh_frame.vectors`); ``None``: compared but not blocked on.
    threshold : float, optional
        Jaccard similarity this field's LSH key is planned for; the call's
        ``threshold`` when omitted.
    recall : float, optional
        Least probability of finding a pair at the threshold; the call's
        ``recall`` when omitted.
    compare : str
        How pairs are scored on this field (see :func:`lsh_frame.score`):
        ``"auto"`` (``"date"`` or ``"number"`` for date columns, float columns
        and text that is mostly dates or marked numbers; else ``"tfidf"``
        when the median value holds at least 5 words, else
        ``"token_sort_ratio"`` when most values hold several words, else
        ``"ratio"``), ``"number"`` (relative difference of the values read as
        numbers), ``"date"`` (days apart, swapped day and month, never below
        ``"ratio"``; the reading rules and formulas are in docs/scoring.md),
        ``"tfidf"`` (cosine of TF-IDF word vectors, see
        :mod:`lsh_frame._tfidf`), ``"ratio"``, ``"token_sort_ratio"``,
        ``"token_set_ratio"``, ``"partial_ratio"``, ``"jaro_winkler"``,
        ``"levenshtein"``, ``"jaccard"`` (of the shingle sets), ``"exact"``,
        ``"hamming"`` (``1 − d / D`` of bit vectors) or ``"cosine"`` (of float
        vectors, below 0 scored 0); ``"auto"`` on a ``"hamming"`` or
        ``"cosine"`` key compares the same way. The rapidfuzz comparisons see
        at most the first ``lsh_frame.compare.FUZZY_MAX_CHARS`` (4,000)
        characters of a value.
    weight : float
        Weight of the field in the combined score.
    tag_columns : bool
        Keep the tokens of different columns apart (order matters). On an
        exact key of several columns, keep their values apart: the key is the
        values together, and a record has one only when every column holds a
        value (the compound keys of plain columns, see
        :func:`lsh_frame.candidates`); without it, the columns' text is joined.
    strip_punctuation, strip_accents : bool
        Extra normalisation (see :class:`~lsh_frame.ShingleConfig`).
    bands, rows : int, optional
        Fix the banding of the LSH key instead of planning it from
        ``threshold`` and ``recall`` (give both).
    name : str, optional
        Label of the field's key; the columns joined by ``+`` by default.
    top : int, optional
        With ``blocking="cosine"``: instead of a threshold, give every record
        its ``top`` most cosine-similar records (see
        :func:`lsh_frame.cosine_nearest`).

    Examples
    --------
    >>> Field("surname").label
    'surname'
    >>> Field(["given_name", "surname"], name="name").columns
    ('given_name', 'surname')
    """

    columns: Any
    _: KW_ONLY
    shingle: ShingleKind = "char"
    k: int | None = None
    blocking: FieldBlocking | None = "auto"
    threshold: float | None = None
    recall: float | None = None
    compare: Comparison = "auto"
    weight: float = 1.0
    tag_columns: bool = False
    strip_punctuation: bool = False
    strip_accents: bool = False
    bands: int | None = None
    rows: int | None = None
    name: str | None = None
    top: int | None = None

    def __post_init__(self) -> None:
        owner = "Field"
        columns = self.columns
        refuse_set(columns, "columns", owner)
        if isinstance(columns, (str, bytes)) or not isinstance(columns, Sequence):
            columns = (columns,)
        columns = tuple(columns)
        if not columns:
            raise ConfigError("A Field needs at least one column. Got none.")
        object.__setattr__(self, "columns", columns)
        if self.blocking is not None and self.blocking not in get_args(FieldBlocking):
            raise ConfigError(
                f"The 'blocking' parameter of {owner} must be one of 'auto', 'lsh', "
                f"'exact', 'neighbours', 'hamming', 'cosine' or None. Got "
                f"{self.blocking!r} instead."
            )
        if self.blocking == "auto" and (
            self.shingle != "char"
            or any(getattr(self, name) is not None for name in _LSH_PARAMETERS)
        ):
            object.__setattr__(self, "blocking", "lsh")
        if self.top is not None:
            check_int(self.top, "top", owner, minimum=1)
            if self.blocking != "cosine":
                raise ConfigError(
                    f"The 'top' parameter of {owner} needs blocking='cosine'. Got "
                    f"blocking={self.blocking!r} instead."
                )
        if self.blocking in VECTOR_KINDS and len(columns) != 1:
            raise ConfigError(
                f"A Field with blocking={self.blocking!r} takes one column of "
                f"vectors. Got {len(columns)} columns: {columns!r}."
            )
        for name in ("threshold", "recall"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or not 0 < value <= 1
            ):
                raise ConfigError(
                    f"The '{name}' parameter of {owner} must be in (0, 1] or None. "
                    f"Got {value!r} instead."
                )
        check_choice(self.compare, "compare", owner, get_args(Comparison))
        if (
            isinstance(self.weight, bool)
            or not isinstance(self.weight, (int, float))
            or not 0 <= self.weight < math.inf
        ):
            raise ConfigError(
                f"The 'weight' parameter of {owner} must be a finite number >= 0. "
                f"Got {self.weight!r} instead."
            )
        if (self.bands is None) != (self.rows is None):
            raise ConfigError(
                f"{owner} takes 'bands' and 'rows' together. Got bands={self.bands!r} "
                f"and rows={self.rows!r}; give both, or neither to plan them."
            )
        if self.bands is not None:
            check_int(self.bands, "bands", owner, minimum=1)
            check_int(self.rows, "rows", owner, minimum=1)
        # Validates kind, k and the normalisation flags in one place.
        self.shingle_config  # noqa: B018

    @functools.cached_property
    def label(self) -> str:
        """Name of the field in reports and in the ``found_by`` column."""
        if self.name is not None:
            return self.name
        return "+".join(str(column) for column in self.columns)

    @functools.cached_property
    def shingle_config(self) -> ShingleConfig:
        """The :class:`~lsh_frame.ShingleConfig` of this field's tokens."""
        return ShingleConfig(
            kind=self.shingle,
            k=self.k,
            strip_punctuation=self.strip_punctuation,
            strip_accents=self.strip_accents,
        )


@dataclass(frozen=True)
class BlockingKey:
    """One resolved key: a field, how it blocks, and (for LSH) its plan."""

    field: Field
    kind: BlockingKind
    plan: LshPlan | None = None

    @property
    def label(self) -> str:
        """Name of the key."""
        return self.field.label

    def describe(self) -> str:
        """Short description of how the key is made."""
        if self.kind == "neighbours" and self.field.blocking == "cosine":
            return f"top {self.field.top} by cosine"
        if self.kind == "neighbours":
            return "most similar records (weighted tokens)"
        if self.plan is None:
            return "exact value"
        return (
            f"{self.kind} {self.plan.bands}×{self.plan.rows} "
            f"(threshold {self.plan.threshold:g}, P = "
            f"{self.plan.recall_at_threshold:.3f})"
        )


@dataclass
class SideKeys:
    """Keys of one table for one blocking key.

    ``keys[i]`` holds record ``i``'s keys (one per band, or one); records with
    ``valid[i]`` false have no key. ``frame`` and ``field`` are kept (not
    copied) to show the text of a few bucket members on request. ``width`` is
    the length of a vector key's vectors (bits or values), None for others.
    """

    keys: npt.NDArray[np.uint64]
    valid: npt.NDArray[np.bool_]
    frame: pd.DataFrame
    field: Field
    width: int | None = None


@dataclass
class BlockingContext:
    """What every blocking call needs: both sides' keys and the decisions."""

    keys: list[BlockingKey]
    left: list[SideKeys]
    right: list[SideKeys] | None
    left_index: pd.Index
    right_index: pd.Index | None
    decisions: list[str] = field(default_factory=list)
    #: The pairs of each neighbours key, by the key's position in ``keys``.
    neighbours: dict[int, NeighbourPairs] = field(default_factory=dict)

    @property
    def link(self) -> bool:
        """True for two tables, False for one."""
        return self.right is not None


# ----------------------------------------------------------------------------
# Tokens and keys of one side


def _salt(column: Hashable) -> int:
    """Stable 64-bit salt of a column label (separates columns' tokens)."""
    return xxhash.xxh64_intdigest(repr(column).encode("utf-8"))


def _stored_config(frame: pd.DataFrame, spec: Field) -> MinHashConfig | None:
    """Return the configuration of a field naming one signature column, or None."""
    # A missing column is no signature column; the caller's column check says
    # it is missing.
    if len(spec.columns) != 1 or spec.columns[0] not in frame.columns:
        return None
    arrow_type = getattr(frame[spec.columns[0]].dtype, "pyarrow_dtype", None)
    return arrow_type.config if isinstance(arrow_type, MinHashType) else None


def signing_work(frames: list[pd.DataFrame], spec: Field) -> int | None:
    """Rows :func:`field_signatures` signs for these frames (None: stored ones)."""
    if any(_stored_config(frame, spec) is not None for frame in frames):
        return None
    return sum(len(frame) for frame in frames) * len(spec.columns)


def field_signatures(
    frame: pd.DataFrame,
    spec: Field,
    *,
    num_perm: int,
    seed: int,
    owner: str,
    texts: ColumnTexts | None = None,
) -> tuple[npt.NDArray, npt.NDArray[np.bool_]]:
    """MinHash signatures of a field: stored ones, or computed from its text.

    The signature of a field over several columns is the element-wise minimum
    of the columns' signatures, which is exactly the MinHash of the pooled
    token set; each column is signed in chunks on all cores. ``texts`` holds
    the frame's columns' text when already converted.
    """
    if _stored_config(frame, spec) is not None:
        return signature_matrix(frame[spec.columns[0]])
    # Classic MinHash (the default scheme): the element-wise minimum of the
    # columns' signatures is the signature of their pooled tokens. It is not
    # for the "fss32" sketch, whose slots a fallback value can fill.
    config = MinHashConfig(num_perm=num_perm, seed=seed, shingle=spec.shingle_config)
    assert config.scheme != "fss32"
    if (
        config.shingle.kind == "char"
        and len(spec.columns) > 1
        and len(frame) * len(spec.columns) <= SMALL_BATCH_VALUES
    ):
        return _pooled_signatures(frame, spec, config, owner, texts)
    if len(spec.columns) == 1:
        return sign_array(
            column_text(frame, spec.columns[0], owner=owner, texts=texts),
            config,
            salt=_salt(spec.columns[0]) if spec.tag_columns else 0,
        )
    # Each column lowers one matrix a chunk at a time (rows without tokens
    # leave it alone): no matrix per column.
    dtype = value_type(config.scheme).to_pandas_dtype()
    combined = np.full((len(frame), num_perm), np.iinfo(dtype).max, dtype=dtype)
    any_valid = np.zeros(len(frame), dtype=bool)
    for column in spec.columns:
        _, valid = sign_array(
            column_text(frame, column, owner=owner, texts=texts),
            config,
            salt=_salt(column) if spec.tag_columns else 0,
            minimum_into=combined,
        )
        any_valid |= valid
    combined[~any_valid] = 0
    return combined, any_valid


def _pooled_signatures(
    frame: pd.DataFrame,
    spec: Field,
    config: MinHashConfig,
    owner: str,
    texts: ColumnTexts | None = None,
) -> tuple[npt.NDArray, npt.NDArray[np.bool_]]:
    """Sign a few records' columns as one pooled token set each.

    The same signatures as signing column by column and taking the minimum
    (MinHash of a union is the minimum of the MinHashes), in one pass over
    all the columns: for a batch of new records the passes, not the values,
    are the cost.
    """
    n, columns = len(frame), spec.columns
    arrays = [
        column_text(frame, column, owner=owner, texts=texts) for column in columns
    ]
    k = config.shingle.k
    assert k is not None
    tags = np.repeat(
        np.array(
            [
                hashing.token_tag("char", k, _salt(column) if spec.tag_columns else 0)
                for column in columns
            ],
            dtype=np.uint64,
        ),
        n,
    )
    points, offsets = normalized_codepoints(pa.concat_arrays(arrays), config.shingle)
    hashes, token_offsets = hashing.char_shingles(points, offsets, k, tags)
    # Value v belongs to record v % n: regroup the tokens by record.
    owners = np.repeat(
        np.arange(len(columns) * n, dtype=np.int64) % max(n, 1), np.diff(token_offsets)
    )
    order = np.argsort(owners, kind="stable")
    counts = np.bincount(owners, minlength=n)
    record_offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    dtype = value_type(config.scheme).to_pandas_dtype()
    matrix = np.zeros((n, config.num_perm), dtype=dtype)
    valid = counts > 0
    if n:
        signer(config)(hashes[order], record_offsets, matrix)
    matrix[~valid] = 0
    _progress.advance(n * len(columns))  # the values signing_work counts
    return matrix, valid


def _field_text(
    frame: pd.DataFrame,
    spec: Field,
    *,
    owner: str,
    texts: ColumnTexts | None = None,
) -> pa.Array:
    """Return a field's raw text, its columns joined by a space, nulls kept.

    ``texts`` holds the frame's columns' text when already converted.
    """
    arrays = [
        column_text(frame, column, owner=owner, texts=texts) for column in spec.columns
    ]
    if len(arrays) == 1:
        return arrays[0]
    # Join pairwise and fall back to whichever side is present: the same as
    # null_handling="skip", which (pyarrow 26) drops rows whose every input is
    # null instead of returning null for them.
    separator = pa.scalar(" ", pa.large_string())
    joined = arrays[0]
    for array in arrays[1:]:
        both = pc.binary_join_element_wise(joined, array, separator)
        joined = pc.coalesce(both, joined, array)
    return joined


def _exact_keys(
    frame: pd.DataFrame,
    spec: Field,
    *,
    owner: str,
    texts: ColumnTexts | None = None,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """One 64-bit key per normalised value; missing or blank values get none.

    Values that repeat (dates, cities, postcodes) are normalised and hashed once
    per distinct raw value.
    """
    if is_compound_field(spec):
        return _compound_keys(frame, spec, owner=owner, texts=texts)
    text = _field_text(frame, spec, owner=owner, texts=texts)
    encoded = pc.dictionary_encode(text)
    distinct = encoded.dictionary
    repeats = 0 < len(distinct) <= len(text) // 2
    keys, valid = _value_hashes(distinct if repeats else text, spec.shingle_config)
    keys ^= np.uint64(_salt(spec.label))
    if repeats:
        present = encoded.indices.is_valid().to_numpy(zero_copy_only=False)
        codes = pc.fill_null(encoded.indices, 0).to_numpy(zero_copy_only=False)
        keys, valid = keys[codes], valid[codes] & present
    return keys[:, None], valid


def _compound_keys(
    frame: pd.DataFrame,
    spec: Field,
    *,
    owner: str,
    texts: ColumnTexts | None = None,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """Return a compound field's keys: its columns' exact keys together.

    A record has one only when every column holds a value: a missing date of
    birth beside a surname is not a value the key could agree on.
    """
    parts = [
        _exact_keys(frame, column_key_field(spec, column), owner=owner, texts=texts)
        for column in spec.columns
    ]
    return combined_keys(parts, spec.label)


def column_key_field(spec: Field, column: Hashable) -> Field:
    """Return the exact key of one column of a compound field."""
    return Field(
        column,
        blocking="exact",
        strip_punctuation=spec.strip_punctuation,
        strip_accents=spec.strip_accents,
    )


def combined_keys(
    parts: list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]], label: str
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """One key per record from several columns' keys; all of them present."""
    keys = np.full(parts[0][1].size, np.uint64(_salt(label)))
    valid = np.ones(parts[0][1].size, dtype=bool)
    for column_keys, column_valid in parts:
        keys = hashing.splitmix64(keys ^ column_keys[:, 0])
        valid &= column_valid
    return keys[:, None], valid


def _exact_keys_together(
    frame: pd.DataFrame,
    specs: list[Field],
    *,
    owner: str,
    texts: ColumnTexts | None = None,
) -> dict[str, SideKeys]:
    """Compute the exact keys of several fields of one configuration at once.

    The keys of :func:`_exact_keys`, for a few records (a batch of new ones),
    where one pass over all the fields costs far less than one per field.
    """
    n = len(frame)
    arrays = [_field_text(frame, spec, owner=owner, texts=texts) for spec in specs]
    hashes, present = _value_hashes(pa.concat_arrays(arrays), specs[0].shingle_config)
    result = {}
    for number, spec in enumerate(specs):
        part = slice(number * n, (number + 1) * n)
        result[spec.label] = SideKeys(
            keys=(hashes[part] ^ np.uint64(_salt(spec.label)))[:, None],
            valid=present[part],
            frame=frame,
            field=spec,
        )
    return result


def _value_hashes(
    text: pa.Array, config: ShingleConfig
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
    """Hash each normalised value whole; blank or missing ones are not valid."""
    points, offsets = normalized_codepoints(text, config)
    starts, ends = offsets[:-1], offsets[1:]
    return hashing.word_hashes(points, starts, ends), ends > starts


def _sample_text(side: SideKeys, position: int) -> str:
    """Return the normalised text of one record of a field, to show buckets."""
    if _stored_config(side.frame, side.field) is not None:
        return "(signatures only)"
    if side.field.blocking in VECTOR_KINDS:
        return "(vectors)"
    row = side.frame.iloc[[position]]
    text = normalize(
        _field_text(row, side.field, owner="report"), side.field.shingle_config
    )
    value = text[0].as_py()
    return "" if value is None else value


def _side_keys(
    frame: pd.DataFrame,
    key: BlockingKey,
    *,
    num_perm: int,
    seed: int,
    owner: str,
    signatures: tuple[npt.NDArray, npt.NDArray[np.bool_]] | None = None,
    texts: ColumnTexts | None = None,
) -> SideKeys:
    if key.kind == "exact":
        keys, valid = _exact_keys(frame, key.field, owner=owner, texts=texts)
        return SideKeys(keys=keys, valid=valid, frame=frame, field=key.field)
    assert key.plan is not None
    if key.kind in VECTOR_KINDS:
        (column,) = key.field.columns
        hashes, valid, width = side_hashes(
            frame[column], key.kind, key.plan.used_perm, seed,
            column=column, owner=owner,
        )  # fmt: skip
        keys = band_keys_from_bits(
            hashes, key.plan.bands, key.plan.rows, salt=_salt(key.label)
        )
        return SideKeys(
            keys=keys, valid=valid, frame=frame, field=key.field, width=width
        )
    if signatures is None:
        _progress.step(f"signing {key.label}", total=signing_work([frame], key.field))
        signatures = field_signatures(
            frame, key.field, num_perm=num_perm, seed=seed, owner=owner, texts=texts
        )
    matrix, valid = signatures
    keys = key_kernels.band_keys(
        matrix, key.plan.bands, key.plan.rows, salt=_salt(key.label)
    )
    return SideKeys(keys=keys, valid=valid, frame=frame, field=key.field)


# ----------------------------------------------------------------------------
# From the caller's fields to resolved keys


def identifier_field(column: Hashable) -> Field:
    """Return the exact key the defaults try on a column.

    Punctuation does not count: "310/246-1501" and "310-246-1501" are one
    phone number, "j.smith@x" and "jsmith@x" one address written two ways.
    """
    return Field(column, blocking="exact", strip_punctuation=True)


#: Linking, an exact key on an identifier is dropped when the two tables'
#: values meet for fewer than this share of the smaller table's records: they
#: are written differently on each side ("(1999)" after a title on one side
#: only), and the key would find (almost) no pair.
LINK_KEY_MIN_MEETING = 0.01
#: How plain column names are blocked besides their exact keys: one record-level
#: key over every column, "lsh" or "neighbours", or "both" (the LSH record key
#: and a neighbours key labelled NEIGHBOURS_KEY; the match model then chooses
#: which of their pairs to learn from, see lsh_frame.compare.training_pairs).
PLAIN_RECORD_KEY: Literal["lsh", "neighbours", "both"] = "both"
#: Plain columns get that key while both tables together hold at most this many
#: records: it runs on one machine (the client under Dask), at about 4.5 GB and
#: 25 s per million customer records (make_customers 1M, benchmarks/e2e.py).
NEIGHBOURS_MAX_RECORDS = 2_000_000


def _check_frame(frame: Any, role: str, owner: str) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise ConfigTypeError(
            f"The '{role}' argument of {owner} must be a pandas DataFrame. "
            f"Got {type(frame).__name__} instead."
        )
    if frame.index.has_duplicates:
        duplicated = frame.index[frame.index.duplicated()].unique()[:3].tolist()
        raise ColumnError(
            f"The index of the '{role}' frame has duplicate labels (for example "
            f"{duplicated}), but candidate pairs name records by their index label. "
            "Make the labels unique first, for example with reset_index()."
        )
    return frame


def _as_fields(fields: Any, owner: str) -> tuple[list[Field], bool]:
    """Return the fields and whether the caller gave only plain column names.

    (Which fields the data decides the keys of is :func:`automatic_fields`.)
    """
    refuse_set(fields, "fields", owner)
    if isinstance(fields, (pd.Index, pd.Series, np.ndarray)):
        fields = fields.tolist()  # e.g. df.columns
    elif isinstance(fields, (str, Field)) or not isinstance(fields, Sequence):
        fields = [fields]
    fields = list(fields)
    if not fields:
        raise ConfigError(
            f"The 'fields' parameter of {owner} must name at least one column. "
            "Got an empty list instead."
        )
    plain = all(not isinstance(item, Field) for item in fields)
    resolved = [item if isinstance(item, Field) else Field(item) for item in fields]
    labels = [item.label for item in resolved]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise ConfigError(
            f"The 'fields' parameter of {owner} has more than one field named "
            f"{repeated[0]!r}. Give each field a distinct name=."
        )
    return resolved, plain


def automatic_fields(specs: list[Field], frame: Any) -> list[Field]:
    """Return the fields whose keys the data decides (``blocking="auto"``).

    A field on one column of MinHash signatures is not among them: its
    signatures make its own LSH key (see :func:`own_key_fields`).
    ``frame`` is a table of the call (pandas, or a Dask table's meta).
    """
    return [
        spec
        for spec in specs
        if spec.blocking == "auto" and _stored_config(frame, spec) is None
    ]


def own_key_fields(specs: list[Field], automatic: list[Field]) -> list[Field]:
    """Return the fields that get a key of their own, in the order given.

    ``automatic`` are the fields the data decides (:func:`automatic_fields`);
    any other field still ``"auto"`` (a column of signatures) gets an LSH key.
    """
    decided = {id(spec) for spec in automatic}
    return [
        dataclasses.replace(spec, blocking="lsh") if spec.blocking == "auto" else spec
        for spec in specs
        if id(spec) not in decided
    ]


def spec_columns(specs: list[Field]) -> list[Hashable]:
    """Return the fields' columns, flattened over the fields, each once, in order."""
    columns: list[Hashable] = []
    for spec in specs:
        columns += [column for column in spec.columns if column not in columns]
    return columns


def field_columns(fields: Any, owner: str) -> list[Hashable]:
    """:func:`spec_columns` of the caller's fields (names, Fields, or a list)."""
    return spec_columns(_as_fields(fields, owner)[0])


def mapped_columns(
    frame: pd.DataFrame,
    fields: Any,
    other: pd.DataFrame | None,
    right_on: Any,
    owner: str,
    role: str = "other",
) -> list[tuple[Hashable, Hashable]] | None:
    """Check the fields' columns in both tables and pair them up by ``right_on``.

    ``frame`` and ``other`` may be empty frames of the tables' columns (Dask's
    meta). See :func:`~lsh_frame._validation.right_columns` for the result.
    """
    if other is None and right_on is None:
        return None
    columns = field_columns(fields, owner)
    check_columns(frame, columns, owner)
    return right_columns(other, columns, right_on, owner=owner, role=role)


def other_table(
    frame: pd.DataFrame,
    fields: Any,
    other: pd.DataFrame | None,
    right_on: Any,
    owner: str,
) -> pd.DataFrame | None:
    """``other`` seen under ``frame``'s column names (as ``right_on`` maps them).

    Missing columns are reported naming the table they are missing from.
    """
    if other is None and right_on is None:
        return None
    frame = _check_frame(frame, "frame", owner)
    if other is not None:
        other = _check_frame(other, "other", owner)
    pairs = mapped_columns(frame, fields, other, right_on, owner)
    return other if pairs is None or other is None else present(other, pairs)


@dataclass(frozen=True)
class ExactProfile:
    """What an exact key on one column would do."""

    keyed: int
    distinct: int
    pairs: int
    typical_bucket: float

    def identifies(self, records: int, bucket: float = IDENTIFIER_BUCKET) -> bool:
        """Tell whether the column works as an identifier (see :func:`resolve`)."""
        return (
            self.keyed > 0
            and self.typical_bucket <= bucket
            and self.pairs <= IDENTIFIER_PAIRS_PER_RECORD * records
        )


def exact_counts(
    keys: npt.NDArray[np.uint64], valid: npt.NDArray[np.bool_]
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Distinct exact keys of some records and how many records hold each."""
    return pair_kernels.sorted_unique(keys[valid, 0], return_counts=True)


def merge_counts(
    parts: list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]],
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Unite :func:`exact_counts` of several parts of one table."""
    if len(parts) == 1:
        return parts[0]
    values = np.concatenate([part[0] for part in parts])
    counts = np.concatenate([part[1] for part in parts])
    order = np.argsort(values, kind="stable")
    values, counts = values[order], counts[order]
    first = np.ones(values.size, dtype=bool)
    first[1:] = values[1:] != values[:-1]
    starts = np.flatnonzero(first)
    summed = np.add.reduceat(counts, starts) if starts.size else counts[:0]
    return values[starts], summed.astype(np.int64)


def exact_profile(
    sides: list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]],
) -> ExactProfile:
    """Profile an exact key from each table's :func:`exact_counts`."""
    values = [side[0] for side in sides]
    counts = [side[1] for side in sides]
    if len(sides) == 1:
        pairs = int((counts[0] * (counts[0] - 1) // 2).sum())
    else:
        _, at_left, at_right = np.intersect1d(
            values[0], values[1], assume_unique=True, return_indices=True
        )
        pairs = int((counts[0][at_left] * counts[1][at_right]).sum())
    typical = max(
        (
            float(np.percentile(side, 99, method="higher"))
            for side in counts
            if side.size
        ),
        default=0.0,
    )
    return ExactProfile(
        keyed=int(sum(side.sum() for side in counts)),
        distinct=int(pair_kernels.sorted_unique(np.concatenate(values)).size),
        pairs=pairs,
        typical_bucket=typical,
    )


def _seed_key(seed: int) -> str:
    """Return the 16-character hash key of a seed, for pandas' hashing."""
    return xxhash.xxh64_hexdigest(str(seed).encode("ascii"))


def label_hashes(index: pd.Index, seed: int) -> npt.NDArray[np.uint64]:
    """Return a stable 64-bit hash of each label's text, keyed by the seed.

    An integer label and its decimal text hash alike (see
    :func:`lsh_frame._labels.label_text`).
    """
    return hash_labels(index, hash_key=_seed_key(seed))


def sample_hashes(
    frame: pd.DataFrame, columns: Sequence[Hashable], seed: int
) -> tuple[npt.NDArray[np.uint64], bool]:
    """Return each record's place in the similarity sample, and what it hashes.

    The hash (keyed by the seed) of the record's values in ``columns`` (every
    column of the fields being decided), so the sample, and the threshold
    chosen from it, depend on the records only: not on the rows' order, nor on
    their labels (integer ids and the same ids read as text choose alike).
    Records of equal values tie and are interchangeable in the sample. When a
    column holds values pandas cannot hash (stored signatures, vectors), or
    ``columns`` is empty, the hash of the labels' text (the flag is False).
    """
    hashed = hash_values(frame, columns, hash_key=_seed_key(seed))
    if hashed is not None:
        return hashed, True
    return label_hashes(frame.index, seed), False


def sample_rows(
    hashes: npt.NDArray[np.uint64],
    positions: npt.NDArray[np.int64],
    count: int = _SAMPLE_RECORDS,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    """Pick the ``count`` records of smallest hash: ``(hashes, positions)``.

    Ordered by hash (then position). Taking the smallest of each part of a
    table and then the smallest of those gives the same sample, so it depends
    neither on the rows' order nor on how the table is partitioned.
    """
    if hashes.size > count:
        keep = np.argpartition(hashes, count - 1)[:count]
        # Ties at the boundary hash must not depend on argpartition's choice.
        boundary = hashes[keep].max()
        keep = np.flatnonzero(hashes <= boundary)
        hashes, positions = hashes[keep], positions[keep]
    order = np.lexsort((positions, hashes))[:count]
    return hashes[order], positions[order]


def sample_similarity(
    left: tuple[npt.NDArray, npt.NDArray[np.bool_]],
    right: tuple[npt.NDArray, npt.NDArray[np.bool_]] | None,
    seed: int,
) -> npt.NDArray[np.float64]:
    """Estimated Jaccard similarity of random pairs of sampled records.

    Each side is ``(signatures, valid)`` of the records :func:`sample_rows`
    picked, in its order; records without a signature are left out. The same
    records make the same pairs, whatever the engine.
    """
    rng = np.random.default_rng(seed)
    left_matrix, left_valid = left
    right_matrix, right_valid = right if right is not None else left
    left_matrix, right_matrix = left_matrix[left_valid], right_matrix[right_valid]
    size = min(_SIMILARITY_SAMPLE, len(left_matrix) * len(right_matrix))
    first = rng.integers(0, len(left_matrix), size)
    second = rng.integers(0, len(right_matrix), size)
    if right is None:
        keep = first != second
        first, second = first[keep], second[keep]
    return (left_matrix[first] == right_matrix[second]).mean(axis=1)


class KeySource:
    """What deciding the keys needs to see of the data (one engine's view).

    :func:`decide_keys` holds the rules; a source computes the numbers they
    look at, on pandas frames here and on partitions in ``lsh_frame.dask``.
    """

    left: pd.DataFrame  # the left table (or an empty frame of its columns)
    right: pd.DataFrame | None

    @property
    def n_left(self) -> int:
        """Rows of the left table."""
        raise NotImplementedError

    @property
    def n_right(self) -> int | None:
        """Rows of the right table (None for one table)."""
        raise NotImplementedError

    def exact_profile(self, spec: Field) -> ExactProfile:
        """Profile an exact key on one field."""
        raise NotImplementedError

    def profile_ahead(self, specs: list[Field]) -> None:
        """Prepare :meth:`exact_profile` of several fields at once (a hint).

        A source that can compute them side by side does so here; the profiles
        are the same either way.
        """

    def sample_similarity(self, spec: Field, num_perm: int, seed: int) -> Any:
        """Similarities of random record pairs in one field."""
        raise NotImplementedError

    def signing_work(self, spec: Field) -> int | None:
        """Rows :meth:`sample_similarity` signs here, for progress (None: unknown)."""
        return None

    def meets(self, profile: ExactProfile) -> bool:
        """Whether a link's two tables' values of an exact key ever agree.

        Always, deduplicating; linking, when the key yields pairs for at least
        ``LINK_KEY_MIN_MEETING`` of the smaller table's records.
        """
        n_right = self.n_right
        return n_right is None or profile.pairs >= LINK_KEY_MIN_MEETING * min(
            self.n_left, n_right
        )


class _FrameSource(KeySource):
    """Pandas frames; keeps the keys and signatures it computes for reuse."""

    def __init__(
        self,
        left: pd.DataFrame,
        right: pd.DataFrame | None,
        owner: str,
        columns: Sequence[Hashable],
    ):
        self.left, self.right, self.owner = left, right, owner
        self.columns = list(columns)  # every column of the fields: the sample's
        self.exact: dict[str, list[SideKeys]] = {}
        self._ahead: dict[Field, list[SideKeys]] = {}
        self.signatures: dict[str, list[tuple[Any, Any]]] = {}
        self._samples: list[npt.NDArray[np.int64]] | None = None

    @property
    def n_left(self) -> int:
        return len(self.left)

    @property
    def n_right(self) -> int | None:
        return len(self.right) if self.right is not None else None

    def tables(self) -> list[pd.DataFrame]:
        return [self.left] if self.right is None else [self.left, self.right]

    def exact_profile(self, spec: Field) -> ExactProfile:
        sides = self._ahead.pop(spec, None) or self._exact_sides(spec)
        self.exact[spec.label] = sides
        return exact_profile([exact_counts(side.keys, side.valid) for side in sides])

    def profile_ahead(self, specs: list[Field]) -> None:
        # Columns' keys are independent and their pyarrow and numpy work
        # releases the GIL: compute them on every core, in order.
        plain = [spec for spec in specs if not is_compound_field(spec)]
        for spec, sides in zip(plain, in_order(self._exact_sides, plain), strict=True):
            self._ahead[spec] = sides

    def _exact_sides(self, spec: Field) -> list[SideKeys]:
        sides = []
        for number, table in enumerate(self.tables()):
            if is_compound_field(spec):
                # A compound key from its columns' keys, computed once each.
                keys, valid = combined_keys(
                    [
                        self._column_keys(column_key_field(spec, column), number)
                        for column in spec.columns
                    ],
                    spec.label,
                )
            else:
                keys, valid = _exact_keys(table, spec, owner=self.owner)
            sides.append(SideKeys(keys=keys, valid=valid, frame=table, field=spec))
        return sides

    def _column_keys(
        self, spec: Field, number: int
    ) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.bool_]]:
        """One table's exact keys of a column (profiled before, or now)."""
        if spec.label not in self.exact:
            self.exact_profile(spec)
        side = self.exact[spec.label][number]
        return side.keys, side.valid

    def signing_work(self, spec: Field) -> int | None:
        return signing_work(self.tables(), spec)

    def sample_similarity(self, spec: Field, num_perm: int, seed: int) -> Any:
        signed = [
            field_signatures(
                table, spec, num_perm=num_perm, seed=seed, owner=self.owner
            )
            for table in self.tables()
        ]
        self.signatures[spec.label] = signed
        if self._samples is None:
            self._samples = [
                sample_rows(
                    sample_hashes(table, self.columns, seed)[0],
                    np.arange(len(table), dtype=np.int64),
                )[1]
                for table in self.tables()
            ]
        sampled = [
            (matrix[rows], valid[rows])
            for (matrix, valid), rows in zip(signed, self._samples, strict=True)
        ]
        return sample_similarity(
            sampled[0], sampled[1] if len(sampled) > 1 else None, seed
        )


def compound_field(columns: tuple[Hashable, ...]) -> Field:
    """Return the exact key the defaults try on several columns together."""
    return Field(
        list(columns),
        blocking="exact",
        strip_punctuation=True,
        tag_columns=True,
        name=COMPOUND_SEPARATOR.join(str(column) for column in columns),
    )


def compound_pairs(columns: list[Hashable]) -> list[tuple[Hashable, Hashable]]:
    """Return the pairs of columns compound keys are tried on, in order.

    None among more than ``COMPOUND_MAX_COLUMNS`` columns: the pairs grow
    with the square of the columns, and each costs a pass over the keys.
    """
    if len(columns) > COMPOUND_MAX_COLUMNS:
        return []
    return list(itertools.combinations(columns, 2))


def is_compound_field(spec: Field) -> bool:
    """Tell whether a field is an exact key on several columns kept apart."""
    return spec.blocking == "exact" and spec.tag_columns and len(spec.columns) > 1


def is_compound_label(label: str) -> bool:
    """Tell whether a ``found_by`` label names a compound key."""
    return COMPOUND_SEPARATOR in label


def compound_keys(
    source: KeySource,
    every: list[Hashable],
    keyed: set[Hashable],
    records: int,
    bucket: float,
) -> tuple[list[BlockingKey], list[str]]:
    """Exact keys on two columns together, where the two identify records.

    ``every`` are the plain columns, ``keyed`` those with an exact key of their
    own. Each pair of the others (:func:`compound_pairs`) whose joint values
    identify records (:meth:`ExactProfile.identifies`) is a candidate; the
    ones yielding fewest pairs are kept first, while all kept yield at most
    ``COMPOUND_PAIRS_PER_RECORD`` pairs per record.
    """
    found = []
    for columns in compound_pairs(every):
        if keyed.intersection(columns):
            continue
        spec = compound_field(columns)
        profile = source.exact_profile(spec)
        if profile.identifies(records, bucket) and source.meets(profile):
            found.append((profile.pairs, spec.label, spec))
    keys, decisions, spent = [], [], 0
    for pairs, label, spec in sorted(found, key=lambda item: item[:2]):
        if spent + pairs > COMPOUND_PAIRS_PER_RECORD * records:
            decisions.append(
                f"{label}: no compound key: its {pairs:,} pairs would pass the "
                f"budget of {COMPOUND_PAIRS_PER_RECORD:g} pair per record for all "
                "compound keys"
            )
            continue
        spent += pairs
        keys.append(BlockingKey(spec, "exact"))
        decisions.append(
            f"{label}: compound exact key, the two identify records together "
            f"({pairs:,} pairs); its pairs no other key found are decided with "
            "the neighbours key's prior, and the model does not learn from them"
        )
    return keys, decisions


def decide_keys(
    source: KeySource,
    fields: Any,
    *,
    threshold: float | None,
    recall: float,
    num_perm: int,
    seed: int,
    owner: str,
) -> tuple[list[BlockingKey], list[str]]:
    """Decide the blocking keys of some fields (the rules of :func:`resolve`)."""
    frame, other = source.left, source.right
    # Checked here, whatever the fields: when every field is exact they are
    # never used, but a bad value is still a mistake the caller should hear of.
    threshold = check_fraction(threshold, "threshold", owner, optional=True)
    recall = check_fraction(recall, "recall", owner)  # type: ignore[assignment]
    specs, _ = _as_fields(fields, owner)
    for spec in specs:
        check_columns(frame, list(spec.columns), owner)
        if other is not None:
            check_columns(other, list(spec.columns), owner)
    automatic = automatic_fields(specs, frame)
    specs = own_key_fields(specs, automatic)
    num_perm = check_int(num_perm, "num_perm", owner, minimum=1, maximum=8192)
    seed = check_int(seed, "seed", owner, minimum=0)
    n_left, n_right = source.n_left, source.n_right
    total_pairs = (
        n_left * n_right if n_right is not None else n_left * (n_left - 1) // 2
    )
    n_records = n_left + (n_right or 0)
    # The record budget: about one unwanted pair per record. When linking, every
    # pair holds a record of each table, so a small table (a batch of new
    # records against a saved one) gets two per record of its own, not one per
    # record of the large table.
    if n_right is not None:
        n_records = min(n_records, 2 * min(n_left, n_right))
    decisions: list[str] = []
    keys: list[BlockingKey] = []

    if automatic:
        columns = spec_columns(automatic)
        bucket = (
            NEIGHBOURS_IDENTIFIER_BUCKET
            if PLAIN_RECORD_KEY == "neighbours"
            else IDENTIFIER_BUCKET
        )
        _progress.step(f"profiling {len(columns)} columns")
        source.profile_ahead([identifier_field(column) for column in columns])
        for column in columns:
            _progress.step(f"profiling {column}")
            profile = source.exact_profile(identifier_field(column))
            facts = (
                f"{profile.distinct:,} distinct values in {profile.keyed:,} records, "
                f"99% of values shared by at most {profile.typical_bucket:g} records "
                f"per table, {profile.pairs:,} pairs"
            )
            meets = source.meets(profile)
            identifies = profile.identifies(n_records, bucket)
            if identifies and not meets:
                decisions.append(
                    f"{column}: no exact key: its values would identify records, "
                    "but the two tables' values almost never agree "
                    f"({profile.pairs:,} pairs between {n_left:,} and {n_right:,} "
                    "records; they are written differently on each side); part of "
                    "the record key"
                )
            elif identifies:
                keys.append(BlockingKey(identifier_field(column), "exact"))
                decisions.append(f"{column}: exact key, identifies records ({facts})")
            else:
                decisions.append(
                    f"{column}: no key of its own ({facts}); part of the record key"
                )
        compound, said = compound_keys(
            source,
            columns,
            {key.field.columns[0] for key in keys if key.kind == "exact"},
            n_records,
            bucket,
        )
        keys += compound
        decisions += said
        record = Field(
            columns,
            tag_columns=True,
            name=RECORD_KEY,
            blocking="neighbours" if PLAIN_RECORD_KEY == "neighbours" else "lsh",
        )
        specs = [*specs, record]
        if PLAIN_RECORD_KEY == "both":
            records = n_left + (n_right or 0)
            if records <= NEIGHBOURS_MAX_RECORDS:
                specs.append(Field(columns, name=NEIGHBOURS_KEY, blocking="neighbours"))
            else:
                decisions.append(
                    f"{NEIGHBOURS_KEY}: no neighbours key: {records:,} records, more "
                    f"than {NEIGHBOURS_MAX_RECORDS:,} (it runs on one machine, the "
                    "client under Dask, at about 4 GB and 25 s per million records); "
                    "add Field(columns, blocking='neighbours') to have it"
                )
    for spec in specs:
        if spec.blocking is None:
            decisions.append(f"{spec.label}: compared only, no blocking key")
            continue
        if spec.blocking == "exact":
            keys.append(BlockingKey(spec, "exact"))
            continue
        if spec.blocking == "neighbours":
            keys.append(BlockingKey(spec, "neighbours"))
            continue
        if spec.blocking == "cosine" and spec.top is not None:
            keys.append(BlockingKey(spec, "neighbours"))
            continue
        if spec.blocking in VECTOR_KINDS:
            vector_key = _vector_key(spec, threshold, recall, num_perm, owner)
            keys.append(vector_key)
            decisions.append(f"{spec.label}: {vector_key.describe()}")
            continue
        field_threshold = spec.threshold if spec.threshold is not None else threshold
        field_recall = spec.recall if spec.recall is not None else recall
        field_perm = num_perm
        stored = _stored_config(frame, spec)
        if other is not None and (stored is not None) != (
            _stored_config(other, spec) is not None
        ):
            raise ConfigError(
                f"Field {spec.label!r} is a signature column in one table but not in "
                "the other. Use signature columns in both, or text in both."
            )
        if stored is not None:
            if other is not None:
                other_config = _stored_config(other, spec)
                assert other_config is not None
                check_compatible(
                    stored, other_config, left_name=spec.label, right_name=spec.label
                )
            field_perm = stored.num_perm
        if spec.bands is not None and spec.rows is not None:
            if spec.bands * spec.rows > field_perm:
                raise ConfigError(
                    f"Field {spec.label!r} asks for {spec.bands} bands × {spec.rows} "
                    f"rows = {spec.bands * spec.rows} signature values, but signatures "
                    f"have num_perm={field_perm}. Use fewer bands or rows, or a "
                    "larger num_perm."
                )
            chosen = LshPlan(
                threshold=field_threshold
                or round((1 / spec.bands) ** (1 / spec.rows), 4),
                recall=field_recall,
                num_perm=field_perm,
                bands=spec.bands,
                rows=spec.rows,
            )
            decisions.append(f"{spec.label}: lsh key as given, {chosen}")
        elif field_threshold is None:
            _progress.step(f"signing {spec.label}", total=source.signing_work(spec))
            similarity = source.sample_similarity(spec, field_perm, seed)
            chosen = plan_for_budget(
                similarity,
                pairs=total_pairs,
                budget=n_records,
                num_perm=field_perm,
                recall=field_recall,
            )
            expected = chosen.expected_false_positives or 0.0
            missed = (
                f"; the budget of {n_records:,} is not met even at the highest "
                "threshold: records are too alike in this field for it to block "
                "on alone, so expect many candidates (combine it with other columns)"
                if expected > n_records
                else ""
            )
            decisions.append(
                f"{spec.label}: lsh key, threshold {chosen.threshold:g} chosen from "
                f"the data ({chosen.bands} bands × {chosen.rows} rows, "
                f"P({chosen.threshold:g}) = {chosen.recall_at_threshold:.3f}; "
                f"about {expected:,.0f} false positives expected{missed})"
            )
        else:
            chosen = plan(field_threshold, num_perm=field_perm, recall=field_recall)
            decisions.append(f"{spec.label}: lsh key, {chosen}")
        keys.append(BlockingKey(spec, "lsh", chosen))
    named = [
        key.label
        for key in keys
        if is_compound_label(key.label) and not is_compound_field(key.field)
    ]
    if named:
        raise ConfigError(
            f"{owner} got a blocking key named {named[0]!r}, but "
            f"{COMPOUND_SEPARATOR!r} in a name marks the keys on two columns "
            "together in found_by. Rename the column, or give the field a name "
            f"without it (Field(..., name=...))."
        )
    if any(key.label == IDENTICAL for key in keys):
        raise ConfigError(
            f"{owner} got a blocking key named {IDENTICAL!r}, but that name marks "
            "the pairs of identical rows in found_by. Give the field another name, "
            f"for example Field({IDENTICAL!r}, blocking=..., name='{IDENTICAL}_key')."
        )
    if len(keys) > 1 << _KEY_BITS:
        raise ConfigError(
            f"{owner} got {len(keys)} blocking keys; at most {1 << _KEY_BITS} are "
            "supported. Combine columns into fewer fields."
        )
    if not keys:
        raise ConfigError(
            f"None of the fields given to {owner} makes a blocking key (all have "
            "blocking=None). Give at least one field blocking='lsh' or 'exact'."
        )
    return keys, decisions


def _vector_key(
    spec: Field, threshold: float | None, recall: float, num_perm: int, owner: str
) -> BlockingKey:
    """Plan a bit-sampling or random-hyperplane key (see lsh_frame.vectors)."""
    assert spec.blocking == "hamming" or spec.blocking == "cosine"
    field_threshold = spec.threshold if spec.threshold is not None else threshold
    field_recall = spec.recall if spec.recall is not None else recall
    if spec.bands is not None and spec.rows is not None:
        chosen = LshPlan(
            threshold=field_threshold or 0.5,
            recall=field_recall,
            num_perm=max(num_perm, spec.bands * spec.rows),
            bands=spec.bands,
            rows=spec.rows,
            metric=spec.blocking,
        )
    elif field_threshold is None:
        measure = "share of equal bits" if spec.blocking == "hamming" else "cosine"
        raise ConfigError(
            f"Field {spec.label!r} (blocking={spec.blocking!r}) needs a threshold: "
            f"the {measure} its pairs should reach, in (0, 1]. Got none. Give "
            f"Field({spec.columns[0]!r}, blocking={spec.blocking!r}, threshold=0.9) "
            "or the call's threshold=."
        )
    else:
        chosen = plan(
            field_threshold, num_perm=num_perm, recall=field_recall,
            metric=spec.blocking,
        )  # fmt: skip
    return BlockingKey(spec, spec.blocking, chosen)


def resolve(
    frame: pd.DataFrame,
    fields: Any,
    /,
    *,
    other: pd.DataFrame | None = None,
    threshold: float | None = None,
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    owner: str = "candidates",
    max_pairs: int | None = None,
) -> BlockingContext:
    """Resolve the caller's fields into keys and compute both sides' keys.

    For plain column names and fields left at ``blocking="auto"``, the data
    decides, over the columns of those fields ("all the columns" below);
    every other field gets the key it asks for:

    - an exact key on every column that identifies records: 99% of its values
      are shared by at most ``IDENTIFIER_BUCKET`` (10) records of a table, and
      the key yields at most two pairs per record (ids, dates of birth, phones,
      e-mails; at scale, a date of birth stops qualifying by itself);
    - an exact key on two of the other columns together (a surname and a date
      of birth: ``"surname&&date_of_birth"``) where the two identify records
      by the same rule, fewest pairs first, within one pair per record for all
      of them (see :func:`compound_keys`);
    - one record-level LSH key over all the columns (shingles tagged by
      column), its threshold the lowest whose expected false positives (pairs
      less similar than the threshold, estimated from a sample of random pairs)
      stay within one per record;
    - a neighbours key over all the columns (``NEIGHBOURS_KEY``): each record's
      most similar records by IDF-weighted tokens, while both tables together
      hold at most ``NEIGHBOURS_MAX_RECORDS`` records.

    When linking, "per record" counts both tables, but at most twice the
    smaller one: six new records linked against a saved table of a million get
    a budget of twelve pairs, not a million.

    Low-cardinality columns never make a key of their own. Each decision, with
    the numbers behind it, is recorded in ``decisions``.
    """
    frame = _check_frame(frame, "frame", owner)
    if other is not None:
        other = _check_frame(other, "other", owner)
    source = _FrameSource(frame, other, owner, field_columns(fields, owner))
    keys, decisions = decide_keys(
        source,
        fields,
        threshold=threshold,
        recall=recall,
        num_perm=num_perm,
        seed=seed,
        owner=owner,
    )
    num_perm = check_int(num_perm, "num_perm", owner, minimum=1, maximum=8192)
    seed = check_int(seed, "seed", owner, minimum=0)
    exact_keys = source.exact
    signatures = source.signatures

    found: dict[int, NeighbourPairs] = {}
    tables = source.tables()
    for index, key in enumerate(keys):
        if key.kind == "neighbours":
            _progress.step(f"finding neighbours ({key.label})")
            found[index] = key_neighbours(
                tables, key.field, owner=owner, max_pairs=max_pairs, seed=seed
            )
            decisions.append(f"{key.label}: {found[index].describe()}")

    def side(table: pd.DataFrame, which: int) -> list[SideKeys]:
        return table_keys(
            table,
            keys,
            num_perm=num_perm,
            seed=seed,
            owner=owner,
            exact={label: sides[which] for label, sides in exact_keys.items()},
            signatures={label: sides[which] for label, sides in signatures.items()},
            keyed={index: pairs.keyed[which] for index, pairs in found.items()},
        )

    left_keys = side(frame, 0)
    right_keys = side(other, 1) if other is not None else None
    for index, key in enumerate(keys):
        # Vectors of different lengths hash with different hyperplanes or bits:
        # their keys would never meet, silently.
        if right_keys is not None and key.kind in VECTOR_KINDS:
            check_vector_width(
                left_keys[index].width,
                right_keys[index].width,
                key.field.columns[0],
                owner,
            )
    return BlockingContext(
        keys=keys,
        left=left_keys,
        right=right_keys,
        left_index=frame.index,
        right_index=other.index if other is not None else None,
        decisions=decisions,
        neighbours=found,
    )


def table_keys(
    table: pd.DataFrame,
    keys: list[BlockingKey],
    *,
    num_perm: int,
    seed: int,
    owner: str,
    exact: dict[str, SideKeys] | None = None,
    signatures: dict[str, tuple[Any, Any]] | None = None,
    keyed: dict[int, npt.NDArray[np.bool_]] | None = None,
    texts: ColumnTexts | None = None,
) -> list[SideKeys]:
    """One table's keys for each blocking key.

    ``exact`` and ``signatures`` hold keys and signatures already computed
    (by label); ``keyed`` which records a neighbours key could look up (by the
    key's position), which has no keys of its own: its side keeps none.
    ``texts`` holds the table's columns' text when already converted.
    """
    exact, signatures, keyed = dict(exact or {}), signatures or {}, keyed or {}
    pending = [key.field for key in keys if key.kind == "exact"]
    # A compound key combines its columns' keys (see _compound_keys).
    pending = [
        spec
        for spec in pending
        if spec.label not in exact and not is_compound_field(spec)
    ]
    if len(pending) > 1 and len(table) * len(pending) <= SMALL_BATCH_VALUES:
        for config in {spec.shingle_config for spec in pending}:
            alike = [spec for spec in pending if spec.shingle_config == config]
            exact.update(_exact_keys_together(table, alike, owner=owner, texts=texts))
    result = []
    for index, key in enumerate(keys):
        if key.kind == "neighbours":
            result.append(
                SideKeys(
                    keys=np.empty((len(table), 0), dtype=np.uint64),
                    valid=keyed.get(index, np.zeros(len(table), dtype=bool)),
                    frame=table,
                    field=key.field,
                )
            )
        elif key.kind == "exact" and key.label in exact:
            result.append(exact[key.label])
        else:
            result.append(
                _side_keys(
                    table,
                    key,
                    num_perm=key.plan.num_perm if key.plan is not None else num_perm,
                    seed=seed,
                    owner=owner,
                    signatures=signatures.get(key.label),
                    texts=texts,
                )
            )
    return result


# ----------------------------------------------------------------------------
# Buckets and pairs


def key_buckets(context: BlockingContext, index: int) -> pair_kernels.Buckets:
    """All buckets of one key (before the size cap).

    Each band is grouped on its own: the band index is part of every band key,
    so no bucket spans two bands, and sorting one band at a time stays in cache.
    """
    left = context.left[index]
    right = context.right[index] if context.right is not None else None
    left_rows = np.flatnonzero(left.valid).astype(np.int64)
    right_rows = (
        np.flatnonzero(right.valid).astype(np.int64) if right is not None else None
    )
    sides = (
        np.concatenate([np.zeros(left_rows.size, bool), np.ones(right_rows.size, bool)])
        if right_rows is not None
        else None
    )
    positions = (
        np.concatenate([left_rows, right_rows]) if right_rows is not None else left_rows
    )
    parts = []
    for band in range(left.keys.shape[1]):
        keys = left.keys[left_rows, band]
        if right is not None:
            keys = np.concatenate([keys, right.keys[right_rows, band]])
        parts.append(pair_kernels.group(keys, positions, sides))
    return pair_kernels.concatenate(parts)


def _cap(
    buckets: pair_kernels.Buckets, max_bucket: int
) -> tuple[pair_kernels.Buckets, pair_kernels.Buckets]:
    """Split buckets into (kept, dropped) by size."""
    small = buckets.sizes <= max_bucket
    return buckets.select(small), buckets.select(~small)


def _bucket_sample(
    context: BlockingContext, index: int, buckets: pair_kernels.Buckets, count: int = 3
) -> list[tuple[int, str]]:
    """(size, example value) of the largest buckets (ties: in key order)."""
    order = np.argsort(-buckets.sizes, kind="stable")[:count]
    samples = []
    for bucket in order:
        start = int(buckets.starts[bucket])
        # The example is the bucket's first record of the left table.
        stop = start + int(
            buckets.sizes[bucket]
            if buckets.left_sizes is None
            else buckets.left_sizes[bucket]
        )
        member = int(buckets.members[start:stop].min())
        samples.append(
            (int(buckets.sizes[bucket]), _sample_text(context.left[index], member))
        )
    return samples


def candidates(
    frame: pd.DataFrame,
    fields: Any,
    /,
    *,
    other: pd.DataFrame | None = None,
    right_on: Any = None,
    threshold: float | None = None,
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    max_pairs: int = 50_000_000,
    collapse_identical: bool = False,
) -> pd.DataFrame:
    """Candidate pairs of records that share at least one blocking key.

    Parameters
    ----------
    frame : DataFrame
        The records (the left table when linking). Index labels must be unique.
    fields : column label, Field, or a list of them
        What to block on. Plain column names let the data decide (see
        :func:`resolve`), and so do :class:`Field` objects left at
        ``blocking="auto"`` (a comparison or weight of their own, the same
        keys); a Field that asks for a key gets exactly that key.
    other : DataFrame, optional
        A second table to link with; without it, ``frame`` is deduplicated.
    right_on : list of column labels, or dict, optional
        The names ``other`` gives the fields' columns, when they differ from
        ``frame``'s (as ``right_on`` of :func:`pandas.merge`): a list with one
        column of ``other`` for each column the fields name (flattened over the
        fields, each column once, in order: a field over two columns takes
        two), or a mapping ``{frame column: other column}`` (columns it leaves
        out keep their name). ``fields`` name ``frame``'s columns. The result
        equals renaming ``other``'s columns first; ``other`` is not modified.
    threshold : float, optional
        Jaccard similarity LSH keys are planned for. By default each LSH key's
        threshold is chosen from the data.
    recall : float
        Least probability that an LSH key finds a pair at its threshold.
    num_perm : int
        Signature length used for LSH keys.
    seed : int
        Seed of the MinHash functions and of the similarity sample.
    max_bucket : int
        Buckets with more records are dropped (and reported with a warning):
        a value shared by that many records does not identify anyone.
    max_pairs : int
        Upper limit on pairs, checked before any pair is built.
    collapse_identical : bool
        When deduplicating, collapse each group of more than
        :data:`lsh_frame.identical.COLLAPSE_ABOVE` identical rows to its
        representative (the row with the smallest label) before blocking,
        and pair every other member with it (``found_by`` ``"identical"``), as
        :func:`lsh_frame.pairs`, :func:`lsh_frame.dedupe` and
        :func:`lsh_frame.drop_duplicates` always do. Off by default: every row
        is keyed on its own, and buckets over ``max_bucket`` are dropped.

    Returns
    -------
    DataFrame
        One row per candidate pair, sorted: ``left`` and ``right`` hold index
        labels (dedupe: each unordered pair once, ``left`` before ``right`` in
        the frame's order, no self pairs; link: ``left`` from ``frame``,
        ``right`` from ``other``); ``found_by`` (categorical) names the keys
        that found the pair, joined by ``|``.

    Raises
    ------
    TooManyPairsError
        When the keys would give more than ``max_pairs`` pairs.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"name": ["john smith", "jon smith", "mary jones"],
    ...                    "dob": ["1980-01-02", "1980-01-02", "1975-05-06"]})
    >>> fields = [Field("name", threshold=0.3), Field("dob", blocking="exact")]
    >>> pairs = candidates(df, fields)
    >>> pairs[["left", "right"]].values.tolist(), pairs["found_by"].tolist()
    ([[0, 1]], ['name|dob'])

    Linking a table whose columns are named differently:

    >>> web = pd.DataFrame({"full_name": ["john smyth"], "birth": ["1980-01-02"]},
    ...                    index=["w1"])
    >>> linked = candidates(df, fields, other=web, right_on=["full_name", "birth"])
    >>> linked[["left", "right"]].values.tolist()
    [[0, 'w1'], [1, 'w1']]
    """
    owner = "candidates"
    max_bucket = check_int(max_bucket, "max_bucket", owner, minimum=2)
    max_pairs = check_int(max_pairs, "max_pairs", owner, minimum=0)
    collapse_identical = check_bool(collapse_identical, "collapse_identical", owner)
    other = other_table(frame, fields, other, right_on, owner)
    collapsed = collapse(frame, fields, other, owner) if collapse_identical else None
    context = resolve(
        frame if collapsed is None else collapsed.frame,
        fields,
        other=other,
        threshold=threshold,
        recall=recall,
        num_perm=num_perm,
        seed=seed,
        owner=owner,
        max_pairs=max_pairs,
    )
    return pairs_from_context(
        context, max_bucket=max_bucket, max_pairs=max_pairs, collapsed=collapsed
    )


@dataclass(frozen=True)
class Collapsed:
    """A frame with identical rows collapsed: blocking sees representatives only."""

    rows: IdenticalRows
    index: pd.Index  # the whole frame's labels
    frame: pd.DataFrame  # the representatives' rows


def collapse(
    frame: pd.DataFrame, fields: Any, other: pd.DataFrame | None, owner: str
) -> Collapsed | None:
    """Group identical rows when deduplicating (None: nothing to collapse).

    Each group is represented by its row with the smallest index label (so
    the pairs do not depend on the rows' order). Linking collapses nothing:
    identical rows of one table are not paired with each other there. Fields
    whose columns are missing are left for :func:`resolve` to report.
    """
    if other is None and isinstance(frame, pd.DataFrame) and len(frame) > 1:
        columns = field_columns(fields, owner)
        if all(column in frame.columns for column in columns):
            rows = group_rows(*row_hashes(frame, columns), label_rank(frame.index))
            if rows.collapsed:
                representatives = rows.representatives
                return Collapsed(rows, frame.index, frame.iloc[representatives])
    return None


def label_rank(index: pd.Index) -> npt.NDArray[np.int64]:
    """Return each row's position in label order (row order if unsortable)."""
    if index.is_monotonic_increasing:
        return np.arange(len(index), dtype=np.int64)
    try:
        order = index.argsort(kind="stable")
    except TypeError:  # labels of mixed types have no order: keep the rows'
        return np.arange(len(index), dtype=np.int64)
    rank = np.empty(len(index), dtype=np.int64)
    rank[order] = np.arange(len(index), dtype=np.int64)
    return rank


def identical_codes(
    rows: IdenticalRows, n_right: int, key_index: int
) -> npt.NDArray[np.int64]:
    """Coded pairs (representative, member) of the ``"identical"`` key."""
    earlier, later = rows.pairs()
    code = earlier * np.int64(n_right) + later
    return (code << np.int64(_KEY_BITS)) | np.int64(key_index)


def check_pair_count(
    keys: list[BlockingKey], counts: list[int], max_pairs: int, identical: int = 0
) -> None:
    """Raise :class:`TooManyPairsError` if the keys' pairs exceed ``max_pairs``.

    ``identical`` counts the pairs joining identical rows to their
    representative.
    """
    total = sum(counts) + identical
    if total > max_pairs:
        detail = ", ".join(
            f"'{key.label}' {count:,}" for key, count in zip(keys, counts, strict=True)
        )
        if identical:
            detail += f", '{IDENTICAL}' {identical:,}"
        raise TooManyPairsError(
            f"Blocking would build {total:,} candidate pairs (before removing pairs "
            f"found by several keys), more than max_pairs={max_pairs:,}: {detail}. "
            "Raise the threshold, block on more specific fields, lower max_bucket, "
            "or raise max_pairs if the memory allows (building pairs peaks at about "
            "150 bytes per pair)."
        )


def pairs_from_context(
    context: BlockingContext,
    *,
    max_bucket: int,
    max_pairs: int,
    collapsed: Collapsed | None = None,
) -> pd.DataFrame:
    """Build, unite and label the candidate pairs of resolved keys.

    With ``collapsed``, the context holds the representatives: their pairs
    are mapped back to the whole frame and each other member of a group is
    paired with its representative (found by ``"identical"``).
    """
    kept: list[pair_kernels.Buckets | None] = []
    counts: list[int] = []
    for index, key in enumerate(context.keys):
        if key.kind == "neighbours":
            kept.append(None)
            counts.append(int(context.neighbours[index].left.size))
            continue
        _progress.step(f"grouping {key.label}")
        buckets, dropped = _cap(key_buckets(context, index), max_bucket)
        if dropped.sizes.size:
            lost = int(dropped.pair_counts().sum())
            samples = ", ".join(
                f"{size:,} × {value!r}"
                for size, value in _bucket_sample(context, index, dropped)
            )
            warnings.warn(
                f"Key '{key.label}': {dropped.sizes.size:,} bucket(s) with more than "
                f"{max_bucket:,} records were dropped ({lost:,} pairs; "
                f"largest: {samples}). Raise max_bucket or block on more "
                "specific fields.",
                stacklevel=3,
            )
        kept.append(buckets)
        counts.append(int(buckets.pair_counts().sum()))
    identical = collapsed.rows.collapsed if collapsed is not None else 0
    check_pair_count(context.keys, counts, max_pairs, identical)
    total = sum(counts) + identical
    n_right = len(
        context.right_index if context.right_index is not None else context.left_index
    )
    # Positions in the blocked frame → positions in the whole frame.
    whole: npt.NDArray[np.int64] | None = None
    if collapsed is not None:
        whole = collapsed.rows.representatives
        n_right = len(collapsed.index)
    # Each pair is coded as left * n_right + right, shifted by _KEY_BITS to carry
    # the index of the key that found it: one value sort then brings a pair's
    # keys together (value sorts are much faster than argsorts).
    _progress.step(f"building {total:,} pairs", total=total)
    coded_parts = []
    for index, maybe_buckets in enumerate(kept):
        if maybe_buckets is None:
            found = context.neighbours[index]
            _progress.advance(counts[index])
            # Already distinct and sorted by this code (mapping keeps the order).
            if whole is None:
                code = found.left * np.int64(n_right) + found.right
            else:
                code = whole[found.left] * np.int64(n_right) + whole[found.right]
            coded_parts.append((code << np.int64(_KEY_BITS)) | np.int64(index))
            continue
        # Emit in slices so the temporaries stay small; only the 8-byte codes of
        # the pairs accumulate.
        slices = []
        for chunk in maybe_buckets.chunks(_EMIT_PAIRS):
            left, right = pair_kernels.emit_pairs(chunk)
            _progress.advance(left.size)
            if whole is not None:
                left, right = whole[left], whole[right]
            slices.append(pair_kernels.sorted_unique(left * np.int64(n_right) + right))
        code = (
            pair_kernels.sorted_unique(np.concatenate(slices))
            if len(slices) > 1
            else slices[0]
        )
        coded_parts.append((code << np.int64(_KEY_BITS)) | np.int64(index))
    labels = [key.label for key in context.keys]
    if collapsed is not None:
        coded_parts.append(identical_codes(collapsed.rows, n_right, len(labels)))
        _progress.advance(identical)
        labels.append(IDENTICAL)
    if len(coded_parts) == 1:
        coded = coded_parts[0]  # already sorted and distinct
    elif coded_parts:
        coded = np.sort(np.concatenate(coded_parts))
    else:
        coded = np.empty(0, np.int64)
    codes = coded >> np.int64(_KEY_BITS)
    bits = np.left_shift(np.uint64(1), (coded & np.int64(63)).astype(np.uint64))
    first = np.ones(codes.size, dtype=bool)
    first[1:] = codes[1:] != codes[:-1]
    starts = np.flatnonzero(first)
    masks = np.bitwise_or.reduceat(bits, starts) if starts.size else bits[:0]
    left_positions, right_positions = np.divmod(codes[starts], np.int64(n_right))
    left_index = context.left_index if collapsed is None else collapsed.index
    right_index = context.right_index if context.right_index is not None else left_index
    pairs = pd.DataFrame(
        {
            "left": left_index.take(left_positions),
            "right": right_index.take(right_positions),
            "found_by": _found_by(masks, labels),
        }
    )
    pairs.attrs["lsh_frame"] = {"link": context.link}
    return pairs


def _found_by(
    masks: npt.NDArray[np.uint64],
    labels: list[str],
    present: npt.NDArray[np.uint64] | None = None,
) -> pd.Categorical:
    """Categorical naming the keys of each pair, e.g. ``"record|dob"``.

    A categorical rather than a bitmask column: readable, compact, and it keeps
    working when pairs are written to Parquet or concatenated. Its categories
    are the combinations ``present`` (by default, those in ``masks``) in
    ascending order of their bits.
    """
    if present is None:
        if len(labels) <= 16:
            seen = np.bincount(masks.astype(np.int64), minlength=1)
            present = np.flatnonzero(seen).astype(np.uint64)
        else:
            present = pair_kernels.sorted_unique(masks)
    codes = np.searchsorted(present, masks).astype(np.int32)
    names = [
        "|".join(label for bit, label in enumerate(labels) if int(mask) >> bit & 1)
        for mask in present
    ]
    return pd.Categorical.from_codes(codes, categories=names)  # type: ignore[call-overload]


# ----------------------------------------------------------------------------
# The blocking report


@dataclass
class BlockingReport:
    """What each blocking key costs and finds, computed without building pairs.

    Attributes
    ----------
    table : DataFrame
        One row per key: how it is made, records keyed and without a key,
        buckets that yield pairs, the largest bucket, buckets dropped for size,
        pairs, cumulative pairs and, with true pairs, pairs completeness.
    decisions : list of str
        What was decided for each column and why.
    largest_buckets : dict
        Per key, the largest buckets as ``(size, example value)``.
    """

    table: pd.DataFrame
    decisions: list[str]
    largest_buckets: dict[str, list[tuple[int, str]]]

    def __str__(self) -> str:
        lines = ["Blocking report", "", "Decisions:"]
        lines += [f"  - {decision}" for decision in self.decisions]
        lines += ["", self.table.to_string(index=False), "", "Largest buckets:"]
        for label, buckets in self.largest_buckets.items():
            shown = "; ".join(f"{size:,} × {value!r}" for size, value in buckets)
            lines.append(f"  {label}: {shown or 'none'}")
        lines += [
            "",
            "pairs count each bucket's pairs; a pair found by several LSH bands or",
            "keys is counted each time, so pairs and cumulative_pairs are upper",
            "bounds on the distinct candidates.",
        ]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        decisions = "".join(f"<li>{decision}</li>" for decision in self.decisions)
        return f"<ul>{decisions}</ul>{self.table.to_html(index=False)}"


def _true_pair_positions(
    true_pairs: Any, context: BlockingContext, owner: str
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Positions of the true pairs' records in the left and right tables."""
    if isinstance(true_pairs, pd.MultiIndex):
        left_labels = true_pairs.get_level_values(0)
        right_labels = true_pairs.get_level_values(1)
    elif isinstance(true_pairs, pd.DataFrame) and true_pairs.shape[1] >= 2:
        columns = (
            ["left", "right"]
            if {"left", "right"} <= set(true_pairs.columns)
            else list(true_pairs.columns[:2])
        )
        left_labels = pd.Index(true_pairs[columns[0]])
        right_labels = pd.Index(true_pairs[columns[1]])
    else:
        raise ConfigTypeError(
            f"The 'true_pairs' parameter of {owner} must be a DataFrame with columns "
            "left and right (or two columns of labels), or a two-level MultiIndex. "
            f"Got {type(true_pairs).__name__} instead."
        )
    right_index = (
        context.right_index if context.right_index is not None else context.left_index
    )
    left_positions = context.left_index.get_indexer(left_labels)
    right_positions = right_index.get_indexer(right_labels)
    unknown = (left_positions < 0) | (right_positions < 0)
    if unknown.any():
        first = int(np.flatnonzero(unknown)[0])
        raise ColumnError(
            f"{int(unknown.sum()):,} true pairs name labels that are not in the "
            f"frame{'s' if context.link else ''}, for example "
            f"({left_labels[first]!r}, {right_labels[first]!r}). Pass labels of the "
            "frame's index (left) and of other's index (right)."
        )
    return left_positions.astype(np.int64), right_positions.astype(np.int64)


def _bucket_counts(
    context: BlockingContext, index: int
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.int64] | None]:
    """Keys and sizes of the buckets that yield pairs, from value sorts only.

    Returns ``(keys, sizes, left_sizes)``; ``left_sizes`` only when linking.
    No member lists are built, which is what makes the report cheap.
    """
    left = context.left[index]
    right = context.right[index] if context.right is not None else None
    keys, sizes, lefts = [], [], []
    for band in range(left.keys.shape[1]):
        left_keys, left_counts = pair_kernels.sorted_unique(
            left.keys[left.valid, band], return_counts=True
        )
        if right is None:
            shared = left_counts > 1
            keys.append(left_keys[shared])
            sizes.append(left_counts[shared])
            continue
        right_keys, right_counts = pair_kernels.sorted_unique(
            right.keys[right.valid, band], return_counts=True
        )
        common, at_left, at_right = np.intersect1d(
            left_keys, right_keys, assume_unique=True, return_indices=True
        )
        keys.append(common)
        sizes.append(left_counts[at_left] + right_counts[at_right])
        lefts.append(left_counts[at_left])
    return (
        np.concatenate(keys),
        np.concatenate(sizes),
        np.concatenate(lefts) if right is not None else None,
    )


def _pairs_found(
    context: BlockingContext,
    index: int,
    dropped_keys: npt.NDArray[np.uint64],
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
) -> npt.NDArray[np.bool_]:
    """Which of the given record pairs share a kept bucket of one key."""
    left_side = context.left[index]
    right_side = context.right[index] if context.right is not None else left_side
    left_keys, right_keys = left_side.keys[left], right_side.keys[right]
    shared = (left_keys == right_keys) & ~np.isin(left_keys, dropped_keys)
    return shared.any(axis=1) & left_side.valid[left] & right_side.valid[right]


def _largest_samples(
    context: BlockingContext,
    index: int,
    keys: npt.NDArray[np.uint64],
    sizes: npt.NDArray[np.int64],
    count: int = 3,
) -> list[tuple[int, str]]:
    """(size, example value) of the largest buckets, found by their keys."""
    side = context.left[index]
    samples = []
    for bucket in np.argsort(-sizes, kind="stable")[:count]:
        member = int(np.flatnonzero((side.keys == keys[bucket]).any(axis=1))[0])
        samples.append((int(sizes[bucket]), _sample_text(side, member)))
    return samples


def report_row(
    key: BlockingKey,
    keyed: int,
    total: int,
    sizes: npt.NDArray[np.int64],
    lefts: npt.NDArray[np.int64] | None,
    max_bucket: int,
    cumulative: int,
) -> tuple[dict[str, Any], npt.NDArray[np.bool_]]:
    """One key's row of the report from its bucket sizes; and which are kept."""
    counts = sizes * (sizes - 1) // 2 if lefts is None else lefts * (sizes - lefts)
    kept = sizes <= max_bucket
    pairs = int(counts[kept].sum())
    row = {
        "key": key.label,
        "how": key.describe(),
        "records_keyed": keyed,
        "records_without_key": total - keyed,
        "buckets": int(kept.sum()),
        "largest_bucket": int(sizes[kept].max()) if kept.any() else 0,
        "dropped_buckets": int((~kept).sum()),
        "pairs": pairs,
        "cumulative_pairs": cumulative + pairs,
    }
    return row, kept


def neighbours_row(
    key: BlockingKey, found: NeighbourPairs, keyed: int, total: int, cumulative: int
) -> dict[str, Any]:
    """Make a neighbours key's row of the report: its distinct pairs, no buckets.

    Its pairs are known exactly (they are bounded by the records' budgets), so
    they are not an upper bound like the bucket keys' counts.
    """
    pairs = int(found.left.size)
    return {
        "key": key.label,
        "how": key.describe(),
        "records_keyed": keyed,
        "records_without_key": total - keyed,
        "buckets": 0,
        "largest_bucket": int(found.kept_per_record.max(initial=0)),
        "dropped_buckets": 0,
        "pairs": pairs,
        "cumulative_pairs": cumulative + pairs,
    }


def neighbours_report_row(
    context: BlockingContext,
    index: int,
    keyed: int,
    total: int,
    cumulative: int,
    truth: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None,
    found_so_far: npt.NDArray[np.bool_],
) -> dict[str, Any]:
    """Make a neighbours key's report row; updates ``found_so_far`` in place."""
    row = neighbours_row(
        context.keys[index], context.neighbours[index], keyed, total, cumulative
    )
    if truth is not None:
        found = _neighbours_found(context, index, *truth)
        found_so_far |= found
        add_completeness(row, found, found_so_far)
    return row


def _neighbours_found(
    context: BlockingContext,
    index: int,
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
) -> npt.NDArray[np.bool_]:
    """Which of the given record pairs a neighbours key found."""
    found = context.neighbours[index]
    n_right = len(
        context.right_index if context.right_index is not None else context.left_index
    )
    if not context.link:
        left, right = np.minimum(left, right), np.maximum(left, right)
    codes = found.left * np.int64(n_right) + found.right
    return np.isin(left * np.int64(n_right) + right, codes)


def add_completeness(
    row: dict[str, Any],
    found: npt.NDArray[np.bool_],
    found_so_far: npt.NDArray[np.bool_],
) -> None:
    """Add a key's share of the true pairs (alone and with the keys before)."""
    row["pairs_completeness"] = float(found.mean()) if found.size else float("nan")
    row["cumulative_completeness"] = (
        float(found_so_far.mean()) if found.size else float("nan")
    )


def blocking_report(
    frame: pd.DataFrame,
    fields: Any,
    /,
    *,
    other: pd.DataFrame | None = None,
    right_on: Any = None,
    threshold: float | None = None,
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    max_bucket: int = 1_000,
    true_pairs: Any = None,
) -> BlockingReport:
    """Report what each blocking key would cost and find, before any pair is built.

    Takes the arguments of :func:`candidates` (but ``max_pairs``: no pair is
    built) plus ``true_pairs``, and computes keys and bucket sizes only, which
    is much faster than building the pairs.

    Parameters
    ----------
    other, right_on
        The right table when linking, and its names of the fields' columns
        when they differ (see :func:`candidates`).
    true_pairs : DataFrame or MultiIndex, optional
        Known matching pairs as labels (columns ``left`` and ``right``, e.g.
        from :func:`lsh_frame.datasets.true_pairs`). Adds each key's pairs
        completeness (share of true pairs it finds) and the cumulative share.

    Returns
    -------
    BlockingReport
        ``report.table`` is the per-key frame; ``print(report)`` shows it with
        the decisions and the largest buckets.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"dob": ["1990-01-01", "1990-01-01", "1985-02-03", None]})
    >>> report = blocking_report(df, [Field("dob", blocking="exact")])
    >>> report.table[["key", "records_keyed", "records_without_key", "pairs"]]
       key  records_keyed  records_without_key  pairs
    0  dob              3                    1      1
    """
    owner = "blocking_report"
    max_bucket = check_int(max_bucket, "max_bucket", owner, minimum=2)
    other = other_table(frame, fields, other, right_on, owner)
    context = resolve(
        frame,
        fields,
        other=other,
        threshold=threshold,
        recall=recall,
        num_perm=num_perm,
        seed=seed,
        owner=owner,
    )
    truth = (
        _true_pair_positions(true_pairs, context, owner)
        if true_pairs is not None
        else None
    )
    found_so_far = np.zeros(0 if truth is None else truth[0].size, dtype=bool)
    rows: list[dict[str, Any]] = []
    largest: dict[str, list[tuple[int, str]]] = {}
    cumulative = 0
    for index, key in enumerate(context.keys):
        keyed = int(context.left[index].valid.sum())
        total = len(context.left_index)
        if context.right is not None:
            keyed += int(context.right[index].valid.sum())
            total += len(context.right[index].valid)
        if key.kind == "neighbours":
            row = neighbours_report_row(
                context, index, keyed, total, cumulative, truth, found_so_far
            )
            cumulative = row["cumulative_pairs"]
            rows.append(row)
            largest[key.label] = []
            continue
        keys, sizes, lefts = _bucket_counts(context, index)
        row, kept = report_row(key, keyed, total, sizes, lefts, max_bucket, cumulative)
        cumulative = row["cumulative_pairs"]
        if truth is not None:
            found = _pairs_found(context, index, keys[~kept], *truth)
            found_so_far |= found
            add_completeness(row, found, found_so_far)
        rows.append(row)
        largest[key.label] = _largest_samples(context, index, keys, sizes)
    return BlockingReport(
        table=pd.DataFrame(rows), decisions=context.decisions, largest_buckets=largest
    )
