"""The blocking report on Dask: the keys' costs summed over partitions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from dask import delayed

from lsh_frame._validation import check_int
from lsh_frame.block.fields import BlockingContext
from lsh_frame.block.report import (
    BlockingReport,
    _true_pair_positions,
    add_completeness,
    neighbours_row,
    report_row,
)
from lsh_frame.dask._candidates import _row_text, shuffled_keys
from lsh_frame.dask._keys import _by_key, _unpack, resolve
from lsh_frame.dask._tables import compute

if TYPE_CHECKING:
    from lsh_frame.dask._neighbours import FoundNeighbours
    from lsh_frame.dask._tables import Table


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


def _held(
    codes: npt.NDArray[np.int64], asked: npt.NDArray[np.int64]
) -> npt.NDArray[np.bool_]:
    return np.isin(asked, codes)


def _neighbours_found(
    found: FoundNeighbours,
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    n_right: int,
    link: bool,
) -> npt.NDArray[np.bool_]:
    """Which of the given record pairs a neighbours key found (each part asked)."""
    if not link:
        left, right = np.minimum(left, right), np.maximum(left, right)
    asked = left * np.int64(n_right) + right
    held = np.zeros(asked.size, dtype=bool)
    for part in compute(*[delayed(_held)(part, asked) for part in found.parts]):
        held |= part
    return held


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
            pairs = neighbours[kid]
            row = neighbours_row(
                key, pairs.pairs, pairs.largest, sum(pairs.keyed), total, cumulative
            )
            if truth is not None:
                hit = _neighbours_found(pairs, *truth, tables[-1].rows, link)
                found_so_far |= hit
                add_completeness(row, hit, found_so_far)
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
