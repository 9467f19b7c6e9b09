"""Candidate pairs on Dask: shuffled keys turned into pairs, labelled."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import dask.dataframe as dd
import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed

from lsh_frame import _progress
from lsh_frame._kernels import pairs as pair_kernels
from lsh_frame._validation import check_int
from lsh_frame.block.candidates import _found_by, check_pair_count, label_rank
from lsh_frame.block.fields import SideKeys, field_columns
from lsh_frame.block.identical import IDENTICAL, group_rows, row_hashes
from lsh_frame.block.keys import _sample_text
from lsh_frame.dask._keys import (
    _DROPPED_COLUMNS,
    LEFT_POSITION,
    RIGHT_POSITION,
    _drop_heavy,
    _emit,
    _group,
    _grouped_stats,
    _heavy_keys,
    _heavy_summary,
    _key_meta,
    _masks_present,
    _neighbour_codes,
    _part_keys,
    _unite,
    _united_counts,
    resolve,
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

if TYPE_CHECKING:
    from lsh_frame.block.fields import BlockingKey
    from lsh_frame.block.identical import IdenticalRows


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
        found[kid].pairs if kid in found else sum(stat[1].get(kid, 0) for stat in stats)
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
    emitted += _neighbour_codes(found)
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
    """Group identical rows when deduplicating.

    As :func:`lsh_frame.block.candidates.collapse` does in pandas.

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
