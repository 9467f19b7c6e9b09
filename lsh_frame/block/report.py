"""The blocking report: what each key costs and finds, before any pair is built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame._kernels import pairs as pair_kernels
from lsh_frame._validation import check_int, check_labels
from lsh_frame.block.candidates import resolve
from lsh_frame.block.fields import other_table
from lsh_frame.block.keys import _sample_text
from lsh_frame.errors import ColumnError, ConfigTypeError

if TYPE_CHECKING:
    from lsh_frame.block.fields import BlockingContext, BlockingKey

__all__ = ["BlockingReport", "blocking_report"]


@dataclass
class BlockingReport:
    """What each blocking key costs and finds, computed without building pairs.

    Attributes
    ----------
    table : DataFrame
        One row per key: how it is made, records keyed and without a key,
        buckets that yield pairs, the largest bucket, buckets dropped for size,
        pairs, cumulative pairs and, with true pairs, pairs completeness.
    decisions : list of str
        What was decided for each column and why.
    largest_buckets : dict
        Per key, the largest buckets as ``(size, example value)``.
    """

    table: pd.DataFrame
    decisions: list[str]
    largest_buckets: dict[str, list[tuple[int, str]]]

    def __str__(self) -> str:
        lines = ["Blocking report", "", "Decisions:"]
        lines += [f"  - {decision}" for decision in self.decisions]
        lines += ["", self.table.to_string(index=False), "", "Largest buckets:"]
        for label, buckets in self.largest_buckets.items():
            shown = "; ".join(f"{size:,} × {value!r}" for size, value in buckets)
            lines.append(f"  {label}: {shown or 'none'}")
        lines += [
            "",
            "pairs count each bucket's pairs; a pair found by several LSH bands or",
            "keys is counted each time, so pairs and cumulative_pairs are upper",
            "bounds on the distinct candidates.",
        ]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        decisions = "".join(f"<li>{decision}</li>" for decision in self.decisions)
        return f"<ul>{decisions}</ul>{self.table.to_html(index=False)}"


def _with_answered_matches(true_pairs: Any, labels: Any, owner: str) -> Any:
    """``true_pairs`` with the pairs the labels answer "match" added."""
    answers = check_labels(labels, owner)
    if answers is None:
        return true_pairs
    matched = answers.match == 1.0
    answered = pd.DataFrame(
        {"left": answers.left[matched], "right": answers.right[matched]}
    )
    if true_pairs is None:
        return answered.drop_duplicates(ignore_index=True)
    if isinstance(true_pairs, pd.MultiIndex):
        given = true_pairs.to_frame(index=False, name=["left", "right"])
    elif isinstance(true_pairs, pd.DataFrame) and true_pairs.shape[1] >= 2:
        columns = (
            ["left", "right"]
            if {"left", "right"} <= set(true_pairs.columns)
            else list(true_pairs.columns[:2])
        )
        given = true_pairs[columns].set_axis(["left", "right"], axis=1)
    else:
        return true_pairs  # the usual error follows
    return pd.concat([given, answered], ignore_index=True).drop_duplicates(
        ignore_index=True
    )


def _true_pair_positions(
    true_pairs: Any, context: BlockingContext, owner: str
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Positions of the true pairs' records in the left and right tables."""
    if isinstance(true_pairs, pd.MultiIndex):
        left_labels = true_pairs.get_level_values(0)
        right_labels = true_pairs.get_level_values(1)
    elif isinstance(true_pairs, pd.DataFrame) and true_pairs.shape[1] >= 2:
        columns = (
            ["left", "right"]
            if {"left", "right"} <= set(true_pairs.columns)
            else list(true_pairs.columns[:2])
        )
        left_labels = pd.Index(true_pairs[columns[0]])
        right_labels = pd.Index(true_pairs[columns[1]])
    else:
        raise ConfigTypeError(
            f"The 'true_pairs' parameter of {owner} must be a DataFrame with columns "
            "left and right (or two columns of labels), or a two-level MultiIndex. "
            f"Got {type(true_pairs).__name__} instead."
        )
    right_index = (
        context.right_index if context.right_index is not None else context.left_index
    )
    left_positions = context.left_index.get_indexer(left_labels)
    right_positions = right_index.get_indexer(right_labels)
    unknown = (left_positions < 0) | (right_positions < 0)
    if unknown.any():
        first = int(np.flatnonzero(unknown)[0])
        raise ColumnError(
            f"{int(unknown.sum()):,} true pairs name labels that are not in the "
            f"frame{'s' if context.link else ''}, for example "
            f"({left_labels[first]!r}, {right_labels[first]!r}). Pass labels of the "
            "frame's index (left) and of other's index (right)."
        )
    return left_positions.astype(np.int64), right_positions.astype(np.int64)


def _bucket_counts(
    context: BlockingContext, index: int
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.int64], npt.NDArray[np.int64] | None]:
    """Keys and sizes of the buckets that yield pairs, from value sorts only.

    Returns ``(keys, sizes, left_sizes)``; ``left_sizes`` only when linking.
    No member lists are built, which is what makes the report cheap.
    """
    left = context.left[index]
    right = context.right[index] if context.right is not None else None
    keys, sizes, lefts = [], [], []
    for band in range(left.keys.shape[1]):
        left_keys, left_counts = pair_kernels.sorted_unique(
            left.keys[left.valid, band], return_counts=True
        )
        if right is None:
            shared = left_counts > 1
            keys.append(left_keys[shared])
            sizes.append(left_counts[shared])
            continue
        right_keys, right_counts = pair_kernels.sorted_unique(
            right.keys[right.valid, band], return_counts=True
        )
        common, at_left, at_right = np.intersect1d(
            left_keys, right_keys, assume_unique=True, return_indices=True
        )
        keys.append(common)
        sizes.append(left_counts[at_left] + right_counts[at_right])
        lefts.append(left_counts[at_left])
    return (
        np.concatenate(keys),
        np.concatenate(sizes),
        np.concatenate(lefts) if right is not None else None,
    )


def _pairs_found(
    context: BlockingContext,
    index: int,
    dropped_keys: npt.NDArray[np.uint64],
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
) -> npt.NDArray[np.bool_]:
    """Which of the given record pairs share a kept bucket of one key."""
    left_side = context.left[index]
    right_side = context.right[index] if context.right is not None else left_side
    left_keys, right_keys = left_side.keys[left], right_side.keys[right]
    shared = (left_keys == right_keys) & ~np.isin(left_keys, dropped_keys)
    return shared.any(axis=1) & left_side.valid[left] & right_side.valid[right]


def _largest_samples(
    context: BlockingContext,
    index: int,
    keys: npt.NDArray[np.uint64],
    sizes: npt.NDArray[np.int64],
    count: int = 3,
) -> list[tuple[int, str]]:
    """(size, example value) of the largest buckets, found by their keys."""
    side = context.left[index]
    samples = []
    for bucket in np.argsort(-sizes, kind="stable")[:count]:
        member = int(np.flatnonzero((side.keys == keys[bucket]).any(axis=1))[0])
        samples.append((int(sizes[bucket]), _sample_text(side, member)))
    return samples


def report_row(
    key: BlockingKey,
    keyed: int,
    total: int,
    sizes: npt.NDArray[np.int64],
    lefts: npt.NDArray[np.int64] | None,
    max_bucket: int,
    cumulative: int,
) -> tuple[dict[str, Any], npt.NDArray[np.bool_]]:
    """One key's row of the report from its bucket sizes; and which are kept."""
    counts = sizes * (sizes - 1) // 2 if lefts is None else lefts * (sizes - lefts)
    kept = sizes <= max_bucket
    pairs = int(counts[kept].sum())
    row = {
        "key": key.label,
        "how": key.describe(),
        "records_keyed": keyed,
        "records_without_key": total - keyed,
        "buckets": int(kept.sum()),
        "largest_bucket": int(sizes[kept].max()) if kept.any() else 0,
        "dropped_buckets": int((~kept).sum()),
        "pairs": pairs,
        "cumulative_pairs": cumulative + pairs,
    }
    return row, kept


def neighbours_row(
    key: BlockingKey,
    pairs: int,
    largest: int,
    keyed: int,
    total: int,
    cumulative: int,
) -> dict[str, Any]:
    """Make a neighbours key's row of the report: its distinct pairs, no buckets.

    Its pairs are known exactly (they are bounded by the records' budgets), so
    they are not an upper bound like the bucket keys' counts; ``largest`` is
    the most neighbours a record kept.
    """
    return {
        "key": key.label,
        "how": key.describe(),
        "records_keyed": keyed,
        "records_without_key": total - keyed,
        "buckets": 0,
        "largest_bucket": largest,
        "dropped_buckets": 0,
        "pairs": pairs,
        "cumulative_pairs": cumulative + pairs,
    }


def neighbours_report_row(
    context: BlockingContext,
    index: int,
    keyed: int,
    total: int,
    cumulative: int,
    truth: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None,
    found_so_far: npt.NDArray[np.bool_],
) -> dict[str, Any]:
    """Make a neighbours key's report row; updates ``found_so_far`` in place."""
    pairs = context.neighbours[index]
    row = neighbours_row(
        context.keys[index],
        int(pairs.left.size),
        int(pairs.kept_per_record.max(initial=0)),
        keyed,
        total,
        cumulative,
    )
    if truth is not None:
        found = _neighbours_found(context, index, *truth)
        found_so_far |= found
        add_completeness(row, found, found_so_far)
    return row


def _neighbours_found(
    context: BlockingContext,
    index: int,
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
) -> npt.NDArray[np.bool_]:
    """Which of the given record pairs a neighbours key found."""
    found = context.neighbours[index]
    n_right = len(
        context.right_index if context.right_index is not None else context.left_index
    )
    if not context.link:
        left, right = np.minimum(left, right), np.maximum(left, right)
    codes = found.left * np.int64(n_right) + found.right
    return np.isin(left * np.int64(n_right) + right, codes)


def add_completeness(
    row: dict[str, Any],
    found: npt.NDArray[np.bool_],
    found_so_far: npt.NDArray[np.bool_],
) -> None:
    """Add a key's share of the true pairs (alone and with the keys before)."""
    row["pairs_completeness"] = float(found.mean()) if found.size else float("nan")
    row["cumulative_completeness"] = (
        float(found_so_far.mean()) if found.size else float("nan")
    )


def blocking_report(
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
    true_pairs: Any = None,
    labels: pd.DataFrame | None = None,
) -> BlockingReport:
    """Report what each blocking key would cost and find, before any pair is built.

    Takes the arguments of :func:`candidates` (but ``max_pairs``: no pair is
    built) plus ``true_pairs``, and computes keys and bucket sizes only, which
    is much faster than building the pairs.

    Parameters
    ----------
    other, right_on
        The right table when linking, and its names of the fields' columns
        when they differ (see :func:`candidates`).
    true_pairs : DataFrame or MultiIndex, optional
        Known matching pairs as labels (columns ``left`` and ``right``, e.g.
        from :func:`lsh_frame.datasets.true_pairs`). Adds each key's pairs
        completeness (share of true pairs it finds) and the cumulative share.
    labels : DataFrame, optional
        A person's answers about pairs (columns ``left``, ``right``, ``match``;
        see :func:`lsh_frame.uncertain_pairs`): the pairs answered "match"
        count as true pairs (with ``true_pairs``, if given), so the report's
        completeness says how many of them each key finds.

    Returns
    -------
    BlockingReport
        ``report.table`` is the per-key frame; ``print(report)`` shows it with
        the decisions and the largest buckets.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"dob": ["1990-01-01", "1990-01-01", "1985-02-03", None]})
    >>> from lsh_frame import Field
    >>> report = blocking_report(df, [Field("dob", blocking="exact")])
    >>> report.table[["key", "records_keyed", "records_without_key", "pairs"]]
       key  records_keyed  records_without_key  pairs
    0  dob              3                    1      1
    """
    owner = "blocking_report"
    max_bucket = check_int(max_bucket, "max_bucket", owner, minimum=2)
    other = other_table(frame, fields, other, right_on, owner)
    context = resolve(
        frame,
        fields,
        other=other,
        threshold=threshold,
        recall=recall,
        num_perm=num_perm,
        seed=seed,
        owner=owner,
    )
    true_pairs = _with_answered_matches(true_pairs, labels, owner)
    truth = (
        _true_pair_positions(true_pairs, context, owner)
        if true_pairs is not None
        else None
    )
    found_so_far = np.zeros(0 if truth is None else truth[0].size, dtype=bool)
    rows: list[dict[str, Any]] = []
    largest: dict[str, list[tuple[int, str]]] = {}
    cumulative = 0
    for index, key in enumerate(context.keys):
        keyed = int(context.left[index].valid.sum())
        total = len(context.left_index)
        if context.right is not None:
            keyed += int(context.right[index].valid.sum())
            total += len(context.right[index].valid)
        if key.kind == "neighbours":
            row = neighbours_report_row(
                context, index, keyed, total, cumulative, truth, found_so_far
            )
            cumulative = row["cumulative_pairs"]
            rows.append(row)
            largest[key.label] = []
            continue
        keys, sizes, lefts = _bucket_counts(context, index)
        row, kept = report_row(key, keyed, total, sizes, lefts, max_bucket, cumulative)
        cumulative = row["cumulative_pairs"]
        if truth is not None:
            found = _pairs_found(context, index, keys[~kept], *truth)
            found_so_far |= found
            add_completeness(row, found, found_so_far)
        rows.append(row)
        largest[key.label] = _largest_samples(context, index, keys, sizes)
    return BlockingReport(
        table=pd.DataFrame(rows), decisions=context.decisions, largest_buckets=largest
    )
