"""Identifier codes: the tokens that name one product, compared across a record.

A lamp for one projector and the same lamp for another differ in one token: a
model number (``ELPLP12``), a part code (``KX-TG6645B``), a size with its unit.
Text comparisons read such a token as a few characters among many; a person
reads it as the identity of the thing. So when the compared fields hold long
text, every record gets the set of its *codes*, read from all its compared
text fields at once (one source writes the model number in the title, the
other in its own column), and each candidate pair one more comparison,
``codes``, scored from the codes the two records share:

- ``1.0``: they share a code held by at most ``RARE`` records of the tables
  (a code that names one thing);
- ``0.95``: they share a code held by at most ``FEW`` records;
- ``0.85``: they share only codes many records hold (``500gb``, ``ipad2``);
- ``0.0``: both records have codes and share none: a conflict, strong evidence
  against a match;
- missing when either record has no code.

The match model learns the weight of each level like any field's (a conflict
weighs against, a shared rare code for). A *code* is a token (split at
anything but letters, digits and ``- . /``, which are then removed) of at
least three characters that holds a digit and either a letter or at least
four characters: ``kxtg6645b``, ``elplp12``, ``34945``, ``3.5mm`` as ``35mm``.

Evidence that turns it on, from the rows ``"auto"`` reads to choose
comparisons (never the pairs or column names): some compared text field's
present values average at least ``CODE_MIN_WORDS`` words, and in every table
at least ``MODEL_NUMBER_SHARE`` of the rows hold a code that mixes letters
and digits (a model number). Measured on the development and held-out sets (pair
F1 of the default link, benchmarks/HISTORY.md, "identifier codes"): it is on
for the product, citation and restaurant tables and off for every table of
people and films. Document frequencies are a statistic of every record of the
tables (:class:`CodeFrequencies`; parts add up, so Dask and a saved index
score as pandas does).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from lsh_frame._kernels import hashing
from lsh_frame._kernels.sets import intersection_minimum
from lsh_frame.block.fields import Field
from lsh_frame.block.keys import _field_text
from lsh_frame.config import ShingleConfig
from lsh_frame.text.shingle import codepoints, normalize

__all__ = [
    "CODE_MIN_WORDS",
    "CodeEvidence",
    "CodeFrequencies",
    "RecordCodes",
    "code_scores",
    "reads_codes",
]

#: The codes comparison is on when a compared text field's present values
#: average at least this many words (long text, where an identifier hides
#: among words): product titles and descriptions average 6-36 words,
#: citations 7-9; names, addresses and film titles at most 3.
CODE_MIN_WORDS = 4.0

#: ... and at least this share of each table's records hold a code mixing
#: letters and digits (a model number): 0.73-0.94 of the records of the
#: product catalogues, 0.03-0.43 of the citations, restaurants and of a
#: software catalogue whose codes are mostly version numbers.
MODEL_NUMBER_SHARE = 0.5

#: A code held by at most this many records names one thing ...
RARE = 2
#: ... and one held by at most this many, a few.
FEW = 10

#: Scores of the levels (read at the usual level cuts 0.99, 0.9, 0.8).
SHARED_RARE, SHARED_FEW, SHARED_COMMON, CONFLICT = 1.0, 0.95, 0.85, 0.0

_SPLIT = r"[^\p{L}\p{N}\-./]+"
_JOINERS = r"[\-./]"


@dataclass(frozen=True)
class RecordCodes:
    """The codes of some records: sorted distinct code hashes per record (CSR)."""

    hashes: npt.NDArray[np.uint64]
    offsets: npt.NDArray[np.int64]

    @property
    def records(self) -> int:
        """Number of records."""
        return self.offsets.size - 1

    @classmethod
    def of_table(
        cls, table: pd.DataFrame, specs: list[Field], owner: str
    ) -> RecordCodes:
        """Read the codes of every record from the given text fields."""
        hashes, rows = [], []
        for spec in specs:
            text = normalize(_field_text(table, spec, owner=owner), spec.shingle_config)
            found, at, _ = _codes(text)
            hashes.append(found)
            rows.append(at)
        every = np.concatenate(hashes) if hashes else np.empty(0, np.uint64)
        owner_rows = np.concatenate(rows) if rows else np.empty(0, np.int64)
        order = np.lexsort((every, owner_rows))
        every, owner_rows = every[order], owner_rows[order]
        keep = np.ones(every.size, dtype=bool)
        keep[1:] = (every[1:] != every[:-1]) | (owner_rows[1:] != owner_rows[:-1])
        every, owner_rows = every[keep], owner_rows[keep]
        offsets = np.zeros(len(table) + 1, dtype=np.int64)
        np.cumsum(np.bincount(owner_rows, minlength=len(table)), out=offsets[1:])
        return cls(every, offsets)


@dataclass(frozen=True)
class CodeFrequencies:
    """How many records of the tables hold each code (sorted hashes, counts)."""

    codes: npt.NDArray[np.uint64]
    counts: npt.NDArray[np.int64]

    @classmethod
    def of(cls, parts: list[RecordCodes]) -> CodeFrequencies:
        """Count the codes of some records (each record counts a code once)."""
        every = (
            np.concatenate([part.hashes for part in parts])
            if parts
            else np.empty(0, np.uint64)
        )
        codes, counts = np.unique(every, return_counts=True)
        return cls(codes, counts.astype(np.int64))

    @classmethod
    def merge(cls, parts: list[CodeFrequencies]) -> CodeFrequencies:
        """Add up the frequencies of parts of the records."""
        codes = np.concatenate([part.codes for part in parts])
        counts = np.concatenate([part.counts for part in parts])
        distinct, inverse = np.unique(codes, return_inverse=True)
        return cls(distinct, np.bincount(inverse, weights=counts).astype(np.int64))


@dataclass(frozen=True)
class CodeEvidence:
    """What a table's rows say about codes; parts of a table add up (:meth:`merge`).

    Per field label the words and the present values (for the average), the
    rows holding a code that mixes letters and digits, and all rows. Read from
    the rows ``"auto"`` chooses comparisons from
    (:func:`lsh_frame.compare.plan.comparison_rows`).
    """

    words: dict[str, int]
    present: dict[str, int]
    numbered: int
    records: int

    @classmethod
    def of_table(
        cls, table: pd.DataFrame, specs: list[Field], owner: str
    ) -> CodeEvidence:
        """Read the evidence of one table (or one part of it)."""
        words: dict[str, int] = {}
        present: dict[str, int] = {}
        numbered = np.zeros(len(table), dtype=bool)
        for spec in specs:
            text = normalize(_field_text(table, spec, owner=owner), spec.shingle_config)
            filled = pc.and_(pc.is_valid(text), pc.greater(pc.utf8_length(text), 0))
            counted = pc.filter(text, filled)
            present[spec.label] = len(counted)
            spaces = (
                pc.sum(pc.count_substring(counted, " ")).as_py() if len(counted) else 0
            )
            words[spec.label] = int(spaces or 0) + len(counted)
            _, rows, mixed = _codes(text)
            numbered[rows[mixed]] = True
        return cls(words, present, int(numbered.sum()), len(table))

    @classmethod
    def merge(cls, parts: list[CodeEvidence]) -> CodeEvidence:
        """Add up the evidence of parts of one table."""
        labels = parts[0].words if parts else {}
        return cls(
            {label: sum(part.words[label] for part in parts) for label in labels},
            {label: sum(part.present[label] for part in parts) for label in labels},
            sum(part.numbered for part in parts),
            sum(part.records for part in parts),
        )


def reads_codes(tables: list[CodeEvidence]) -> bool:
    """Whether the tables turn the codes on (see the module docstring).

    Some field's present values average at least ``CODE_MIN_WORDS`` words (over
    all the tables), and in every table at least ``MODEL_NUMBER_SHARE`` of the
    records hold a code that mixes letters and digits.
    """
    if not tables:
        return False
    long_text = any(
        present and words / present >= CODE_MIN_WORDS
        for words, present in (
            (
                sum(table.words[label] for table in tables),
                sum(table.present[label] for table in tables),
            )
            for label in tables[0].words
        )
    )
    return long_text and all(
        table.records and table.numbered / table.records >= MODEL_NUMBER_SHARE
        for table in tables
    )


def code_scores(
    left: RecordCodes,
    right: RecordCodes,
    frequencies: CodeFrequencies,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
) -> npt.NDArray[np.float64]:
    """Return the ``codes`` score of each pair of a ``left`` and a ``right`` record.

    A code the frequencies do not know (not possible when they count the
    scored tables) counts as held by one record.

    Examples
    --------
    >>> hashes, offsets = np.array([5, 7, 7, 9], np.uint64), np.array([0, 2, 3, 4, 4])
    >>> codes = RecordCodes(hashes, offsets)
    >>> held = CodeFrequencies(np.array([5, 7, 9], np.uint64), np.array([1, 2, 1]))
    >>> first, second = np.array([0, 0, 0]), np.array([1, 2, 3])
    >>> code_scores(codes, codes, held, first, second).tolist()
    [1.0, 0.0, nan]
    """
    size = first.size
    scores = np.full(size, np.nan)
    if size == 0:
        return scores
    # One CSR of both sides' sets of dense ids (the right records after the left).
    every = np.concatenate([left.hashes, right.hashes])
    known = np.searchsorted(frequencies.codes, every)
    known = np.minimum(known, max(frequencies.codes.size - 1, 0))
    held = (
        frequencies.codes[known] == every
        if frequencies.codes.size
        else np.zeros(every.size, bool)
    )
    counts = np.where(held, frequencies.counts[known] if held.any() else 1, 1)
    distinct, ids = np.unique(every, return_inverse=True)
    values = np.ones(distinct.size, dtype=np.int64)
    values[ids] = counts
    offsets = np.concatenate([left.offsets, left.offsets[-1] + right.offsets[1:]])
    second_rows = second + left.records
    least = intersection_minimum(
        ids.astype(np.int64), offsets, first, second_rows, values
    )
    sizes = np.diff(offsets)
    both = (sizes[first] > 0) & (sizes[second_rows] > 0)
    scores[both] = CONFLICT
    scores[least > FEW] = SHARED_COMMON
    scores[(least > RARE) & (least <= FEW)] = SHARED_FEW
    scores[(least >= 1) & (least <= RARE)] = SHARED_RARE
    return scores


def code_texts(values: list[str]) -> list[str]:
    """Return the distinct codes of some values, in the order they appear.

    Examples
    --------
    >>> code_texts(["Panasonic KX-TG6645B phone", "kx-tg6645b, 500GB"])
    ['kxtg6645b', '500gb']
    """
    text = normalize(pa.array(values, pa.large_string()), ShingleConfig())
    tokens = pc.split_pattern_regex(text, _SPLIT)
    flat = pc.replace_substring_regex(pc.list_flatten(tokens), _JOINERS, "")
    kept = [
        token
        for token in flat.to_pylist()
        if len(token) >= 3
        and any(char.isdigit() for char in token)
        and (len(token) >= 4 or any(char.isalpha() for char in token))
    ]
    return list(dict.fromkeys(kept))


def _codes(
    text: pa.Array,
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
    """Return the hashes of the codes of normalised values, with their rows.

    And for each code whether it mixes letters and digits.
    """
    tokens = pc.split_pattern_regex(pc.fill_null(text, ""), _SPLIT)
    rows = pc.list_parent_indices(tokens).to_numpy().astype(np.int64)
    flat = pc.replace_substring_regex(pc.list_flatten(tokens), _JOINERS, "")
    length = pc.utf8_length(flat)
    is_code = pc.and_(
        pc.and_(pc.greater_equal(length, 3), pc.match_substring_regex(flat, r"\p{N}")),
        pc.or_(pc.match_substring_regex(flat, r"\p{L}"), pc.greater_equal(length, 4)),
    )
    mask = is_code.to_numpy(zero_copy_only=False)
    codes = pc.filter(flat, is_code)
    points, offsets = codepoints(codes)
    hashed = hashing.word_hashes(points, offsets[:-1], offsets[1:])
    mixed = pc.match_substring_regex(codes, r"\p{L}").to_numpy(zero_copy_only=False)
    return hashed, rows[mask], np.asarray(mixed, dtype=bool)
