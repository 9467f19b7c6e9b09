"""Each record's most similar records under IDF-weighted token cosine (numpy only).

Records are sets of token ids. A token held by ``df`` records weighs
``log(N / df)``: agreeing on a rare token (a model number, a surname held by
three people) says more than agreeing on a common one. The similarity of two
records is the cosine of their weight vectors,

    sim(a, b) = sum(w_t^2 for t in a & b) / (|a| * |b|),  |a| = sqrt(sum w_t^2),

found through an inverted index: every record looks up the posting lists of
its tokens and adds ``w_t^2`` to each record it meets there. Tokens held by
more than ``cap`` records are skipped in the look-up (they still count in the
norms), which bounds the work by ``sum(df_t^2)`` over the kept tokens; the
caller counts that work before any of it is done.

Squared weights are quantised to integers (``WEIGHT_BITS`` bits), so the sums
are exact and do not depend on the order of additions: the same input gives the
same neighbours on any machine. A pair code and its weight share one ``uint64``
so that one value sort (much faster than an argsort) groups a pair's weights.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from lsh_frame._kernels import hashing, native
from lsh_frame._kernels.ranges import positions

__all__ = [
    "SLICE",
    "Postings",
    "Vocabulary",
    "by_record",
    "compact_sorted",
    "expansion_sizes",
    "keep_in_place",
    "neighbour_lists",
    "quantised_weights",
    "record_bits",
    "run_starts",
    "runs",
    "select",
    "top_neighbours",
    "value_tokens",
    "vocabulary",
]

#: Bits of the quantised squared weight in a packed (pair, weight) value.
WEIGHT_BITS = 22
_WEIGHT_MASK = np.uint64((1 << WEIGHT_BITS) - 1)
#: Bits left for the pair code.
CODE_BITS = 64 - WEIGHT_BITS


def run_starts(values: npt.NDArray) -> npt.NDArray[np.bool_]:
    """Mark where each run of equal values begins (``values`` grouped or sorted)."""
    head = np.ones(values.size, dtype=bool)
    np.not_equal(values[1:], values[:-1], out=head[1:])
    return head


def runs(
    values: npt.NDArray,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Run number of each element and the position where each run begins."""
    head = run_starts(values)
    return np.cumsum(head, dtype=np.int64) - 1, np.flatnonzero(head)


@dataclass(frozen=True)
class Vocabulary:
    """Token ids of each side and each token's document frequency.

    ``records[i]`` and ``tokens[i]`` hold one distinct (record, token id) pair
    per side, sorted by token, then record; ``side_frequency[i][t]`` counts
    the records of side ``i`` that hold token ``t``.
    """

    records: list[npt.NDArray[np.int64]]
    tokens: list[npt.NDArray[np.int64]]
    side_frequency: list[npt.NDArray[np.int64]]

    @property
    def frequency(self) -> npt.NDArray[np.int64]:
        """Records of both sides that hold each token."""
        total = self.side_frequency[0]
        for more in self.side_frequency[1:]:
            total = total + more
        return total


def record_bits(sizes: list[int]) -> int:
    """Bits that hold a record's position in a packed token (see vocabulary)."""
    return max(int(max(sizes, default=1) - 1).bit_length(), 1)


def vocabulary(sides: list[npt.NDArray[np.uint64]], bits: int) -> Vocabulary:
    """Map each side's packed tokens to distinct (record, token id) pairs.

    A packed token holds the top ``64 - bits`` bits of the token's hash above
    the record's position (:func:`record_bits`), so one value sort (in place)
    both removes repeats (a record either has a token or not) and groups the
    records of each token. Keeping ``64 - bits`` bits of a hash merges two
    tokens only when they agree on all of them (about one pair in 10^13 at a
    million records). Ids follow the hash values, so they do not depend on row
    order.

    The sides' arrays are reused: sorted, compacted and turned into the
    records in place (see :data:`SLICE`).
    """
    if len(sides) == 1 and native.compiled is not None and sides[0].flags.c_contiguous:
        packed = sides[0]
        packed.sort()
        one_side = native.token_runs(packed, bits)
        return Vocabulary([one_side[0]], [one_side[1]], [one_side[2]])
    hash_shift = np.uint64(bits)
    record_mask = np.uint64((1 << bits) - 1)
    packed_sides = []
    for packed in sides:
        packed.sort()
        packed_sides.append(compact_sorted(packed))
    del sides
    if len(packed_sides) == 1:
        token_ids, size = _hash_runs(packed_sides[0], hash_shift)
        ids = [token_ids]
    else:
        merged = np.concatenate([packed >> hash_shift for packed in packed_sides])
        merged.sort()
        distinct = compact_sorted(merged)
        ids = [_searched(distinct, packed, hash_shift) for packed in packed_sides]
        size = int(distinct.size)
        del merged, distinct
    side_frequency = [
        np.bincount(tokens, minlength=size).astype(np.int64) for tokens in ids
    ]
    records = []
    for packed in packed_sides:
        np.bitwise_and(packed, record_mask, out=packed)
        records.append(packed.view(np.int64))
    return Vocabulary(records, ids, side_frequency)


#: Elements per slice of the passes over whole token arrays: their temporaries
#: are this small, so one pass reuses the memory of the last instead of asking
#: the system for fresh pages (each large fresh array costs a page fault per
#: page, 1-2 s per GB on the virtual machines measured; see benchmarks/HISTORY.md).
SLICE = 1 << 22


def _slices(size: int) -> range:
    return range(0, size, SLICE)


def compact_sorted(values: npt.NDArray) -> npt.NDArray:
    """Drop repeats from sorted ``values`` in place; return the distinct prefix.

    Slice by slice: a slice's distinct values move left over room already
    read (the write position never passes the read position), so nothing
    unread is overwritten and no array of the whole size is made.
    """
    if values.size == 0:
        return values
    return keep_in_place(lambda start, stop: _heads(values, start, stop), values)[0]


def _heads(values: npt.NDArray, start: int, stop: int) -> npt.NDArray[np.bool_]:
    """Where ``values[start:stop]`` differ from the value before (sorted input).

    Called by :func:`compact_sorted` while it compacts: ``values[start - 1]``
    still holds its own value then, since either nothing was dropped before
    ``start`` (every value is where it was) or the write position is below it.
    """
    head = np.empty(stop - start, dtype=bool)
    head[0] = start == 0 or bool(values[start] != values[start - 1])
    np.not_equal(values[start + 1 : stop], values[start : stop - 1], out=head[1:])
    return head


def keep_in_place(
    keep: Callable[[int, int], npt.NDArray[np.bool_]], *arrays: npt.NDArray
) -> list[npt.NDArray]:
    """Keep the elements of equal-length ``arrays`` where ``keep`` says, in place.

    ``keep(start, stop)`` returns the mask of ``[start, stop)``; it is called
    before that slice is written, and writes only reach positions already
    read, so it sees the original values. Returns the kept prefixes (views).
    """
    size = arrays[0].size
    write = 0
    for start in _slices(size):
        stop = min(start + SLICE, size)
        mask = keep(start, stop)
        kept = int(np.count_nonzero(mask))
        for values in arrays:
            values[write : write + kept] = values[start:stop][mask]
        write += kept
    return [values[:write] for values in arrays]


def _hash_runs(
    packed: npt.NDArray[np.uint64], shift: np.uint64
) -> tuple[npt.NDArray[np.int64], int]:
    """Run number of each sorted packed token's hash (``packed >> shift``)."""
    ids = np.empty(packed.size, dtype=np.int64)
    count = 0
    previous: np.uint64 | None = None
    for start in _slices(packed.size):
        stop = min(start + SLICE, packed.size)
        hashes = packed[start:stop] >> shift
        head = np.empty(hashes.size, dtype=bool)
        head[0] = previous is None or bool(hashes[0] != previous)
        np.not_equal(hashes[1:], hashes[:-1], out=head[1:])
        out = ids[start:stop]
        np.cumsum(head, out=out)
        out += count - 1
        count = int(out[-1]) + 1
        previous = hashes[-1]
    return ids, count


def _searched(
    distinct: npt.NDArray[np.uint64], packed: npt.NDArray[np.uint64], shift: np.uint64
) -> npt.NDArray[np.int64]:
    """Position in ``distinct`` of each packed token's hash (slice by slice)."""
    ids = np.empty(packed.size, dtype=np.int64)
    for start in _slices(packed.size):
        stop = min(start + SLICE, packed.size)
        ids[start:stop] = np.searchsorted(distinct, packed[start:stop] >> shift)
    return ids


def by_record(
    records: npt.NDArray[np.int64], tokens: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Reorder ``(record, token)`` pairs by record, then token (one value sort)."""
    token_bits = np.uint64(max(int(tokens.max(initial=0)).bit_length(), 1))
    # Both are non-negative: their uint64 views hold the same values.
    packed = np.left_shift(np.ascontiguousarray(records).view(np.uint64), token_bits)
    np.bitwise_or(packed, np.ascontiguousarray(tokens).view(np.uint64), out=packed)
    packed.sort()
    by_token = np.bitwise_and(packed, (np.uint64(1) << token_bits) - np.uint64(1))
    np.right_shift(packed, token_bits, out=packed)
    return packed.view(np.int64), by_token.view(np.int64)


def quantised_weights(
    frequency: npt.NDArray[np.int64], records: int
) -> npt.NDArray[np.uint64]:
    """Integer squared IDF weights, ``round(log(N / df)^2 * scale)``.

    The scale puts the largest possible weight (a token held by one record)
    at the top of ``WEIGHT_BITS`` bits. Every token weighs at least 1 (of
    about four million): a token held by every record still says that two
    records agree, which matters where there is nothing else to go by (two
    copies of one record, a new record against a table of one).
    """
    idf = np.log(max(records, 1) / np.maximum(frequency, 1))
    top = np.log(max(records, 2)) ** 2
    scaled = np.rint(idf**2 / top * float(_WEIGHT_MASK))
    return np.clip(scaled, 1, float(_WEIGHT_MASK)).astype(np.uint64)


@dataclass(frozen=True)
class Postings:
    """An inverted index: the records holding each token, grouped by token."""

    records: npt.NDArray[np.int64]
    starts: npt.NDArray[np.int64]
    counts: npt.NDArray[np.int64]

    @classmethod
    def build(
        cls,
        records: npt.NDArray[np.int64],
        tokens: npt.NDArray[np.int64],
        vocabulary_size: int,
    ) -> Postings:
        """Index ``(record, token)`` pairs already sorted by token."""
        counts = np.bincount(tokens, minlength=vocabulary_size).astype(np.int64)
        starts = np.cumsum(counts) - counts  # as many as counts, none for none
        return cls(records, starts, counts)


def expansion_sizes(
    query_records: npt.NDArray[np.int64],
    query_tokens: npt.NDArray[np.int64],
    postings: Postings,
    n_queries: int,
) -> npt.NDArray[np.int64]:
    """Count the postings each query record would visit (its look-up work)."""
    return np.bincount(
        query_records, weights=postings.counts[query_tokens], minlength=n_queries
    ).astype(np.int64)


def neighbour_lists(
    query_records: npt.NDArray[np.int64],
    query_tokens: npt.NDArray[np.int64],
    postings: Postings,
    weights: npt.NDArray[np.uint64],
    query_norms: npt.NDArray[np.float64],
    index_norms: npt.NDArray[np.float64],
    *,
    first: int,
    stop: int,
    n_index: int,
    same_table: bool,
    budget: tuple[float, float, int, int, int] | None = None,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Scored neighbours of the query records ``first <= q < stop``.

    With ``budget`` (``relative, floor, factor, least, most`` of
    :func:`select`), only the neighbours that :func:`select` could keep are
    ranked and returned, with the same ranks: see :func:`_rankable`.

    ``query_records``/``query_tokens`` hold only the look-up tokens (those
    under the cap), sorted by record. Returns ``(query, neighbour, cosine)``
    sorted by query, then cosine descending, then neighbour; the cosine is
    rounded to at least 21 bits. With ``same_table`` a record is not its own
    neighbour. Equal cosines rank by the neighbour's number: a caller that
    wants ties independent of row order numbers the records by a rank of its
    own first (see :func:`lsh_frame.block.neighbours.neighbour_pairs`).
    """
    lo, hi = np.searchsorted(query_records, [first, stop])
    records, tokens = query_records[lo:hi], query_tokens[lo:hi]
    counts = postings.counts[tokens]
    # A pair code is (query << index_bits) | neighbour: it sorts as the pair
    # (query, neighbour) and splits with a shift and a mask.
    index_bits = max(int(n_index - 1).bit_length(), 1)
    if (stop - first) << index_bits >= 1 << CODE_BITS:
        raise ValueError("neighbour_lists: chunk too large for the pair code")
    # Each look-up token's query and weight, packed once and repeated over
    # its postings (a repeat, not two gathers through each posting's owner).
    query_and_weight = (records - first).astype(np.uint64)
    query_and_weight <<= np.uint64(index_bits + WEIGHT_BITS)
    query_and_weight |= weights[tokens]
    packed = np.repeat(query_and_weight, counts)
    del query_and_weight
    neighbours = postings.records[positions(postings.starts[tokens], counts)]
    neighbour_codes = neighbours.view(np.uint64)  # records are non-negative
    neighbour_codes <<= np.uint64(WEIGHT_BITS)
    packed |= neighbour_codes
    del neighbours, neighbour_codes
    packed.sort()
    codes = packed >> np.uint64(WEIGHT_BITS)
    starts = np.flatnonzero(run_starts(codes))
    sums = (
        np.add.reduceat(packed & _WEIGHT_MASK, starts)
        if starts.size
        else np.empty(0, np.uint64)
    )
    pair_codes = codes[starts]
    del packed, codes
    local_query = (pair_codes >> np.uint64(index_bits)).astype(np.int64)
    neighbour = (pair_codes & np.uint64((1 << index_bits) - 1)).astype(np.int64)
    if same_table:  # a record is not its own neighbour
        other = neighbour != local_query + first
        local_query, neighbour, sums = (
            local_query[other],
            neighbour[other],
            sums[other],
        )
    cosine = sums.astype(np.float64) / (
        query_norms[local_query + first] * index_norms[neighbour]
    )
    # Rank by one value sort of (query, cosine descending, neighbour) packed in
    # a uint64, the cosine quantised to the bits that are left (at least 21).
    query_bits = max(int(stop - first - 1).bit_length(), 1)
    # At most 52 bits: a float64 holds the quantised value exactly.
    cosine_bits = min(64 - query_bits - index_bits, 52)
    top = np.uint64((1 << cosine_bits) - 1)
    quantised = np.rint(np.clip(cosine, 0.0, 1.0) * float(top)).astype(np.uint64)
    if budget is not None and local_query.size:
        rankable = _rankable(
            local_query, quantised.astype(np.float64) / float(top), budget
        )
        local_query, neighbour = local_query[rankable], neighbour[rankable]
        quantised = quantised[rankable]
    ranked = local_query.astype(np.uint64) << np.uint64(cosine_bits + index_bits)
    ranked |= (top - quantised) << np.uint64(index_bits)
    ranked |= neighbour.astype(np.uint64)
    ranked.sort()
    neighbour = (ranked & np.uint64((1 << index_bits) - 1)).astype(np.int64)
    quantised = top - ((ranked >> np.uint64(index_bits)) & top)
    query = (ranked >> np.uint64(cosine_bits + index_bits)).astype(np.int64) + first
    return query, neighbour, quantised.astype(np.float64) / float(top)


#: A query's neighbours below this share of ``relative`` times its best cosine
#: are ranked only when fewer above it cannot fill its budget.
_RANK_MARGIN = 0.5


def _rankable(
    query: npt.NDArray[np.int64],
    cosine: npt.NDArray[np.float64],
    budget: tuple[float, float, int, int, int],
) -> npt.NDArray[np.bool_]:
    """Mark a superset of the neighbours :func:`select` keeps, before ranking.

    ``query`` is grouped (not ranked within groups), ``cosine`` the values
    :func:`select` will see. A query keeps its ``k`` best neighbours, ``k``
    from its own best cosine and close count (as :func:`select` counts them).
    When at least ``k`` of its neighbours reach ``t = _RANK_MARGIN * relative *
    best``, the ``k``-th best reaches ``t`` too, so every kept neighbour, and
    every neighbour ranked above one, is among those: the rest are dropped.
    Otherwise all of its neighbours stay. Ranks of the kept ones are unchanged.
    """
    relative, floor, factor, least, most = budget
    heads = np.flatnonzero(run_starts(query))
    sizes = np.diff(np.append(heads, query.size))
    best = np.repeat(np.maximum.reduceat(cosine, heads), sizes)
    is_close = (cosine >= relative * best) & (cosine >= floor)
    close = np.add.reduceat(is_close.astype(np.int64), heads)
    keep_count = np.minimum(factor * close + least, most)
    wide = cosine >= _RANK_MARGIN * relative * best
    enough = np.add.reduceat(wide.astype(np.int64), heads) >= keep_count
    return wide | ~np.repeat(enough, sizes)


def select(
    query: npt.NDArray[np.int64],
    cosine: npt.NDArray[np.float64],
    *,
    relative: float,
    floor: float,
    factor: int,
    least: int,
    most: int,
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int64]]:
    """Keep each record's top ``k`` neighbours, ``k`` read off its own scores.

    Input as returned by :func:`neighbour_lists`. A record's *close*
    neighbours are those within ``relative`` of its best cosine and at least
    ``floor`` (a crowd of weak look-alikes is not a cluster); it keeps
    ``k = min(most, factor * close + least)`` neighbours, so a record with many
    look-alikes (a paper cited in twenty styles) keeps many, one with a single
    clear match keeps few. Returns the kept mask and each kept row's rank.
    """
    if query.size == 0:
        return np.zeros(0, dtype=bool), np.zeros(0, dtype=np.int64)
    group, head_positions = runs(query)
    rank = np.arange(query.size, dtype=np.int64) - head_positions[group]
    best = cosine[head_positions][group]
    is_close = (cosine >= relative * best) & (cosine >= floor)
    close = np.bincount(group, weights=is_close).astype(np.int64)
    keep_count = np.minimum(factor * close + least, most)
    kept = rank < keep_count[group]
    return kept, rank[kept]


def top_neighbours(
    query_records: npt.NDArray[np.int64],
    query_tokens: npt.NDArray[np.int64],
    postings: Postings,
    weights: npt.NDArray[np.uint64],
    query_norms: npt.NDArray[np.float64],
    index_norms: npt.NDArray[np.float64],
    *,
    first: int,
    stop: int,
    n_index: int,
    same_table: bool,
    budget: tuple[float, float, int, int, int],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Return the neighbours each query record ``first <= q < stop`` keeps.

    :func:`neighbour_lists` with ``budget``, then :func:`select` with it
    (``relative, floor, factor, least, most``): the kept rows, in their order
    (by query, then cosine descending, then neighbour).
    """
    if native.compiled is not None:
        return native.top_neighbours(
            query_records,
            query_tokens,
            postings.records,
            postings.starts,
            postings.counts,
            weights,
            query_norms,
            index_norms,
            first=first,
            stop=stop,
            n_index=n_index,
            same_table=same_table,
            budget=budget,
        )
    query, neighbour, cosine = neighbour_lists(
        query_records,
        query_tokens,
        postings,
        weights,
        query_norms,
        index_norms,
        first=first,
        stop=stop,
        n_index=n_index,
        same_table=same_table,
        budget=budget,
    )
    relative, floor, factor, least, most = budget
    kept, _ = select(
        query,
        cosine,
        relative=relative,
        floor=floor,
        factor=factor,
        least=least,
        most=most,
    )
    return query[kept], neighbour[kept], cosine[kept]


def value_tokens(
    points: npt.NDArray[Any],
    offsets: npt.NDArray[np.int64],
    salts: npt.NDArray[np.uint64],
    n: int,
    *,
    record_bits: int,
    first_record: int,
    long_words: int | None,
    word_tag: np.uint64,
    char_tag: np.uint64,
) -> npt.NDArray[np.uint64]:
    """Words, shingles and whole values of normalised values, packed.

    ``points`` and ``offsets`` hold the values (code points, or the bytes of
    ASCII text), one column after the other, ``n`` a column; ``salts`` each
    value's column salt; records are numbered from ``first_record``. A token
    is ``hash top bits | record`` (the low ``record_bits`` bits). In order:
    every word (``splitmix64(word hash ^ word_tag)``), the character
    3-shingles (tagged ``char_tag``) of values under ``long_words`` words
    (None: of every value), and each value that has a word as a whole: its
    words' hashes combined in order, with its salt.
    """
    if native.compiled is not None:
        done = native.value_tokens(
            points,
            offsets,
            salts,
            n,
            record_bits=record_bits,
            first_record=first_record,
            long_words=long_words,
            word_tag=word_tag,
            char_tag=char_tag,
        )
        if done is not None:
            return done
    values = offsets.size - 1
    shift = np.uint64(record_bits)

    def pack(hashes: npt.NDArray[np.uint64], owners: npt.NDArray[np.int64]) -> Any:
        hashes >>= shift
        hashes <<= shift
        hashes |= (owners % max(n, 1) + first_record).astype(np.uint64)
        return hashes

    starts, ends, owners = hashing.word_spans(points, offsets)
    words = hashing.word_hashes(points, starts, ends) ^ word_tag
    parts = [pack(hashing.splitmix64(words), owners)]

    shingles, shingle_offsets = hashing.char_shingles(points, offsets, 3, char_tag)
    shingle_owners = np.repeat(
        np.arange(values, dtype=np.int64), np.diff(shingle_offsets)
    )
    if long_words is not None:
        long = np.bincount(owners, minlength=values) >= long_words
        if long.any():  # most tables have none: no copy of their shingles
            kept = ~long[shingle_owners]
            shingles, shingle_owners = shingles[kept], shingle_owners[kept]
    parts.append(pack(shingles, shingle_owners))
    del shingles, shingle_owners

    # The whole value without spaces: the words' hashes combined in order.
    if words.size:
        group, head = runs(owners)
        position = np.arange(words.size, dtype=np.uint64) - head[group].astype(
            np.uint64
        )
        mixed = hashing.splitmix64(words + position * hashing.MULTIPLIER)
        value = np.zeros(values, dtype=np.uint64)
        np.add.at(value, owners, mixed)
        present = np.flatnonzero(np.bincount(owners, minlength=values) > 0)
        parts.append(
            pack(
                hashing.splitmix64(value[present] ^ salts[present]),
                present.astype(np.int64),
            )
        )
    return np.concatenate(parts)
