"""Normalise a text column and cut it into hashed shingles.

Normalisation runs in pyarrow.compute over the whole column; shingling runs in
the numpy kernels over the concatenated code points of a chunk of rows. Nothing
loops over rows in Python.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lsh_frame._kernels import hashing, text
from lsh_frame.config import ShingleConfig
from lsh_frame.text.typed import canonical_text

__all__ = [
    "ColumnTexts",
    "TokenSets",
    "codepoints",
    "column_text",
    "normalize",
    "normalized_codepoints",
    "shingles",
    "text_array",
    "tokenize",
]

# Python's str.isspace() set, as an RE2 class, so collapsing agrees with split().
_WHITESPACE_RUN = r"[\t\n\x{0B}\f\r\x{1C}-\x{1F}\x{85}\p{Z}]+"
#: The same classes over ASCII text (tested equal on every ASCII character):
#: a Unicode class costs RE2 about a millisecond to compile at every call,
#: which for a batch of a few new records is most of the work.
PUNCTUATION_CHARACTER = r"[\p{P}\p{S}]"
ASCII_PUNCTUATION_CHARACTER = r"[!-/:-@\[-`{-~]"
NOT_ALPHANUMERIC = r"[^\p{L}\p{N}]"
ASCII_NOT_ALPHANUMERIC = r"[^0-9A-Za-z]"


def is_ascii(array: pa.Array) -> bool:
    """Tell whether every value of a string array is ASCII (nulls aside)."""
    return len(array) == 0 or bool(pc.all(pc.string_is_ascii(array)).as_py())


def character_class(array: pa.Array, unicode: str, ascii: str) -> str:
    """Return the ASCII form of a character class for ASCII text (cheaper)."""
    return ascii if is_ascii(array) else unicode


_COMBINING_MARKS = r"\p{Mn}+"
_EMPTY = pa.scalar("", pa.large_string())
_SPACE = pa.scalar(" ", pa.large_string())


@dataclass(frozen=True)
class TokenSets:
    """Hashed shingles of a batch of records in CSR form.

    Record ``i`` owns ``hashes[offsets[i]:offsets[i + 1]]`` (in text order,
    repeats kept); ``valid[i]`` is False where the input was null.
    """

    hashes: npt.NDArray[np.uint64]
    offsets: npt.NDArray[np.int64]
    valid: npt.NDArray[np.bool_]

    @property
    def counts(self) -> npt.NDArray[np.int64]:
        """Number of shingles per record."""
        return np.diff(self.offsets)


def text_array(values: pd.Series, *, owner: str) -> pa.Array:
    """Return a column's text as one ``large_string`` Arrow array, nulls kept.

    Text columns pass through; numbers, dates, durations, booleans and
    categoricals become their canonical text (``1999.0`` → ``"1999"``, a
    midnight date-time → ``"1860-09-24"``, ``True`` → ``"true"``), with
    missing values kept missing. See :mod:`lsh_frame.text.typed`.

    Raises
    ------
    ColumnTypeError
        If the column holds values with no text form (lists, dicts, bytes).
    """
    return canonical_text(values, owner=owner)


class ColumnTexts:
    """The canonical text of a frame's columns, each converted once, when first read.

    A batch of new records goes through stages (keys, neighbours, scores)
    that each read the same columns; sharing one of these (``texts=``) spares
    converting them again: about 10 us a column of a few rows, some thirty
    times a query of an index.
    """

    def __init__(self, frame: pd.DataFrame, *, owner: str) -> None:
        self.frame = frame
        self._owner = owner
        self._texts: dict[Hashable, pa.Array] = {}

    def __getitem__(self, column: Hashable) -> pa.Array:
        """Return the column's text (:func:`text_array`)."""
        text = self._texts.get(column)
        if text is None:
            text = text_array(self.frame[column], owner=self._owner)
            self._texts[column] = text
        return text


def column_text(
    frame: pd.DataFrame,
    column: Hashable,
    *,
    owner: str,
    texts: ColumnTexts | None = None,
) -> pa.Array:
    """Return a column's text (:func:`text_array`): from ``texts`` when of ``frame``."""
    if texts is not None and texts.frame is frame:
        return texts[column]
    return text_array(frame[column], owner=owner)


#: Values processed in one pass over several columns: the columns of a small
#: frame (a batch of new records) go together, where the passes cost more than
#: the values; each column of a large frame goes on its own.
SMALL_BATCH_VALUES = 1 << 16


def normalize(
    array: pa.Array, config: ShingleConfig, *, whitespace: bool = True
) -> pa.Array:
    """Apply the configuration's text normalisation, vectorised.

    Order: Unicode normal form, accent stripping, lower-casing, punctuation
    removal, whitespace collapsing. Nulls stay null. With ``whitespace=False``
    the last step is left out (shingling does it faster on code points).

    Examples
    --------
    >>> import pyarrow as pa
    >>> cfg = ShingleConfig(strip_accents=True, strip_punctuation=True)
    >>> normalize(pa.array(["  José  O'Brien "]), cfg).to_pylist()
    ['jose obrien']
    """
    ascii_only = is_ascii(array)
    if not ascii_only:
        if config.unicode_form is not None:
            array = pc.utf8_normalize(array, form=config.unicode_form)
        if config.strip_accents:
            array = pc.utf8_normalize(array, form="NFD")
            array = pc.replace_substring_regex(array, _COMBINING_MARKS, "")
            array = pc.utf8_normalize(array, form="NFC")
    if config.lowercase:
        array = pc.ascii_lower(array) if ascii_only else pc.utf8_lower(array)
    if config.strip_punctuation:
        punctuation = (
            ASCII_PUNCTUATION_CHARACTER if ascii_only else PUNCTUATION_CHARACTER
        )
        array = pc.replace_substring_regex(array, punctuation + "+", "")
    if (
        config.collapse_whitespace
        and whitespace
        and (not ascii_only or _ascii_needs_collapse(array))
    ):
        array = pc.replace_substring_regex(array, _WHITESPACE_RUN, " ")
        array = pc.utf8_trim(array, characters=" ")
    return array


#: ASCII whitespace other than the space itself (what str.isspace() accepts).
_OTHER_ASCII_WHITESPACE = np.array([9, 10, 11, 12, 13, 28, 29, 30, 31], np.uint8)


def _ascii_needs_collapse(array: pa.Array) -> bool:
    """Tell whether ASCII text has whitespace to collapse or trim.

    A scan of the bytes, much cheaper than the regular expression it spares
    when (as usual) every value is already single-spaced and trimmed.
    """
    array = pc.fill_null(array, "").cast(pa.large_string())
    _, offsets_buffer, data_buffer = array.buffers()
    if data_buffer is None:
        return False
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64)
    offsets = offsets[array.offset : array.offset + len(array) + 1]
    data = np.frombuffer(data_buffer, dtype=np.uint8)[offsets[0] : offsets[-1]]
    offsets = offsets - offsets[0]
    space = data == 32
    if np.isin(data, _OTHER_ASCII_WHITESPACE).any() or (space[1:] & space[:-1]).any():
        return True
    starts, ends = offsets[:-1], offsets[1:]
    filled = ends > starts
    return bool(space[starts[filled]].any() or space[ends[filled] - 1].any())


def codepoints(
    array: pa.Array, *, ascii_bytes: bool = False
) -> tuple[npt.NDArray[Any], npt.NDArray[np.int64]]:
    """Code points and offsets of a ``large_string`` array (nulls as empty).

    With ``ascii_bytes=True``, ASCII text comes back as uint8 bytes (see
    :func:`lsh_frame._kernels.text.utf8_to_codepoints`).
    """
    array = pc.fill_null(array, "").cast(pa.large_string())
    _, offsets_buffer, data_buffer = array.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int64)
    offsets = offsets[array.offset : array.offset + len(array) + 1]
    data = (
        np.frombuffer(data_buffer, dtype=np.uint8)
        if data_buffer is not None
        else np.empty(0, dtype=np.uint8)
    )
    return text.utf8_to_codepoints(data, offsets, ascii_bytes=ascii_bytes)


def normalized_codepoints(
    array: pa.Array, config: ShingleConfig
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    """Normalise a ``large_string`` array and decode it to code points and offsets.

    Whitespace is collapsed on the code points (faster than a regular
    expression, and the same result as :func:`normalize`).
    """
    points, offsets = codepoints(normalize(array, config, whitespace=False))
    if config.collapse_whitespace:
        points, offsets = text.collapse_whitespace(points, offsets)
    return points, offsets


def _stopword_hashes(config: ShingleConfig) -> npt.NDArray[np.uint64]:
    words = pa.array(config.resolved_stopwords, pa.large_string())
    points, offsets = normalized_codepoints(words, config)
    starts, ends = offsets[:-1], offsets[1:]
    keep = ends > starts
    return np.unique(hashing.word_hashes(points, starts[keep], ends[keep]))


def tokenize(
    array: pa.Array,
    config: ShingleConfig,
    *,
    salt: int = 0,
    normalized: bool = False,
) -> TokenSets:
    """Normalise and shingle a ``large_string`` array into :class:`TokenSets`.

    ``salt`` separates token spaces, so the same text in two columns of a
    record-level field hashes differently. ``normalized=True`` skips the
    normalisation for text that already went through :func:`normalize` with
    the same configuration.
    """
    valid = ~np.asarray(array.is_null().to_numpy(zero_copy_only=False), dtype=bool)
    assert config.k is not None
    tag = hashing.token_tag(config.kind, config.k, salt)
    if config.kind == "char":
        if normalized:
            points, offsets = codepoints(array)
        else:
            points, offsets = normalized_codepoints(array, config)
        hashes, token_offsets = hashing.char_shingles(points, offsets, config.k, tag)
    else:
        # Words are the same with whitespace collapsed or not, so it is not;
        # a space after every record keeps words from running into the next.
        if not normalized:
            array = normalize(array, config, whitespace=False)
        array = pc.binary_join_element_wise(
            array.cast(pa.large_string()), _EMPTY, _SPACE
        )
        points, offsets = codepoints(array, ascii_bytes=True)
        stopwords = _stopword_hashes(config) if config.kind == "stopword" else None
        hashes, token_offsets = hashing.word_shingles(
            points, offsets, config.k, tag, stopwords, separated=True
        )
    return TokenSets(hashes=hashes, offsets=token_offsets, valid=valid)


def shingles(
    values: pd.Series,
    /,
    *,
    kind: str = "char",
    k: int | None = None,
    **normalization: Any,
) -> pd.Series:
    """Return each row's set of shingle hashes as an Arrow list column.

    Parameters
    ----------
    values : Series of str
        Text; missing values give a missing set.
    kind : {"char", "word", "stopword"}
        See :class:`~lsh_frame.ShingleConfig`.
    k : int, optional
        Shingle length; the kind's default when omitted.
    **normalization
        ``lowercase``, ``unicode_form``, ``collapse_whitespace``,
        ``strip_punctuation``, ``strip_accents``, ``stopwords`` as in
        :class:`~lsh_frame.ShingleConfig`.

    Returns
    -------
    Series
        dtype ``list<uint64>[pyarrow]``, on the input's index: the sorted,
        distinct 64-bit hashes of each row's shingles. Rows shorter than one
        shingle give an empty list; missing values give a missing list.

    Examples
    --------
    >>> import pandas as pd
    >>> sets = shingles(pd.Series(["abcd", "ab", None]), k=3)
    >>> sets.list.len().tolist()
    [2, 0, <NA>]
    """
    config = ShingleConfig(kind=kind, k=k, **normalization)  # type: ignore[arg-type]
    tokens = tokenize(text_array(values, owner="shingles"), config)
    counts = tokens.counts
    records = np.repeat(np.arange(counts.size), counts)
    order = np.lexsort((tokens.hashes, records))
    hashes, records = tokens.hashes[order], records[order]
    first = np.ones(hashes.size, dtype=bool)
    first[1:] = (hashes[1:] != hashes[:-1]) | (records[1:] != records[:-1])
    hashes, records = hashes[first], records[first]
    offsets = np.concatenate(
        [[0], np.cumsum(np.bincount(records, minlength=counts.size))]
    ).astype(np.int64)
    mask = pa.array(~tokens.valid) if not tokens.valid.all() else None
    lists = pa.LargeListArray.from_arrays(
        pa.array(offsets), pa.array(hashes, pa.uint64()), mask=mask
    )
    name = None if values.name is None else f"{values.name}__shingles"
    return pd.Series(
        pd.arrays.ArrowExtensionArray(lists), index=values.index, name=name
    )
