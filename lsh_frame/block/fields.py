"""What a field is, and the columns the fields of a call name.

A :class:`Field` is one or more columns with how to block and compare them;
plain column names become fields whose defaults the data decides
(:mod:`lsh_frame.block.defaults`). :class:`BlockingKey` is one decided key,
:class:`BlockingContext` all keys of a call with each table's key values.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Hashable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame._validation import (
    check_choice,
    check_columns,
    check_frame,
    check_int,
    present,
    refuse_set,
    right_columns,
)
from lsh_frame.config import Comparison, ShingleConfig
from lsh_frame.errors import ConfigError
from lsh_frame.sketch.minhash_arrow import MinHashType
from lsh_frame.sketch.vectors import VECTOR_KINDS

if TYPE_CHECKING:
    from lsh_frame.block.neighbours import NeighbourPairs
    from lsh_frame.config import MinHashConfig, ShingleKind
    from lsh_frame.sketch.banding import LshPlan

__all__ = ["Field"]


BlockingKind = Literal["lsh", "exact", "neighbours", "hamming", "cosine"]

#: What a Field may ask for: a kind of key, or "auto" (the data decides).
FieldBlocking = Literal["auto", "lsh", "exact", "neighbours", "hamming", "cosine"]

#: Field parameters that only plan a key of the field's own (MinHash LSH):
#: giving one with blocking="auto" asks for that key.
_LSH_PARAMETERS = ("threshold", "recall", "bands", "rows", "k")


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
        :mod:`lsh_frame.block.neighbours`); ``"hamming"``: bit sampling on one
        column of fingerprints or bit vectors, ``threshold`` the share of
        equal bits; ``"cosine"``: random hyperplanes on one column of float
        vectors, ``threshold`` the cosine similarity (see
        :mod:`lsh_frame.sketch`); ``None``: compared but not blocked on.
    threshold : float, optional
        Jaccard similarity this field's LSH key is planned for; the call's
        ``threshold`` when omitted.
    recall : float, optional
        Least probability of finding a pair at the threshold; the call's
        ``recall`` when omitted.
    compare : str
        How pairs are scored on this field (see :func:`lsh_frame.score`):
        ``"auto"`` (``"date"`` or ``"number"`` for date columns, float columns
        and text that is mostly dates or marked numbers; ``"digits"`` for
        codes of digits such as phone numbers; else ``"tfidf"``
        when the median value holds at least 5 words, else
        ``"token_sort_ratio"`` when most values hold several words, else
        ``"ratio"``), ``"number"`` (relative difference of the values read as
        numbers), ``"date"`` (days apart, swapped day and month, never below
        ``"ratio"``; the reading rules and formulas are in docs/scoring.md),
        ``"tfidf"`` (cosine of TF-IDF word vectors, see
        :mod:`lsh_frame.compare.tfidf`), ``"ratio"``, ``"token_sort_ratio"``,
        ``"token_set_ratio"``, ``"partial_ratio"``, ``"jaro_winkler"``,
        ``"levenshtein"``, ``"digits"`` (``"ratio"`` of the values' digits
        without leading zeros: phone numbers however written), ``"jaccard"``
        (of the shingle sets), ``"exact"``,
        ``"hamming"`` (``1 − d / D`` of bit vectors) or ``"cosine"`` (of float
        vectors, below 0 scored 0); ``"auto"`` on a ``"hamming"`` or
        ``"cosine"`` key compares the same way. The rapidfuzz comparisons see
        at most the first ``lsh_frame.compare.text.FUZZY_MAX_CHARS`` (4,000)
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


def _stored_config(frame: pd.DataFrame, spec: Field) -> MinHashConfig | None:
    """Return the configuration of a field naming one signature column, or None."""
    # A missing column is no signature column; the caller's column check says
    # it is missing.
    if len(spec.columns) != 1 or spec.columns[0] not in frame.columns:
        return None
    arrow_type = getattr(frame[spec.columns[0]].dtype, "pyarrow_dtype", None)
    return arrow_type.config if isinstance(arrow_type, MinHashType) else None


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
    frame = check_frame(frame, "frame", owner)
    if other is not None:
        other = check_frame(other, "other", owner)
    pairs = mapped_columns(frame, fields, other, right_on, owner)
    return other if pairs is None or other is None else present(other, pairs)
