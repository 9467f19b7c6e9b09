"""Candidate pairs on Dask: the keys of :mod:`lsh_frame.block`, per partition.

1. Decide the keys with :func:`lsh_frame.block.defaults.decide_keys` from summaries
   that add up over partitions (exact-key counts, the label-hash sample).
2. Build every partition's keys (one long table: key, row, key index, band,
   side) and persist them.
3. Skew guard: a key held by more than ``max_bucket`` rows of one partition is
   over the cap anyway; it is dropped before the shuffle, so no partition ever
   receives more than ``max_bucket`` rows per key from each input partition.
4. Shuffle on the key; group each partition's keys into buckets (the same
   kernel as pandas), drop buckets over the cap, count the pairs (checked
   against ``max_pairs`` before any pair is built).
5. Emit pairs as coded integers, route them to the partition of their left
   record, and deduplicate there: each output partition holds the pairs of its
   left rows in the order pandas gives them.

A neighbours key has no buckets: it needs every token's frequency over the
whole table and each record's full neighbour list. It runs on the workers
(:mod:`lsh_frame.dask._neighbours`: frequencies added up by token range, an
inverted index, look-ups by groups of records), and its pairs join the others
at step 5 as coded integers with the key's bit, one part per left partition.
A top-k cosine key on vectors (``blocking="cosine"`` with ``top``) is the one
key whose column is still gathered to the client.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed
from dask.dataframe.dispatch import concat

from lsh_frame import _progress
from lsh_frame._kernels import pairs as pair_kernels
from lsh_frame._validation import check_int
from lsh_frame.block.candidates import _EMIT_PAIRS
from lsh_frame.block.compound import compound_pairs
from lsh_frame.block.defaults import (
    ExactSummary,
    KeySource,
    decide_keys,
    exact_counts,
    identifier_field,
    merge_counts,
    sample_hashes,
    sample_rows,
    sample_similarity,
)
from lsh_frame.block.fields import (
    _as_fields,
    automatic_fields,
    field_columns,
    spec_columns,
)
from lsh_frame.block.keys import (
    _KEY_BITS,
    _exact_keys,
    _side_keys,
    combined_keys,
    compound_field,
    field_signatures,
    is_compound_label,
)
from lsh_frame.block.vectors import key_neighbours
from lsh_frame.dask._neighbours import FoundNeighbours, distributed_neighbours
from lsh_frame.dask._tables import TARGET, compute, persist, shared_pieces
from lsh_frame.errors import LshFrameError
from lsh_frame.sketch.vectors import VECTOR_KINDS

if TYPE_CHECKING:
    from lsh_frame.block.defaults import ExactProfile
    from lsh_frame.block.fields import BlockingKey, Field
    from lsh_frame.block.neighbours import NeighbourPairs
    from lsh_frame.dask._tables import Table


#: Hidden columns that carry pairs' row positions between internal stages.
LEFT_POSITION, RIGHT_POSITION = "__lsh_left", "__lsh_right"

#: Columns describing buckets over the cap.
_DROPPED_COLUMNS = ["kid", "band", "key", "size", "right", "first"]

#: The long key table travels as two columns: the key, and a code packing the
#: record's position, the key's index, the band and the side (bit 0).
_SIDE_BITS, _BAND_BITS, _KID_BITS = 1, 16, 7

_BAND_SHIFT = _SIDE_BITS

_KID_SHIFT = _BAND_SHIFT + _BAND_BITS

_ROW_SHIFT = _KID_SHIFT + _KID_BITS


def _part_profile(
    part: pd.DataFrame,
    columns: list[Any],
    sample_columns: list[Any],
    seed: int,
    owner: str,
) -> tuple[pd.Index, list[Any], tuple[Any, ...]]:
    """Read a partition's labels, exact-key counts of columns, its sample.

    The sample is drawn as in pandas (:func:`~lsh_frame.block.defaults.sample_hashes`
    of ``sample_columns``); its positions are local (the partition's offset is
    not known yet).
    """
    counts = []
    column_keys = {}
    for column in columns:
        spec = identifier_field(column)
        column_keys[column] = _exact_keys(part, spec, owner=owner)
        counts.append(exact_counts(*column_keys[column]))
    # Every compound key the rules may try (they try free columns' pairs).
    for pair in compound_pairs(columns):
        keys, valid = combined_keys(
            [column_keys[column] for column in pair], compound_field(pair).label
        )
        counts.append(exact_counts(keys, valid))
    positions = np.arange(len(part), dtype=np.int64)
    hashes, by_values = sample_hashes(part, sample_columns, seed)
    return part.index, counts, (*sample_rows(hashes, positions), by_values)


def _part_label_sample(
    part: pd.DataFrame, seed: int
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], bool]:
    """Draw a partition's sample by its labels' text (see :func:`_part_profile`)."""
    positions = np.arange(len(part), dtype=np.int64)
    return (*sample_rows(sample_hashes(part, [], seed)[0], positions), False)


def _part_sample_signatures(
    part: pd.DataFrame,
    local: npt.NDArray[np.int64],
    spec: Field,
    num_perm: int,
    seed: int,
    owner: str,
) -> tuple[npt.NDArray[Any], npt.NDArray[np.bool_]]:
    return field_signatures(
        part.iloc[local], spec, num_perm=num_perm, seed=seed, owner=owner
    )


#: Ranges of exact-key values whose counts are added up apart (one task each).
PROFILE_RANGES = 16


def _head(result: tuple[Any, ...]) -> tuple[pd.Index, tuple[Any, ...]]:
    """Return a partition's labels and sample, without its exact-key counts."""
    return result[0], result[2]


def _cut_counts(
    result: tuple[Any, ...], ranges: int
) -> list[list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64]]]]:
    """Cut a partition's exact-key counts of every key by range of key values.

    ``[range][key]``; the ranges split the 64-bit values evenly (they are hashes).
    """
    bounds = np.arange(1, ranges, dtype=np.uint64) * np.uint64(2**64 // ranges)
    cut: list[list[Any]] = [[] for _ in range(ranges)]
    for values, counts in result[1]:
        at = np.searchsorted(values, bounds)  # values are sorted
        for number, (start, stop) in enumerate(
            zip([0, *at.tolist()], [*at.tolist(), values.size], strict=True)
        ):
            cut[number].append((values[start:stop], counts[start:stop]))
    return cut


def _range_summary(sides: list[list[list[Any]]], keys: int) -> list[ExactSummary]:
    """Each key's summary over one range of values (``sides[side][part][key]``)."""
    return [
        ExactSummary.of([merge_counts([part[key] for part in side]) for side in sides])
        for key in range(keys)
    ]


def _range_summaries(sides: list[list[Any]], keys: int) -> list[ExactSummary]:
    """Each key's :class:`ExactSummary` over the whole tables.

    ``sides[side]``: that table's persisted :func:`_part_profile` results. The
    counts stay on the workers: each partition's are cut by range of values,
    each range's added up by a task of its own, and only the summaries (a few
    numbers and the spread of bucket sizes per key) reach the client.
    """
    ranges = PROFILE_RANGES
    cut = [
        [delayed(_cut_counts)(result, ranges) for result in results]
        for results in sides
    ]
    summaries = compute(
        *[
            delayed(_range_summary)(
                [
                    [delayed(operator.getitem)(pieces, number) for pieces in side]
                    for side in cut
                ],
                keys,
            )
            for number in range(ranges)
        ]
    )
    whole = list(summaries[0])
    for summary in summaries[1:]:
        whole = [mine.plus(theirs) for mine, theirs in zip(whole, summary, strict=True)]
    return whole


class _DaskSource(KeySource):
    """Partitioned tables: one pass reads the labels, profiles, draws the sample."""

    def __init__(
        self,
        tables: list[Table],
        columns: list[Any],
        sample_columns: list[Any],
        seed: int,
        owner: str,
    ) -> None:
        self.tables, self.owner = tables, owner
        self.left = tables[0].meta
        self.right = tables[1].meta if len(tables) > 1 else None
        self.columns, self.seed = columns, seed
        self.sample_columns = sample_columns
        self._profiles: dict[Any, ExactProfile] | None = None
        self._samples: list[npt.NDArray[np.int64]] = []

    @property
    def n_left(self) -> int:
        self._summarise()
        return self.tables[0].rows

    @property
    def n_right(self) -> int | None:
        self._summarise()
        return self.tables[1].rows if len(self.tables) > 1 else None

    def _summarise(self) -> dict[Any, ExactProfile]:
        if self._profiles is None:
            sides = []
            for table in self.tables:
                results = persist(
                    [
                        delayed(_part_profile)(
                            part,
                            self.columns,
                            self.sample_columns,
                            self.seed,
                            self.owner,
                        )
                        for part in table.parts
                    ]
                )
                heads = compute(*[delayed(_head)(result) for result in results])
                samples = [head[1] for head in heads]
                if len({sample[2] for sample in samples}) > 1:
                    # Values some partitions cannot hash: pandas, seeing the
                    # whole table, samples every record by its label then.
                    samples = list(
                        compute(
                            *[
                                delayed(_part_label_sample)(part, self.seed)
                                for part in table.parts
                            ]
                        )
                    )
                if not table.loaded:
                    table.receive([head[0] for head in heads])
                sides.append(results)
                hashes = np.concatenate([sample[0] for sample in samples])
                positions = np.concatenate(
                    [
                        sample[1] + table.offsets[number]
                        for number, sample in enumerate(samples)
                    ]
                )
                self._samples.append(sample_rows(hashes, positions)[1])
            labels = [
                *self.columns,
                *(compound_field(pair).label for pair in compound_pairs(self.columns)),
            ]
            summaries = _range_summaries(sides, len(labels))
            self._profiles = {
                label: summary.profile()
                for label, summary in zip(labels, summaries, strict=True)
            }
        return self._profiles

    def exact_profile(self, spec: Field) -> ExactProfile:
        if is_compound_label(spec.label):
            return self._summarise()[spec.label]
        return self._summarise()[spec.columns[0]]

    def sample_similarity(self, spec: Field, num_perm: int, seed: int) -> Any:
        self._summarise()
        sampled = []
        for table, rows in zip(self.tables, self._samples, strict=True):
            order = np.argsort(rows, kind="stable")
            ordered = rows[order]
            where = table.partition_of(ordered)
            tasks = []
            for part in np.unique(where):
                local = ordered[where == part] - table.offsets[part]
                tasks.append(
                    delayed(_part_sample_signatures)(
                        table.parts[part], local, spec, num_perm, seed, self.owner
                    )
                )
            pieces = list(compute(*tasks))
            if not pieces:  # no rows at all
                empty = np.empty(0, dtype=np.int64)
                pieces = [
                    _part_sample_signatures(
                        table.meta, empty, spec, num_perm, seed, self.owner
                    )
                ]
            matrix = np.concatenate([piece[0] for piece in pieces])
            valid = np.concatenate([piece[1] for piece in pieces])
            back = np.empty_like(order)
            back[order] = np.arange(order.size)
            sampled.append((matrix[back], valid[back]))
        return sample_similarity(
            sampled[0], sampled[1] if len(sampled) > 1 else None, seed
        )


def resolve(
    tables: list[Table],
    fields: Any,
    *,
    threshold: float | None,
    recall: float,
    num_perm: int,
    seed: int,
    owner: str,
    max_pairs: int | None = None,
) -> tuple[list[BlockingKey], list[str], dict[int, FoundNeighbours]]:
    """Decide the blocking keys exactly as :func:`lsh_frame.block.candidates.resolve`.

    Also finds the pairs of each neighbours key (by the key's position), and
    adds its decision line as pandas does.
    """
    specs, _ = _as_fields(fields, owner)
    columns = spec_columns(automatic_fields(specs, tables[0].meta))
    seed = check_int(seed, "seed", owner, minimum=0)
    source = _DaskSource(tables, columns, field_columns(fields, owner), seed, owner)
    keys, decisions = decide_keys(
        source,
        fields,
        threshold=threshold,
        recall=recall,
        num_perm=num_perm,
        seed=seed,
        owner=owner,
    )
    found: dict[int, FoundNeighbours] = {}
    for index, key in enumerate(keys):
        if key.kind != "neighbours":
            continue
        _progress.step(f"finding neighbours ({key.label})")
        if key.field.blocking in VECTOR_KINDS:
            frames = [_gathered(table, list(key.field.columns)) for table in tables]
            found[index] = _gathered_pairs(
                key_neighbours(
                    frames, key.field, owner=owner, max_pairs=max_pairs, seed=seed
                ),
                tables,
            )
        else:
            found[index] = distributed_neighbours(
                tables, key.field.columns, owner=owner, max_pairs=max_pairs
            )
        decisions.append(f"{key.label}: {found[index].description}")
    return keys, decisions, found


def _gathered_pairs(pairs: NeighbourPairs, tables: list[Table]) -> FoundNeighbours:
    """Split a key's pairs found on the client by their left record's partition."""
    codes = pairs.left * np.int64(tables[-1].rows) + pairs.right  # sorted
    bounds = np.searchsorted(pairs.left, tables[0].offsets[1:-1], side="left")
    return FoundNeighbours(
        parts=shared_pieces(np.split(codes, bounds)),
        pairs=int(codes.size),
        keyed=[int(mask.sum()) for mask in pairs.keyed],
        histogram=np.bincount(pairs.kept_per_record),
        description=pairs.describe(),
    )


def _columns_of(part: pd.DataFrame, columns: list[Any]) -> pd.DataFrame:
    return part[columns]


def _gathered(table: Table, columns: list[Any]) -> pd.DataFrame:
    """Gather a whole table's given columns to the client, rows in position order.

    Read from the table's own partitions, so row ``i`` is the record the
    engine numbers ``i`` (the pandas position).
    """
    pieces = list(
        compute(*[delayed(_columns_of)(part, columns) for part in table.parts])
    )
    if not table.loaded:
        table.receive([piece.index for piece in pieces])
    # Dask's own concatenation, so dtypes are those of ddf.compute() (categories
    # that differ between partitions are united, as pandas would see them).
    frame = concat(pieces) if len(pieces) > 1 else pieces[0]
    if len(frame) != table.rows:
        raise LshFrameError(
            f"The '{table.role}' frame gave {len(frame):,} rows when its key "
            f"columns were read, but {table.rows:,} before. Its partitions must "
            "give the same rows every time they are computed: persist() the "
            "frame first."
        )
    return frame


def _key_meta() -> pd.DataFrame:
    return pd.DataFrame(
        {"key": np.empty(0, dtype=np.uint64), "code": np.empty(0, dtype=np.int64)}
    )


def _pack(
    row: npt.NDArray[np.int64],
    kid: npt.NDArray[np.int64],
    band: npt.NDArray[np.int64],
    side: npt.NDArray[np.bool_],
) -> npt.NDArray[np.int64]:
    return (
        (row << _ROW_SHIFT)
        | (kid << _KID_SHIFT)
        | (band << _BAND_SHIFT)
        | side.astype(np.int64)
    )


def _unpack(part: pd.DataFrame) -> pd.DataFrame:
    """Unpack the long key table: key, row, kid (key index), band, side."""
    code = part["code"].to_numpy(np.int64)
    return pd.DataFrame(
        {
            "key": part["key"].to_numpy(np.uint64),
            "row": code >> _ROW_SHIFT,
            "kid": (code >> _KID_SHIFT) & ((1 << _KID_BITS) - 1),
            "band": (code >> _BAND_SHIFT) & ((1 << _BAND_BITS) - 1),
            "side": (code & 1).astype(bool),
        },
        index=part.index,
    )


def _part_keys(
    part: pd.DataFrame,
    offset: int,
    keys: list[BlockingKey],
    num_perm: int,
    seed: int,
    side: bool,
    owner: str,
) -> pd.DataFrame:
    """Return a partition's keys as a long table (a row per record, key and band)."""
    keys_parts, codes = [], []
    for kid, key in enumerate(keys):
        if key.kind == "neighbours":  # found apart (_neighbours), no bucket keys
            continue
        side_keys = _side_keys(
            part,
            key,
            num_perm=key.plan.num_perm if key.plan is not None else num_perm,
            seed=seed,
            owner=owner,
        )
        rows = np.flatnonzero(side_keys.valid).astype(np.int64)
        bands = side_keys.keys.shape[1]
        keys_parts.append(side_keys.keys[rows].reshape(-1))
        codes.append(
            _pack(
                np.repeat(rows + offset, bands),
                np.full(rows.size * bands, kid, dtype=np.int64),
                np.tile(np.arange(bands, dtype=np.int64), rows.size),
                np.full(rows.size * bands, side),
            )
        )
    if not keys_parts:
        return _key_meta()
    return pd.DataFrame(
        {
            "key": np.concatenate(keys_parts).astype(np.uint64),
            "code": np.concatenate(codes),
        }
    )


def _bucket_id(frame: pd.DataFrame) -> pd.MultiIndex:
    return pd.MultiIndex.from_arrays([frame["kid"], frame["band"], frame["key"]])


def _heavy_keys(part: pd.DataFrame, max_bucket: int) -> pd.DataFrame:
    """Buckets with more than ``max_bucket`` rows in this one partition."""
    values, counts = pair_kernels.sorted_unique(
        part["key"].to_numpy(np.uint64), return_counts=True
    )
    suspects = values[counts > max_bucket]  # a key of several bands: check each
    rows = _unpack(part[np.isin(part["key"].to_numpy(np.uint64), suspects)])
    counts = rows.groupby(["kid", "band", "key"], sort=False).size()
    heavy = counts[counts > max_bucket]
    return heavy.index.to_frame(index=False)


def _heavy_summary(part: pd.DataFrame, heavy: pd.DataFrame) -> pd.DataFrame:
    """Rows of each heavy bucket in a partition (by side) and its first left row."""
    candidates = part[np.isin(part["key"].to_numpy(np.uint64), heavy["key"])]
    rows = _unpack(candidates)
    chosen = rows[_bucket_id(rows).isin(_bucket_id(heavy))]
    # The example shown for a bucket is its first row of the left table.
    left_row = np.where(chosen["side"], np.iinfo(np.int64).max, chosen["row"])
    return (
        chosen.assign(left_row=left_row)
        .groupby(["kid", "band", "key"], sort=False)
        .agg(size=("row", "size"), right=("side", "sum"), first=("left_row", "min"))
    )


def _drop_heavy(part: pd.DataFrame, heavy: pd.DataFrame) -> pd.DataFrame:
    if not len(heavy):
        return part
    suspect = np.isin(part["key"].to_numpy(np.uint64), heavy["key"])
    rows = _unpack(part[suspect])
    dropped = rows.index[_bucket_id(rows).isin(_bucket_id(heavy))]
    return part.drop(index=dropped)


def _segments(
    part: pd.DataFrame,
) -> Iterator[tuple[int, int, npt.NDArray[np.uint64], npt.NDArray[np.int64], Any]]:
    """Yield (kid, band, keys, rows, sides) of each key index and band, in order."""
    keys = part["key"].to_numpy(np.uint64)
    code = part["code"].to_numpy(np.int64)
    segment = (code >> _BAND_SHIFT) & ((1 << (_BAND_BITS + _KID_BITS)) - 1)
    order = np.argsort(segment, kind="stable")
    ordered = segment[order]
    bounds = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
    if not order.size:
        return
    starts = np.concatenate([[0], bounds])
    for start, chunk in zip(starts, np.split(order, bounds), strict=True):
        value = int(ordered[start])
        codes = code[chunk]
        yield (
            value >> _BAND_BITS,
            value & ((1 << _BAND_BITS) - 1),
            keys[chunk],
            codes >> _ROW_SHIFT,
            (codes & 1).astype(bool),
        )


def _by_key(
    part: pd.DataFrame, link: bool
) -> dict[int, list[tuple[int, pair_kernels.Buckets]]]:
    """Group each band's keys into buckets, per key index (as pandas does)."""
    grouped: dict[int, list[tuple[int, pair_kernels.Buckets]]] = {}
    for kid, band, keys, rows, sides in _segments(part):
        buckets = pair_kernels.group(keys, rows, sides if link else None)
        grouped.setdefault(kid, []).append((band, buckets))
    return grouped


@dataclass
class _Grouped:
    """The buckets of one shuffled partition, per key index."""

    buckets: dict[int, pair_kernels.Buckets]
    dropped: pd.DataFrame  # kid, band, key, size, right, first
    pairs: dict[int, int]
    received: int


def _group(part: pd.DataFrame, link: bool, max_bucket: int) -> _Grouped:
    """Group one shuffled partition into buckets per key; cap their size."""
    buckets: dict[int, pair_kernels.Buckets] = {}
    dropped_rows = []
    pairs: dict[int, int] = {}
    for kid, parts in _by_key(part, link).items():
        grouped = pair_kernels.concatenate([bucket for _, bucket in parts])
        bands = np.concatenate(
            [np.full(bucket.sizes.size, band, dtype=np.int32) for band, bucket in parts]
        )
        small = grouped.sizes <= max_bucket
        kept, over = grouped.select(small), grouped.select(~small)
        for position in range(over.sizes.size):
            start = int(over.starts[position])
            left = int(
                over.sizes[position]
                if over.left_sizes is None
                else over.left_sizes[position]
            )
            dropped_rows.append(
                {
                    "kid": int(kid),
                    "band": int(bands[~small][position]),
                    "key": np.uint64(over.keys[position]),
                    "size": int(over.sizes[position]),
                    "right": int(over.sizes[position]) - left,
                    "first": int(over.members[start : start + left].min()),
                }
            )
        buckets[int(kid)] = kept
        pairs[int(kid)] = int(kept.pair_counts().sum())
    dropped = pd.DataFrame(dropped_rows, columns=_DROPPED_COLUMNS)
    return _Grouped(buckets, dropped, pairs, len(part))


def _grouped_stats(grouped: _Grouped) -> tuple[pd.DataFrame, dict[int, int], int]:
    return grouped.dropped, grouped.pairs, grouped.received


def _emit(
    grouped: _Grouped, n_right: int, left_offsets: npt.NDArray[np.int64]
) -> pd.DataFrame:
    """Coded pairs (pair code << key bits | key index) with their target partition."""
    coded_parts = []
    for kid, buckets in grouped.buckets.items():
        for chunk in buckets.chunks(_EMIT_PAIRS):
            left, right = pair_kernels.emit_pairs(chunk)
            code = pair_kernels.sorted_unique(left * np.int64(n_right) + right)
            coded_parts.append((code << np.int64(_KEY_BITS)) | np.int64(kid))
    coded = np.concatenate(coded_parts) if coded_parts else np.empty(0, np.int64)
    left_rows = (coded >> np.int64(_KEY_BITS)) // np.int64(n_right)
    target = np.searchsorted(left_offsets, left_rows, side="right") - 1
    return pd.DataFrame({"coded": coded, TARGET: target.astype(np.int64)})


def _neighbour_codes(found: dict[int, FoundNeighbours]) -> list[Any]:
    """Code the neighbours keys' pairs, one piece per left partition.

    They join the bucket keys' pairs in the same union, with their key's bit.
    """
    return [
        delayed(_coded_part)(part, kid, target)
        for kid, pairs in found.items()
        for target, part in enumerate(pairs.parts)
    ]


def _coded_part(codes: npt.NDArray[np.int64], kid: int, target: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "coded": (codes << np.int64(_KEY_BITS)) | np.int64(kid),
            TARGET: np.full(len(codes), target, dtype=np.int64),
        }
    )


def _unite(part: pd.DataFrame, n_right: int) -> pd.DataFrame:
    """Return the distinct pairs of a left partition, in order, with key masks."""
    coded = np.sort(part["coded"].to_numpy(np.int64))
    codes = coded >> np.int64(_KEY_BITS)
    bits = np.left_shift(np.uint64(1), (coded & np.int64(63)).astype(np.uint64))
    first = np.ones(codes.size, dtype=bool)
    first[1:] = codes[1:] != codes[:-1]
    starts = np.flatnonzero(first)
    masks = np.bitwise_or.reduceat(bits, starts) if starts.size else bits[:0]
    left, right = np.divmod(codes[starts], np.int64(n_right))
    united = pd.DataFrame({"lp": left, "rp": right, "mask": masks})
    united.attrs["received"] = coded.size  # to check the shuffle's count
    return united


def _united_counts(part: pd.DataFrame) -> tuple[int, int]:
    return len(part), int(part.attrs["received"])


def _masks_present(part: pd.DataFrame) -> npt.NDArray[np.uint64]:
    return pair_kernels.sorted_unique(part["mask"].to_numpy(np.uint64))
