"""``compare="tfidf"``: TF-IDF weighted word cosine, for long multi-word text.

Product titles and descriptions, citation titles, author lists and venues are
long, and the words that tell two records apart are the rare ones: a model
number, an uncommon surname. A fuzzy ratio weighs every character alike; this
comparison weighs each word by how rare it is in the field.

- Tokens: the normalised value's words, punctuation splitting words, plus each
  word that punctuation split with the punctuation removed
  (``"KDL-40V4100"`` gives ``kdl``, ``40v4100`` and ``kdl40v4100``, so it
  meets ``"KDL40V4100"``); see :func:`lsh_frame._kernels.tfidf.word_tokens`.
  The parts count half: on Abt-Buy names (best single cut F1 of the field
  score on neighbour candidates) parts and joined word at full weight gave
  0.69, the joined word alone 0.73, half-weight parts 0.72; on Cora pages
  (``"123-145"`` vs ``"123 - 145"``) 0.64, 0.58 and 0.63.
- Weights: ``log2(1 + tf) * log((N + 1) / df)``, where ``tf`` counts the
  token's occurrences in the value (a part of a split word counts ½), ``df``
  the records (of every table given to the call) whose value holds the token
  and ``N`` the records with at least one token. The ``+ 1`` keeps a token
  held by every record slightly positive, so two values made only of common
  words still compare. The vectors are L2-normalised; the score is their cosine, in
  [0, 1]; NaN when either value is missing, blank or has no token.

The document frequencies are a statistic of the whole field: they come from
every record of the tables (:meth:`DocumentFrequencies.of_tables`, or per
partition and added up under Dask), never from the pairs, so a pair's score
does not depend on which other pairs are scored. A saved model applied to a
later batch scores with the frequencies of the tables given to that call.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lsh_frame._kernels import tfidf as kernel
from lsh_frame._kernels.pairs import sorted_unique
from lsh_frame._kernels.sets import gather
from lsh_frame.block.fields import Field
from lsh_frame.block.keys import _field_text
from lsh_frame.text.shingle import (
    ASCII_PUNCTUATION_CHARACTER,
    PUNCTUATION_CHARACTER,
    codepoints,
    normalize,
)

__all__ = ["DocumentFrequencies", "scores", "value_terms"]


def value_terms(normalized: pa.Array) -> kernel.TermCounts:
    """Each normalised value's distinct tokens and their counts.

    Whitespace need not be collapsed: tokens are the runs between whitespace
    characters however many stand together.

    Examples
    --------
    >>> terms = value_terms(pa.array(["sony kdl-40", None, "..."]))
    >>> np.diff(terms.offsets).tolist()  # sony, kdl, 40, kdl40
    [4, 0, 0]
    """
    array = pc.fill_null(normalized, "").cast(pa.large_string())
    points, offsets = codepoints(array)
    split_points = punctuation_as_spaces(points)
    hashes, records, shares = kernel.word_tokens(points, split_points, offsets)
    return kernel.term_counts(hashes, records, shares, len(array))


def punctuation_as_spaces(points: npt.NDArray[np.uint32]) -> npt.NDArray[np.uint32]:
    r"""Return the code points with each punctuation or symbol character a space.

    The characters are those of the regular expression ``[\p{P}\p{S}]`` (its
    Unicode tables, not Python's): each distinct code point of the text is
    classified once by the expression, and the text is rewritten by a look-up,
    where the expression over the whole text costs a pass of RE2 per byte.

    Examples
    --------
    >>> points = np.array([ord(c) for c in "kdl-40 ©x"], np.uint32)
    >>> "".join(map(chr, punctuation_as_spaces(points)))
    'kdl 40  x'
    """
    if points.size == 0:
        return points.copy()
    present = np.flatnonzero(np.bincount(points))
    characters = pa.array([chr(point) for point in present], pa.large_string())
    ascii_only = int(present[-1]) < 0x80
    pattern = ASCII_PUNCTUATION_CHARACTER if ascii_only else PUNCTUATION_CHARACTER
    marked = pc.match_substring_regex(characters, pattern).to_numpy(
        zero_copy_only=False
    )
    table = np.zeros(int(present[-1]) + 1, dtype=bool)
    table[present[marked]] = True
    return np.where(table[points], np.uint32(32), points).astype(np.uint32)


@dataclass(frozen=True)
class DocumentFrequencies:
    """How many records of the tables hold each token of one field.

    ``tokens`` are sorted distinct token hashes, ``counts`` their document
    frequencies and ``documents`` the number of records with any token.
    Frequencies of parts of a table add up (:meth:`merge`) to the table's.
    """

    tokens: npt.NDArray[np.uint64]
    counts: npt.NDArray[np.int64]
    documents: int

    @classmethod
    def of_tables(
        cls, spec: Field, tables: list[pd.DataFrame], owner: str
    ) -> DocumentFrequencies:
        """Count the field's tokens over every record of the tables.

        Each distinct raw value is normalised and tokenised once and counts as
        many documents as records hold it.
        """
        texts = [_field_text(table, spec, owner=owner) for table in tables]
        raw = pa.concat_arrays(texts) if len(texts) > 1 else texts[0]
        encoded = raw.dictionary_encode()
        codes = pc.fill_null(encoded.indices, -1).to_numpy().astype(np.int64)
        records = np.bincount(codes[codes >= 0], minlength=len(encoded.dictionary))
        terms = value_terms(
            normalize(encoded.dictionary, spec.shingle_config, whitespace=False)
        )
        frequencies = cls(*kernel.document_frequencies(terms, records))
        kept = _TERMS.get()
        if kept is not None:
            kept[id(frequencies)] = (frequencies, encoded.dictionary, terms)
        return frequencies

    @classmethod
    def merge(cls, parts: list[DocumentFrequencies]) -> DocumentFrequencies:
        """Add up the frequencies of parts of the records."""
        return cls(
            *kernel.merge_frequencies(
                [(part.tokens, part.counts, part.documents) for part in parts]
            )
        )

    def vectors(
        self, normalized: pa.Array, raw: pa.Array | None = None
    ) -> kernel.TermVectors:
        """L2-normalised TF-IDF vectors of some normalised values.

        A token no counted record holds (not possible when the values come
        from the counted tables) weighs as a token held by one record.
        ``raw`` (the values before normalising) lets the tokens counted by
        :meth:`of_tables` inside :func:`keeping_terms` be reused.
        """
        terms = self._known_terms(raw)
        return kernel.TermVectors.build(
            value_terms(normalized) if terms is None else terms,
            self.tokens,
            kernel.idf(self.counts, self.documents),
            float(kernel.idf(np.ones(1, np.int64), self.documents)[0]),
        )

    def _known_terms(self, raw: pa.Array | None) -> kernel.TermCounts | None:
        """Return the tokens of ``raw`` as :meth:`of_tables` counted them, if kept."""
        kept = _TERMS.get()
        entry = None if kept is None or raw is None else kept.get(id(self))
        if entry is None or entry[0] is not self:
            return None
        positions = pc.index_in(raw, value_set=entry[1])
        if positions.null_count:
            return None
        rows = positions.to_numpy().astype(np.int64)
        terms: kernel.TermCounts = entry[2]
        at = gather(terms.offsets, rows)
        offsets = np.zeros(rows.size + 1, dtype=np.int64)
        np.cumsum(np.diff(terms.offsets)[rows], out=offsets[1:])
        return kernel.TermCounts(terms.hashes[at], terms.counts[at], offsets)


#: The tokens :meth:`DocumentFrequencies.of_tables` counted, by the id of the
#: frequencies made (kept beside them), inside :func:`keeping_terms`.
_TERMS: ContextVar[dict[int, tuple[Any, ...]] | None] = ContextVar(
    "lsh_frame_tfidf_terms", default=None
)


@contextmanager
def keeping_terms() -> Iterator[None]:
    """Keep the tokens counted for document frequencies to score with them.

    Scoring a ``"tfidf"`` field tokenises the values of its pairs, which the
    frequencies of the same tables have just tokenised: inside this block
    (one job) they are tokenised once. The tokens are the same either way
    (whitespace runs do not change them).
    """
    token = _TERMS.set({})
    try:
        yield
    finally:
        _TERMS.reset(token)


def scores(
    dictionary: pa.Array,
    frequencies: DocumentFrequencies,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    same: npt.NDArray[np.int64],
    raw: pa.Array | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Cosines of value pairs, and the score of pairs of one value.

    ``first`` and ``second`` are dictionary codes of value pairs; ``same``
    codes of values compared with themselves (1, or NaN without a token).
    ``raw`` holds the dictionary's values before normalising.
    """
    needed = sorted_unique(np.concatenate([first, second, same]))
    taken = pa.array(needed)
    vectors = frequencies.vectors(
        dictionary.take(taken), None if raw is None else raw.take(taken)
    )
    where = np.empty(max(len(dictionary), 1), dtype=np.int64)
    where[needed] = np.arange(needed.size)
    on_pairs = kernel.cosines(vectors, where[first], where[second])
    on_same = np.where(vectors.empty[where[same]], np.nan, 1.0)
    return on_same, on_pairs
