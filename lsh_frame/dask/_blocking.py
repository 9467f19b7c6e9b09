"""Candidate pairs on Dask: the keys of :mod:`lsh_frame.blocking`, per partition.

1. Decide the keys with :func:`lsh_frame.blocking.decide_keys` from summaries
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

A neighbours key is the exception: it needs every token's frequency over the
whole table and each record's full neighbour list, so only its columns are
gathered to the client (in the engine's row order, so positions are the pandas
positions), :func:`lsh_frame.neighbours.neighbour_pairs` runs there once, and
its pairs join the others at step 5 as coded integers with the key's bit.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import dask.dataframe as dd
import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed
from dask.dataframe.dispatch import concat

from lsh_frame import _progress
from lsh_frame._kernels import pairs as pair_kernels
from lsh_frame._validation import check_int
from lsh_frame.blocking import (
    _EMIT_PAIRS,
    _KEY_BITS,
    BlockingContext,
    BlockingKey,
    BlockingReport,
    ExactProfile,
    Field,
    KeySource,
    SideKeys,
    _as_fields,
    _exact_keys,
    _found_by,
    _sample_text,
    _side_keys,
    _true_pair_positions,
    add_completeness,
    automatic_fields,
    check_pair_count,
    combined_keys,
    compound_field,
    compound_pairs,
    decide_keys,
    exact_counts,
    exact_profile,
    field_columns,
    field_signatures,
    identifier_field,
    is_compound_label,
    label_rank,
    merge_counts,
    neighbours_report_row,
    report_row,
    sample_hashes,
    sample_rows,
    sample_similarity,
    spec_columns,
)
from lsh_frame.dask._tables import (
    TARGET,
    Table,
    check_moved,
    compute,
    persist,
    route,
    shared_pieces,
)
from lsh_frame.errors import LshFrameError
from lsh_frame.identical import IDENTICAL, IdenticalRows, group_rows, row_hashes
from lsh_frame.neighbours import NeighbourPairs
from lsh_frame.vectors import key_neighbours

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


# ----------------------------------------------------------------------------
# Deciding the keys


def _part_profile(
    part: pd.DataFrame,
    columns: list[Any],
    sample_columns: list[Any],
    seed: int,
    owner: str,
) -> tuple[pd.Index, list[Any], tuple[Any, ...]]:
    """Read a partition's labels, exact-key counts of columns, its sample.

    The sample is drawn as in pandas (:func:`~lsh_frame.blocking.sample_hashes`
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
                results = compute(
                    *[
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
                samples = [result[2] for result in results]
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
                    table.receive([result[0] for result in results])
                sides.append(
                    [
                        merge_counts([result[1][i] for result in results])
                        for i in range(len(results[0][1]) if results else 0)
                    ]
                )
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
            self._profiles = {
                label: exact_profile([side[i] for side in sides])
                for i, label in enumerate(labels)
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
) -> tuple[list[BlockingKey], list[str], dict[int, NeighbourPairs]]:
    """Decide the blocking keys exactly as :func:`lsh_frame.blocking.resolve`.

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
    found: dict[int, NeighbourPairs] = {}
    for index, key in enumerate(keys):
        if key.kind == "neighbours":
            _progress.step(f"finding neighbours ({key.label})")
            frames = [_gathered(table, list(key.field.columns)) for table in tables]
            found[index] = key_neighbours(
                frames, key.field, owner=owner, max_pairs=max_pairs, seed=seed
            )
            decisions.append(f"{key.label}: {found[index].describe()}")
    return keys, decisions, found


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


# ----------------------------------------------------------------------------
# Keys, buckets and pairs


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
        if key.kind == "neighbours":  # found on the client, no bucket keys
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


def _neighbour_codes(
    found: dict[int, NeighbourPairs], n_right: int, left: Table
) -> list[Any]:
    """Code the neighbours keys' pairs, one piece per target left partition.

    They join the bucket keys' pairs in the same union, with their key's bit.
    """
    if not found:
        return []
    coded = np.concatenate(
        [
            ((pairs.left * np.int64(n_right) + pairs.right) << np.int64(_KEY_BITS))
            | np.int64(kid)
            for kid, pairs in found.items()
        ]
    )
    left_rows = (coded >> np.int64(_KEY_BITS)) // np.int64(n_right)
    order = np.argsort(left_rows, kind="stable")
    coded, left_rows = coded[order], left_rows[order]
    bounds = np.searchsorted(left_rows, left.offsets[1:-1], side="left")
    pieces = np.split(coded, bounds)
    return [
        delayed(_coded_part)(piece, target)
        for target, piece in enumerate(shared_pieces(pieces))
    ]


def _coded_part(coded: npt.NDArray[np.int64], target: int) -> pd.DataFrame:
    return pd.DataFrame(
        {"coded": coded, TARGET: np.full(len(coded), target, dtype=np.int64)}
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


@dataclass
class Candidates:
    """Candidate pairs as positions, one persisted part per left partition."""

    parts: list[Any]  # DataFrames: lp, rp, mask (sorted by lp, rp)
    lengths: npt.NDArray[np.int64]
    keys: list[BlockingKey]
    present: npt.NDArray[np.uint64]
    collapsed: IdenticalRows | None = None

    @property
    def labels(self) -> list[str]:
        """Names of the keys (and ``"identical"`` when identical rows collapsed)."""
        labels = [key.label for key in self.keys]
        return labels if self.collapsed is None else [*labels, IDENTICAL]


def key_parts(
    tables: list[Table], keys: list[BlockingKey], num_perm: int, seed: int, owner: str
) -> list[Any]:
    """Every partition's long key table (left partitions, then right)."""
    return [
        delayed(_part_keys)(part, int(offset), keys, num_perm, seed, side == 1, owner)
        for side, table in enumerate(tables)
        for part, offset in zip(table.parts, table.offsets, strict=False)
    ]


@dataclass
class _Shuffled:
    """Key tables shuffled on the key, and the buckets dropped before."""

    parts: list[Any]
    heavy: pd.DataFrame  # kid, band, key, size, right, first
    expected: int  # rows the shuffle must deliver
    built: list[Any]  # the persisted key tables of the input partitions


def shuffled_keys(
    tables: list[Table],
    keys: list[BlockingKey],
    *,
    num_perm: int,
    seed: int,
    max_bucket: int,
    npartitions: int | None,
    method: str,
    owner: str,
) -> _Shuffled:
    """Build every partition's keys, drop over-cap keys, shuffle on the key."""
    _progress.step("signing and keying")
    built = persist(key_parts(tables, keys, num_perm, seed, owner))
    sent_rows = int(sum(compute(*[delayed(len)(part) for part in built])))
    heavy = pd.concat(
        compute(*[delayed(_heavy_keys)(part, max_bucket) for part in built]),
        ignore_index=True,
    ).drop_duplicates(ignore_index=True)
    heavy_dropped = pd.DataFrame(columns=_DROPPED_COLUMNS)
    removed = 0  # key rows kept out of the shuffle
    if len(heavy):
        summaries = compute(*[delayed(_heavy_summary)(part, heavy) for part in built])
        heavy_dropped = (
            pd.concat(summaries)
            .groupby(level=[0, 1, 2], sort=False)
            .agg({"size": "sum", "right": "sum", "first": "min"})
            .reset_index()
        )
        removed = int(heavy_dropped["size"].sum())
        if len(tables) > 1:
            # A bucket of one table only makes no pairs: pandas never counts it
            # as dropped (it is gone before the cap), and neither do we.
            both = (heavy_dropped["right"] > 0) & (
                heavy_dropped["right"] < heavy_dropped["size"]
            )
            heavy_dropped = heavy_dropped[both].reset_index(drop=True)
    expected = sent_rows - removed
    kept = [delayed(_drop_heavy)(part, heavy) for part in built]
    outputs = npartitions or max(table.npartitions for table in tables)
    _progress.step("shuffling keys")
    shuffled = dd.from_delayed(kept, meta=_key_meta(), verify_meta=False).shuffle(
        on="key", npartitions=outputs, shuffle_method=method
    )
    return _Shuffled(list(shuffled.to_delayed()), heavy_dropped, expected, built)


def build_candidates(
    tables: list[Table],
    fields: Any,
    *,
    threshold: float | None,
    recall: float,
    num_perm: int,
    seed: int,
    max_bucket: int,
    max_pairs: int,
    npartitions: int | None,
    method: str,
    owner: str,
    collapse_identical: bool = False,
) -> Candidates:
    """Candidate pairs as positions (the pandas algorithm, partition by partition).

    With ``collapse_identical``, when deduplicating, large groups of identical
    rows are collapsed first, as in pandas: only representatives are
    blocked, and each other member is paired with its representative by the
    ``"identical"`` key.
    """
    max_bucket = check_int(max_bucket, "max_bucket", owner, minimum=2)
    max_pairs = check_int(max_pairs, "max_pairs", owner, minimum=0)
    whole = tables
    collapsed = _collapse(tables, fields, owner) if collapse_identical else None
    if collapsed is not None:
        tables = [collapsed[1]]
    keys, _, found = resolve(  # the decisions are the report's, not the pairs'
        tables,
        fields,
        threshold=threshold,
        recall=recall,
        num_perm=num_perm,
        seed=seed,
        owner=owner,
        max_pairs=max_pairs,
    )
    shuffled = shuffled_keys(
        tables,
        keys,
        num_perm=num_perm,
        seed=seed,
        max_bucket=max_bucket,
        npartitions=npartitions,
        method=method,
        owner=owner,
    )
    link = len(tables) > 1
    grouped = persist(
        [delayed(_group)(part, link, max_bucket) for part in shuffled.parts]
    )
    stats = compute(*[delayed(_grouped_stats)(part) for part in grouped])
    received = sum(stat[2] for stat in stats)
    check_moved(shuffled.expected, received, "blocking keys", method)
    dropped = pd.concat(
        [shuffled.heavy, *[stat[0] for stat in stats]], ignore_index=True
    )
    counts = [
        int(found[kid].left.size)
        if kid in found
        else sum(stat[1].get(kid, 0) for stat in stats)
        for kid in range(len(keys))
    ]
    _warn_dropped(tables[0], keys, dropped, max_bucket, link)
    identical = collapsed[0].collapsed if collapsed is not None else 0
    check_pair_count(keys, counts, max_pairs, identical)
    total = sum(counts) + identical
    _progress.step(f"building {total:,} pairs")
    left = tables[0]
    n_right = tables[-1].rows
    emitted = persist([delayed(_emit)(part, n_right, left.offsets) for part in grouped])
    emitted += _neighbour_codes(found, n_right, left)
    del grouped
    sent = int(sum(compute(*[delayed(len)(part) for part in emitted])))
    meta = pd.DataFrame({"coded": np.empty(0, np.int64), TARGET: np.empty(0, np.int64)})
    routed = route(emitted, meta, left.npartitions, method)
    united = persist([delayed(_unite)(part, n_right) for part in routed])
    del emitted
    arrived = compute(*[delayed(_united_counts)(part) for part in united])
    check_moved(sent, sum(count[1] for count in arrived), "candidate pairs", method)
    lengths = np.array([count[0] for count in arrived], np.int64)
    present_parts = compute(*[delayed(_masks_present)(part) for part in united])
    present = pair_kernels.sorted_unique(
        np.concatenate([np.empty(0, np.uint64), *present_parts])
    )
    if collapsed is None:
        return Candidates(united, lengths, keys, present)
    return _expanded(whole[0], collapsed[0], united, keys, present)


def _collapse(
    tables: list[Table], fields: Any, owner: str
) -> tuple[IdenticalRows, Table] | None:
    """Group identical rows when deduplicating, as :func:`lsh_frame.blocking.collapse`.

    Returns the groups and a table of the representatives (the same
    partitions, each keeping its representatives), or None.
    """
    if len(tables) != 1:
        return None
    whole = tables[0]
    columns = field_columns(fields, owner)
    if not all(column in whole.meta.columns for column in columns):
        return None
    hashed = compute(*[delayed(row_hashes)(part, columns) for part in whole.parts])
    rows = group_rows(
        np.concatenate([np.empty((0, 2), np.uint64), *[h[0] for h in hashed]]),
        np.concatenate([np.empty(0, bool), *[h[1] for h in hashed]]),
        label_rank(whole.index),
    )
    if whole.rows < 2 or not rows.collapsed:
        return None
    representatives = rows.representatives
    where = whole.partition_of(representatives)
    local = [
        representatives[where == number] - whole.offsets[number]
        for number in range(whole.npartitions)
    ]
    parts = [
        delayed(_rows_at)(part, piece)
        for part, piece in zip(whole.parts, shared_pieces(local), strict=True)
    ]
    blocked = Table(
        dd.from_delayed(parts, meta=whole.meta, verify_meta=False),
        whole.role,
        whole.owner,
    )
    blocked.receive(
        [
            whole.index[piece + whole.offsets[number]]
            for number, piece in enumerate(local)
        ]
    )
    return rows, blocked


def _expanded(
    whole: Table,
    rows: IdenticalRows,
    united: list[Any],
    keys: list[BlockingKey],
    present: npt.NDArray[np.uint64],
) -> Candidates:
    """Map the representatives' pairs to the whole table; add the identical pairs.

    A pair belongs to the partition of its earlier row, so each part gets
    the identical pairs whose earlier row it holds.
    """
    earlier, later = rows.pairs()
    where = whole.partition_of(earlier)
    identical = [
        (earlier[where == number], later[where == number])
        for number in range(whole.npartitions)
    ]
    mapping = shared_pieces([rows.representatives])[0]
    bit = np.uint64(1) << np.uint64(len(keys))
    parts = persist(
        [
            delayed(_with_identical)(part, mapping, pair, bit, whole.rows)
            for part, pair in zip(united, shared_pieces(identical), strict=True)
        ]
    )
    lengths = np.array(compute(*[delayed(len)(part) for part in parts]), np.int64)
    present = pair_kernels.sorted_unique(np.append(present, bit))
    return Candidates(parts, lengths, keys, present, rows)


def _with_identical(
    part: pd.DataFrame,
    mapping: npt.NDArray[np.int64],
    identical: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
    bit: np.uint64,
    rows: int,
) -> pd.DataFrame:
    """One part's pairs in whole-table positions, with its identical pairs, in order."""
    left = np.concatenate([mapping[part["lp"].to_numpy(np.int64)], identical[0]])
    right = np.concatenate([mapping[part["rp"].to_numpy(np.int64)], identical[1]])
    masks = np.concatenate(
        [part["mask"].to_numpy(np.uint64), np.full(identical[0].size, bit)]
    )
    order = np.argsort(left * np.int64(rows) + right, kind="stable")
    return pd.DataFrame({"lp": left[order], "rp": right[order], "mask": masks[order]})


def _warn_dropped(
    left: Table,
    keys: list[BlockingKey],
    dropped: pd.DataFrame,
    max_bucket: int,
    link: bool,
) -> None:
    """Warn, per key, about the buckets over the cap (as pandas does)."""
    if not len(dropped):
        return
    dropped = dropped.astype(
        {"kid": np.int64, "band": np.int64, "size": np.int64, "right": np.int64}
    )
    for kid, key in enumerate(keys):
        mine = dropped[dropped["kid"] == kid]
        if not len(mine):
            continue
        mine = mine.assign(key=mine["key"].astype(np.uint64)).sort_values(
            ["band", "key"], kind="stable"
        )
        sizes = mine["size"].to_numpy()
        right = mine["right"].to_numpy()
        lost = ((sizes - right) * right if link else sizes * (sizes - 1) // 2).sum()
        largest = mine.iloc[np.argsort(-sizes, kind="stable")[:3]]
        samples = ", ".join(
            f"{int(size):,} × {_row_text(left, key, int(first))!r}"
            for size, first in zip(largest["size"], largest["first"], strict=True)
        )
        warnings.warn(
            f"Key '{key.label}': {len(mine):,} bucket(s) with more than "
            f"{max_bucket:,} records were dropped ({int(lost):,} pairs; "
            f"largest: {samples}). Raise max_bucket or block on more "
            "specific fields.",
            stacklevel=4,
        )


def _row_text(left: Table, key: BlockingKey, position: int) -> str:
    """Normalised text of one record's field (to show a dropped bucket)."""
    part = int(left.partition_of(np.array([position]))[0])
    (row,) = compute(
        delayed(_rows_at)(left.parts[part], [position - int(left.offsets[part])])
    )
    side = SideKeys(
        keys=np.zeros((1, 1), np.uint64),
        valid=np.ones(1, bool),
        frame=row,
        field=key.field,
    )
    return _sample_text(side, 0)


def _rows_at(part: pd.DataFrame, local: list[int]) -> pd.DataFrame:
    return part.iloc[local]


def labelled(
    part: pd.DataFrame,
    left_index: pd.Index,
    right_index: pd.Index,
    labels: list[str],
    present: npt.NDArray[np.uint64],
    start: int,
    keep_positions: bool,
    link: bool,
) -> pd.DataFrame:
    """Candidate pairs of one partition as pandas gives them (labels, found_by)."""
    lp = part["lp"].to_numpy(np.int64)
    rp = part["rp"].to_numpy(np.int64)
    columns: dict[str, Any] = {
        "left": left_index.take(lp),
        "right": right_index.take(rp),
        "found_by": _found_by(part["mask"].to_numpy(np.uint64), labels, present),
    }
    if keep_positions:
        columns[LEFT_POSITION], columns[RIGHT_POSITION] = lp, rp
    pairs = pd.DataFrame(columns, index=pd.RangeIndex(start, start + lp.size))
    pairs.attrs["lsh_frame"] = {"link": link}
    return pairs


# ----------------------------------------------------------------------------
# The blocking report


def _bucket_summary(part: pd.DataFrame, link: bool, max_bucket: int) -> dict[int, Any]:
    """Per key: bucket sizes (and left sizes), the three largest, keys over the cap."""
    summary: dict[int, Any] = {}
    for kid, parts in _by_key(part, link).items():
        sizes, lefts, tops, over = [], [], [], []
        for band, buckets in parts:
            left = buckets.sizes if buckets.left_sizes is None else buckets.left_sizes
            sizes.append(buckets.sizes)
            lefts.append(left)
            over.append(buckets.keys[buckets.sizes > max_bucket])
            for bucket in np.argsort(-buckets.sizes, kind="stable")[:3]:
                start = int(buckets.starts[bucket])
                members = buckets.members[start : start + int(left[bucket])]
                tops.append(
                    (
                        int(buckets.sizes[bucket]),
                        int(band),
                        np.uint64(buckets.keys[bucket]),
                        int(members.min()),
                    )
                )
        summary[int(kid)] = (
            np.concatenate(sizes),
            np.concatenate(lefts),
            pd.DataFrame(tops, columns=["size", "band", "key", "first"]),
            np.concatenate(over).astype(np.uint64),
        )
    return summary


def _keyed(part: pd.DataFrame) -> pd.Series:
    """Count the records with a key, per key index (a row per record in band 0)."""
    part = _unpack(part)
    return part.loc[part["band"].to_numpy() == 0, "kid"].value_counts()


def _key_rows(
    part: pd.DataFrame,
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    link: bool,
) -> pd.DataFrame:
    """Key rows of some records (left positions, right positions)."""
    part = _unpack(part)
    rows = part["row"].to_numpy()
    if not link:
        return part[np.isin(rows, np.concatenate([left, right]))]
    side = part["side"].to_numpy()
    return part[np.where(side, np.isin(rows, right), np.isin(rows, left))]


def _found(
    found_keys: pd.DataFrame,
    kid: int,
    bands: int,
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    dropped: npt.NDArray[np.uint64],
    link: bool,
) -> npt.NDArray[np.bool_]:
    """Which record pairs share a kept bucket of one key (as pandas' report)."""
    mine = found_keys[found_keys["kid"].to_numpy() == kid]

    def matrix(positions: npt.NDArray[np.int64], side: bool) -> Any:
        rows = mine[mine["side"].to_numpy() == side] if link else mine
        sorted_positions = np.unique(positions)
        rows = rows[np.isin(rows["row"].to_numpy(np.int64), sorted_positions)]
        table = np.zeros((sorted_positions.size, bands), dtype=np.uint64)
        valid = np.zeros(sorted_positions.size, dtype=bool)
        at = np.searchsorted(sorted_positions, rows["row"].to_numpy(np.int64))
        table[at, rows["band"].to_numpy(np.int64)] = rows["key"].to_numpy(np.uint64)
        valid[at] = True
        where = np.searchsorted(sorted_positions, positions)
        return table[where], valid[where]

    left_keys, left_valid = matrix(left, False)
    right_keys, right_valid = matrix(right, True)
    # Link buckets are named by the key without its lowest bit (the side's).
    named = left_keys >> np.uint64(1) if link else left_keys
    shared = (left_keys == right_keys) & ~np.isin(named, dropped)
    return shared.any(axis=1) & left_valid & right_valid


def report(
    tables: list[Table],
    fields: Any,
    *,
    threshold: float | None,
    recall: float,
    num_perm: int,
    seed: int,
    max_bucket: int,
    true_pairs: Any,
    npartitions: int | None,
    method: str,
    owner: str,
) -> BlockingReport:
    """Compute the :func:`lsh_frame.blocking_report` of partitioned tables."""
    max_bucket = check_int(max_bucket, "max_bucket", owner, minimum=2)
    keys, decisions, neighbours = resolve(
        tables,
        fields,
        threshold=threshold,
        recall=recall,
        num_perm=num_perm,
        seed=seed,
        owner=owner,
    )
    link = len(tables) > 1
    context = BlockingContext(
        keys=keys,
        left=[],
        right=[] if link else None,
        left_index=tables[0].index,
        right_index=tables[1].index if link else None,
        neighbours=neighbours,
    )
    truth = (
        _true_pair_positions(true_pairs, context, owner)
        if true_pairs is not None
        else None
    )
    shuffled = shuffled_keys(
        tables,
        keys,
        num_perm=num_perm,
        seed=seed,
        max_bucket=max_bucket,
        npartitions=npartitions,
        method=method,
        owner=owner,
    )
    summaries = compute(
        *[delayed(_bucket_summary)(part, link, max_bucket) for part in shuffled.parts]
    )
    keyed = pd.concat(compute(*[delayed(_keyed)(part) for part in shuffled.built]))
    keyed = keyed.groupby(level=0).sum()
    found_keys = None
    if truth is not None:
        found_keys = pd.concat(
            compute(
                *[delayed(_key_rows)(part, *truth, link) for part in shuffled.built]
            )
        )
    heavy = shuffled.heavy.astype(
        {"kid": np.int64, "band": np.int64, "size": np.int64, "right": np.int64}
    )
    found_so_far = np.zeros(0 if truth is None else truth[0].size, dtype=bool)
    rows: list[dict[str, Any]] = []
    largest: dict[str, list[tuple[int, str]]] = {}
    cumulative = 0
    total = sum(table.rows for table in tables)
    for kid, key in enumerate(keys):
        if key.kind == "neighbours":
            keyed_here = sum(int(mask.sum()) for mask in neighbours[kid].keyed)
            row = neighbours_report_row(
                context, kid, keyed_here, total, cumulative, truth, found_so_far
            )
            cumulative = row["cumulative_pairs"]
            rows.append(row)
            largest[key.label] = []
            continue
        parts = [summary[kid] for summary in summaries if kid in summary]
        mine = heavy[heavy["kid"] == kid]
        sizes = np.concatenate(
            [np.empty(0, np.int64), *[part[0] for part in parts], mine["size"]]
        ).astype(np.int64)
        lefts = np.concatenate(
            [
                np.empty(0, np.int64),
                *[part[1] for part in parts],
                mine["size"] - mine["right"],
            ]
        ).astype(np.int64)
        row, _ = report_row(
            key,
            int(keyed.get(kid, 0)),
            total,
            sizes,
            lefts if link else None,
            max_bucket,
            cumulative,
        )
        cumulative = row["cumulative_pairs"]
        tops = pd.concat(
            [
                pd.DataFrame(columns=["size", "band", "key", "first"]),
                *[part[2] for part in parts],
                mine[["size", "band", "key", "first"]],
            ],
            ignore_index=True,
        )
        if truth is not None and found_keys is not None:
            bands = key.plan.bands if key.plan is not None else 1
            dropped = np.concatenate(
                [
                    np.empty(0, np.uint64),
                    *[part[3] for part in parts],
                    mine["key"].to_numpy(np.uint64) >> np.uint64(1)
                    if link
                    else mine["key"].to_numpy(np.uint64),
                ]
            )
            found = _found(found_keys, kid, bands, *truth, dropped, link)
            found_so_far |= found
            add_completeness(row, found, found_so_far)
        rows.append(row)
        tops = tops.astype({"size": np.int64, "band": np.int64, "first": np.int64})
        tops = tops.assign(key=tops["key"].astype(np.uint64)).sort_values(
            ["band", "key"], kind="stable"
        )
        best = tops.iloc[np.argsort(-tops["size"].to_numpy(), kind="stable")[:3]]
        largest[key.label] = [
            (int(size), _row_text(tables[0], key, int(first)))
            for size, first in zip(best["size"], best["first"], strict=True)
        ]
    return BlockingReport(
        table=pd.DataFrame(rows), decisions=decisions, largest_buckets=largest
    )
