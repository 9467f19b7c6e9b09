"""Text comparisons: exact Jaccard of shingle sets and rapidfuzz scores.

Each distinct value is normalised and shingled once; pairs are scored over
value codes, so a value shared by many pairs costs one normalisation.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from rapidfuzz import distance, fuzz, process

from lsh_frame._kernels import sets
from lsh_frame._kernels.pairs import sorted_unique
from lsh_frame.block.fields import _stored_config
from lsh_frame.block.keys import _field_text
from lsh_frame.compare import tfidf as _tfidf
from lsh_frame.compare.auto import TYPED_COMPARISONS
from lsh_frame.compare.numbers_dates import equal_scores, fuzzy_workers, typed_scores
from lsh_frame.compare.typed_values import TypedColumn, typed_values
from lsh_frame.errors import ConfigError
from lsh_frame.sketch.minhash import sign_array
from lsh_frame.sketch.minhash_arrow import check_compatible, signature_matrix
from lsh_frame.text.shingle import normalize, tokenize

if TYPE_CHECKING:
    from lsh_frame.block.fields import Field
    from lsh_frame.config import MinHashConfig
    from lsh_frame.text.shingle import ColumnTexts

__all__ = ["FUZZY_MAX_CHARS"]


#: rapidfuzz scorers by name, and the number that maps their result to [0, 1].
SCORERS: dict[str, tuple[Callable[..., float], float]] = {
    "ratio": (distance.Indel.normalized_similarity, 1.0),
    "token_sort_ratio": (fuzz.token_sort_ratio, 100.0),
    "token_set_ratio": (fuzz.token_set_ratio, 100.0),
    "partial_ratio": (fuzz.partial_ratio, 100.0),
    "jaro_winkler": (distance.JaroWinkler.normalized_similarity, 1.0),
    "levenshtein": (distance.Levenshtein.normalized_similarity, 1.0),
    # "ratio" of the values' digits (see _digits).
    "digits": (distance.Indel.normalized_similarity, 1.0),
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

#: A bracketed aside: ``(1999)``, ``(China)``, ``[DVD]`` (no nesting).
_ASIDE = r"\s*[(\[][^()\[\]]*[)\]]"


#: Pairs of signature rows compared at a time (bounds the temporaries).
_ESTIMATE_CHUNK = 65_536


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
    # An aside in brackets that only one of the two values has is missing on
    # the other side, not different: such a pair is compared without it
    # (``Matrix, The (1999)`` and ``The Matrix``; ``Shanghai (China)`` and
    # ``Shanghai``). When both values have one, it counts.
    strings = _comparable(values, comparison)
    if comparison == "digits":
        # "(07)" is an area code, no aside: digits are compared whole.
        plain_strings, aside = strings, np.zeros(len(values), dtype=bool)
    else:
        plain, aside = _without_asides(values)
        plain_strings = _comparable(plain, comparison)
    where = np.empty(len(dictionary), dtype=np.int64)
    where[needed] = np.arange(needed.size)
    at_first, at_second = where[first], where[second]
    one_sided = aside[at_first] != aside[at_second]
    result = process.cpdist(
        np.where(one_sided, plain_strings[at_first], strings[at_first]),
        np.where(one_sided, plain_strings[at_second], strings[at_second]),
        scorer=scorer,
        workers=fuzzy_workers(first.size),
        dtype=np.float64,
        # A little below the cutoff: rapidfuzz turns a normalised cutoff into a
        # distance, and a score exactly at it (0.8 = 1 - 2/10) must stay.
        score_cutoff=None if score_cutoff is None else (score_cutoff - 1e-6) * scale,
    )
    return np.asarray(result, dtype=np.float64) / scale


def _comparable(values: pa.Array, comparison: str) -> npt.NDArray[np.object_]:
    """Return the values as the scorer compares them: trimmed (if it trims), cut."""
    if comparison in EDGE_TRIMMED_SCORERS:
        values = _without_edge_punctuation(values)
    elif comparison == "digits":
        values = _digits(values)
    # A value of at most FUZZY_MAX_CHARS bytes has at most as many characters,
    # so the byte lengths (read off the offsets) say whether to cut at all.
    if len(values) and pc.max(pc.binary_length(values)).as_py() > FUZZY_MAX_CHARS:
        values = pc.utf8_slice_codeunits(values, 0, FUZZY_MAX_CHARS)
    return np.asarray(values.to_numpy(zero_copy_only=False), dtype=object)


def _without_asides(values: pa.Array) -> tuple[pa.Array, npt.NDArray[np.bool_]]:
    """Return the values without bracketed asides, and which values had one.

    A value that is nothing but asides keeps them (it would be empty).

    Examples
    --------
    >>> plain, aside = _without_asides(
    ...     pa.array(["matrix, the (1999)", "(china)", "(1992).", "x"])
    ... )
    >>> plain.to_pylist(), aside.tolist()
    (['matrix, the', '(china)', '(1992).', 'x'], [True, False, False, False])
    """
    stripped = pc.utf8_trim_whitespace(pc.replace_substring_regex(values, _ASIDE, ""))
    # Only words make a value an aside can qualify: ``(1992).`` is all aside.
    kept = pc.if_else(
        pc.match_substring_regex(stripped, r"[\p{L}\p{N}]"), stripped, values
    )
    aside = pc.not_equal(kept, values).to_numpy(zero_copy_only=False)
    return kept, np.asarray(aside, dtype=bool)


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


def _digits(values: pa.Array) -> pa.Array:
    """Return each value's digits without leading zeros (``compare="digits"``).

    A phone number or an id written with spaces, dashes, brackets or a plus
    sign is compared on its digits alone; a value holding no digit is kept
    as it is (``"n/a"`` and ``"none"`` stay different).

    Examples
    --------
    >>> _digits(pa.array(["(07) 7467-4346", "0774674346", "n/a", "000"])).to_pylist()
    ['774674346', '774674346', 'n/a', '0']
    """
    digits = pc.replace_substring_regex(values, r"[^0-9]+", "")
    digits = pc.replace_substring_regex(digits, r"^0+([0-9])", r"\1")
    return pc.if_else(pc.equal(digits, ""), values, digits)


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
                encoded.raw,
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
