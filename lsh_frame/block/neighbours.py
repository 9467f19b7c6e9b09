"""The neighbour key: each record's most similar records, a budget per record.

A global similarity threshold cannot serve every table: product titles,
citations written in different styles and people whose fields are spread over
columns have true pairs at low shingle Jaccard, and a threshold low enough to
find them floods the candidates. This key instead gives each record its own
budget: its ``k`` most similar records under an IDF-weighted token cosine
(rare tokens such as model numbers and uncommon surnames weigh most), with
``k`` read off the record's own similarity profile.

Tokens of a record, from every column of the field:

- its words (text normalised, punctuation splitting words: ``"PSLX350H/"``
  and ``"pslx350h"`` agree; a date ``1860-09-24`` gives its year, month and
  day), in any column (a word that moved to another column still counts);
- character 3-shingles of the normalised text, so a typo leaves most of a
  word's evidence intact; but not of a long value (``LONG_VALUE_WORDS`` words
  or more: a product description): its words carry its evidence, and its
  hundreds of shingles would outweigh the short columns (a title, a name) in
  the cosine, so that adding a description column would lose pairs that the
  titles alone find;
- the whole value with punctuation and spaces removed, per column
  (``310/246-1501`` and ``310-246-1501`` agree).

Everything runs over whole columns in numpy and pyarrow; the look-up work is
counted before it is done and processed in bounded chunks. Large columns are
tokenised a slice of rows at a time and the look-ups run a chunk at a time, on
every core the process may use (threads: numpy releases the GIL), the results
taken in order, so the tokens and neighbours are exactly those of one thread.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import xxhash

from lsh_frame import _progress
from lsh_frame._kernels import hashing
from lsh_frame._kernels import neighbours as kernel
from lsh_frame._kernels import text as text_kernels
from lsh_frame.config import ShingleConfig
from lsh_frame.errors import TooManyPairsError
from lsh_frame.sketch.minhash import in_order
from lsh_frame.text.labels import hash_labels, hash_values
from lsh_frame.text.shingle import (
    PUNCTUATION_CHARACTER,
    SMALL_BATCH_VALUES,
    ColumnTexts,
    codepoints,
    column_text,
    is_ascii,
    normalize,
)

__all__ = [
    "DEDUPE",
    "LINK",
    "Budget",
    "NeighbourPairs",
    "cap_of",
    "describe",
    "frequency_levels",
    "kept_spread",
    "neighbour_pairs",
    "record_tokens",
]


@dataclass(frozen=True)
class Budget:
    """How many neighbours a record keeps, read off its own scores.

    Its *close* neighbours are those within ``relative`` of its best cosine
    and at least ``floor``; it keeps ``factor * close + least`` neighbours, at
    most ``most``.
    """

    relative: float
    floor: float
    factor: int
    least: int
    most: int

    def __str__(self) -> str:
        return (
            f"its neighbours within {self.relative:g} of its best and at least "
            f"{self.floor:g}, "
            f"{self.factor} time{'s' if self.factor > 1 else ''} over, plus "
            f"{self.least}; at most {self.most}"
        )


#: One table: a record may have many duplicates (a paper cited in twenty
#: styles), which are close to it and to each other, so it keeps twice as many
#: as look close: its duplicates that look less alike rank right behind. A
#: crowd of weak look-alikes (people who share a first name and a town, below
#: the floor) is not a cluster and earns nothing beyond the first two.
DEDUPE = Budget(relative=0.5, floor=0.2, factor=2, least=2, most=100)
#: Two tables: a record has few matches in the other table, and many records
#: that look alike there (namesakes, product variants) are not duplicates of
#: each other, so it keeps only those that look closest.
LINK = Budget(relative=0.7, floor=0.0, factor=1, least=0, most=100)
#: Look-up work (postings visited) allowed for any table ...
WORK_FLOOR = 60_000_000
#: ... and per record, for large tables.
WORK_PER_RECORD = 200
#: Linking looks up both ways while neither table is this many times larger.
SIDE_RATIO = 4
#: Postings visited per chunk: bounds the temporary arrays (~16 bytes each) of
#: each thread (see :func:`lsh_frame.sketch.minhash.in_order`).
CHUNK_WORK = 500_000
#: Rows of a large column tokenised at a time by each thread (about 4 million
#: tokens).
ROWS_PER_SLICE = 1 << 18
#: A value of at least this many words gives its words but no character
#: shingles: a paragraph (product descriptions, abstracts), longer than titles,
#: names, addresses, author lists and the venue lines of citations, where a
#: typo matters. Measured on Amazon-Google (descriptions of 36-67 words, titles
#: of 5-8): pairs completeness 0.864 at 27,140 candidates with every value's
#: shingles, 0.967 at 14,507 without those of long values (benchmarks/HISTORY.md,
#: "Long values give their words").
LONG_VALUE_WORDS = 30

_NORMAL = ShingleConfig(kind="word", k=1)
_WORD_TAG = hashing.token_tag("word", 1, 0x6E65696768626F72)
_CHAR_TAG = hashing.token_tag("char", 3, 0x6E65696768626F72)


def _salt(column: Hashable) -> np.uint64:
    return np.uint64(xxhash.xxh64_intdigest(b"value:" + repr(column).encode()))


def _values_tokens(
    array: pa.Array,
    salts: npt.NDArray[np.uint64],
    n: int,
    *,
    record_bits: int,
    first_record: int = 0,
    long_words: int | None = LONG_VALUE_WORDS,
) -> npt.NDArray[np.uint64]:
    """Words, shingles and whole values of some columns' values, packed.

    ``array`` holds the columns' values one column after the other (``n``
    per column), ``salts`` each value's column salt (see :func:`record_tokens`);
    its records are numbered from ``first_record``. Values of at least
    ``long_words`` words give no shingles (None: every value gives them).
    """
    array = normalize(array, _NORMAL, whitespace=False)
    if is_ascii(array):
        # Punctuation splits words: in ASCII bytes, taken as whitespace while
        # collapsing it (what replacing its runs with spaces gives, cheaper).
        points, offsets = codepoints(array, ascii_bytes=True)
        points, offsets = text_kernels.collapse_whitespace(
            points, offsets, punctuation=True
        )
    else:
        array = pc.replace_substring_regex(array, PUNCTUATION_CHARACTER + "+", " ")
        points, offsets = codepoints(array, ascii_bytes=True)
        points, offsets = text_kernels.collapse_whitespace(points, offsets)
    return kernel.value_tokens(
        points,
        offsets,
        salts,
        n,
        record_bits=record_bits,
        first_record=first_record,
        long_words=long_words,
        word_tag=_WORD_TAG,
        char_tag=_CHAR_TAG,
    )


def record_tokens(
    frame: pd.DataFrame,
    columns: Sequence[Hashable],
    *,
    owner: str,
    record_bits: int,
    texts: ColumnTexts | None = None,
    long_words: int | None = LONG_VALUE_WORDS,
) -> npt.NDArray[np.uint64]:
    """Every token of the given columns as ``token hash top bits | record``.

    The low ``record_bits`` bits hold the record's position, the rest the top
    bits of the token's 64-bit hash: one ``uint64`` per token, so that one
    value sort groups a token's records (see :func:`kernel.vocabulary`).
    ``texts`` holds the frame's columns' text when already converted; values
    of at least ``long_words`` words give no shingles (None: all give them,
    as an index saved before that rule reads its records).
    """
    n = len(frame)
    per_pass = max(1, SMALL_BATCH_VALUES // max(n, 1))
    if per_pass > 1:  # a small frame: its columns in passes of several
        parts = []
        for first in range(0, len(columns), per_pass):
            chosen = list(columns[first : first + per_pass])
            arrays = [
                column_text(frame, column, owner=owner, texts=texts)
                for column in chosen
            ]
            salts = np.repeat(np.array([_salt(column) for column in chosen]), n)
            parts.append(
                _values_tokens(
                    arrays[0] if len(arrays) == 1 else pa.concat_arrays(arrays),
                    salts,
                    n,
                    record_bits=record_bits,
                    long_words=long_words,
                )
            )
        return np.concatenate(parts) if parts else np.empty(0, np.uint64)
    # A large table: each column a slice of rows at a time, so the temporaries
    # reuse one another's memory (see kernel.SLICE), and the tokens written
    # straight into one array, never held twice.
    arrays = [
        column_text(frame, column, owner=owner, texts=texts) for column in columns
    ]
    tokens = _TokenArray(sum(_most_tokens(array) for array in arrays))
    slices = [
        (array, _salt(column), start)
        for column, array in zip(columns, arrays, strict=True)
        for start in range(0, n, ROWS_PER_SLICE)
    ]

    def tokenise(part: tuple[pa.Array, np.uint64, int]) -> npt.NDArray[np.uint64]:
        array, salt, start = part
        rows = min(ROWS_PER_SLICE, n - start)
        return _values_tokens(
            array.slice(start, rows),
            np.full(rows, salt, dtype=np.uint64),
            rows,
            record_bits=record_bits,
            first_record=start,
            long_words=long_words,
        )

    # Slices on every core, written in order: the same array as one by one.
    # The values tokenised are reported done (the step shows their count).
    for (_, _, start), part in zip(slices, in_order(tokenise, slices), strict=True):
        tokens.add(part)
        _progress.advance(min(ROWS_PER_SLICE, n - start))
    return tokens.array()


def _most_tokens(array: pa.Array) -> int:
    """About the most tokens a column's text gives (a guess; more may come).

    A value of ``b`` bytes has ``b - 2`` shingles, a word per few bytes and one
    whole value: about 1.1 tokens per byte on customer records (88M tokens of
    81 MB of text). A quarter more covers text of short words; the array
    grows if it does not (see :class:`_TokenArray`).
    """
    text = int(pc.sum(pc.binary_length(array)).as_py() or 0)
    return text + text // 4 + 2 * len(array)


class _TokenArray:
    """Packed tokens written into one array as they come.

    Pages of the array that no token reaches are never touched, so a generous
    first size costs nothing; a size too small grows by half.
    """

    def __init__(self, capacity: int) -> None:
        self._values = np.empty(max(capacity, 1), dtype=np.uint64)
        self._size = 0

    def add(self, part: npt.NDArray[np.uint64]) -> None:
        end = self._size + part.size
        if end > self._values.size:
            grown = np.empty(max(end, self._values.size * 3 // 2), dtype=np.uint64)
            grown[: self._size] = self._values[: self._size]
            self._values = grown
        self._values[self._size : end] = part
        self._size = end

    def array(self) -> npt.NDArray[np.uint64]:
        return self._values[: self._size]


@dataclass(frozen=True)
class NeighbourPairs:
    """The pairs of a neighbour key, and what finding them cost.

    ``left`` and ``right`` are record positions (dedupe: ``left < right``),
    distinct and sorted by ``left * n_right + right``; ``cosine`` is each
    pair's weighted token cosine.
    """

    left: npt.NDArray[np.int64]
    right: npt.NDArray[np.int64]
    cosine: npt.NDArray[np.float64]
    keyed: list[npt.NDArray[np.bool_]]
    cap: int
    work: int
    kept_per_record: npt.NDArray[np.int64]
    budget: Budget

    def describe(self) -> str:
        """One line on what was decided."""
        return describe(
            self.budget,
            np.bincount(self.kept_per_record),
            cap=self.cap,
            work=self.work,
            pairs=int(self.left.size),
        )


def kept_spread(histogram: npt.NDArray[np.int64]) -> tuple[float, int, int] | None:
    """Median, 95th percentile (``"higher"``) and largest of the positive counts.

    ``histogram[k]`` counts the records that kept ``k`` neighbours; the figures
    are numpy's (``np.median``, ``np.percentile(..., method="higher")``) of the
    counts above zero, read off the histogram so that a partitioned table,
    whose counts are added up, describes itself as the whole table does. None
    when no record kept a neighbour.

    Examples
    --------
    >>> kept_spread(np.bincount([0, 1, 2, 2, 9]))
    (2.0, 9, 9)
    """
    counts = np.asarray(histogram, dtype=np.int64).copy()
    if counts.size:
        counts[0] = 0
    shown = int(counts.sum())
    if shown == 0:
        return None
    cumulative = np.cumsum(counts)

    def at(position: int) -> int:  # the value at a position of the sorted counts
        return int(np.searchsorted(cumulative, position, side="right"))

    middle = (at((shown - 1) // 2) + at(shown // 2)) / 2
    high = at(int(np.ceil((shown - 1) * (95 / 100))))
    return middle, high, at(shown - 1)


def describe(
    budget: Budget,
    histogram: npt.NDArray[np.int64],
    *,
    cap: int,
    work: int,
    pairs: int,
) -> str:
    """One line on what a neighbours key decided and found.

    ``histogram[k]`` counts the records that kept ``k`` neighbours.
    """
    spread = kept_spread(histogram)
    said = (
        f"k per record median {spread[0]:g}, 95% at most {spread[1]:g}, "
        f"largest {spread[2]}"
        if spread is not None
        else "no record found a neighbour"
    )
    return (
        "neighbours key: each record's most similar records by IDF-weighted "
        "token cosine (words, character 3-shingles of values under "
        f"{LONG_VALUE_WORDS} words, and whole values of all the "
        f"columns); k read off each record's own scores ({budget}): "
        f"{said}; look-ups skip tokens held by more than "
        f"{cap:,} records ({work:,} postings visited); "
        f"{pairs:,} pairs"
    )


def frequency_levels(
    frequencies: list[npt.NDArray[np.int64]], link: bool
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Each token frequency level and the look-up work of its tokens.

    A level is a number of records holding a token (both tables when
    linking). Work of a token: ``df^2`` in one table (each holder visits every
    holder), ``2 * df_left * df_right`` between two. Levels of several parts
    of a vocabulary (token ranges on Dask) add up: see :func:`cap_of`.
    """
    total = frequencies[0] + (frequencies[1] if link else 0)
    work = (
        2 * frequencies[0] * frequencies[1] if link else frequencies[0] ** 2
    ).astype(np.float64)
    levels, inverse = np.unique(total, return_inverse=True)
    summed = np.bincount(inverse.reshape(-1), weights=work, minlength=levels.size)
    return levels.astype(np.int64), summed.astype(np.float64)


def cap_of(
    levels: npt.NDArray[np.int64], work: npt.NDArray[np.float64], budget: int
) -> int:
    """Largest token frequency whose look-ups fit the work budget.

    ``levels`` are the frequency levels (any order, repeats allowed: the
    levels of several parts of a vocabulary) and ``work`` their tokens'
    look-up work (:func:`frequency_levels`). Only whole levels can be cut.
    The sums are exact while they stay within the budget (integers far below
    2^53), so the cut does not depend on how the vocabulary was split.
    """
    distinct, inverse = np.unique(levels, return_inverse=True)
    summed = np.bincount(inverse.reshape(-1), weights=work, minlength=distinct.size)
    fits = np.cumsum(summed) <= budget
    if not fits.any():
        return 1
    return int(distinct[np.flatnonzero(fits)[-1]])


def _cap(frequencies: list[npt.NDArray[np.int64]], link: bool, budget: int) -> int:
    """Largest token frequency whose look-ups fit the work budget."""
    return cap_of(*frequency_levels(frequencies, link), budget)


def _usable_in(
    usable: npt.NDArray[np.bool_], tokens: npt.NDArray[np.int64]
) -> Callable[[int, int], npt.NDArray[np.bool_]]:
    """Mask of the look-up tokens of ``tokens[start:stop]``."""
    return lambda start, stop: usable[tokens[start:stop]]


def _weight_sums(
    records: npt.NDArray[np.int64],
    tokens: npt.NDArray[np.int64],
    weights: npt.NDArray[np.uint64],
    n: int,
) -> npt.NDArray[np.float64]:
    """Sum of each record's squared token weights (slice by slice)."""
    sums = np.zeros(n, dtype=np.float64)
    for start in range(0, records.size, kernel.SLICE):
        stop = start + kernel.SLICE
        sums += np.bincount(
            records[start:stop],
            weights=weights[tokens[start:stop]].astype(np.float64),
            minlength=n,
        )
    return sums


def neighbour_pairs(
    frames: list[pd.DataFrame],
    columns: Sequence[Hashable],
    *,
    owner: str,
    max_pairs: int | None = None,
) -> NeighbourPairs:
    """Find each record's neighbours in one table (dedupe) or the other (link).

    Parameters
    ----------
    frames : list of one or two DataFrames
        One table to deduplicate, or the left and right tables to link (each
        record's neighbours are searched in the other table, both ways).
    columns : sequence of labels
        The columns whose tokens make a record.
    owner : str
        Name of the calling function, for error messages.
    max_pairs : int, optional
        Stop with ``TooManyPairsError`` when the neighbour lists would hold
        more pairs (checked per chunk, before pairs are united).
    """
    link = len(frames) == 2
    budget = LINK if link else DEDUPE
    sizes = [len(frame) for frame in frames]
    record_bits = kernel.record_bits(sizes)
    vocabulary = kernel.vocabulary(
        [
            record_tokens(
                frame,
                columns,
                owner=owner,
                record_bits=record_bits,
                long_words=LONG_VALUE_WORDS,
            )
            for frame in frames
        ],
        record_bits,
    )
    frequency = vocabulary.frequency
    size = frequency.size
    n_records = sum(sizes)
    weights = kernel.quantised_weights(frequency, n_records)
    norms = [
        np.sqrt(_weight_sums(records, tokens, weights, n))
        for records, tokens, n in zip(
            vocabulary.records, vocabulary.tokens, sizes, strict=True
        )
    ]
    cap = _cap(
        vocabulary.side_frequency,
        link,
        max(WORK_FLOOR, WORK_PER_RECORD * n_records),
    )
    usable = frequency <= cap
    # The look-up tokens, kept in the vocabulary's own arrays (which are not
    # read again): no second copy of every token.
    by_token = [
        kernel.keep_in_place(_usable_in(usable, tokens), records, tokens)
        for records, tokens in zip(vocabulary.records, vocabulary.tokens, strict=True)
    ]
    del vocabulary
    keyed = [
        np.bincount(records, minlength=n) > 0
        for (records, _), n in zip(by_token, sizes, strict=True)
    ]
    # Equal scores are ranked by a hash of the records' values (then of their
    # labels' text), not by their positions, so the neighbours depend neither
    # on the order of the rows nor on the labels' dtype. From here on records
    # are numbered by that rank, so that ties rank by the number itself; the
    # pairs kept are numbered back at the end.
    tie_ranks = [_tie_ranks(frame, columns) for frame in frames]
    for (records, _), (rank, _) in zip(by_token, tie_ranks, strict=True):
        _renumber(records, rank)
    norms = [side[order] for side, (_, order) in zip(norms, tie_ranks, strict=True)]
    postings = [
        kernel.Postings.build(records, tokens, size) for records, tokens in by_token
    ]
    lookups = [kernel.by_record(records, tokens) for records, tokens in by_token]
    # Both ways when linking, so a pair is found when either record ranks the
    # other high; but when one table is much smaller (a batch of new records
    # against a saved table), only its records look up: each record of the
    # large table would otherwise pick one of the few new ones.
    directions = [(0, 0)]
    if link:
        small, large = sorted(sizes)
        directions = (
            [(0, 1), (1, 0)]
            if large <= SIDE_RATIO * small
            else ([(0, 1)] if sizes[0] <= sizes[1] else [(1, 0)])
        )
    found_left, found_right, found_cosine, kept_counts = [], [], [], []
    work_done = found_so_far = 0
    works = [
        kernel.expansion_sizes(
            lookups[query_side][0],
            lookups[query_side][1],
            postings[index_side],
            sizes[query_side],
        )
        for query_side, index_side in directions
    ]
    _progress.step(
        f"finding neighbours ({n_records:,} records)",
        total=int(sum(int(work.sum()) for work in works)),
    )
    for (query_side, index_side), work in zip(directions, works, strict=True):
        query_records, query_tokens = lookups[query_side]
        n_query, n_index = sizes[query_side], sizes[index_side]
        work_done += int(work.sum())
        kept_queries = []

        def look_up(
            chunk: tuple[int, int],
            query_records: npt.NDArray[np.int64] = query_records,
            query_tokens: npt.NDArray[np.int64] = query_tokens,
            query_side: int = query_side,
            index_side: int = index_side,
            n_index: int = n_index,
        ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[Any]]:
            first, stop = chunk
            query, neighbour, cosine = kernel.top_neighbours(
                query_records,
                query_tokens,
                postings[index_side],
                weights,
                norms[query_side],
                norms[index_side],
                first=first,
                stop=stop,
                n_index=n_index,
                same_table=not link,
                budget=(
                    budget.relative,
                    budget.floor,
                    budget.factor,
                    budget.least,
                    budget.most,
                ),
            )
            return (
                tie_ranks[query_side][1][query],
                tie_ranks[index_side][1][neighbour],
                cosine,
            )

        chunks = _chunks(work, n_index)
        for (first, stop), (query, neighbour, cosine) in zip(
            chunks, in_order(look_up, chunks), strict=True
        ):
            _progress.advance(int(work[first:stop].sum()))
            kept_queries.append(query)
            if query_side == 0:
                left, right = query, neighbour
            else:
                left, right = neighbour, query
            if not link:
                left, right = np.minimum(left, right), np.maximum(left, right)
            found_left.append(left)
            found_right.append(right)
            found_cosine.append(cosine)
            found_so_far += left.size
            if max_pairs is not None:
                _check(found_so_far, max_pairs)
        kept_counts.append(
            np.bincount(
                np.concatenate(kept_queries) if kept_queries else np.empty(0, np.int64),
                minlength=n_query,
            )
        )
    n_right = sizes[1] if link else sizes[0]
    left = np.concatenate(found_left) if found_left else np.empty(0, np.int64)
    right = np.concatenate(found_right) if found_right else np.empty(0, np.int64)
    cosine = np.concatenate(found_cosine) if found_cosine else np.empty(0)
    codes = left * np.int64(n_right) + right
    codes, first_seen = np.unique(codes, return_index=True)
    left, right = np.divmod(codes, np.int64(n_right))
    return NeighbourPairs(
        left=left,
        right=right,
        cosine=cosine[first_seen],
        keyed=keyed,
        cap=cap,
        work=work_done,
        kept_per_record=np.concatenate(kept_counts),
        budget=budget,
    )


def _renumber(records: npt.NDArray[np.int64], number: npt.NDArray[np.int64]) -> None:
    """Replace each record by ``number[record]``, in place (slice by slice)."""
    for start in range(0, records.size, kernel.SLICE):
        part = records[start : start + kernel.SLICE]
        part[:] = number[part]


def _tie_ranks(
    frame: pd.DataFrame, columns: Sequence[Hashable]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Rank of each record among equal scores, and its inverse.

    By the hash of its values in ``columns``, then of its label's text (records
    of equal values), then its position (labels of equal text, such as ``1``
    and ``"1"`` in one object index).
    """
    labels = hash_labels(frame.index)
    values = hash_values(frame, columns)
    if values is None:
        values = labels
    order = np.lexsort((np.arange(labels.size), labels, values))
    ranks = np.empty(labels.size, dtype=np.int64)
    ranks[order] = np.arange(labels.size)
    return ranks, order.astype(np.int64)


def _chunks(work: npt.NDArray[np.int64], n_index: int) -> list[tuple[int, int]]:
    """Ranges of query records whose look-ups stay within ``CHUNK_WORK``.

    A chunk also stays small enough for its pair codes to fit the packed
    value; one record whose own work exceeds the bound is a chunk of its own.
    """
    index_bits = max(int(n_index - 1).bit_length(), 1)
    most_records = max(1, (1 << (kernel.CODE_BITS - index_bits)) - 1)
    bounds = []
    cumulative = np.cumsum(work)
    first, n = 0, work.size
    while first < n:
        base = cumulative[first - 1] if first else 0
        stop = int(np.searchsorted(cumulative, base + CHUNK_WORK, side="right"))
        stop = min(max(stop, first + 1), first + most_records, n)
        bounds.append((first, stop))
        first = stop
    return bounds


def _check(count: int, max_pairs: int) -> None:
    """Raise :class:`TooManyPairsError` when the neighbour lists grow too long."""
    if count > max_pairs:
        raise TooManyPairsError(
            f"The neighbours key would build more than {count:,} candidate pairs, "
            f"more than max_pairs={max_pairs:,}. Block on fewer or more specific "
            "columns, or raise max_pairs if the memory allows."
        )
