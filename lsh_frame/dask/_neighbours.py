"""The neighbours key on Dask: tokens, postings and look-ups on the workers.

The pairs are those of :func:`lsh_frame.block.neighbours.neighbour_pairs` on
the whole table(s), whatever the partitioning; no column comes to the client.
The steps, each a task per partition, per token range or per group of records:

1. **Counts.** Each partition tokenises its records (:func:`record_tokens`,
   packed with the whole table's record bits, so that a token is the token
   pandas sees) and counts the records holding each of its distinct tokens;
   it also hashes its records' values (for the ties, step 3).
2. **Frequencies.** The counts go by token range (the top bits of the hash) to
   one task per range, which adds them up: each token's document frequency in
   the whole table(s). Each range reports the look-up work of its frequency
   levels; the client adds those up and cuts as pandas does (:func:`cap_of`,
   a few numbers per level), then numbers the tokens the look-ups use (held by
   two records or more and at most the cap; linking, by both tables).
3. **Ranks.** Equal cosines rank by a hash of the records' values, then of their
   labels' text, then their position (as ``_tie_ranks``): one task per table
   sorts those hashes (16 bytes a record) and gives each record its rank. From
   here on records are numbered by rank, as in pandas.
4. **Records.** Each range tells each partition the frequency and the number of
   each of its tokens. The partition tokenises again (cheaper than keeping some
   80 tokens a record between the steps) and finds its records' norms, look-up
   work and whether they are keyed, and its (rank, token) pairs of look-up
   tokens: a few a record, since the cap leaves the frequent tokens out.
5. **Chunks.** One task per table puts the norms and the work in rank order and
   cuts the records into pandas' chunks (a chunk's size sets how finely its
   cosines are quantised, so the chunks must be pandas'), grouped into tasks
   of about ``GROUP_WORK`` postings; one task per table builds the inverted
   index of its look-up pairs.
6. **Look-ups.** Each group gathers its records' look-up pairs and runs pandas'
   kernel chunk by chunk against the whole index; the kept pairs go, coded,
   to the partition of their left record, which keeps each once.

Memory: a partition's tokens while it is tokenised (about 8 bytes a token, some
80 tokens a customer record); the distinct tokens' counts, spread over the
ranges; per table, a few arrays of 8 bytes a record (norms, ranks, work) on a
worker; the index (16 bytes a look-up pair) on each worker that looks up. The
client holds the frequency levels and the chunks' bounds: never a row, a
token or a pair.
"""

from __future__ import annotations

import operator
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed

from lsh_frame import _progress
from lsh_frame._kernels import neighbours as kernel
from lsh_frame.block import neighbours as whole_table
from lsh_frame.block.neighbours import (
    DEDUPE,
    LINK,
    SIDE_RATIO,
    Budget,
    _check,
    _chunks,
    _weight_sums,
    cap_of,
    describe,
    frequency_levels,
    record_tokens,
)
from lsh_frame.dask._tables import compute, persist, shared
from lsh_frame.errors import LshFrameError
from lsh_frame.text.labels import hash_labels, hash_values

if TYPE_CHECKING:
    from lsh_frame.dask._tables import Table

#: Postings a look-up task visits, about (a second or two of the kernel).
GROUP_WORK = 100_000_000
#: Token ranges at most (one task each).
MAX_RANGES = 32

_EMPTY_HASHES = np.empty(0, dtype=np.uint64)
_EMPTY = np.empty(0, dtype=np.int64)


@dataclass
class FoundNeighbours:
    """A neighbours key's pairs, one persisted part per left partition.

    Each part holds the sorted, distinct codes ``left * n_right + right`` of
    the pairs whose left record the partition holds (dedupe: ``left <
    right``). The rest describes the key as pandas does.
    """

    parts: list[Any]
    pairs: int
    keyed: list[int]
    histogram: npt.NDArray[np.int64]
    description: str

    @property
    def largest(self) -> int:
        """The most neighbours a record kept."""
        present = np.flatnonzero(self.histogram[1:])
        return int(present[-1]) + 1 if present.size else 0


def _tokens(
    part: pd.DataFrame, columns: list[Hashable], owner: str, bits: int
) -> tuple[
    npt.NDArray[np.uint64],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
]:
    """Return a partition's distinct token hashes, (record, token) pairs, counts.

    The hashes are the tokens' top ``64 - bits`` bits, sorted; the pairs'
    tokens number them (as :func:`kernel.vocabulary` numbers them) and the
    counts say how many of the partition's records hold each.
    """
    if not len(part):
        return _EMPTY_HASHES, _EMPTY, _EMPTY, _EMPTY
    packed = record_tokens(part, columns, owner=owner, record_bits=bits)
    packed.sort()
    shifted = packed >> np.uint64(bits)
    hashes = shifted[kernel.run_starts(shifted)]
    del shifted
    vocabulary = kernel.vocabulary([packed], bits)
    return (
        hashes,
        vocabulary.records[0],
        vocabulary.tokens[0],
        vocabulary.side_frequency[0],
    )


def _cuts(hashes: npt.NDArray[np.uint64], bounds: npt.NDArray[np.uint64]) -> Any:
    return np.searchsorted(hashes, bounds[1:-1])


def _counted(
    part: pd.DataFrame,
    columns: list[Hashable],
    owner: str,
    bits: int,
    bounds: npt.NDArray[np.uint64],
) -> tuple[list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]], Any]:
    """Step 1: a partition's token counts by range, and its values' hashes."""
    hashes, _, _, counts = _tokens(part, columns, owner, bits)
    cuts = _cuts(hashes, bounds)
    pieces = list(zip(np.split(hashes, cuts), np.split(counts, cuts), strict=True))
    return pieces, hash_values(part, columns)


@dataclass
class _Range:
    """The distinct tokens of one hash range, their frequencies, and who asked.

    ``inverse`` maps each piece's tokens (the pieces concatenated) to their
    place in ``hashes``; ``lengths`` are the pieces' sizes and ``sides`` their
    tables.
    """

    hashes: npt.NDArray[np.uint64]
    frequency: list[npt.NDArray[np.int64]]
    inverse: npt.NDArray[np.int64]
    lengths: list[int]
    sides: list[int]


def _merged(
    pieces: list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]],
    sides: list[int],
    tables: int,
) -> _Range:
    """Step 2: add up the partitions' counts of one range's tokens."""
    hashes = np.concatenate([_EMPTY_HASHES, *[piece[0] for piece in pieces]])
    counts = np.concatenate([_EMPTY, *[piece[1] for piece in pieces]])
    side_of = np.repeat(
        np.array(sides, dtype=np.int64), [piece[0].size for piece in pieces]
    )
    distinct, inverse = np.unique(hashes, return_inverse=True)
    inverse = inverse.reshape(-1).astype(np.int64)
    frequency = [
        np.bincount(
            inverse[side_of == side],
            weights=counts[side_of == side].astype(np.float64),
            minlength=distinct.size,
        ).astype(np.int64)
        for side in range(tables)
    ]
    return _Range(
        distinct, frequency, inverse, [piece[0].size for piece in pieces], sides
    )


def _looked_up_tokens(found: _Range, link: bool) -> npt.NDArray[np.bool_]:
    """Tokens that can find a pair: held by two records (linking, by both tables)."""
    if link:
        return (found.frequency[0] > 0) & (found.frequency[1] > 0)
    return found.frequency[0] >= 2


def _total(found: _Range) -> npt.NDArray[np.int64]:
    total = found.frequency[0]
    for more in found.frequency[1:]:
        total = total + more
    return total


def _levels(
    found: _Range, link: bool
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Frequency levels of a range, their work and their looked-up tokens."""
    levels, work = frequency_levels(found.frequency, link)
    where = np.searchsorted(levels, _total(found))
    usable = np.bincount(
        where[_looked_up_tokens(found, link)], minlength=levels.size
    ).astype(np.int64)
    return levels, work, usable


@dataclass
class _Answer:
    """What a range tells one partition of its tokens (the partition's order).

    ``total``: records holding the token in all the tables; ``other``: in the
    table looked up (the other one when linking); ``number``: the token's number
    among the looked-up tokens, -1 for the rest.
    """

    total: npt.NDArray[np.int64]
    other: npt.NDArray[np.int64]
    number: npt.NDArray[np.int64]


def _answers(
    found: _Range, cap: int, first: int, records: int, link: bool
) -> tuple[list[_Answer], npt.NDArray[np.uint64]]:
    """Step 4: each partition's answer, and the weights of the looked-up tokens."""
    total = _total(found)
    looked_up = _looked_up_tokens(found, link) & (total <= cap)
    number = np.full(total.size, -1, dtype=np.int64)
    number[looked_up] = first + np.arange(int(looked_up.sum()), dtype=np.int64)
    weights = kernel.quantised_weights(total[looked_up], records)
    answers = []
    start = 0
    for length, side in zip(found.lengths, found.sides, strict=True):
        mine = found.inverse[start : start + length]
        start += length
        other = found.frequency[1 - side] if link else total
        answers.append(_Answer(total[mine], other[mine], number[mine]))
    return answers, weights


@dataclass
class _Records:
    """Step 4's result for one partition (positions local, pairs by rank)."""

    norms: npt.NDArray[np.float64]
    work: npt.NDArray[np.int64]
    keyed: int
    ranks: npt.NDArray[np.int64]
    tokens: npt.NDArray[np.int64]


def _records(
    part: pd.DataFrame,
    answers: list[_Answer],
    ranks: npt.NDArray[np.int64],
    columns: list[Hashable],
    owner: str,
    bits: int,
    records: int,
    cap: int,
) -> _Records:
    """Step 4: a partition's norms, work, keyed records and look-up pairs."""
    hashes, record, token, _ = _tokens(part, columns, owner, bits)
    total = np.concatenate([_EMPTY, *[answer.total for answer in answers]])
    if total.size != hashes.size:
        raise LshFrameError(
            f"A partition gave {hashes.size:,} distinct neighbours tokens on a "
            f"second read, but {total.size:,} on the first. Its partitions must "
            "give the same rows every time they are computed: persist() the "
            "frame first."
        )
    other = np.concatenate([_EMPTY, *[answer.other for answer in answers]])
    number = np.concatenate([_EMPTY, *[answer.number for answer in answers]])
    size = len(part)
    weights = kernel.quantised_weights(total, records)
    norms = np.sqrt(_weight_sums(record, token, weights, size))
    usable = total <= cap
    keyed = int(np.count_nonzero(np.bincount(record[usable[token]], minlength=size)))
    work = np.bincount(
        record, weights=np.where(usable, other, 0)[token], minlength=size
    ).astype(np.int64)
    looked_up = number[token]
    kept = looked_up >= 0
    pair_ranks = ranks[record[kept]]
    order = np.argsort(pair_ranks, kind="stable")
    return _Records(norms, work, keyed, pair_ranks[order], looked_up[kept][order])


def _ranked(
    values: list[npt.NDArray[np.uint64] | None], index: pd.Index
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Step 3: each record's rank among equal scores, and the inverse.

    As ``lsh_frame.block.neighbours._tie_ranks`` on the whole table: the
    values' hashes are row-local, so those of the partitions are the table's
    (and when one partition's values cannot be hashed, neither can the
    table's: all fall back on the labels).
    """
    labels = hash_labels(index)
    hashed = (
        labels
        if any(part is None for part in values)
        else np.concatenate([_EMPTY_HASHES, *values])
    )
    order = np.lexsort((np.arange(labels.size), labels, hashed))
    ranks = np.empty(labels.size, dtype=np.int64)
    ranks[order] = np.arange(labels.size)
    return ranks, order.astype(np.int64)


def _slice(values: Any, start: int, stop: int) -> Any:
    return values[start:stop]


def _in_rank_order(
    pieces: list[npt.NDArray[Any]], ranked: tuple[npt.NDArray[np.int64], Any]
) -> npt.NDArray[Any]:
    """Per-record values of the partitions (by position), in rank order."""
    values = np.concatenate(pieces)
    ordered = np.empty_like(values)
    ordered[ranked[0]] = values
    return ordered


def _norms(records: list[_Records], ranked: Any) -> npt.NDArray[np.float64]:
    return _in_rank_order([part.norms for part in records], ranked)


@dataclass
class _Plan:
    """A table's look-ups as pandas chunks them, grouped into tasks."""

    chunks: npt.NDArray[np.int64]  # (first, stop) ranks of each chunk
    groups: npt.NDArray[np.int64]  # the first chunk of each group, and the end
    work: int
    keyed: int


def _plan(records: list[_Records], ranked: Any, n_index: int, group_work: int) -> _Plan:
    """Step 5: pandas' chunks of a table's look-ups, and groups of them."""
    work = _in_rank_order([part.work for part in records], ranked)
    chunks = np.array(_chunks(work, n_index), dtype=np.int64).reshape(-1, 2)
    chunk_work = np.array(
        [int(work[first:stop].sum()) for first, stop in chunks], dtype=np.int64
    )
    groups = [0]
    so_far = 0
    for number, amount in enumerate(chunk_work):
        if so_far and so_far + amount > group_work:
            groups.append(number)
            so_far = 0
        so_far += int(amount)
    groups.append(len(chunks))
    if len(chunks) == 0:
        groups = [0, 0]
    return _Plan(
        chunks,
        np.array(groups, dtype=np.int64),
        int(work.sum()),
        sum(part.keyed for part in records),
    )


def _postings(records: list[_Records], size: int, n: int) -> kernel.Postings:
    """Step 5: the inverted index of a table's look-up pairs."""
    ranks = np.concatenate([_EMPTY, *[part.ranks for part in records]])
    tokens = np.concatenate([_EMPTY, *[part.tokens for part in records]])
    bits = np.uint64(max(int(n - 1).bit_length(), 1))
    packed = tokens.view(np.uint64) << bits
    packed |= ranks.view(np.uint64)
    packed.sort()
    ranks = (packed & ((np.uint64(1) << bits) - np.uint64(1))).view(np.int64)
    tokens = (packed >> bits).view(np.int64)
    return kernel.Postings.build(ranks, tokens, size)


def _split(records: _Records, bounds: npt.NDArray[np.int64]) -> list[Any]:
    """Cut a partition's look-up pairs at the groups' first ranks."""
    cuts = np.searchsorted(records.ranks, bounds[1:-1])
    return list(
        zip(np.split(records.ranks, cuts), np.split(records.tokens, cuts), strict=True)
    )


@dataclass
class _Found:
    """What a group of look-ups found: pairs by left partition, and counts."""

    codes: list[npt.NDArray[np.int64]]
    per_chunk: npt.NDArray[np.int64]
    histogram: npt.NDArray[np.int64]


@dataclass(frozen=True)
class _Direction:
    """One way of looking up: which table asks, which is searched."""

    query: int
    index: int
    same_table: bool
    budget: Budget


def _look_up(
    pieces: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]],
    chunks: npt.NDArray[np.int64],
    postings: kernel.Postings,
    weights: npt.NDArray[np.uint64],
    query_norms: npt.NDArray[np.float64],
    index_norms: npt.NDArray[np.float64],
    query_order: npt.NDArray[np.int64],
    index_order: npt.NDArray[np.int64],
    direction: _Direction,
    n_right: int,
    left_offsets: npt.NDArray[np.int64],
) -> _Found:
    """Step 6: one group's kept neighbours, chunk by chunk as in pandas."""
    query_records, query_tokens = kernel.by_record(
        np.concatenate([_EMPTY, *[piece[0] for piece in pieces]]),
        np.concatenate([_EMPTY, *[piece[1] for piece in pieces]]),
    )
    budget = direction.budget
    found, per_chunk, kept = [], [], []
    for first, stop in chunks:
        query, neighbour, _ = kernel.top_neighbours(
            query_records,
            query_tokens,
            postings,
            weights,
            query_norms,
            index_norms,
            first=int(first),
            stop=int(stop),
            n_index=index_order.size,
            same_table=direction.same_table,
            budget=(
                budget.relative,
                budget.floor,
                budget.factor,
                budget.least,
                budget.most,
            ),
        )
        per_chunk.append(query.size)
        kept.append(np.unique(query, return_counts=True)[1])
        query, neighbour = query_order[query], index_order[neighbour]
        left, right = (query, neighbour) if direction.query == 0 else (neighbour, query)
        if direction.same_table:
            left, right = np.minimum(left, right), np.maximum(left, right)
        found.append(left * np.int64(n_right) + right)
    codes = np.concatenate([_EMPTY, *found])
    # The partition holding each pair's left record (one piece for each).
    target = (
        np.searchsorted(left_offsets, codes // np.int64(max(n_right, 1)), "right") - 1
    )
    order = np.argsort(target, kind="stable")
    cuts = np.searchsorted(target[order], np.arange(1, left_offsets.size - 1))
    return _Found(
        np.split(codes[order], cuts),
        np.array(per_chunk, dtype=np.int64),
        np.bincount(np.concatenate([_EMPTY, *kept])),
    )


def _united(pieces: list[npt.NDArray[np.int64]]) -> npt.NDArray[np.int64]:
    """Return a left partition's distinct pair codes, sorted."""
    return np.unique(np.concatenate([_EMPTY, *pieces]))


def _counts(found: _Found) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    return found.per_chunk, found.histogram


def _directions(sizes: list[int]) -> list[_Direction]:
    """Return the look-ups of pandas' ``neighbour_pairs``, in its order."""
    if len(sizes) == 1:
        return [_Direction(0, 0, True, DEDUPE)]
    small, large = sorted(sizes)
    if large <= SIDE_RATIO * small:
        ways = [(0, 1), (1, 0)]
    else:
        ways = [(0, 1)] if sizes[0] <= sizes[1] else [(1, 0)]
    return [_Direction(query, index, False, LINK) for query, index in ways]


def _bounds(bits: int, ranges: int) -> npt.NDArray[np.uint64]:
    """Bounds of ``ranges`` equal ranges of the tokens' ``64 - bits`` bits."""
    space = 1 << (64 - bits)
    return np.array([space * r // ranges for r in range(ranges + 1)], np.uint64)


def _item(value: Any, *keys: int) -> Any:
    """``value[key0][key1]...`` as a task."""
    for key in keys:
        value = delayed(operator.getitem)(value, key)
    return value


def _keyed(records: list[_Records]) -> int:
    return sum(part.keyed for part in records)


def _codes_for(found: _Found, target: int) -> npt.NDArray[np.int64]:
    return found.codes[target]


def _added(histograms: list[npt.NDArray[np.int64]]) -> npt.NDArray[np.int64]:
    """Add up histograms of different lengths."""
    total = np.zeros(max([1, *[part.size for part in histograms]]), dtype=np.int64)
    for part in histograms:
        total[: part.size] += part
    return total


def distributed_neighbours(
    tables: list[Table],
    columns: Sequence[Hashable],
    *,
    owner: str,
    max_pairs: int | None = None,
) -> FoundNeighbours:
    """Find the pairs of a neighbours key on the workers (see the module).

    The same pairs, cap, work and description as
    :func:`lsh_frame.block.neighbours.neighbour_pairs` on the whole tables.
    """
    columns = list(columns)
    link = len(tables) == 2
    sizes = [table.rows for table in tables]
    records = sum(sizes)
    bits = kernel.record_bits(sizes)
    # Every partition of every table, with its table and place in it.
    parts = [
        (side, number, part)
        for side, table in enumerate(tables)
        for number, part in enumerate(table.parts)
    ]
    ranges = max(1, min(MAX_RANGES, len(parts)))
    bounds = _bounds(bits, ranges)
    _progress.step(f"neighbours: counting tokens ({records:,} records)")
    counted = persist(
        [delayed(_counted)(part, columns, owner, bits, bounds) for *_, part in parts]
    )
    sides = [side for side, *_ in parts]
    merged = persist(
        [
            delayed(_merged)([_item(one, 0, r) for one in counted], sides, len(tables))
            for r in range(ranges)
        ]
    )
    levels = compute(*[delayed(_levels)(found, link) for found in merged])
    cap = cap_of(
        np.concatenate([_EMPTY, *[level[0] for level in levels]]),
        np.concatenate([np.empty(0), *[level[1] for level in levels]]),
        # Read when called, as pandas reads them (tests change them).
        max(whole_table.WORK_FLOOR, whole_table.WORK_PER_RECORD * records),
    )
    looked_up = [int(level[2][level[0] <= cap].sum()) for level in levels]
    firsts = np.concatenate([[0], np.cumsum(looked_up)]).astype(np.int64)
    answered = persist(
        [
            delayed(_answers)(found, cap, int(first), records, link)
            for found, first in zip(merged, firsts, strict=False)
        ]
    )
    del merged
    (weights,) = persist(
        [
            delayed(np.concatenate)(
                [np.empty(0, np.uint64), *[_item(one, 1) for one in answered]]
            )
        ]
    )
    _progress.step("neighbours: ranking records")
    ranked = persist(
        [
            delayed(_ranked)(
                [_item(one, 1) for (s, *_), one in zip(parts, counted, strict=True)
                 if s == side],
                shared(table.index),
            )
            for side, table in enumerate(tables)
        ]
    )  # fmt: skip
    del counted
    _progress.step("neighbours: reading records")
    found_records = persist(
        [
            delayed(_records)(
                part,
                [_item(one, 0, at) for one in answered],
                delayed(_slice)(
                    _item(ranked[side], 0),
                    int(tables[side].offsets[number]),
                    int(tables[side].offsets[number + 1]),
                ),
                columns,
                owner,
                bits,
                records,
                cap,
            )
            for at, (side, number, part) in enumerate(parts)
        ]
    )
    del answered
    by_side = [
        [one for (s, *_), one in zip(parts, found_records, strict=True) if s == side]
        for side in range(len(tables))
    ]
    norms = persist(
        [delayed(_norms)(mine, ranked[side]) for side, mine in enumerate(by_side)]
    )
    keyed = list(compute(*[delayed(_keyed)(mine) for mine in by_side]))
    directions = _directions(sizes)
    plans = compute(
        *[
            delayed(_plan)(
                by_side[way.query], ranked[way.query], sizes[way.index], GROUP_WORK
            )
            for way in directions
        ]
    )
    _progress.step("neighbours: building the index")
    postings = persist(
        [
            delayed(_postings)(mine, int(firsts[-1]), sizes[side])
            for side, mine in enumerate(by_side)
        ]
    )
    orders = [_item(one, 1) for one in ranked]
    left_offsets = shared(tables[0].offsets)
    work = sum(plan.work for plan in plans)
    _progress.step(f"neighbours: looking up ({work:,} postings)")
    looked = []
    for way, plan in zip(directions, plans, strict=True):
        first_ranks = plan.chunks[plan.groups[:-1], 0] if plan.chunks.size else _EMPTY
        cut_at = np.append(first_ranks, sizes[way.query]).astype(np.int64)
        split = [delayed(_split)(mine, cut_at) for mine in by_side[way.query]]
        for group in range(plan.groups.size - 1):
            looked.append(
                delayed(_look_up)(
                    [_item(one, group) for one in split],
                    plan.chunks[plan.groups[group] : plan.groups[group + 1]],
                    postings[way.index],
                    weights,
                    norms[way.query],
                    norms[way.index],
                    orders[way.query],
                    orders[way.index],
                    way,
                    sizes[-1],
                    left_offsets,
                )
            )
    looked = persist(looked)
    del found_records, by_side, norms, postings, ranked, orders, weights
    counts = compute(*[delayed(_counts)(found) for found in looked])
    per_chunk = np.concatenate([_EMPTY, *[count[0] for count in counts]])
    if max_pairs is not None:
        over = np.flatnonzero(np.cumsum(per_chunk) > max_pairs)
        if over.size:
            _check(int(np.cumsum(per_chunk)[over[0]]), max_pairs)
    histogram = _added([count[1] for count in counts])
    united = persist(
        [
            delayed(_united)([delayed(_codes_for)(found, target) for found in looked])
            for target in range(tables[0].npartitions)
        ]
    )
    del looked
    pairs = int(sum(compute(*[delayed(len)(part) for part in united])))
    return FoundNeighbours(
        parts=united,
        pairs=pairs,
        keyed=keyed,
        histogram=histogram,
        description=describe(
            directions[0].budget, histogram, cap=cap, work=work, pairs=pairs
        ),
    )
