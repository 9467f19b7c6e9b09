"""TF-IDF weighted token cosine of many value pairs at once (numpy only).

A value's *tokens* are its words, where punctuation splits words
(``"kdl-40v4100"`` gives ``kdl`` and ``40v4100``); a word that punctuation
split also gives its parts joined (``kdl40v4100``), so that a code written
with and without hyphens still shares its rarest token. The parts of a split
word count half an occurrence each: the joined word stands for it in full,
and its parts only help where the other value splits it another way. A
token's weight in a value is ``log2(1 + tf) * idf``, where ``tf`` adds up its
occurrences (1, or ½ for a part), so one occurrence weighs 1, a part 0.58 and
repeats grow slowly; ``idf = log((N + 1) / df)`` over the records of the tables
at hand (see :mod:`lsh_frame.compare.tfidf`). The similarity of two values is the
cosine of their weight vectors.

Token hashes are stable 64-bit word hashes (:mod:`._kernels.hashing`), so the
document frequencies of parts of a table add up to those of the whole table.
A value's vector holds its distinct tokens as ids into the sorted vocabulary,
in ascending order, with L2-normalised weights; every sum runs in that order,
so a value pair's score depends on the two values and the vocabulary only,
never on which other pairs are scored alongside it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from lsh_frame._kernels import hashing, native
from lsh_frame._kernels.sets import gather

__all__ = [
    "TermVectors",
    "cosines",
    "document_frequencies",
    "idf",
    "merge_frequencies",
    "term_counts",
    "word_tokens",
]

#: (pair, token) entries compared per chunk: bounds the temporary arrays.
_CHUNK_TOKENS = 4_000_000
_ID_BITS = np.int64(32)
#: Occurrences a part of a word split by punctuation counts for.
PART_SHARE = 0.5


def word_tokens(
    points: npt.NDArray[np.uint32],
    split_points: npt.NDArray[np.uint32],
    offsets: npt.NDArray[np.int64],
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Hash every value's tokens: its word parts, and split words joined.

    Parameters
    ----------
    points : ndarray of uint32
        Code points of the (normalised) values, back to back.
    split_points : ndarray of uint32
        The same code points with every punctuation or symbol character
        replaced by a space (so positions agree with ``points``).
    offsets : ndarray of int64
        ``n + 1`` offsets of the values into both arrays.

    Returns
    -------
    hashes : ndarray of uint64
        Token hashes, grouped by value (in no particular order within one).
    records : ndarray of int64
        The value each token belongs to.
    shares : ndarray of float64
        What each occurrence counts for: 1, or ``PART_SHARE`` for a part of
        a split word.

    Examples
    --------
    >>> text = "kdl-40 kdl40"
    >>> points = np.array([ord(c) for c in text], np.uint32)
    >>> split = np.array([ord(" " if c == "-" else c) for c in text], np.uint32)
    >>> hashes, records, shares = word_tokens(points, split, np.array([0, 6, 12]))
    >>> records.tolist(), shares.tolist()  # kdl, 40, kdl40 | kdl40
    ([0, 0, 0, 1], [0.5, 0.5, 1.0, 1.0])
    >>> bool(hashes[2] == hashes[3])
    True
    """
    part_starts, part_ends, part_records = hashing.word_spans(split_points, offsets)
    parts = hashing.word_hashes(split_points, part_starts, part_ends)
    word_starts, word_ends, word_records = hashing.word_spans(points, offsets)
    # Which whitespace word each part lies in; words split into two or more
    # parts also give their text without the punctuation.
    word_of_part = np.searchsorted(word_starts, part_starts, side="right") - 1
    parts_per_word = np.bincount(word_of_part, minlength=word_starts.size)
    split_words = np.flatnonzero(parts_per_word > 1)
    part_shares = np.where(parts_per_word[word_of_part] > 1, PART_SHARE, 1.0)
    if split_words.size == 0:
        return parts, part_records, part_shares
    kept = split_points == points  # not punctuation
    compact = points[kept]
    kept_before = np.zeros(points.size + 1, dtype=np.int64)
    np.cumsum(kept, out=kept_before[1:])
    joined = hashing.word_hashes(
        compact,
        kept_before[word_starts[split_words]],
        kept_before[word_ends[split_words]],
    )
    records = np.concatenate([part_records, word_records[split_words]])
    order = np.argsort(records, kind="stable")
    return (
        np.concatenate([parts, joined])[order],
        records[order],
        np.concatenate([part_shares, np.ones(split_words.size)])[order],
    )


@dataclass(frozen=True)
class TermCounts:
    """Each value's distinct token hashes (ascending) and their counts, CSR.

    ``counts`` add up the shares of a token's occurrences in the value.
    """

    hashes: npt.NDArray[np.uint64]
    counts: npt.NDArray[np.float64]
    offsets: npt.NDArray[np.int64]


def term_counts(
    hashes: npt.NDArray[np.uint64],
    records: npt.NDArray[np.int64],
    shares: npt.NDArray[np.float64],
    n: int,
) -> TermCounts:
    """Count each value's distinct tokens (adding up the occurrences' shares).

    Examples
    --------
    >>> hashes, values = np.array([7, 5, 7, 7], np.uint64), np.array([0, 0, 0, 2])
    >>> terms = term_counts(hashes, values, np.array([1, 1, 0.5, 1]), 3)
    >>> terms.hashes.tolist(), terms.counts.tolist(), terms.offsets.tolist()
    ([5, 7, 7], [1.0, 1.5, 1.0], [0, 2, 2, 3])
    """
    order = np.lexsort((hashes, records))
    hashes, records, shares = hashes[order], records[order], shares[order]
    head = np.ones(hashes.size, dtype=bool)
    head[1:] = (hashes[1:] != hashes[:-1]) | (records[1:] != records[:-1])
    starts = np.flatnonzero(head)
    counts = np.add.reduceat(shares, starts) if starts.size else np.empty(0, np.float64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(records[starts], minlength=n), out=offsets[1:])
    return TermCounts(hashes[starts], counts, offsets)


def _sum_by_token(
    hashes: npt.NDArray[np.uint64], counts: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]:
    order = np.argsort(hashes, kind="stable")
    hashes, counts = hashes[order], counts[order]
    head = np.ones(hashes.size, dtype=bool)
    np.not_equal(hashes[1:], hashes[:-1], out=head[1:])
    starts = np.flatnonzero(head)
    summed = np.add.reduceat(counts, starts) if starts.size else counts[:0]
    return hashes[starts], summed.astype(np.int64)


def document_frequencies(
    terms: TermCounts, records_per_value: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], int]:
    """Count the records holding each token, and those holding any token.

    ``records_per_value[i]`` is the number of records whose value is value
    ``i``; returns the sorted distinct token hashes, their document
    frequencies and the number of documents (records with a token).

    Examples
    --------
    >>> hashes, values = np.array([7, 5, 7], np.uint64), np.array([0, 0, 2])
    >>> terms = term_counts(hashes, values, np.ones(3), 3)
    >>> tokens, df, n = document_frequencies(terms, np.array([2, 4, 1]))
    >>> tokens.tolist(), df.tolist(), n
    ([5, 7], [2, 3], 3)
    """
    sizes = np.diff(terms.offsets)
    holders = np.repeat(records_per_value.astype(np.int64), sizes)
    tokens, frequency = _sum_by_token(terms.hashes, holders)
    return tokens, frequency, int(records_per_value[sizes > 0].sum())


def merge_frequencies(
    parts: list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], int]],
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], int]:
    """Add up :func:`document_frequencies` of parts of a table."""
    if not parts:
        return np.empty(0, np.uint64), np.empty(0, np.int64), 0
    tokens, frequency = _sum_by_token(
        np.concatenate([part[0] for part in parts]),
        np.concatenate([part[1] for part in parts]),
    )
    return tokens, frequency, sum(part[2] for part in parts)


def idf(frequency: npt.NDArray[np.int64], documents: int) -> npt.NDArray[np.float64]:
    """``log((N + 1) / df)``: positive for every token (smoothed by one document).

    Examples
    --------
    >>> idf(np.array([1, 3]), 3).round(3).tolist()
    [1.386, 0.288]
    """
    return np.log((documents + 1.0) / np.maximum(frequency, 1))


@dataclass(frozen=True)
class TermVectors:
    """L2-normalised TF-IDF vectors of some values in CSR form.

    Value ``i`` holds vocabulary ids ``ids[offsets[i]:offsets[i + 1]]``
    (ascending) with ``weights`` at the same positions; ``empty[i]`` is True
    when it has no token.
    """

    ids: npt.NDArray[np.int64]
    weights: npt.NDArray[np.float64]
    offsets: npt.NDArray[np.int64]

    @property
    def empty(self) -> npt.NDArray[np.bool_]:
        """Values without a token (their similarity is undefined)."""
        return np.asarray(np.diff(self.offsets) == 0)

    @classmethod
    def build(
        cls,
        terms: TermCounts,
        vocabulary: npt.NDArray[np.uint64],
        token_idf: npt.NDArray[np.float64],
        unknown_idf: float,
    ) -> TermVectors:
        """Weigh each value's tokens: ``log2(1 + tf) * idf``, then L2-normalise.

        A token missing from the vocabulary (not held by any counted record)
        gets ``unknown_idf`` and an id past the vocabulary's end, shared by
        every such token only when their hashes are equal.
        """
        ids = np.searchsorted(vocabulary, terms.hashes).astype(np.int64)
        known = ids < vocabulary.size
        known[known] = vocabulary[ids[known]] == terms.hashes[known]
        weight = np.full(ids.size, unknown_idf)
        weight[known] = token_idf[ids[known]]
        if not known.all():
            # Ids past the vocabulary, ascending with the hash like the rest.
            _, rank = np.unique(terms.hashes[~known], return_inverse=True)
            ids[~known] = vocabulary.size + rank
            order = np.lexsort((ids, _owners(terms.offsets)))
            ids, weight = ids[order], weight[order]
            counts = terms.counts[order]
        else:
            counts = terms.counts
        weight = weight * np.log2(1.0 + counts)
        owner = _owners(terms.offsets)
        norm = np.sqrt(
            np.bincount(
                owner, weights=weight * weight, minlength=terms.offsets.size - 1
            )
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            weight = weight / norm[owner]
        return cls(ids, weight, terms.offsets)


def _owners(offsets: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    return np.repeat(np.arange(offsets.size - 1, dtype=np.int64), np.diff(offsets))


def cosines(
    vectors: TermVectors,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
) -> npt.NDArray[np.float64]:
    """Cosine of the vectors of ``first[p]`` and ``second[p]`` for every pair.

    NaN where either value has no token; in [0, 1] otherwise (within 1e-12 of
    1 is 1, so rounding never separates equal vectors from equal values).
    Pairs are processed in chunks of about ``_CHUNK_TOKENS`` tokens: within a
    chunk each side's entries become keys ``pair << 32 | id``, sorted since
    each vector's ids are; a binary search of one side's keys in the other's
    finds the shared tokens, whose products add up per pair in id order.

    Examples
    --------
    >>> hashes, values = np.array([1, 2, 2, 3], np.uint64), np.array([0, 0, 1, 1])
    >>> terms = term_counts(hashes, values, np.ones(4), 3)
    >>> tokens, df, n = document_frequencies(terms, np.ones(3, np.int64))
    >>> vectors = TermVectors.build(terms, tokens, np.ones(3), 1.0)
    >>> cosines(vectors, np.array([0, 0, 2]), np.array([1, 0, 0])).round(3).tolist()
    [0.5, 1.0, nan]
    """
    sizes = np.diff(vectors.offsets)
    if native.compiled is not None:
        result = native.sparse_dots(
            vectors.ids, vectors.weights, vectors.offsets, first, second
        )
    else:
        result = _dots(vectors, sizes, first, second)
    result[np.abs(result - 1.0) < 1e-12] = 1.0
    np.clip(result, 0.0, 1.0, out=result)
    result[(sizes[first] == 0) | (sizes[second] == 0)] = np.nan
    return result


def _dots(
    vectors: TermVectors,
    sizes: npt.NDArray[np.int64],
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
) -> npt.NDArray[np.float64]:
    """Return the dot products of :func:`cosines`, in numpy (chunks of pairs)."""
    result = np.zeros(first.size, dtype=np.float64)
    work = np.cumsum(sizes[first] + sizes[second])
    start = 0
    while start < first.size:
        done = int(work[start - 1]) if start else 0
        stop = int(np.searchsorted(work, done + _CHUNK_TOKENS, side="right"))
        stop = max(stop, start + 1)
        pair = np.arange(stop - start, dtype=np.int64)
        keys, weights = [], []
        for rows in (first[start:stop], second[start:stop]):
            at = gather(vectors.offsets, rows)
            keys.append((np.repeat(pair, sizes[rows]) << _ID_BITS) | vectors.ids[at])
            weights.append(vectors.weights[at])
        found = np.searchsorted(keys[1], keys[0])
        found[found == keys[1].size] = 0
        shared = keys[1][found] == keys[0] if keys[1].size else found < 0
        result[start:stop] = np.bincount(
            keys[0][shared] >> _ID_BITS,
            weights=weights[0][shared] * weights[1][found[shared]],
            minlength=stop - start,
        )
        start = stop
    return result
