"""Score candidate pairs field by field, combine the scores and decide matches.

Per compared field a pair gets:

- ``<field>_jaccard``: the exact Jaccard similarity of the two values' shingle
  sets (the field's :class:`~lsh_frame.ShingleConfig`);
- ``<field>_estimate`` (on request): the MinHash estimate of that similarity;
- ``<field>_score``: the field's comparison (a rapidfuzz scorer, the Jaccard
  similarity, or exact equality) in [0, 1].

Every score is NaN when either value is missing or blank. ``score`` is the
weighted mean of the field scores over the fields present in both records.
``match`` says whether it reaches a given ``min_score``; by default it is
decided without labels: a provisional cut on ``score`` (:func:`auto_min_score`)
then field weights learned from it (:class:`MatchModel`, ``match_probability``).

Work is proportional to the distinct *value pairs*, not the record pairs: the
values of a field are normalised and dictionary-encoded once; a pair whose two
values are equal scores 1 without any comparison, and each distinct pair of
unequal values is compared once, with rapidfuzz's ``process.cpdist`` on all
cores and the set kernels of ``_kernels.sets`` for Jaccard; fields are scored
concurrently.
"""

from __future__ import annotations

import dataclasses
import numbers
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Union

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from rapidfuzz import distance, fuzz, process

from lsh_frame import _nicknames, _progress, _swaps, _tfidf
from lsh_frame._arrow import check_compatible, signature_matrix
from lsh_frame._kernels import sets
from lsh_frame._kernels.pairs import sorted_unique
from lsh_frame._typed_compare import (
    TYPED_COMPARISONS,
    YEAR_CUTS,
    DateValues,
    DayCheck,
    DayCounts,
    TypedColumn,
    auto_typed_comparison,
    check_days,
    equal_scores,
    fuzzy_workers,
    typed_scores,
    typed_values,
)
from lsh_frame._validation import check_bool, check_columns, check_int
from lsh_frame._warn import warn
from lsh_frame.blocking import (
    NEIGHBOURS_KEY,
    RECORD_KEY,
    Field,
    _as_fields,
    _check_frame,
    _field_text,
    _stored_config,
    candidates,
    is_compound_label,
    other_table,
)
from lsh_frame.config import MinHashConfig
from lsh_frame.errors import ColumnError, ConfigError, ConfigTypeError
from lsh_frame.identical import IDENTICAL, found_identical
from lsh_frame.minhash import sign_array
from lsh_frame.model import (
    AUTO_MIN_SCORE_RANGE,
    DEFAULT_MIN_SCORE,
    LevelTable,
    MatchModel,
    ScoreSpread,
    auto_min_score,
    cuts_for,
    expected_f1_cut,
    learn_model,
    merge_probability_counts,
    placeholders_dict,
    probability_counts,
)
from lsh_frame.one_to_one import (
    OneToOne,
    assignment_split,
    check_one_to_one,
    choose,
    clear_best,
)
from lsh_frame.shingle import ColumnTexts, normalize, tokenize
from lsh_frame.transitive import (
    THROUGH_MATCHES,
    Transitive,
    check_transitive,
    closable,
    close,
    decide_found,
    found_pairs,
    held_among,
    pair_codes,
    path_pairs,
    through_matches,
)
from lsh_frame.vectors import VECTOR_KINDS, vector_scores

__all__ = [
    "AUTO_MIN_SCORE_RANGE",
    "DEFAULT_MIN_SCORE",
    "FUZZY_MAX_CHARS",
    "MatchModel",
    "auto_min_score",
    "pairs",
    "score",
]

#: rapidfuzz scorers by name, and the number that maps their result to [0, 1].
SCORERS: dict[str, tuple[Callable[..., float], float]] = {
    "ratio": (distance.Indel.normalized_similarity, 1.0),
    "token_sort_ratio": (fuzz.token_sort_ratio, 100.0),
    "token_set_ratio": (fuzz.token_set_ratio, 100.0),
    "partial_ratio": (fuzz.partial_ratio, 100.0),
    "jaro_winkler": (distance.JaroWinkler.normalized_similarity, 1.0),
    "levenshtein": (distance.Levenshtein.normalized_similarity, 1.0),
}

#: Fuzzy comparisons (the rapidfuzz scorers) see at most this many leading
#: characters of each normalised value. Their cost grows with the product of the
#: two lengths — two near-identical values of a million characters took 20 s —
#: so a longer value (a pasted document, a log) is compared on its first
#: ``FUZZY_MAX_CHARS`` characters. Names, addresses, titles and short
#: descriptions are far shorter and untouched; Jaccard similarity (and
#: ``compare="jaccard"`` or ``"exact"``) always uses the whole value.
FUZZY_MAX_CHARS = 4_000
#: Scorers that compare a value as one string: they compare it without the
#: punctuation at its ends, which is how a source writes a value, not what it
#: says (``(1994).`` and ``1994,``; ``smith.`` and ``smith``). In one short
#: word it costs much (``1994`` and ``1994.`` score 0.89) and puts a value's
#: copies among the near misses, where a real difference (``1993``) also
#: falls. Punctuation inside a value (``285-295``, ``o'brien``) counts, and a
#: value of nothing but punctuation stays as it is. The word scorers keep
#: every character: against a value of several words a stray mark costs
#: little.
EDGE_TRIMMED_SCORERS = frozenset({"ratio", "jaro_winkler", "levenshtein"})
_EDGE_PUNCTUATION = r"^[\p{P}\p{Z}\s]+|[\p{P}\p{Z}\s]+$"
#: Rows of a table that ``compare="auto"`` looks at (evenly spaced).
_AUTO_COMPARE_ROWS = 20_000
#: ``compare="auto"`` picks ``"tfidf"`` when the median non-blank value holds
#: at least this many words: product names (8 on Abt-Buy) and descriptions,
#: citation titles, author lists and venues (7 to 8 on Cora) do; names,
#: street addresses (2 to 3), places, dates and codes do not.
TFIDF_MIN_WORDS = 5
#: Pairs of signature rows compared at a time (bounds the temporaries).
_ESTIMATE_CHUNK = 65_536

MinScore = Union[float, Literal["auto"], "MatchModel", dict]


@dataclass(frozen=True)
class _Encoded:
    """A field's values, dictionary-encoded across both tables.

    ``dictionary`` holds the normalised text of each distinct raw value (two
    raw values that normalise alike keep two entries); ``left`` and ``right``
    are each record's code in it (``-1`` for missing or blank values; one array
    for both sides when deduplicating); ``raw`` the raw text of each entry.
    """

    dictionary: pa.Array
    left: npt.NDArray[np.int64]
    right: npt.NDArray[np.int64]
    raw: pa.Array
    #: The token sets of every entry, when several fields share them.
    every_set: _ValueSets | None = None


def _encode(
    spec: Field, left: pd.DataFrame, right: pd.DataFrame | None, owner: str
) -> _Encoded:
    return _encode_together([spec], left, right, owner)[spec.label]


def _encode_together(
    specs: list[Field],
    left: pd.DataFrame,
    right: pd.DataFrame | None,
    owner: str,
    texts: ColumnTexts | None = None,
) -> dict[str, _Encoded]:
    """Encode several fields of one shingle configuration in one dictionary.

    Every comparison looks a pair's values up by their codes, so fields can
    share a dictionary: for a few pairs (a batch of new records) one pass over
    all the fields costs far less than one per field. ``texts`` holds the
    text of columns of ``left`` or ``right`` when already converted.
    """
    config = specs[0].shingle_config
    assert all(spec.shingle_config == config for spec in specs)
    arrays = []
    for spec in specs:
        arrays.append(_field_text(left, spec, owner=owner, texts=texts))
        if right is not None:
            arrays.append(_field_text(right, spec, owner=owner, texts=texts))
    raw = pa.concat_arrays(arrays) if len(arrays) > 1 else arrays[0]
    # Normalise each distinct raw value once: far cheaper than normalising
    # every record. Raw values that normalise alike keep their own codes (a
    # second encoding costs more than it saves); every comparison of their
    # normalised text still gives exactly what equal codes give.
    encoded = raw.dictionary_encode()
    normalized = normalize(encoded.dictionary, config)
    blank = pc.fill_null(pc.equal(normalized, ""), True).to_numpy(zero_copy_only=False)
    recode = np.append(np.where(blank, -1, np.arange(blank.size)), -1)
    codes = recode[pc.fill_null(encoded.indices, -1).to_numpy()]
    # Few values: shingle every entry once, for all the fields.
    every_set = (
        _value_sets(normalized, np.arange(len(normalized)), specs[0], None)
        if len(specs) > 1
        else None
    )
    result = {}
    start = 0
    for spec in specs:
        left_codes = codes[start : start + len(left)]
        start += len(left)
        right_codes = left_codes
        if right is not None:
            right_codes = codes[start : start + len(right)]
            start += len(right)
        result[spec.label] = _Encoded(
            dictionary=normalized,
            left=left_codes,
            right=right_codes,
            raw=encoded.dictionary,
            every_set=every_set,
        )
    return result


def comparison_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Return the evenly spaced rows ``compare="auto"`` looks at."""
    return table.iloc[:: comparison_step(len(table))]


def comparison_step(rows: int) -> int:
    """Return the spacing of the rows ``compare="auto"`` looks at."""
    return max(1, rows // _AUTO_COMPARE_ROWS)


def _resolve_comparison(spec: Field, samples: list[pd.DataFrame], owner: str) -> str:
    """Return the field's comparison.

    ``"auto"`` looks at up to ``_AUTO_COMPARE_ROWS`` evenly spaced rows of each
    table (``samples``, from :func:`comparison_rows`: a share or a median needs
    no more), never at which pairs are scored. Date columns, float columns and
    text that is mostly dates or marked numbers get ``"date"`` or ``"number"``
    (see :func:`lsh_frame._typed_compare.auto_typed_comparison`); otherwise it
    counts the words of the non-blank values: a median of at least
    ``TFIDF_MIN_WORDS`` → ``"tfidf"`` (long text, where rare words decide);
    else more than half of them with several words → ``"token_sort_ratio"``;
    else ``"ratio"``.
    """
    if spec.compare != "auto":
        return spec.compare
    texts = [_field_text(sample, spec, owner=owner) for sample in samples]
    text = pc.utf8_trim_whitespace(
        pa.concat_arrays(texts) if len(texts) > 1 else texts[0]
    )
    typed = auto_typed_comparison(
        [sample[spec.columns[0]] for sample in samples]
        if len(spec.columns) == 1
        else None,
        text,
    )
    if typed is not None:
        return typed
    filled = pc.fill_null(pc.not_equal(text, ""), False).to_numpy(zero_copy_only=False)
    words = pc.list_value_length(pc.utf8_split_whitespace(text))
    words = pc.fill_null(words, 0).to_numpy(zero_copy_only=False)[filled]
    if not words.size:
        return "ratio"
    if np.median(words) >= TFIDF_MIN_WORDS:
        return "tfidf"
    return "token_sort_ratio" if np.mean(words > 1) > 0.5 else "ratio"


def _fuzzy(
    dictionary: pa.Array,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    comparison: str,
    score_cutoff: float | None = None,
) -> npt.NDArray[np.float64]:
    """Scores of pairs of dictionary values (0 below ``score_cutoff``, if given)."""
    scorer, scale = SCORERS[comparison]
    # One Python string per distinct value, shared by every pair that uses it.
    needed = sorted_unique(np.concatenate([first, second]))
    values = dictionary.take(pa.array(needed))
    if comparison in EDGE_TRIMMED_SCORERS:
        values = _without_edge_punctuation(values)
    # A value of at most FUZZY_MAX_CHARS bytes has at most as many characters,
    # so the byte lengths (read off the offsets) say whether to cut at all.
    if len(values) and pc.max(pc.binary_length(values)).as_py() > FUZZY_MAX_CHARS:
        values = pc.utf8_slice_codeunits(values, 0, FUZZY_MAX_CHARS)
    strings = values.to_numpy(zero_copy_only=False)
    where = np.empty(len(dictionary), dtype=np.int64)
    where[needed] = np.arange(needed.size)
    result = process.cpdist(
        strings[where[first]],
        strings[where[second]],
        scorer=scorer,
        workers=fuzzy_workers(first.size),
        dtype=np.float64,
        # A little below the cutoff: rapidfuzz turns a normalised cutoff into a
        # distance, and a score exactly at it (0.8 = 1 - 2/10) must stay.
        score_cutoff=None if score_cutoff is None else (score_cutoff - 1e-6) * scale,
    )
    return np.asarray(result, dtype=np.float64) / scale


def _without_edge_punctuation(values: pa.Array) -> pa.Array:
    """Return the values without punctuation (or spaces) at their ends.

    A value of nothing but punctuation is kept whole: ``"-"`` and ``"?"``
    stay different, and neither turns into an empty value.

    Examples
    --------
    >>> _without_edge_punctuation(pa.array(["(1994).", "1994,", "o'brien", "-"]))
    ... # doctest: +ELLIPSIS
    <pyarrow.lib.StringArray object at ...>
    [
      "1994",
      "1994",
      "o'brien",
      "-"
    ]
    """
    trimmed = pc.replace_substring_regex(values, _EDGE_PUNCTUATION, "")
    return pc.if_else(pc.equal(trimmed, ""), values, trimmed)


@dataclass(frozen=True)
class _ValueSets:
    """Shingle sets (and optionally signatures) of some dictionary values."""

    lookup: npt.NDArray[np.int64]
    table: sets.SetTable
    signatures: npt.NDArray | None
    signed: npt.NDArray[np.bool_] | None

    def position(self, codes: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Rows of the given dictionary codes in these sets."""
        return self.lookup[codes]


def _value_sets(
    dictionary: pa.Array,
    values: npt.NDArray[np.int64],
    spec: Field,
    estimate_config: MinHashConfig | None,
) -> _ValueSets:
    text = dictionary.take(pa.array(values)).cast(pa.large_string())
    tokens = tokenize(text, spec.shingle_config, normalized=True)
    signatures = signed = None
    if estimate_config is not None:
        signatures, signed = sign_array(text, estimate_config)
    lookup = np.full(len(dictionary), -1, dtype=np.int64)
    lookup[values] = np.arange(values.size)
    table = sets.SetTable.build(tokens.hashes, tokens.offsets)
    return _ValueSets(lookup, table, signatures, signed)


def _jaccard(
    value_sets: _ValueSets,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
) -> npt.NDArray[np.float64]:
    at_first, at_second = value_sets.position(first), value_sets.position(second)
    shared = value_sets.table.intersection_sizes(at_first, at_second)
    sizes = value_sets.table.sizes
    union = sizes[at_first] + sizes[at_second] - shared
    with np.errstate(invalid="ignore", divide="ignore"):
        result = shared / union
    result[(sizes[at_first] == 0) | (sizes[at_second] == 0)] = np.nan
    return result


def _has_shingles(
    dictionary: pa.Array, codes: npt.NDArray[np.int64], spec: Field
) -> npt.NDArray[np.bool_]:
    """Whether normalised values are long enough for one character shingle."""
    assert spec.shingle == "char" and spec.shingle_config.k is not None
    lengths = pc.utf8_length(dictionary).to_numpy()
    return np.asarray(lengths[codes] >= spec.shingle_config.k)


def _agreement(
    left_matrix: npt.NDArray,
    right_matrix: npt.NDArray,
    left_rows: npt.NDArray[np.int64],
    right_rows: npt.NDArray[np.int64],
    valid: npt.NDArray[np.bool_],
) -> npt.NDArray[np.float64]:
    """Share of equal signature values of row pairs; NaN where a row is unsigned.

    Rows are gathered a chunk at a time, so memory does not grow with the
    number of pairs.
    """
    result = np.full(left_rows.size, np.nan)
    for start in range(0, left_rows.size, _ESTIMATE_CHUNK):
        stop = start + _ESTIMATE_CHUNK
        equal = (
            left_matrix[left_rows[start:stop]] == right_matrix[right_rows[start:stop]]
        )
        result[start:stop] = equal.mean(axis=1)
    result[~valid] = np.nan
    return result


@dataclass(frozen=True)
class _ValuePairs:
    """Pairs of dictionary codes, reduced to the distinct pairs of unequal values.

    ``equal`` and ``differ`` mark the pairs whose two values are present and
    equal, or present and different; ``low`` and ``high`` are the distinct
    unordered pairs of different values (``low < high``) and ``inverse`` the
    distinct pair of each differing pair.
    """

    first: npt.NDArray[np.int64]
    equal: npt.NDArray[np.bool_]
    differ: npt.NDArray[np.bool_]
    low: npt.NDArray[np.int64]
    high: npt.NDArray[np.int64]
    inverse: npt.NDArray[np.int64]

    @classmethod
    def of(
        cls, first: npt.NDArray[np.int64], second: npt.NDArray[np.int64], size: int
    ) -> _ValuePairs:
        """Reduce pairs of codes in a dictionary of ``size`` values."""
        present = (first >= 0) & (second >= 0)
        equal = present & (first == second)
        differ = present & ~equal
        # Every comparison is symmetric, so (a, b) and (b, a) are one value
        # pair; ordering them makes swapped pairs score identically.
        first_differ, second_differ = first[differ], second[differ]
        low = np.minimum(first_differ, second_differ)
        high = np.maximum(first_differ, second_differ)
        size = max(size, 1)
        distinct, inverse = sets.unique_inverse(low * np.int64(size) + high)
        distinct_low, distinct_high = np.divmod(distinct, np.int64(size))
        return cls(first, equal, differ, distinct_low, distinct_high, inverse)

    def spread(
        self,
        on_equal: npt.NDArray[np.float64] | float,
        on_differ: npt.NDArray[np.float64],
    ) -> npt.NDArray[np.float64]:
        """One value per pair, NaN where a value is missing.

        Equal values get ``on_equal``, different ones ``on_differ`` of their
        distinct pair.
        """
        result = np.full(self.first.size, np.nan)
        result[self.equal] = on_equal
        result[self.differ] = on_differ[self.inverse]
        return result


def _equal_jaccard(
    encoded: _Encoded,
    value_sets: _ValueSets,
    codes: npt.NDArray[np.int64],
    spec: Field,
    cheap_equal: bool,
) -> npt.NDArray[np.float64]:
    """Jaccard of equal values: 1 whenever they have a shingle at all (else NaN).

    For character shingles (``cheap_equal``) their length says so, without
    shingling them.
    """
    if cheap_equal:
        has_shingles = _has_shingles(encoded.dictionary, codes, spec)
    else:
        has_shingles = value_sets.table.sizes[value_sets.position(codes)] > 0
    return np.where(has_shingles, 1.0, np.nan)


def _score_text_field(
    spec: Field,
    left: pd.DataFrame,
    right: pd.DataFrame | None,
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
    *,
    comparison: str,
    estimate_config: MinHashConfig | None,
    owner: str,
    frequencies: _tfidf.DocumentFrequencies | None = None,
    encoded: _Encoded | None = None,
    placeholders: tuple[int, ...] | None = None,
) -> dict[str, npt.NDArray[np.float64]]:
    if encoded is None:
        encoded = _encode(spec, left, right, owner)
    first = encoded.left[left_positions]
    second = encoded.right[right_positions]
    pairs = _ValuePairs.of(first, second, len(encoded.dictionary))
    equal, spread = pairs.equal, pairs.spread
    distinct_low, distinct_high = pairs.low, pairs.high

    # Character shingles: equal values need no shingling (_equal_jaccard).
    cheap_equal = spec.shingle == "char" and estimate_config is None
    value_sets = (
        encoded.every_set
        if encoded.every_set is not None and estimate_config is None
        else _value_sets(
            encoded.dictionary,
            sorted_unique(
                np.concatenate(
                    [distinct_low, distinct_high]
                    + ([] if cheap_equal else [first[equal]])
                )
            ),
            spec,
            estimate_config,
        )
    )
    columns: dict[str, npt.NDArray[np.float64]] = {}
    jaccard = spread(
        _equal_jaccard(encoded, value_sets, first[equal], spec, cheap_equal),
        _jaccard(value_sets, distinct_low, distinct_high),
    )
    columns[f"{spec.label}_jaccard"] = jaccard
    if value_sets.signatures is not None and value_sets.signed is not None:
        at_low = value_sets.position(distinct_low)
        at_high = value_sets.position(distinct_high)
        agreement = _agreement(
            value_sets.signatures,
            value_sets.signatures,
            at_low,
            at_high,
            value_sets.signed[at_low] & value_sets.signed[at_high],
        )
        signed_equal = np.where(
            value_sets.signed[value_sets.position(first[equal])], 1.0, np.nan
        )
        columns[f"{spec.label}_estimate"] = spread(signed_equal, agreement)
    if comparison == "jaccard":
        field_score = jaccard
    elif comparison == "exact":
        same_text = pc.equal(
            encoded.dictionary.take(pa.array(distinct_low)),
            encoded.dictionary.take(pa.array(distinct_high)),
        )
        field_score = spread(1.0, same_text.to_numpy(zero_copy_only=False) * 1.0)
    elif comparison in TYPED_COMPARISONS:
        read = typed_values(
            comparison,
            encoded.raw,
            [
                TypedColumn(table[spec.columns[0]], codes)
                for table, codes in (
                    [(left, encoded.left)]
                    + ([] if right is None else [(right, encoded.right)])
                )
            ]
            if len(spec.columns) == 1
            else None,
            # A dictionary shared with other fields holds their values too:
            # only the ones these pairs compare are read.
            entries=None
            if encoded.every_set is None
            else sorted_unique(
                np.concatenate([distinct_low, distinct_high, first[equal]])
            ),
        )
        field_score = spread(
            equal_scores(read, first[equal], placeholders),
            typed_scores(
                comparison,
                read,
                distinct_low,
                distinct_high,
                encoded.dictionary,
                placeholders,
            ),
        )
    elif comparison == "tfidf":
        if frequencies is None:
            tables = [left] if right is None else [left, right]
            frequencies = _tfidf.DocumentFrequencies.of_tables(spec, tables, owner)
        field_score = spread(
            *_tfidf.scores(
                encoded.dictionary,
                frequencies,
                distinct_low,
                distinct_high,
                first[equal],
            )
        )
    else:
        field_score = spread(
            1.0, _fuzzy(encoded.dictionary, distinct_low, distinct_high, comparison)
        )
    columns[f"{spec.label}_score"] = field_score
    return columns


#: Comparisons :func:`_score_fields_together` scores (the others read more
#: than the distinct pairs' text: a field's dictionary, documents, types).
_TOGETHER = (*SCORERS, "jaccard")


def _score_fields_together(
    specs: list[Field],
    encoded: dict[str, _Encoded],
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
    comparisons: dict[str, str],
) -> dict[str, dict[str, npt.NDArray[np.float64]]]:
    """Score fields of one shared dictionary at once: each field's columns.

    The columns :func:`_score_text_field` gives each field (comparisons in
    ``_TOGETHER``, no estimate), from the fields' pairs stacked: one Jaccard
    pass over every field's distinct value pairs and one ``cpdist`` per
    scorer. A distinct pair of values scores as it does alone, so the columns
    are the same; for a few pairs (a batch of new records) the passes, not the
    pairs, are the cost.
    """
    count = left_positions.size
    shared = encoded[specs[0].label]
    assert shared.every_set is not None
    assert all(encoded[spec.label].every_set is shared.every_set for spec in specs)
    pairs = _ValuePairs.of(
        np.concatenate([encoded[spec.label].left[left_positions] for spec in specs]),
        np.concatenate([encoded[spec.label].right[right_positions] for spec in specs]),
        len(shared.dictionary),
    )

    def by_field(values: npt.NDArray[np.float64]) -> list[npt.NDArray[np.float64]]:
        return list(values.reshape(len(specs), count))

    jaccard = by_field(
        pairs.spread(
            _equal_jaccard(
                shared,
                shared.every_set,
                pairs.first[pairs.equal],
                specs[0],
                specs[0].shingle == "char",
            ),
            _jaccard(shared.every_set, pairs.low, pairs.high),
        )
    )
    scores = dict(enumerate(jaccard))
    # Which field each differing pair is of, to give each scorer its pairs.
    field_of = np.repeat(np.arange(len(specs)), count)[pairs.differ]
    for comparison in dict.fromkeys(comparisons[spec.label] for spec in specs):
        if comparison == "jaccard":
            continue
        members = [
            number
            for number, spec in enumerate(specs)
            if comparisons[spec.label] == comparison
        ]
        compared = sorted_unique(pairs.inverse[np.isin(field_of, members)])
        on_differ = np.full(pairs.low.size, np.nan)
        on_differ[compared] = _fuzzy(
            shared.dictionary,
            pairs.low[compared],
            pairs.high[compared],
            comparison,
        )
        fuzzy = by_field(pairs.spread(1.0, on_differ))
        scores.update((number, fuzzy[number]) for number in members)
    return {
        spec.label: {
            f"{spec.label}_jaccard": jaccard[number],
            f"{spec.label}_score": scores[number],
        }
        for number, spec in enumerate(specs)
    }


def _score_signature_field(
    spec: Field,
    left: pd.DataFrame,
    right: pd.DataFrame | None,
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
) -> tuple[dict[str, npt.NDArray[np.float64]], str]:
    if spec.compare not in ("auto", "jaccard"):
        raise ConfigError(
            f"Field {spec.label!r} is a column of MinHash signatures, which can only "
            f"be compared by their Jaccard estimate. Got compare={spec.compare!r}; "
            "use compare='auto', or give the text column instead."
        )
    column = spec.columns[0]
    left_matrix, left_valid = signature_matrix(left[column])
    right_matrix, right_valid = (
        signature_matrix(right[column])
        if right is not None
        else (left_matrix, left_valid)
    )
    if right is not None:
        left_config = _stored_config(left, spec)
        right_config = _stored_config(right, spec)
        assert left_config is not None and right_config is not None
        check_compatible(
            left_config, right_config, left_name=spec.label, right_name=spec.label
        )
    agreement = _agreement(
        left_matrix,
        right_matrix,
        left_positions,
        right_positions,
        left_valid[left_positions] & right_valid[right_positions],
    )
    return {
        f"{spec.label}_estimate": agreement,
        f"{spec.label}_score": agreement,
    }, "estimate"


def _positions(
    labels: pd.Series, index: pd.Index, role: str, owner: str
) -> npt.NDArray[np.int64]:
    positions = np.asarray(index.get_indexer(pd.Index(labels)), dtype=np.int64)
    if (positions < 0).any():
        unknown = pd.unique(labels[positions < 0])[:3].tolist()
        raise ColumnError(
            f"The '{role}' column of the pairs passed to {owner} names records that "
            f"are not in the {'left' if role == 'left' else 'right'} frame (for "
            f"example {unknown}). Score pairs with the frame(s) they were built from."
        )
    return positions


def _check_pairs(pairs: Any, owner: str) -> pd.DataFrame:
    if not isinstance(pairs, pd.DataFrame):
        raise ConfigTypeError(
            f"The 'pairs' argument of {owner} must be a DataFrame with 'left' and "
            f"'right' columns (from candidates()). Got {type(pairs).__name__} instead."
        )
    missing = [column for column in ("left", "right") if column not in pairs.columns]
    if missing:
        raise ColumnError(
            f"The pairs passed to {owner} have no {missing[0]!r} column. Columns: "
            f"{', '.join(map(str, pairs.columns))}. Pass the frame returned by "
            "candidates()."
        )
    return pairs


def _check_min_score(
    min_score: Any, owner: str
) -> float | Literal["auto"] | MatchModel:
    if isinstance(min_score, str) and min_score == "auto":
        return "auto"
    if isinstance(min_score, (MatchModel, dict)):
        return MatchModel.from_dict(min_score, owner)
    if (
        isinstance(min_score, (bool, np.bool_))
        or not isinstance(min_score, numbers.Real)
        or not 0 <= float(min_score) <= 1
    ):
        raise ConfigError(
            f"The 'min_score' parameter of {owner} must be a number in [0, 1], "
            f"'auto', or a learned model. Got {min_score!r} instead."
        )
    return float(min_score)


def score(
    frame: pd.DataFrame,
    pairs: pd.DataFrame,
    fields: Any,
    /,
    *,
    other: pd.DataFrame | None = None,
    right_on: Any = None,
    min_score: MinScore = "auto",
    values: bool = False,
    estimate: bool = False,
    num_perm: int = 128,
    seed: int = 1,
    one_to_one: OneToOne = "auto",
    transitive: Transitive = "auto",
) -> pd.DataFrame:
    """Score candidate pairs field by field and decide which are matches.

    Parameters
    ----------
    frame : DataFrame
        The records the pairs were built from (the left table when linking).
    pairs : DataFrame
        Candidate pairs with ``left`` and ``right`` columns of index labels, as
        returned by :func:`lsh_frame.candidates`. Other columns are kept.
    fields : column label, Field, or a list of them
        What to compare. A plain column name is compared on its own with
        ``compare="auto"``; a :class:`~lsh_frame.Field` says how
        (``compare``, ``weight``, shingles). A field over several columns is
        compared on its columns' text joined by a space. The rapidfuzz
        comparisons see at most the first :data:`FUZZY_MAX_CHARS` (4,000)
        characters of each normalised value, which bounds their cost on very
        long values; Jaccard similarity always uses the whole value. A field naming a
        column of MinHash signatures is compared by the signature estimate.
    other : DataFrame, optional
        The right table when the pairs link two tables.
    right_on : list of column labels, or dict, optional
        The names ``other`` gives the fields' columns when they differ from
        ``frame``'s: one column of ``other`` per column of the fields, in order,
        or a mapping ``{frame column: other column}`` (see
        :func:`lsh_frame.candidates`). Scores and column names are those of
        renaming ``other``'s columns first.
    min_score : float in [0, 1], "auto", or a learned model
        A number: pairs whose ``score`` reaches it are matches. A learned
        model — ``attrs["lsh_frame"]["model"]`` of an earlier ``"auto"`` run
        on the same fields, or a :class:`MatchModel` — decides by its
        ``match_probability`` (for small batches of new records, which are too
        few to learn from). ``"auto"``
        (default) decides without labels: the valley below the highest group
        of scores (see :func:`auto_min_score`) splits the pairs provisionally;
        a :class:`MatchModel` learns from that split how much agreeing, nearly
        agreeing or differing on each field says, and is refined
        (:meth:`MatchModel.refine`) to take back the matches the split left
        out; pairs whose ``match_probability`` reaches 0.5 are matches.
    values : bool
        Also return both records' raw values of every field side by side
        (``<field>_left`` and ``<field>_right``), for review.
    estimate : bool
        Also return the MinHash estimate of each field's Jaccard similarity
        (``<field>_estimate``; signs each distinct value with ``num_perm`` and
        ``seed``).
    num_perm, seed : int
        Signature length and seed for ``estimate``.
    one_to_one : "auto", True or False
        Only with ``other``: whether each record matches at most one record
        of the other table. True keeps, among the matches, the greedy
        one-to-one choice (most likely first: ``match_probability``, then
        ``score``, then row order) and sets ``match`` to False for the other
        matches; the rows and their ``match_probability`` stay. ``"auto"``
        (default) does so when the data says that neither table holds
        duplicates: for each record with several matches, its two best
        matches are scored against each other (same fields, same decision),
        and when fewer than half of those pairs are matches, several matches
        are confusions. False keeps every match. Without ``other``, ``"auto"``
        and False do nothing and True raises :class:`~lsh_frame.ConfigError`.
    transitive : "auto", True or False
        Only without ``other``: whether a pair whose two records share most of
        their matches is a match too (at least two matched records, and half
        the matches of the record with fewer; see :mod:`lsh_frame.transitive`).
        Its records are in one entity already, so entities do not change; the
        pairs then say what the entities say. ``"auto"`` (default) does so
        when the library decided the matches (``min_score`` ``"auto"`` or a
        model) and they form clusters: at least half of the two-step paths
        between matches (x matches y, y matches z) are closed by a match.
        True always closes; False never does. With ``other``, ``"auto"`` and
        False do nothing and True raises :class:`~lsh_frame.ConfigError`.

    Returns
    -------
    DataFrame
        The pairs (same index, same columns) followed by, per field,
        ``<field>_jaccard``, ``<field>_estimate`` (when asked), ``<field>_score``,
        then ``score``, ``match_probability`` (with ``"auto"`` or a model; NaN
        when fewer than 100 pairs or a one-sided split leave nothing to learn,
        and ``match`` then falls back to the provisional split) and ``match``
        (bool). All scores are in [0, 1] and NaN where either value is missing
        or blank (and, for Jaccard, where either value is shorter than one
        shingle). ``score`` is the mean of the field scores present in both
        records weighted by ``Field.weight``; NaN when no field is present in
        both. ``attrs["lsh_frame"]`` records the ``min_score`` used, each
        field's comparison and weight, and the learned model (``"model"``:
        prior, and m, u and weight in bits per field and level; ``"fit"``: how
        the refinement went; ``"no_values"``: counted fields left out of the
        model because every pair's score on them is missing, so they change
        no decision); ``"one_to_one"``: the rule, whether the one-to-one
        choice was ``applied`` and why (``reason``), the records with
        ``several_matches`` per table, the pairs of best matches ``"auto"``
        ``checked`` per table and how many were ``duplicates``, and the
        matches ``dropped``; ``"transitive"``: the rule, whether it was
        ``applied`` and why (``reason``), the ``closed_share`` of two-step
        paths it read and the matches it ``added``.

    Examples
    --------
    >>> df = pd.DataFrame({"name": ["john smith", "jon smith", "mary jones"],
    ...                    "city": ["leeds", "leeds", None]})
    >>> candidate_pairs = pd.DataFrame({"left": [0, 0], "right": [1, 2]})
    >>> scored = score(df, candidate_pairs, ["name", "city"], min_score=0.8)
    >>> scored[["name_score", "city_score", "score", "match"]].round(3)
       name_score  city_score  score  match
    0       0.947         1.0  0.974   True
    1       0.500         NaN  0.500  False
    """
    return _score(
        frame,
        pairs,
        fields,
        other=other_table(frame, fields, other, right_on, "score"),
        min_score=min_score,
        values=values,
        estimate=estimate,
        num_perm=num_perm,
        seed=seed,
        owner="score",
        one_to_one=one_to_one,
        transitive=transitive,
    )


def _rows_in_use(
    table: pd.DataFrame, *positions: npt.NDArray[np.int64]
) -> tuple[pd.DataFrame, list[npt.NDArray[np.int64]]]:
    """Return the rows the pairs name, when they are few, and positions into them.

    Scoring a handful of pairs (new records against a saved table, or one pair
    to explain) then costs the rows it needs, not the whole table.
    """
    if sum(part.size for part in positions) * 2 > len(table):
        return table, list(positions)  # they may name most rows: skip the sort
    rows = sorted_unique(np.concatenate(positions))
    if rows.size * 2 > len(table):
        return table, list(positions)
    return table.iloc[rows], [np.searchsorted(rows, part) for part in positions]


@dataclass(frozen=True)
class ScorePlan:
    """What scoring decided before looking at any pair (checked options)."""

    specs: list[Field]
    min_score: float | Literal["auto"] | MatchModel
    comparisons: dict[str, str]
    values: bool
    estimate: tuple[int, int] | None  # (num_perm, seed) when asked
    link: bool
    #: Document frequencies of the ``"tfidf"`` fields over every record of
    #: the tables (see :func:`count_documents`), by field label.
    frequencies: dict[str, _tfidf.DocumentFrequencies] = field(default_factory=dict)
    #: Pairs of fields whose values trade places in the tables (see
    #: :func:`check_swaps`): a pair matching better crossed scores crossed.
    swaps: tuple[tuple[str, str], ...] = ()
    #: The statistics that decided ``swaps`` (none when a model gave them).
    swap_checks: tuple[_swaps.SwapCheck, ...] = ()
    #: Fields that hold another's value where that one is missing, as
    #: ``(field, into)`` (see :func:`check_swaps`): a pair matching better so
    #: is read with ``field``'s value as ``into``'s.
    shifts: tuple[tuple[str, str], ...] = ()
    #: The statistics that decided ``shifts`` (none when a model gave them).
    shift_checks: tuple[_swaps.ShiftCheck, ...] = ()
    #: Fields of given names (see :func:`check_nicknames`): the decision reads
    #: two familiar forms of one name as nearly agreeing.
    nicknames: tuple[str, ...] = ()
    #: The statistics that decided ``nicknames`` (none when a model gave them).
    name_checks: tuple[_nicknames.NameCheck, ...] = ()
    #: Placeholder days of the ``"date"`` fields (``month * 100 + day``; see
    #: :func:`check_dates`): a date on one is known only to its year.
    placeholders: dict[str, tuple[int, ...]] = field(default_factory=dict)
    #: ``"date"`` fields holding values known only to their year: read at
    #: YEAR_CUTS, where "the years agree" is a level of its own.
    year_fields: tuple[str, ...] = ()
    #: The statistics that decided both (none when a model gave them).
    date_checks: tuple[DayCheck, ...] = ()

    @property
    def tfidf_fields(self) -> list[Field]:
        """The fields compared by ``"tfidf"`` (they need document frequencies)."""
        return [spec for spec in self.specs if self.comparisons[spec.label] == "tfidf"]

    @property
    def given_model(self) -> MatchModel | None:
        """The learned model given as ``min_score``, if any."""
        return self.min_score if isinstance(self.min_score, MatchModel) else None

    @property
    def counted(self) -> list[Field]:
        """The fields that count towards ``score`` and the match model."""
        return [spec for spec in self.specs if spec.weight > 0]

    @property
    def field_cuts(self) -> dict[str, tuple[float, ...]]:
        """Level cuts of each counted field: the given model's, or by comparison."""
        given = self.given_model
        if given is not None:
            return {label: given.cuts_of(label) for label in self.labels}
        return {
            label: YEAR_CUTS
            if label in self.year_fields
            else cuts_for(self.comparisons[label])
            for label in self.labels
        }

    @property
    def labels(self) -> list[str]:
        """Labels of the counted fields, in order (the model's field columns)."""
        return [spec.label for spec in self.counted]

    def placeholders_of(self, label: str) -> tuple[int, ...] | None:
        """Return a date field's placeholder days; None unless read at YEAR_CUTS."""
        if label not in self.year_fields:
            return None
        return self.placeholders.get(label, ())

    def levels(
        self, field_scores: dict[str, npt.NDArray[np.float64]]
    ) -> dict[str, npt.NDArray[np.intp]]:
        """Match-model levels of the counted fields."""
        cuts = self.field_cuts  # every field's, built at each reading
        return {
            spec.label: MatchModel.levels(field_scores[spec.label], cuts[spec.label])
            for spec in self.counted
        }


def plan_score(
    tables: list[pd.DataFrame],
    samples: list[pd.DataFrame],
    fields: Any,
    *,
    min_score: Any,
    values: Any,
    estimate: Any,
    num_perm: Any,
    seed: Any,
    owner: str,
) -> ScorePlan:
    """Check the options of :func:`score` and resolve each field's comparison.

    ``tables`` are the frames (or empty frames of their columns), ``samples``
    their :func:`comparison_rows`.
    """
    specs, _ = _as_fields(fields, owner)
    checked = _check_min_score(min_score, owner)
    values = check_bool(values, "values", owner)
    estimate = check_bool(estimate, "estimate", owner)
    if estimate:
        num_perm = check_int(num_perm, "num_perm", owner, minimum=1, maximum=8192)
        seed = check_int(seed, "seed", owner, minimum=0)
    for spec in specs:
        for table in tables:
            check_columns(table, list(spec.columns), owner)
    if not any(spec.weight > 0 for spec in specs):
        raise ConfigError(
            f"Every field passed to {owner} has weight 0, so no pair can get a "
            "combined score. Give at least one field a weight above 0."
        )
    if isinstance(checked, MatchModel):
        checked.check_fields(specs, owner)
    comparisons = {}
    for spec in specs:
        if _stored_config(tables[0], spec) is not None:
            comparisons[spec.label] = "estimate"
            continue
        if spec.compare in VECTOR_KINDS or (
            spec.compare == "auto" and spec.blocking in VECTOR_KINDS
        ):
            comparisons[spec.label] = (
                spec.compare if spec.compare != "auto" else str(spec.blocking)
            )
            continue
        comparison = _resolve_comparison(spec, samples, owner)
        if isinstance(checked, MatchModel) and spec.compare == "auto":
            # Score as the model was learned, whatever this batch looks like.
            comparison = checked.compare.get(spec.label, comparison)
        comparisons[spec.label] = comparison
    return ScorePlan(
        specs=specs,
        min_score=checked,
        comparisons=comparisons,
        values=values,
        estimate=(num_perm, seed) if estimate else None,
        link=len(tables) > 1,
    )


def count_documents(
    plan: ScorePlan, tables: list[pd.DataFrame], owner: str
) -> ScorePlan:
    """Return the plan with its ``"tfidf"`` fields' frequencies over the tables.

    Every record of every table counts, whichever pairs are scored, so that
    parts of the pairs (Dask partitions) score exactly as all of them.
    """
    if not plan.tfidf_fields:
        return plan
    return replace(
        plan,
        frequencies={
            spec.label: _tfidf.DocumentFrequencies.of_tables(spec, tables, owner)
            for spec in plan.tfidf_fields
        },
    )


def check_tables(plan: ScorePlan, tables: list[pd.DataFrame], owner: str) -> ScorePlan:
    """Return the plan with its swapped fields and its fields of given names.

    Both are statistics of every record of the tables (or a given model's);
    each fuzzy field's values are normalised once for both.
    """
    values = (
        None
        if plan.given_model is not None
        else [
            {
                spec.label: _swaps.field_values(table, spec, owner)
                for spec in name_fields(plan)
            }
            for table in tables
        ]
    )
    plan = check_swaps(plan, tables, owner, values=values)
    plan = check_nicknames(plan, tables, owner, values=values)
    return check_dates(plan, tables, owner)


def date_fields(plan: ScorePlan) -> list[Field]:
    """Return the fields compared by ``"date"``."""
    return [spec for spec in plan.specs if plan.comparisons[spec.label] == "date"]


def count_days(spec: Field, table: pd.DataFrame, owner: str) -> DayCounts:
    """Count a ``"date"`` field's values of one table by day of the year."""
    encoded = _field_text(table, spec, owner=owner).dictionary_encode()
    codes = pc.fill_null(encoded.indices, -1).to_numpy()
    dates = typed_values(
        "date",
        encoded.dictionary,
        [TypedColumn(table[spec.columns[0]], codes)]
        if len(spec.columns) == 1
        else None,
    )
    assert isinstance(dates, DateValues)
    counts = np.bincount(codes[codes >= 0], minlength=len(encoded.dictionary))
    return DayCounts.of(dates, counts.astype(np.int64))


def check_dates(plan: ScorePlan, tables: list[pd.DataFrame], owner: str) -> ScorePlan:
    """Return the plan with its date fields' placeholder days.

    A given model brings its own (and its level cuts); otherwise every record
    of every table counts (see :func:`lsh_frame._typed_compare.check_days`),
    whichever pairs are scored.
    """
    given = plan.given_model
    specs = date_fields(plan)
    if given is not None:
        _check_model_fields(
            given.placeholders, specs, "reads placeholder days in", "'date'", owner
        )
        # Its date fields read at YEAR_CUTS read years alone and placeholders
        # so; those of models saved before them read as those models did.
        return replace(
            plan,
            placeholders=dict(given.placeholders),
            year_fields=tuple(
                spec.label
                for spec in specs
                if spec.label in given.m and YEAR_CUTS[1] in given.cuts_of(spec.label)
            ),
        )
    return with_date_checks(
        plan,
        [
            check_days(
                spec.label,
                DayCounts.merge([count_days(spec, table, owner) for table in tables]),
            )
            for spec in specs
        ],
    )


def with_date_checks(plan: ScorePlan, checks: list[DayCheck]) -> ScorePlan:
    """Return the plan with these statistics and what they decide."""
    return replace(
        plan,
        placeholders={
            check.label: check.placeholders for check in checks if check.placeholders
        },
        year_fields=tuple(check.label for check in checks if check.year_level),
        date_checks=tuple(checks),
    )


def check_swaps(
    plan: ScorePlan,
    tables: list[pd.DataFrame],
    owner: str,
    *,
    values: list[dict[str, pa.Array]] | None = None,
) -> ScorePlan:
    """Return the plan with the fields whose values trade places or shift.

    A given model brings its own (the decision of its pairs read them);
    otherwise every record of every table counts (see :mod:`lsh_frame._swaps`),
    whichever pairs are scored. ``values``: each table's normalised values of
    the fuzzy fields, when already read.
    """
    given = plan.given_model
    pairs = _swaps.field_pairs(plan.specs, plan.comparisons, tuple(SCORERS))
    if given is not None:
        possible = {(first.label, second.label) for first, second in pairs}
        wrong = [pair for pair in given.swaps if pair not in possible] + [
            pair
            for pair in given.shifts
            if pair not in possible and pair[::-1] not in possible
        ]
        if wrong:
            raise ConfigError(
                f"{owner} got a learned model that scores the fields {wrong!r} "
                "crossed, but these fields are not compared by one fuzzy scorer "
                "with the same normalisation here. Score with the fields and "
                "comparisons the model was learned with."
            )
        return replace(plan, swaps=given.swaps, shifts=given.shifts)
    if not pairs:
        return plan
    if values is None:
        values = [_swaps.normalised(table, pairs, owner) for table in tables]
    pairs = _swaps.sharing(
        pairs,
        [
            _swaps.vocabularies(
                {spec.label: part[spec.label] for pair in pairs for spec in pair}
            )
            for part in values
        ],
    )
    counts = _swaps.merge_counts([_swaps.count_values(part, pairs) for part in values])
    return with_swap_checks(plan, _swaps.check(counts), _swaps.check_shifts(counts))


def with_swap_checks(
    plan: ScorePlan,
    checks: list[_swaps.SwapCheck],
    shift_checks: list[_swaps.ShiftCheck] | None = None,
) -> ScorePlan:
    """Return the plan with these statistics and the swaps and shifts they decide.

    A field is swapped with one other field at most: the one it trades places
    with most often (ties by the fields' order); likewise a field shifts into
    one other at most (the one with the largest excess), and one field at most
    shifts into each.
    """
    shift_checks = shift_checks or []
    shifts: list[tuple[str, str]] = []
    holders: set[str] = set()
    intos: set[str] = set()
    for shift in sorted(
        (check for check in shift_checks if check.shifts), key=lambda c: -c.excess
    ):
        if shift.field not in holders and shift.into not in intos:
            shifts.append((shift.field, shift.into))
            holders.add(shift.field)
            intos.add(shift.into)
    shift_order = {
        (check.field, check.into): number for number, check in enumerate(shift_checks)
    }
    swaps: list[tuple[str, str]] = []
    taken: set[str] = set()
    ranked = sorted(
        (check for check in checks if check.swapped),
        key=lambda check: -check.crossed / max(check.repeated, 1),
    )
    for check in ranked:
        if check.first not in taken and check.second not in taken:
            swaps.append((check.first, check.second))
            taken.update((check.first, check.second))
    order = {(check.first, check.second): number for number, check in enumerate(checks)}
    return replace(
        plan,
        swaps=tuple(sorted(swaps, key=order.__getitem__)),
        swap_checks=tuple(checks),
        shifts=tuple(sorted(shifts, key=shift_order.__getitem__)),
        shift_checks=tuple(shift_checks),
    )


def name_fields(plan: ScorePlan) -> list[Field]:
    """Return the counted fields compared by a fuzzy scorer (given names, maybe)."""
    return [
        spec
        for spec in plan.specs
        if spec.weight > 0 and plan.comparisons[spec.label] in SCORERS
    ]


def check_nicknames(
    plan: ScorePlan,
    tables: list[pd.DataFrame],
    owner: str,
    *,
    values: list[dict[str, pa.Array]] | None = None,
) -> ScorePlan:
    """Return the plan with the fields that hold given names.

    A given model brings its own; otherwise every record of every table counts
    (see :mod:`lsh_frame._nicknames`), whichever pairs are scored. ``values``:
    each table's normalised values of the fuzzy fields, when already read.
    """
    given = plan.given_model
    specs = name_fields(plan)
    if given is not None:
        _check_model_fields(
            given.nicknames,
            specs,
            "reads familiar forms of given names in",
            "a fuzzy scorer",
            owner,
        )
        return replace(plan, nicknames=given.nicknames)
    checks = [
        _nicknames.check(
            spec.label,
            [
                _nicknames.count_names(
                    _swaps.field_values(table, spec, owner)
                    if values is None
                    else values[number][spec.label],
                    spec.shingle_config,
                )
                for number, table in enumerate(tables)
            ],
        )
        for spec in specs
    ]
    return with_name_checks(plan, checks)


def _check_model_fields(
    labels: Any, specs: list[Field], reads: str, compared: str, owner: str
) -> None:
    """Refuse a given model whose reading of ``labels`` these fields cannot do."""
    here = {spec.label for spec in specs}
    wrong = [label for label in labels if label not in here]
    if wrong:
        raise ConfigError(
            f"{owner} got a learned model that {reads} {wrong!r}, but these "
            f"fields are not compared by {compared} here. Score with the fields "
            "and comparisons the model was learned with."
        )


def with_name_checks(plan: ScorePlan, checks: list[_nicknames.NameCheck]) -> ScorePlan:
    """Return the plan with these statistics and the fields they decide."""
    return replace(
        plan,
        nicknames=tuple(check.label for check in checks if check.given_names),
        name_checks=tuple(checks),
    )


def _read_nicknames(
    plan: ScorePlan,
    scored: dict[str, dict[str, Any]],
    crossed: dict[str, npt.NDArray[np.bool_]],
    shared: dict[str, _Encoded],
    left: pd.DataFrame,
    right: pd.DataFrame | None,
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
    owner: str,
) -> tuple[dict[str, npt.NDArray[np.bool_]], dict[str, npt.NDArray[np.float64]]]:
    """Read familiar forms of one given name, and initials, as agreeing.

    In each field of given names, a pair whose two values are names of one
    group (``edward``, ``ned``) and score below the field's "nearly agrees"
    level gets that level's lowest score; a pair whose one value is an initial
    the other begins (``r``, ``richard``) and scores below the lowest level
    that agrees gets that level's score. A pair scored crossed (``crossed``,
    by column) keeps its crossed score. Updates ``scored``; returns the
    ``<field>_nickname`` and ``<field>_initial`` columns and the straight
    scores replaced.
    """
    by_label = {spec.label: spec for spec in plan.specs}
    marks: dict[str, npt.NDArray[np.bool_]] = {}
    straight: dict[str, npt.NDArray[np.float64]] = {}
    for label in plan.nicknames:
        spec = by_label[label]
        column = f"{label}_score"
        score = scored[label][column]
        cuts = sorted(plan.field_cuts[label], reverse=True)
        floor = cuts[1] if len(cuts) > 1 else cuts[0]
        lowest = cuts[-1]
        below = np.zeros(score.size, dtype=bool)
        with np.errstate(invalid="ignore"):
            below[score < floor] = True
        for first, second in plan.swaps:
            if label in (first, second):
                below &= ~crossed[f"{first}_{second}_swapped"]
        rows = np.flatnonzero(below)
        marks[f"{label}_nickname"] = hit = np.zeros(score.size, dtype=bool)
        marks[f"{label}_initial"] = initial = np.zeros(score.size, dtype=bool)
        if not rows.size:
            continue
        encoded = shared.get(label) or _encode(spec, left, right, owner)
        pairs = _ValuePairs.of(
            encoded.left[left_positions[rows]],
            encoded.right[right_positions[rows]],
            len(encoded.dictionary),
        )
        familiar = np.zeros(rows.size, dtype=bool)
        familiar[pairs.differ] = _nicknames.equivalent(
            encoded.dictionary, pairs.low, pairs.high, spec.shingle_config
        )[pairs.inverse]
        hit[rows] = familiar
        begun = np.zeros(rows.size, dtype=bool)
        begun[pairs.differ] = _nicknames.initial_of(
            encoded.dictionary, pairs.low, pairs.high
        )[pairs.inverse]
        with np.errstate(invalid="ignore"):
            initial[rows] = begun & ~familiar & (score[rows] < lowest)
        straight.setdefault(column, score)
        scored[label][column] = np.where(hit, floor, np.where(initial, lowest, score))
    return marks, straight


def _crossed_score(
    encoded: dict[str, _Encoded],
    one: str,
    other: str,
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
    comparison: str,
    floor: float,
) -> npt.NDArray[np.float64]:
    """Scores of the left ``one`` values against the right ``other`` values."""
    return _codes_score(
        encoded[one].dictionary,
        encoded[one].left[left_positions],
        encoded[other].right[right_positions],
        comparison,
        floor,
    )


def _codes_score(
    dictionary: pa.Array,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    comparison: str,
    floor: float,
) -> npt.NDArray[np.float64]:
    """Scores of pairs of codes of one dictionary, NaN where either is missing.

    Below ``floor`` a score only says "below" (0): it cannot make a pair read
    crossed or shifted.
    """
    pairs = _ValuePairs.of(first, second, len(dictionary))
    return pairs.spread(
        1.0,
        _fuzzy(dictionary, pairs.low, pairs.high, comparison, score_cutoff=floor),
    )


def _score_crossed(
    plan: ScorePlan,
    scored: dict[str, dict[str, Any]],
    shared: dict[str, _Encoded],
    left: pd.DataFrame,
    right: pd.DataFrame | None,
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
    owner: str,
) -> tuple[dict[str, npt.NDArray[np.bool_]], dict[str, npt.NDArray[np.float64]]]:
    """Score crossed the pairs of swapped fields that match better so.

    Updates the fields' ``_score`` columns in ``scored`` (by label); returns
    the ``<first>_<second>_swapped`` column of each swapped pair of fields and
    the straight ``_score`` columns they replaced (see :func:`learning_view`).
    ``shared`` holds fields already encoded in one dictionary, if any; the
    pairs of fields encoded here are added to it. Then reads shifted fields
    (see :func:`_score_shifted`).
    """
    marks: dict[str, npt.NDArray[np.bool_]] = {}
    straight_columns: dict[str, npt.NDArray[np.float64]] = {}
    cuts = plan.field_cuts
    by_label = {spec.label: spec for spec in plan.specs}

    def encoded_pair(first: str, second: str) -> dict[str, _Encoded]:
        if (
            first in shared
            and second in shared
            and shared[first].dictionary is shared[second].dictionary
        ):
            return shared
        together = _encode_together(
            [by_label[first], by_label[second]], left, right, owner
        )
        # Kept for the readings after this one (familiar forms, initials): a
        # field is encoded once however many of them read it.
        shared.update(together)
        return together

    for first, second in plan.swaps:
        straight = (scored[first][f"{first}_score"], scored[second][f"{second}_score"])
        floors = (min(cuts[first]), min(cuts[second]))
        encoded = encoded_pair(first, second)
        comparison = plan.comparisons[first]
        crossed = (
            np.full(left_positions.size, np.nan),
            np.full(left_positions.size, np.nan),
        )
        # Crossed scores can only beat straight ones below 1 (a missing one
        # leaves a crossed score missing too), and the second way round only
        # matters where the first already crosses.
        with np.errstate(invalid="ignore"):
            rows = np.flatnonzero((straight[0] < 1) & (straight[1] < 1))
        if rows.size:
            crossed[0][rows] = _crossed_score(
                encoded,
                first,
                second,
                left_positions[rows],
                right_positions[rows],
                comparison,
                floors[0],
            )
            with np.errstate(invalid="ignore"):
                rows = rows[
                    (crossed[0][rows] >= floors[0])
                    & (crossed[0][rows] > np.nan_to_num(straight[0][rows], nan=0.0))
                ]
        if rows.size:
            crossed[1][rows] = _crossed_score(
                encoded,
                second,
                first,
                left_positions[rows],
                right_positions[rows],
                comparison,
                floors[1],
            )
        better = _swaps.crossed_better(straight, crossed, floors)
        for label, values in zip((first, second), crossed, strict=True):
            column = f"{label}_score"
            straight_columns.setdefault(column, scored[label][column])
            scored[label][column] = np.where(better, values, scored[label][column])
        marks[f"{first}_{second}_swapped"] = better
    read = np.zeros(left_positions.size, dtype=bool)
    for mark in marks.values():
        read |= mark
    for field_label, into in plan.shifts:
        for label in (field_label, into):
            column = f"{label}_score"
            straight_columns.setdefault(column, scored[label][column])
        better = _score_shifted(
            plan,
            scored,
            encoded_pair(field_label, into),
            (field_label, into),
            left_positions,
            right_positions,
            ~read,
        )
        marks[f"{field_label}_as_{into}"] = better
        read |= better
    return marks, straight_columns


def _score_shifted(
    plan: ScorePlan,
    scored: dict[str, dict[str, Any]],
    encoded: dict[str, _Encoded],
    shift: tuple[str, str],
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
    open_rows: npt.NDArray[np.bool_],
) -> npt.NDArray[np.bool_]:
    """Read a shifting field's value as the field it shifts into.

    Where one record of a pair lacks ``into`` but has ``field``, and the other
    has ``into``, the first's ``field`` is scored against the other's
    ``into``; a pair matching better so (:func:`lsh_frame._swaps.shifted_better`)
    gets that score as ``into``'s and ``field`` missing (the record has none of
    its own). Only ``open_rows`` (not read crossed already) are read. Updates
    ``scored``; returns which pairs were read so.
    """
    field_label, into = shift
    floor = min(plan.field_cuts[into])
    codes = {
        label: (
            encoded[label].left[left_positions],
            encoded[label].right[right_positions],
        )
        for label in shift
    }
    shifted = np.full(left_positions.size, np.nan)
    dictionary = encoded[field_label].dictionary
    # The record without ``into`` is the right one, then the left one.
    for lacking, having in ((1, 0), (0, 1)):
        rows = np.flatnonzero(
            open_rows
            & (codes[into][lacking] < 0)
            & (codes[field_label][lacking] >= 0)
            & (codes[into][having] >= 0)
        )
        if not rows.size:
            continue
        shifted[rows] = _codes_score(
            dictionary,
            codes[field_label][lacking][rows],
            codes[into][having][rows],
            plan.comparisons[into],
            floor,
        )
    straight = scored[field_label][f"{field_label}_score"]
    better = _swaps.shifted_better(straight, shifted, floor)
    scored[into][f"{into}_score"] = np.where(
        better, shifted, scored[into][f"{into}_score"]
    )
    scored[field_label][f"{field_label}_score"] = np.where(better, np.nan, straight)
    return better


#: The key of :func:`score_fields`' columns that holds the straight scores of
#: fields read otherwise — crossed, shifted, familiar forms and initials of
#: given names (a dict, not a column: see :func:`learning_view`).
STRAIGHT = "_straight"


def learning_view(columns: dict[str, Any]) -> dict[str, Any]:
    """Return the columns a match model learns from: swapped fields straight.

    :func:`score_fields` scores a pair of swapped fields crossed when that
    matches better, and the decision reads them so; the model learns from the
    straight scores, so whether a table's fields trade places cannot change
    what it learns about agreeing and differing fields.
    """
    straight = columns.get(STRAIGHT)
    if straight is None:
        return columns
    return {**without_straight(columns), **straight}


def without_straight(columns: dict[str, Any]) -> dict[str, Any]:
    """Return the columns without the straight scores kept for learning."""
    return {name: values for name, values in columns.items() if name != STRAIGHT}


#: Pairs from which :func:`score_fields` scores the fields on several threads.
THREADED_PAIRS = 2_000


def score_fields(
    plan: ScorePlan,
    left: pd.DataFrame,
    right: pd.DataFrame | None,
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
    owner: str,
    *,
    texts: ColumnTexts | None = None,
) -> dict[str, Any]:
    """Field columns (and values, when asked) and ``score`` of some pairs.

    ``right`` is None when both positions index ``left``. Every column is
    computed pair by pair, so parts of the pairs score exactly as all of them.
    ``texts`` holds the text of columns of ``left`` or ``right`` when already
    converted (a batch of new records keyed first).
    """
    right_frame = left if right is None else right

    def score_field(spec: Field) -> dict[str, Any]:
        if plan.comparisons[spec.label] in VECTOR_KINDS:
            (column,) = spec.columns
            vector_score = vector_scores(
                left[column], right_frame[column], left_positions, right_positions,
                plan.comparisons[spec.label], column=column, owner=owner,
            )  # fmt: skip
            return {f"{spec.label}_score": vector_score}
        if plan.comparisons[spec.label] == "estimate":
            return _score_signature_field(
                spec, left, right, left_positions, right_positions
            )[0]
        if spec.label in together:
            return together[spec.label]
        return _score_text_field(
            spec,
            left,
            right,
            left_positions,
            right_positions,
            comparison=plan.comparisons[spec.label],
            estimate_config=MinHashConfig(
                num_perm=plan.estimate[0],
                seed=plan.estimate[1],
                shingle=spec.shingle_config,
            )
            if plan.estimate is not None
            else None,
            owner=owner,
            frequencies=plan.frequencies.get(spec.label),
            encoded=shared.get(spec.label),
            placeholders=plan.placeholders_of(spec.label),
        )

    specs = plan.specs
    shared: dict[str, _Encoded] = {}
    together: dict[str, dict[str, Any]] = {}
    if len(left_positions) < THREADED_PAIRS:
        # A few pairs: the fields of one shingle configuration in one pass
        # (numbers and dates read only their own entries of the dictionary),
        # and those of rapidfuzz and Jaccard scored together.
        groups: dict[Any, list[Field]] = {}
        for spec in specs:
            comparison = plan.comparisons[spec.label]
            if comparison not in (*VECTOR_KINDS, "estimate"):
                groups.setdefault(spec.shingle_config, []).append(spec)
        for group in groups.values():
            if len(group) > 1:
                encoded = _encode_together(group, left, right, owner, texts)
                shared.update(encoded)
                alike = [
                    spec for spec in group if plan.comparisons[spec.label] in _TOGETHER
                ]
                if plan.estimate is None and alike:
                    together.update(
                        _score_fields_together(
                            alike,
                            encoded,
                            left_positions,
                            right_positions,
                            plan.comparisons,
                        )
                    )
    _progress.step(
        f"scoring {len(specs)} field{'s' if len(specs) != 1 else ''}",
        total=len(specs) * len(left_positions),
    )
    # Fields are independent and their numpy, pyarrow and rapidfuzz work
    # releases the GIL: score them on all cores. Results keep the fields' order
    # and are reported done on this thread.
    scored_fields = []
    if len(left_positions) < THREADED_PAIRS:
        # Starting threads costs more than a few pairs' scores (a batch of
        # new records against a saved index).
        for spec in specs:
            scored_fields.append(score_field(spec))
            _progress.advance(len(left_positions))
    else:
        workers = min(len(specs), os.cpu_count() or 1)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for field_columns in pool.map(score_field, specs):
                scored_fields.append(field_columns)
                _progress.advance(len(left_positions))

    by_label = dict(zip([spec.label for spec in specs], scored_fields, strict=True))
    swapped, straight = _score_crossed(
        plan, by_label, shared, left, right, left_positions, right_positions, owner
    )
    familiar, before_names = _read_nicknames(
        plan,
        by_label,
        swapped,
        shared,
        left,
        right,
        left_positions,
        right_positions,
        owner,
    )
    for column, values in before_names.items():
        straight.setdefault(column, values)
    columns: dict[str, Any] = {}
    for spec, field_columns in zip(specs, scored_fields, strict=True):
        if plan.values:
            for side, table, positions in (
                ("left", left, left_positions),
                ("right", right_frame, right_positions),
            ):
                if len(spec.columns) == 1:
                    # The column's own dtype (text, category, signatures).
                    shown = table[spec.columns[0]].iloc[positions].array
                else:
                    text = _field_text(table, spec, owner=owner)
                    shown = pd.arrays.ArrowExtensionArray(
                        text.take(pa.array(positions))
                    )
                columns[f"{spec.label}_{side}"] = shown
        columns.update(field_columns)
    columns.update(swapped)
    columns.update(familiar)
    weights = [spec.weight for spec in specs]
    columns["score"] = _combine(
        [columns[f"{spec.label}_score"] for spec in specs],
        weights,
        len(left_positions),
    )
    if straight:
        straight["score"] = _combine(
            [
                straight.get(f"{spec.label}_score", columns[f"{spec.label}_score"])
                for spec in specs
            ],
            weights,
            len(left_positions),
        )
        columns[STRAIGHT] = straight
    return columns


def identical_mask(plan: ScorePlan, pairs: pd.DataFrame) -> npt.NDArray[np.bool_]:
    """Which pairs join a collapsed group's member to its representative.

    Those are the pairs deduplication's candidates found by ``"identical"``
    (see :mod:`lsh_frame.identical`): two records with the same raw value in
    every compared column. Such a pair is a match by definition: it is left
    out of the choice of ``"auto"``'s cut and of the model's learning (a
    hundred thousand copies would otherwise teach the model that everything
    agrees), and gets ``match`` true and ``match_probability`` 1.
    """
    if plan.link:
        return np.zeros(len(pairs), dtype=bool)
    return found_identical(pairs)


def without(
    levels: dict[str, npt.NDArray[np.intp]], identical: npt.NDArray[np.bool_]
) -> dict[str, npt.NDArray[np.intp]]:
    """Return the levels of the pairs that are not identical (the model learns from)."""
    if not identical.any():
        return levels
    kept = ~identical
    return {label: values[kept] for label, values in levels.items()}


def force_identical(
    probability: npt.NDArray[np.float64] | None,
    match: npt.NDArray[np.bool_],
    identical: npt.NDArray[np.bool_],
) -> tuple[npt.NDArray[np.float64] | None, npt.NDArray[np.bool_]]:
    """Identical pairs are matches, with probability 1."""
    if not identical.any():
        return probability, match
    match = match.copy()
    match[identical] = True
    if probability is not None:
        probability = probability.copy()
        probability[identical] = 1.0
    return probability, match


def field_scores(plan: ScorePlan, columns: Any) -> dict[str, npt.NDArray[np.float64]]:
    """Return the ``<field>_score`` arrays of the counted fields, by field."""
    return {
        spec.label: np.asarray(columns[f"{spec.label}_score"], dtype=np.float64)
        for spec in plan.counted
    }


def provisional_matches(
    plan: ScorePlan, combined: npt.NDArray[np.float64], cut: float | None
) -> npt.NDArray[np.bool_]:
    """``score >= min_score`` (the given one, or the cut of ``"auto"``)."""
    chosen = cut if cut is not None else plan.min_score
    assert isinstance(chosen, float)
    return np.asarray(np.nan_to_num(combined, nan=-1.0) >= chosen)


def decide(
    plan: ScorePlan,
    model: MatchModel | None,
    levels: dict[str, npt.NDArray[np.intp]],
    provisional: npt.NDArray[np.bool_] | None,
    alone: npt.NDArray[np.bool_] | None = None,
) -> tuple[npt.NDArray[np.float64] | None, npt.NDArray[np.bool_]]:
    """``match_probability`` (None without one) and ``match`` of some pairs."""
    if model is not None:
        # Only the model's fields: one it left out (no values) is neutral.
        counted = {label: levels[label] for label in model.m}
        probability = model.probability_of_levels(counted)
        if model.alone_prior is not None and alone is not None and alone.any():
            other = dataclasses.replace(model, prior=model.alone_prior)
            probability[alone] = other.probability_of_levels(
                {label: level[alone] for label, level in counted.items()}
            )
        return probability, model_matches(model, counted, probability)
    assert provisional is not None
    size = provisional.size
    if plan.min_score == "auto":
        return np.full(size, np.nan), provisional
    return None, provisional


def model_matches(
    model: MatchModel,
    levels: dict[str, npt.NDArray[np.intp]],
    probability: npt.NDArray[np.float64],
) -> npt.NDArray[np.bool_]:
    """Return the pairs a model calls matches, given their probabilities.

    Those reaching its match cut where some field counts for a match,
    whatever the prior (see :meth:`MatchModel.speaks_for`).
    """
    counted = {label: levels[label] for label in model.m}
    return (probability >= model.match_cut) & model.speaks_for(counted)


def decision_counts(
    plan: ScorePlan,
    model: MatchModel,
    levels: dict[str, npt.NDArray[np.intp]],
    alone: npt.NDArray[np.bool_],
    identical: npt.NDArray[np.bool_],
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Return the distinct match probabilities of some pairs and their counts.

    As the decision reads them (identical copies are certain matches); the
    counts of parts of the pairs add up (:func:`merge_probability_counts`).
    """
    probability = decide(plan, model, levels, None, alone)[0]
    assert probability is not None
    return certain_counts(probability, identical)


def certain_counts(
    probability: npt.NDArray[np.float64], identical: npt.NDArray[np.bool_]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Return :func:`probability_counts`, identical copies counted as certain."""
    return probability_counts(np.where(identical, 1.0, probability))


def with_match_cut(
    model: MatchModel,
    fit: dict[str, Any] | None,
    parts: list[tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]],
) -> tuple[MatchModel, dict[str, Any]]:
    """Return the model with the match cut its pairs' probabilities expect.

    ``parts`` are :func:`decision_counts` of all the pairs (or of parts of
    them); see :func:`lsh_frame.model.expected_f1_cut`.
    """
    cut, expected = expected_f1_cut(*merge_probability_counts(parts))
    return (
        replace(model, match_cut=cut),
        {**(fit or {}), "expected_f1": round(expected, 4)},
    )


def within_table_matches(
    plan: ScorePlan,
    model: MatchModel | None,
    cut: float | None,
    table: pd.DataFrame,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    owner: str,
) -> tuple[
    npt.NDArray[np.bool_], npt.NDArray[np.float64] | None, npt.NDArray[np.float64]
]:
    """Decide pairs of records of one table as a link's pairs were decided.

    The same fields and comparisons (``plan``), and the same decision: the
    link's match model, or without one its cut on ``score``. ``first`` and
    ``second`` are positions in ``table``. Returns ``match``,
    ``match_probability`` (None without a model) and ``score`` of each pair.
    ``one_to_one="auto"`` asks this whether a record's two best matches are
    duplicates of each other.
    """
    plain = dataclasses.replace(plan, values=False, estimate=None)
    table, (first, second) = _rows_in_use(table, first, second)
    columns = without_straight(score_fields(plain, table, None, first, second, owner))
    levels = plain.levels(field_scores(plain, columns))
    provisional = (
        None if model is not None else provisional_matches(plain, columns["score"], cut)
    )
    probability, match = decide(plain, model, levels, provisional)
    return match, probability, np.asarray(columns["score"], dtype=np.float64)


def one_to_one_matches(
    rule: OneToOne,
    plan: ScorePlan,
    left_positions: npt.NDArray[np.int64],
    right_positions: npt.NDArray[np.int64],
    probability: npt.NDArray[np.float64] | None,
    combined: npt.NDArray[np.float64],
    match: npt.NDArray[np.bool_],
    within: Callable[..., Any],
    shape: dict[str, Any] | None = None,
) -> tuple[npt.NDArray[np.bool_], dict[str, Any]]:
    """Return ``match`` after the one-to-one choice, and its attrs record."""
    matched = np.flatnonzero(match)
    keep, info = choose(
        rule,
        link=plan.link,
        left=left_positions[matched],
        right=right_positions[matched],
        probability=None if probability is None else probability[matched],
        score=combined[matched],
        within=within,
        shape=shape,
    )
    if not keep.all():
        match = match.copy()
        match[matched[~keep]] = False
    return match, info


#: With the neighbours key beside the LSH record key (plain columns), the model
#: is learned again from the pairs the other keys found when at least this
#: share of its matches were found by them: the neighbours key then added
#: mostly look-alikes (relatives of a household), which tilt a model learned
#: from them. Measured (pair F1 learned from all pairs / from the other keys'
#: pairs; share): make_customers 5,000 0.956 / 0.989 (1.000), 100,000 0.962 /
#: 0.995 (0.996); where the neighbours key finds matches the others miss, the
#: share is low and all pairs teach: fake_1000 0.918 / 0.732 (0.81),
#: historical_50k 0.819 / 0.773 (0.34), Cora (0.55), Abt-Buy (0.35).
TRAIN_ON_OTHERS_SHARE = 0.95


#: A key is weak when at least this share of its pairs no other key found:
#: it finds pairs by chance (a birthday shared among 20,000 people, the same
#: "PO box" line of an address), and the pairs only it found are decided,
#: like those only the neighbours key found, with a prior of their own, and
#: are left out when the model learns from the other keys' pairs. Measured
#: (share; pair F1 before -> after): make_customers 20,000 date_of_birth
#: (0.81; 0.9700 -> 0.9937); FEBRL4 address_1 and address_2 (0.70, 0.77;
#: 1.0000 -> 0.9999); identifiers stay strong (phone and e-mail 0.00-0.06,
#: FEBRL's soc_sec_id 0.00, FEBRL4's date of birth 0.12).
WEAK_KEY_SHARE = 0.5


def found_by_counts(pairs: pd.DataFrame) -> dict[str, int]:
    """How many pairs each ``found_by`` value names (parts add up, see Dask)."""
    if "found_by" not in pairs.columns:
        return {}
    counts = pairs["found_by"].astype(object).value_counts(dropna=True)
    return {str(value): int(count) for value, count in counts.items()}


def weak_keys(counts: dict[str, int]) -> tuple[str, ...]:
    """Return the keys whose lone pairs take the alone prior (``WEAK_KEY_SHARE``).

    ``counts`` are :func:`found_by_counts`. The neighbours key of plain columns
    always; another key (not the LSH record key of plain columns, which finds
    pairs by similarity) when at least ``WEAK_KEY_SHARE`` of its pairs only it
    found, unless every key is (then no pair is found by another to learn from).
    Compound keys always (their lone pairs share, say, a surname and a
    birthday: as much by chance as the neighbours key's).
    """
    found: dict[str, int] = {}
    for value, count in counts.items():
        for label in value.split("|"):
            found[label] = found.get(label, 0) + count
    # The record keys of plain columns find pairs by similarity, not by chance.
    similar = (NEIGHBOURS_KEY, RECORD_KEY, IDENTICAL)
    candidates = [
        label
        for label in found
        if label not in similar and not is_compound_label(label)
    ]
    weak = [
        label
        for label in candidates
        if counts.get(label, 0) >= WEAK_KEY_SHARE * found[label]
    ]
    if len(weak) == len(candidates):
        weak = []
    weak += [label for label in found if is_compound_label(label)]
    return tuple(sorted([NEIGHBOURS_KEY, *weak]))


def found_only_by(pairs: pd.DataFrame, keys: tuple[str, ...]) -> npt.NDArray[np.bool_]:
    """Which pairs only one of ``keys`` found, compound keys aside.

    ``found_by`` names one of ``keys`` besides compound keys (see
    :func:`~lsh_frame.blocking.compound_field`), or only compound keys: those
    are always weak (a model saved before them decides their pairs alike).
    """
    if "found_by" not in pairs.columns:
        return np.zeros(len(pairs), dtype=bool)
    values = pairs["found_by"]
    only = [value for value in values.dropna().unique() if found_alone(value, keys)]
    # Missing values: not found.
    return np.asarray(values.isin(only).to_numpy(dtype=bool, na_value=False))


def found_alone(found_by: Any, keys: tuple[str, ...]) -> bool:
    """Tell whether one ``found_by`` value is a pair only a weak key found.

    The rule of :func:`found_only_by`, for one pair (``explain``).
    """
    others = [
        label for label in str(found_by).split("|") if not is_compound_label(label)
    ]
    return not others or (len(others) == 1 and others[0] in keys)


def added_by_compound(pairs: pd.DataFrame) -> npt.NDArray[np.bool_]:
    """Which pairs only compound keys found.

    They are decided (with the neighbours key's prior) but never learned from,
    so the pairs other keys found are decided as they would be without them.
    """
    # Alone with no weak key at all: found by compound keys only.
    return found_only_by(pairs, ())


def alone_keys_of(plan: ScorePlan, pairs: pd.DataFrame) -> tuple[str, ...]:
    """Return the given model's alone keys, or those the pairs' keys show."""
    given = plan.given_model
    return given.alone_keys if given is not None else weak_keys(found_by_counts(pairs))


def alone_table(
    levels: dict[str, npt.NDArray[np.intp]],
    identical: npt.NDArray[np.bool_],
    alone: npt.NDArray[np.bool_],
) -> LevelTable:
    """Level table of the pairs only a weak key found (identical ones out)."""
    left_out = identical | ~alone
    return LevelTable.of(
        without(levels, left_out), np.zeros(int((~left_out).sum()), dtype=bool)
    )


def with_alone_prior(
    model: MatchModel,
    plan: ScorePlan,
    table: LevelTable,
    fit: dict[str, Any],
    alone_keys: tuple[str, ...],
) -> MatchModel:
    """Give the model its own prior for the pairs only a weak key found.

    Among the pairs only the neighbours key or a weak key found (mostly
    look-alikes, or strangers sharing a birthday) matches are rarer than among
    the pairs the model's prior comes from, so their share is estimated from
    those pairs with the model's m and u (:meth:`MatchModel.prior_among`),
    whichever pairs the model learned from. ``alone_keys`` (see
    :func:`weak_keys`) travel with the model, so later batches decided with
    it treat the same keys' lone pairs alike.
    """
    alone_prior = model.prior_among(plan.labels, table)
    fit["alone_prior"] = round(alone_prior, 6)
    if alone_keys != (NEIGHBOURS_KEY,):
        fit["alone_keys"] = list(alone_keys)
    return dataclasses.replace(model, alone_prior=alone_prior, alone_keys=alone_keys)


def _learned_from_other_keys(
    plan: ScorePlan,
    levels: dict[str, npt.NDArray[np.intp]],
    combined: npt.NDArray[np.float64],
    left_out: npt.NDArray[np.bool_],
    positions: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    assigned: bool,
) -> tuple[MatchModel, dict[str, Any] | None, float] | None:
    """Learn the model again without the ``left_out`` pairs; return it and its cut.

    Steps 1-3 of ``"auto"`` on the other pairs: their provisional cut (or the
    one-to-one assignment, when the link learns from it) and the model learned
    from that split; None when there is nothing to learn.
    """
    spread = ScoreSpread.of(combined[~left_out])
    cut = spread.cut()
    if assigned:
        kept = np.flatnonzero(~left_out)
        split = np.zeros(len(combined), dtype=bool)
        split[kept] = assignment_split(
            positions[0][kept], positions[1][kept], combined[kept]
        )
    else:
        split = provisional_matches(plan, combined, cut)
    model, fit = learn_model(
        plan.labels,
        LevelTable.of(without(levels, left_out), split[~left_out]),
        plan.field_cuts,
        assigned or spread.clear,
    )
    return None if model is None else (model, fit, cut)


def link_shape(
    plan: ScorePlan,
    one_to_one: OneToOne,
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    combined: npt.NDArray[np.float64],
) -> dict[str, Any] | None:
    """:func:`clear_best` of a link's candidates, when one-to-one may apply."""
    if not plan.link or one_to_one is False:
        return None
    return clear_best(left, right, combined)


def learns_from_assignment(plan: ScorePlan, shape: dict[str, Any] | None) -> bool:
    """Whether ``"auto"`` learns from the one-to-one assignment, not the cut.

    A link whose records each have one clear best candidate
    (:func:`clear_best`, unless ``one_to_one=False``) learns its model from
    the greedy one-to-one choice by score (:func:`assignment_split`): no
    valley is needed, so it works where the matches' scores spread over the
    whole scale (product titles: Abt-Buy pair F1 0.04 with the cut, 0.77
    with the assignment). A dedupe, or a link where a table holds several
    records of an entity, learns from the cut.
    """
    return (
        plan.link
        and plan.min_score == "auto"
        and shape is not None
        and bool(shape["clear"])
    )


def no_entities(model: MatchModel) -> dict[str, Any]:
    """Return the fit of a model whose matches are another group: none match."""
    fields = ", ".join(model.another_group())
    return {
        "rejected": (
            f"the provisional matches differ on {fields} more than twice as often "
            "as they agree: they are not the same records written twice but "
            "another group (relatives?), so no pair is matched but identical "
            "copies"
        )
    }


def _fallback(
    plan: ScorePlan,
    chosen: float | None,
    model: MatchModel | None,
    fit: dict[str, Any] | None,
) -> dict[str, Any]:
    """``{"fallback": why}`` when ``"auto"`` decided without a model, else ``{}``."""
    if model is not None or plan.given_model is not None or not fit:
        return {}  # a model decided, or nothing was left to decide
    if "rejected" in fit:
        return {"fallback": fit["rejected"]}
    return {
        "fallback": f"{fit['fallback']}: matches are the pairs with score >= {chosen}"
    }


def warn_fallback(attrs: dict[str, Any]) -> None:
    """Say that ``min_score="auto"`` fell back to a cut on ``score``."""
    if "fallback" in attrs:
        warn(
            f"No match model decided the pairs ({attrs['fallback']}). Pass "
            "min_score= a number, or a model learned on a larger table, to decide "
            "yourself."
        )


def scored_attrs(
    plan: ScorePlan,
    chosen: float | None,
    model: MatchModel | None,
    fit: dict[str, Any] | None,
    shape: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the ``attrs["lsh_frame"]`` of scored pairs."""
    given = plan.given_model
    return {
        "link": plan.link,
        "min_score": chosen,
        "provisional": (
            "one-to-one assignment"
            if learns_from_assignment(plan, shape)
            else "score >= min_score"
        )
        if plan.min_score == "auto" and given is None
        else None,
        "min_score_rule": "auto"
        if plan.min_score == "auto"
        else ("model" if given is not None else "given"),
        "compare": dict(plan.comparisons),
        "weights": {spec.label: spec.weight for spec in plan.specs},
        "swaps": [
            {
                **check.to_dict(),
                "scored_crossed": (check.first, check.second) in plan.swaps,
            }
            for check in plan.swap_checks
        ]
        if given is None
        else [
            {
                "fields": [first, second],
                "swapped": True,
                "scored_crossed": True,
                "from": "model",
            }
            for first, second in plan.swaps
        ],
        "shifts": [
            {
                **check.to_dict(),
                "read_shifted": (check.field, check.into) in plan.shifts,
            }
            for check in plan.shift_checks
        ]
        if given is None
        else [
            {"field": label, "into": into, "shifts": True, "from": "model"}
            for label, into in plan.shifts
        ],
        "nicknames": [check.to_dict() for check in plan.name_checks]
        if given is None
        else [
            {"field": label, "given_names": True, "from": "model"}
            for label in plan.nicknames
        ],
        "dates": [check.to_dict() for check in plan.date_checks]
        if given is None
        else [
            {"field": label, "placeholder_days": days, "from": "model"}
            for label, days in placeholders_dict(plan.placeholders).items()
        ],
        **_fallback(plan, chosen, model, fit),
        "model": None
        if model is None
        else {
            **model.to_dict(),
            "compare": {label: plan.comparisons[label] for label in model.m},
            **({"swaps": [list(pair) for pair in plan.swaps]} if plan.swaps else {}),
            **({"shifts": [list(pair) for pair in plan.shifts]} if plan.shifts else {}),
            **({"nicknames": list(plan.nicknames)} if plan.nicknames else {}),
            **(
                {"placeholders": placeholders_dict(plan.placeholders)}
                if plan.placeholders
                else {}
            ),
            "fit": fit if given is None else "given",
        },
    }


def scored_frame(
    pairs: pd.DataFrame, columns: dict[str, Any], attrs: dict[str, Any]
) -> pd.DataFrame:
    """Return the pairs with the scored columns added (replacing same names)."""
    added = pd.DataFrame(columns, index=pairs.index)
    kept = pairs.drop(columns=[name for name in added.columns if name in pairs])
    result = pd.concat([kept, added], axis=1)
    result.attrs = {**pairs.attrs, "lsh_frame": attrs}
    return result


def _score(
    frame: pd.DataFrame,
    pairs: pd.DataFrame,
    fields: Any,
    /,
    *,
    other: pd.DataFrame | None,
    min_score: MinScore,
    values: bool,
    estimate: bool,
    num_perm: int,
    seed: int,
    owner: str,
    one_to_one: OneToOne = "auto",
    transitive: Transitive = "auto",
) -> pd.DataFrame:
    frame = _check_frame(frame, "frame", owner)
    if other is not None:
        other = _check_frame(other, "other", owner)
    one_to_one = check_one_to_one(one_to_one, owner, link=other is not None)
    transitive = check_transitive(transitive, owner, link=other is not None)
    pairs = _check_pairs(pairs, owner)
    tables = [frame] if other is None else [frame, other]
    plan = plan_score(
        tables,
        [comparison_rows(table) for table in tables],
        fields,
        min_score=min_score,
        values=values,
        estimate=estimate,
        num_perm=num_perm,
        seed=seed,
        owner=owner,
    )
    plan = check_tables(count_documents(plan, tables, owner), tables, owner)
    right_frame = frame if other is None else other
    left_positions = _positions(pairs["left"], frame.index, "left", owner)
    right_positions = _positions(pairs["right"], right_frame.index, "right", owner)
    whole = {"left": frame, "right": right_frame}
    positions = (left_positions, right_positions)
    if other is None:
        frame, (left_positions, right_positions) = _rows_in_use(
            frame, left_positions, right_positions
        )
    else:
        frame, (left_positions,) = _rows_in_use(frame, left_positions)
        other, (right_positions,) = _rows_in_use(other, right_positions)
    columns = score_fields(plan, frame, other, left_positions, right_positions, owner)
    identical = identical_mask(plan, pairs)
    alone_keys = alone_keys_of(plan, pairs)
    alone = found_only_by(pairs, alone_keys)
    # Pairs only compound keys found are decided, never learned from: the
    # other keys' pairs are decided as they would be without them.
    aside = added_by_compound(pairs)
    held_out = identical | aside

    _progress.step("deciding matches")
    # The model learns from the straight scores; the decision reads swapped
    # fields crossed (see learning_view).
    learn = learning_view(columns)
    columns = without_straight(columns)
    learn_combined = learn["score"]
    shape = link_shape(plan, one_to_one, *positions, learn_combined)
    learn_levels = plan.levels(field_scores(plan, learn))
    chosen: float | None = None
    model, fit = plan.given_model, None
    provisional = None
    if model is None:
        spread = ScoreSpread.of(learn_combined[~held_out])
        cut = spread.cut() if plan.min_score == "auto" else None
        provisional = provisional_matches(plan, learn_combined, cut)
        chosen = cut if cut is not None else float(plan.min_score)  # type: ignore[arg-type]
        if plan.min_score == "auto":
            assigned = learns_from_assignment(plan, shape)
            learn_from = (
                assignment_split(*positions, learn_combined)
                if assigned
                else provisional
            )
            learned = LevelTable.of(
                without(learn_levels, held_out), learn_from[~held_out]
            )
            model, fit = learn_model(
                plan.labels, learned, plan.field_cuts, assigned or spread.clear
            )
            if model is not None and alone.any():
                match = decide(plan, model, learn_levels, provisional)[1] & ~held_out
                # No match at all: nothing says the neighbours key found any.
                share = (
                    float((match & ~alone).sum() / match.sum()) if match.any() else 1.0
                )
                fit = {**(fit or {}), "trained_on": "all pairs"}
                if share >= TRAIN_ON_OTHERS_SHARE:
                    retrained = _learned_from_other_keys(
                        plan,
                        learn_levels,
                        learn_combined,
                        held_out | alone,
                        positions,
                        assigned,
                    )
                    if retrained is not None:
                        model, refit, chosen = retrained
                        provisional = provisional_matches(plan, learn_combined, chosen)
                        fit = {**(refit or {}), "trained_on": "other keys' pairs"}
                model = with_alone_prior(
                    model,
                    plan,
                    alone_table(learn_levels, held_out, alone),
                    fit,
                    alone_keys,
                )
                fit["found_by_other_keys"] = round(share, 4)
            if model is not None and model.another_group():
                fit = no_entities(model)
                model, chosen = None, None
                provisional = np.zeros(learn_combined.size, dtype=bool)
    combined = columns["score"]
    if model is None and chosen is not None:
        provisional = provisional_matches(plan, combined, chosen)
    levels = plan.levels(field_scores(plan, columns))
    probability, match = decide(plan, model, levels, provisional, alone)
    if model is not None and plan.given_model is None:
        assert probability is not None
        model, fit = with_match_cut(
            model, fit, [certain_counts(probability[~aside], identical[~aside])]
        )
        match = model_matches(model, levels, probability)
    probability, match = force_identical(probability, match, identical)

    def within(side: str, first: Any, second: Any) -> Any:
        return within_table_matches(
            plan, model, chosen, whole[side], first, second, owner
        )

    match, chosen_one_to_one = one_to_one_matches(
        one_to_one, plan, *positions, probability, combined, match, within, shape
    )
    match, closed = close(
        transitive,
        link=plan.link,
        first=positions[0],
        second=positions[1],
        match=match,
        decided_here=model is not None or plan.min_score == "auto",
        identical=identical,
        closable=closable(
            probability, None if model is None else model.match_cut, identical
        ),
    )
    if probability is not None:
        columns["match_probability"] = probability
    columns["match"] = match
    attrs = scored_attrs(plan, chosen, model, fit, shape)
    attrs["one_to_one"] = chosen_one_to_one
    attrs["transitive"] = closed
    warn_fallback(attrs)
    return scored_frame(pairs, columns, attrs)


def _combine(
    field_scores: list[npt.NDArray[np.float64]], weights: list[float], size: int
) -> npt.NDArray[np.float64]:
    """Weighted mean over the fields present (not NaN) in both records."""
    total = np.zeros(size)
    weight_present = np.zeros(size)
    for values, weight in zip(field_scores, weights, strict=True):
        present = ~np.isnan(values)
        total += np.where(present, values, 0.0) * weight
        weight_present += present * weight
    with np.errstate(invalid="ignore", divide="ignore"):
        combined = total / weight_present
    combined[weight_present == 0] = np.nan
    return np.clip(combined, 0.0, 1.0)


def pairs(
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
    min_score: MinScore = "auto",
    values: bool = False,
    estimate: bool = False,
    one_to_one: OneToOne = "auto",
    transitive: Transitive = "auto",
) -> pd.DataFrame:
    """Candidate pairs and their scores in one call.

    :func:`lsh_frame.candidates` with the blocking options and
    ``collapse_identical=True`` (a large group of identical rows is one
    representative plus ``"identical"`` pairs, see
    :mod:`lsh_frame.identical`), then :func:`score` with the scoring options,
    on the same ``fields``. With
    ``other``, ``right_on`` gives its names of the fields' columns when they
    differ from ``frame``'s (see :func:`lsh_frame.candidates`).
    ``one_to_one`` (only with ``other``) lets each record match at most one
    record of the other table: ``"auto"`` (default) when the data says so, see
    :func:`score`. ``transitive`` (only without ``other``) makes a pair whose
    records share most of their matches a match too, ``"auto"`` (default)
    when the matches form clusters, see :func:`score`. When it applies,
    ``pairs`` then looks once more: the pairs whose two records match one same
    record, that blocking did not find, are scored and added after the
    candidates (``found_by`` ``"through_matches"``), decided by that rule
    alone; counted first, and skipped with a warning when they would carry
    the frame past ``max_pairs`` (see :mod:`lsh_frame.transitive`).

    Examples
    --------
    >>> df = pd.DataFrame({"name": ["john smith", "jon smith", "mary jones"],
    ...                    "dob": ["1980-01-02", "1980-01-02", "1975-05-06"]})
    >>> scored = pairs(df, ["name", "dob"], min_score=0.8)
    >>> scored[["left", "right", "found_by", "score", "match"]].round(3)
       left  right                      found_by  score  match
    0     0      1  dob|record|record_neighbours  0.974   True
    1     1      2             record_neighbours  0.563  False
    """
    other = other_table(frame, fields, other, right_on, "pairs")
    check_one_to_one(one_to_one, "pairs", link=other is not None)
    check_transitive(transitive, "pairs", link=other is not None)
    candidate_pairs = candidates(
        frame,
        fields,
        other=other,
        threshold=threshold,
        recall=recall,
        num_perm=num_perm,
        seed=seed,
        max_bucket=max_bucket,
        max_pairs=max_pairs,
        collapse_identical=True,
    )
    scored = score(
        frame,
        candidate_pairs,
        fields,
        other=other,
        min_score=min_score,
        values=values,
        estimate=estimate,
        num_perm=num_perm,
        seed=seed,
        one_to_one=one_to_one,
        transitive=transitive,
    )
    if other is not None:
        return scored
    return _with_pairs_through_matches(
        frame,
        scored,
        fields,
        room=max_pairs - len(scored),
        values=values,
        estimate=estimate,
        num_perm=num_perm,
        seed=seed,
    )


def round_scoring(attrs: dict[str, Any]) -> MatchModel | float:
    """Return what decides the pairs found through the matches, as before.

    The learned model when there is one, else the score cut that decided.
    """
    learned = attrs.get("model")
    if isinstance(learned, dict) and "match_cut" in learned:
        return MatchModel.from_dict(learned)
    return float(attrs["min_score"])


def round_skipped(info: dict[str, Any], paths: int, room: int) -> dict[str, Any]:
    """Return the ``transitive`` record when the pairs are too many to look for."""
    message = (
        f"pairs() did not look for pairs through the matches: {paths:,} pairs of "
        f"records share a matched record, more than the {room:,} that max_pairs "
        "leaves after the candidates. Raise max_pairs to look."
    )
    warn(message)
    return {**info, "through_matches": {"pairs": 0, "closed": 0, "skipped": message}}


def round_info(info: dict[str, Any], found: int, closed: int) -> dict[str, Any]:
    """Return the ``transitive`` record with the pairs found through the matches."""
    return {
        **info,
        "added": int(info["added"]) + closed,
        "through_matches": {"pairs": found, "closed": closed},
    }


def round_pairs(
    index: pd.Index,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    start: int,
) -> pd.DataFrame:
    """Return the pairs found through the matches, to score: rows from ``start``."""
    return pd.DataFrame(
        {"left": index[first], "right": index[second], "found_by": THROUGH_MATCHES},
        index=pd.RangeIndex(start, start + first.size),
    )


def round_decision(
    graph: Any,
    first: npt.NDArray[np.int64],
    second: npt.NDArray[np.int64],
    found: pd.DataFrame,
    decider: MatchModel | float,
) -> npt.NDArray[np.bool_]:
    """Return which scored pairs found through the matches the rule closes."""
    return decide_found(
        graph,
        first,
        second,
        found["match_probability"].to_numpy(dtype=np.float64, na_value=np.nan)
        if "match_probability" in found
        else None,
        found["match"].fillna(False).to_numpy(dtype=bool),
        decider.match_cut if isinstance(decider, MatchModel) else None,
    )


def round_categories(dtype: Any) -> pd.Index | None:
    """Return the ``found_by`` categories with :data:`THROUGH_MATCHES` added.

    None when ``found_by`` is not categorical.
    """
    if not isinstance(dtype, pd.CategoricalDtype):
        return None
    return dtype.categories.union(pd.Index([THROUGH_MATCHES]), sort=False)


def in_categories(frame: pd.DataFrame, categories: pd.Index | None) -> pd.DataFrame:
    """Return ``frame`` with ``found_by`` in ``categories`` (None: as it is)."""
    if categories is None:
        return frame
    return frame.assign(
        found_by=pd.Categorical(frame["found_by"].astype(object), categories)
    )


def round_frame(
    scored: pd.DataFrame,
    found: pd.DataFrame,
    match: npt.NDArray[np.bool_],
    categories: pd.Index | None,
) -> pd.DataFrame:
    """Return the pairs found through the matches, scored, as rows of ``scored``.

    ``categories``: those of the candidates' ``found_by`` with
    :data:`THROUGH_MATCHES` (:func:`round_categories`; None when it is not
    categorical).
    """
    # Decided by a number (no model was learned), the new pairs have no
    # match_probability; the candidates' column holds NaN: so do theirs.
    return in_categories(
        found.assign(match=match).reindex(columns=scored.columns), categories
    )


def _with_pairs_through_matches(
    frame: pd.DataFrame,
    scored: pd.DataFrame,
    fields: Any,
    *,
    room: int,
    values: bool,
    estimate: bool,
    num_perm: int,
    seed: int,
) -> pd.DataFrame:
    """``scored`` and, when the rule applied, the pairs found through the matches.

    See :mod:`lsh_frame.transitive`: the pairs whose records both match one same
    record, that blocking did not find, are scored as the others were (the
    same model, or the same cut) and decided by the rule alone.
    """
    attrs = scored.attrs["lsh_frame"]
    info = attrs["transitive"]
    if not info["applied"]:
        return scored
    first = _positions(scored["left"], frame.index, "left", "pairs")
    second = _positions(scored["right"], frame.index, "right", "pairs")
    graph = found_pairs(scored, first, second)
    paths = path_pairs(graph)
    if paths > room:
        scored.attrs = {
            **scored.attrs,
            "lsh_frame": {**attrs, "transitive": round_skipped(info, paths, room)},
        }
        return scored
    _progress.step("pairs through the matches")
    new_first, new_second = through_matches(graph)
    known = pair_codes(first, second, len(frame))
    fresh = ~held_among(pair_codes(new_first, new_second, len(frame)), known)
    new_first, new_second = new_first[fresh], new_second[fresh]
    closed = 0
    if new_first.size:
        decider = round_scoring(attrs)
        found = score(
            frame,
            round_pairs(frame.index, new_first, new_second, len(scored)),
            fields,
            min_score=decider,
            values=values,
            estimate=estimate,
            num_perm=num_perm,
            seed=seed,
            transitive=False,
        )
        match = round_decision(graph, new_first, new_second, found, decider)
        closed = int(match.sum())
        categories = round_categories(scored["found_by"].dtype)
        scored = in_categories(scored, categories)
        scored = pd.concat([scored, round_frame(scored, found, match, categories)])
    scored.attrs = {
        "lsh_frame": {
            **attrs,
            "transitive": round_info(info, int(new_first.size), closed),
        }
    }
    return scored
