"""Candidate pairs: the keys of a call turned into pairs of records.

A *key* groups records into buckets; every pair of records sharing a bucket is
a candidate. Keys come from fields (:mod:`lsh_frame.block.defaults` decides
them, :mod:`lsh_frame.block.keys` computes their values):

- ``blocking="lsh"``: the field's MinHash signature split into bands (see
  :func:`lsh_frame.plan`); one bucket per band value.
- ``blocking="exact"``: one bucket per normalised value.
- ``blocking="neighbours"``: each record's most similar records
  (:mod:`lsh_frame.block.neighbours`).

The candidates of all keys are united; each pair records which keys found it.
Missing, empty and too-short values get no key (they are counted, never pooled
into one giant bucket), buckets larger than ``max_bucket`` are dropped and
reported, and the number of pairs is computed before any pair is built
(:func:`check_pair_count`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame import _progress
from lsh_frame._kernels import pairs as pair_kernels
from lsh_frame._validation import check_bool, check_frame, check_int
from lsh_frame.block.defaults import _FrameSource, decide_keys
from lsh_frame.block.fields import BlockingContext, field_columns, other_table
from lsh_frame.block.identical import IDENTICAL, group_rows, row_hashes
from lsh_frame.block.keys import _KEY_BITS, _sample_text, key_buckets, table_keys
from lsh_frame.block.vectors import key_neighbours
from lsh_frame.errors import TooManyPairsError
from lsh_frame.sketch.vectors import VECTOR_KINDS, check_vector_width

if TYPE_CHECKING:
    from lsh_frame.block.fields import BlockingKey, SideKeys
    from lsh_frame.block.identical import IdenticalRows
    from lsh_frame.block.neighbours import NeighbourPairs

__all__ = ["candidates"]


#: Pairs emitted at a time: bounds the temporary arrays of pair generation.
_EMIT_PAIRS = 4_000_000


def resolve(
    frame: pd.DataFrame,
    fields: Any,
    /,
    *,
    other: pd.DataFrame | None = None,
    threshold: float | None = None,
    recall: float = 0.95,
    num_perm: int = 128,
    seed: int = 1,
    owner: str = "candidates",
    max_pairs: int | None = None,
) -> BlockingContext:
    """Resolve the caller's fields into keys and compute both sides' keys.

    For plain column names and fields left at ``blocking="auto"``, the data
    decides, over the columns of those fields ("all the columns" below);
    every other field gets the key it asks for:

    - an exact key on every column that identifies records: 99% of its values
      are shared by at most ``IDENTIFIER_BUCKET`` (10) records of a table, and
      the key yields at most two pairs per record (ids, dates of birth, phones,
      e-mails; at scale, a date of birth stops qualifying by itself);
    - an exact key on two of the other columns together (a surname and a date
      of birth: ``"surname&&date_of_birth"``) where the two identify records
      by the same rule, fewest pairs first, within one pair per record for all
      of them (see :func:`compound_keys`);
    - one record-level LSH key over all the columns (shingles tagged by
      column), its threshold the lowest whose expected false positives (pairs
      less similar than the threshold, estimated from a sample of random pairs)
      stay within one per record;
    - a neighbours key over all the columns (``NEIGHBOURS_KEY``): each record's
      most similar records by IDF-weighted tokens, whatever the tables' size
      (on Dask it is computed on the workers, see :mod:`lsh_frame.dask`).

    When linking, "per record" counts both tables, but at most twice the
    smaller one: six new records linked against a saved table of a million get
    a budget of twelve pairs, not a million.

    Low-cardinality columns never make a key of their own. Each decision, with
    the numbers behind it, is recorded in ``decisions``.
    """
    frame = check_frame(frame, "frame", owner)
    if other is not None:
        other = check_frame(other, "other", owner)
    source = _FrameSource(frame, other, owner, field_columns(fields, owner))
    keys, decisions = decide_keys(
        source,
        fields,
        threshold=threshold,
        recall=recall,
        num_perm=num_perm,
        seed=seed,
        owner=owner,
    )
    num_perm = check_int(num_perm, "num_perm", owner, minimum=1, maximum=8192)
    seed = check_int(seed, "seed", owner, minimum=0)
    exact_keys = source.exact
    signatures = source.signatures

    found: dict[int, NeighbourPairs] = {}
    tables = source.tables()
    for index, key in enumerate(keys):
        if key.kind == "neighbours":
            _progress.step(f"finding neighbours ({key.label})")
            found[index] = key_neighbours(
                tables, key.field, owner=owner, max_pairs=max_pairs, seed=seed
            )
            decisions.append(f"{key.label}: {found[index].describe()}")

    def side(table: pd.DataFrame, which: int) -> list[SideKeys]:
        return table_keys(
            table,
            keys,
            num_perm=num_perm,
            seed=seed,
            owner=owner,
            exact={label: sides[which] for label, sides in exact_keys.items()},
            signatures={label: sides[which] for label, sides in signatures.items()},
            keyed={index: pairs.keyed[which] for index, pairs in found.items()},
        )

    left_keys = side(frame, 0)
    right_keys = side(other, 1) if other is not None else None
    for index, key in enumerate(keys):
        # Vectors of different lengths hash with different hyperplanes or bits:
        # their keys would never meet, silently.
        if right_keys is not None and key.kind in VECTOR_KINDS:
            check_vector_width(
                left_keys[index].width,
                right_keys[index].width,
                key.field.columns[0],
                owner,
            )
    return BlockingContext(
        keys=keys,
        left=left_keys,
        right=right_keys,
        left_index=frame.index,
        right_index=other.index if other is not None else None,
        decisions=decisions,
        neighbours=found,
    )


def _cap(
    buckets: pair_kernels.Buckets, max_bucket: int
) -> tuple[pair_kernels.Buckets, pair_kernels.Buckets]:
    """Split buckets into (kept, dropped) by size."""
    small = buckets.sizes <= max_bucket
    return buckets.select(small), buckets.select(~small)


def _bucket_sample(
    context: BlockingContext, index: int, buckets: pair_kernels.Buckets, count: int = 3
) -> list[tuple[int, str]]:
    """(size, example value) of the largest buckets (ties: in key order)."""
    order = np.argsort(-buckets.sizes, kind="stable")[:count]
    samples = []
    for bucket in order:
        start = int(buckets.starts[bucket])
        # The example is the bucket's first record of the left table.
        stop = start + int(
            buckets.sizes[bucket]
            if buckets.left_sizes is None
            else buckets.left_sizes[bucket]
        )
        member = int(buckets.members[start:stop].min())
        samples.append(
            (int(buckets.sizes[bucket]), _sample_text(context.left[index], member))
        )
    return samples


def candidates(
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
    collapse_identical: bool = False,
) -> pd.DataFrame:
    """Candidate pairs of records that share at least one blocking key.

    Parameters
    ----------
    frame : DataFrame
        The records (the left table when linking). Index labels must be unique.
    fields : column label, Field, or a list of them
        What to block on. Plain column names let the data decide (see
        :func:`resolve`), and so do :class:`Field` objects left at
        ``blocking="auto"`` (a comparison or weight of their own, the same
        keys); a Field that asks for a key gets exactly that key.
    other : DataFrame, optional
        A second table to link with; without it, ``frame`` is deduplicated.
    right_on : list of column labels, or dict, optional
        The names ``other`` gives the fields' columns, when they differ from
        ``frame``'s (as ``right_on`` of :func:`pandas.merge`): a list with one
        column of ``other`` for each column the fields name (flattened over the
        fields, each column once, in order: a field over two columns takes
        two), or a mapping ``{frame column: other column}`` (columns it leaves
        out keep their name). ``fields`` name ``frame``'s columns. The result
        equals renaming ``other``'s columns first; ``other`` is not modified.
    threshold : float, optional
        Jaccard similarity LSH keys are planned for. By default each LSH key's
        threshold is chosen from the data.
    recall : float
        Least probability that an LSH key finds a pair at its threshold.
    num_perm : int
        Signature length used for LSH keys.
    seed : int
        Seed of the MinHash functions and of the similarity sample.
    max_bucket : int
        Buckets with more records are dropped (and reported with a warning):
        a value shared by that many records does not identify anyone.
    max_pairs : int
        Upper limit on pairs, checked before any pair is built.
    collapse_identical : bool
        When deduplicating, collapse each group of more than
        :data:`lsh_frame.block.identical.COLLAPSE_ABOVE` identical rows to its
        representative (the row with the smallest label) before blocking,
        and pair every other member with it (``found_by`` ``"identical"``), as
        :func:`lsh_frame.pairs`, :func:`lsh_frame.dedupe` and
        :func:`lsh_frame.drop_duplicates` always do. Off by default: every row
        is keyed on its own, and buckets over ``max_bucket`` are dropped.

    Returns
    -------
    DataFrame
        One row per candidate pair, sorted: ``left`` and ``right`` hold index
        labels (dedupe: each unordered pair once, ``left`` before ``right`` in
        the frame's order, no self pairs; link: ``left`` from ``frame``,
        ``right`` from ``other``); ``found_by`` (categorical) names the keys
        that found the pair, joined by ``|``.

    Raises
    ------
    TooManyPairsError
        When the keys would give more than ``max_pairs`` pairs.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"name": ["john smith", "jon smith", "mary jones"],
    ...                    "dob": ["1980-01-02", "1980-01-02", "1975-05-06"]})
    >>> from lsh_frame import Field
    >>> fields = [Field("name", threshold=0.3), Field("dob", blocking="exact")]
    >>> pairs = candidates(df, fields)
    >>> pairs[["left", "right"]].values.tolist(), pairs["found_by"].tolist()
    ([[0, 1]], ['name|dob'])

    Linking a table whose columns are named differently:

    >>> web = pd.DataFrame({"full_name": ["john smyth"], "birth": ["1980-01-02"]},
    ...                    index=["w1"])
    >>> linked = candidates(df, fields, other=web, right_on=["full_name", "birth"])
    >>> linked[["left", "right"]].values.tolist()
    [[0, 'w1'], [1, 'w1']]
    """
    owner = "candidates"
    max_bucket = check_int(max_bucket, "max_bucket", owner, minimum=2)
    max_pairs = check_int(max_pairs, "max_pairs", owner, minimum=0)
    collapse_identical = check_bool(collapse_identical, "collapse_identical", owner)
    other = other_table(frame, fields, other, right_on, owner)
    collapsed = collapse(frame, fields, other, owner) if collapse_identical else None
    context = resolve(
        frame if collapsed is None else collapsed.frame,
        fields,
        other=other,
        threshold=threshold,
        recall=recall,
        num_perm=num_perm,
        seed=seed,
        owner=owner,
        max_pairs=max_pairs,
    )
    return pairs_from_context(
        context, max_bucket=max_bucket, max_pairs=max_pairs, collapsed=collapsed
    )


@dataclass(frozen=True)
class Collapsed:
    """A frame with identical rows collapsed: blocking sees representatives only."""

    rows: IdenticalRows
    index: pd.Index  # the whole frame's labels
    frame: pd.DataFrame  # the representatives' rows


def collapse(
    frame: pd.DataFrame, fields: Any, other: pd.DataFrame | None, owner: str
) -> Collapsed | None:
    """Group identical rows when deduplicating (None: nothing to collapse).

    Each group is represented by its row with the smallest index label (so
    the pairs do not depend on the rows' order). Linking collapses nothing:
    identical rows of one table are not paired with each other there. Fields
    whose columns are missing are left for :func:`resolve` to report.
    """
    if other is None and isinstance(frame, pd.DataFrame) and len(frame) > 1:
        columns = field_columns(fields, owner)
        if all(column in frame.columns for column in columns):
            # Hashing the rows (most of the work), then grouping them.
            _progress.step("finding identical rows", total=3)
            hashes, filled = row_hashes(frame, columns)
            _progress.advance(2)
            rows = group_rows(hashes, filled, label_rank(frame.index))
            _progress.advance(1)
            if rows.collapsed:
                representatives = rows.representatives
                return Collapsed(rows, frame.index, frame.iloc[representatives])
    return None


def label_rank(index: pd.Index) -> npt.NDArray[np.int64]:
    """Return each row's position in label order (row order if unsortable)."""
    if index.is_monotonic_increasing:
        return np.arange(len(index), dtype=np.int64)
    try:
        order = index.argsort(kind="stable")
    except TypeError:  # labels of mixed types have no order: keep the rows'
        return np.arange(len(index), dtype=np.int64)
    rank = np.empty(len(index), dtype=np.int64)
    rank[order] = np.arange(len(index), dtype=np.int64)
    return rank


def identical_codes(
    rows: IdenticalRows, n_right: int, key_index: int
) -> npt.NDArray[np.int64]:
    """Coded pairs (representative, member) of the ``"identical"`` key."""
    earlier, later = rows.pairs()
    code = earlier * np.int64(n_right) + later
    return (code << np.int64(_KEY_BITS)) | np.int64(key_index)


def check_pair_count(
    keys: list[BlockingKey], counts: list[int], max_pairs: int, identical: int = 0
) -> None:
    """Raise :class:`TooManyPairsError` if the keys' pairs exceed ``max_pairs``.

    ``identical`` counts the pairs joining identical rows to their
    representative.
    """
    total = sum(counts) + identical
    if total > max_pairs:
        detail = ", ".join(
            f"'{key.label}' {count:,}" for key, count in zip(keys, counts, strict=True)
        )
        if identical:
            detail += f", '{IDENTICAL}' {identical:,}"
        raise TooManyPairsError(
            f"Blocking would build {total:,} candidate pairs (before removing pairs "
            f"found by several keys), more than max_pairs={max_pairs:,}: {detail}. "
            "Raise the threshold, block on more specific fields, lower max_bucket, "
            "or raise max_pairs if the memory allows (building pairs peaks at about "
            "150 bytes per pair)."
        )


def pairs_from_context(
    context: BlockingContext,
    *,
    max_bucket: int,
    max_pairs: int,
    collapsed: Collapsed | None = None,
) -> pd.DataFrame:
    """Build, unite and label the candidate pairs of resolved keys.

    With ``collapsed``, the context holds the representatives: their pairs
    are mapped back to the whole frame and each other member of a group is
    paired with its representative (found by ``"identical"``).
    """
    kept: list[pair_kernels.Buckets | None] = []
    counts: list[int] = []
    for index, key in enumerate(context.keys):
        if key.kind == "neighbours":
            kept.append(None)
            counts.append(int(context.neighbours[index].left.size))
            continue
        _progress.step(f"grouping {key.label}")
        buckets, dropped = _cap(key_buckets(context, index), max_bucket)
        if dropped.sizes.size:
            lost = int(dropped.pair_counts().sum())
            samples = ", ".join(
                f"{size:,} × {value!r}"
                for size, value in _bucket_sample(context, index, dropped)
            )
            warnings.warn(
                f"Key '{key.label}': {dropped.sizes.size:,} bucket(s) with more than "
                f"{max_bucket:,} records were dropped ({lost:,} pairs; "
                f"largest: {samples}). Raise max_bucket or block on more "
                "specific fields.",
                stacklevel=3,
            )
        kept.append(buckets)
        counts.append(int(buckets.pair_counts().sum()))
    identical = collapsed.rows.collapsed if collapsed is not None else 0
    check_pair_count(context.keys, counts, max_pairs, identical)
    total = sum(counts) + identical
    n_right = len(
        context.right_index if context.right_index is not None else context.left_index
    )
    # Positions in the blocked frame → positions in the whole frame.
    whole: npt.NDArray[np.int64] | None = None
    if collapsed is not None:
        whole = collapsed.rows.representatives
        n_right = len(collapsed.index)
    # Each pair is coded as left * n_right + right, shifted by _KEY_BITS to carry
    # the index of the key that found it: one value sort then brings a pair's
    # keys together (value sorts are much faster than argsorts).
    # Five parts of the same size, reported as each ends: emitting the pairs,
    # merging the keys' pairs (a sort), the left labels, the right labels and
    # the keys' names. Emitting is by far the cheapest (at 1M under load, 2 s
    # of 60): the label look-ups of millions of pairs cost most.
    _progress.step(f"building {total:,} pairs", total=5 * total)
    coded_parts = []
    for index, maybe_buckets in enumerate(kept):
        if maybe_buckets is None:
            found = context.neighbours[index]
            _progress.advance(counts[index])
            # Already distinct and sorted by this code (mapping keeps the order).
            if whole is None:
                code = found.left * np.int64(n_right) + found.right
            else:
                code = whole[found.left] * np.int64(n_right) + whole[found.right]
            coded_parts.append((code << np.int64(_KEY_BITS)) | np.int64(index))
            continue
        # Emit in slices so the temporaries stay small; only the 8-byte codes of
        # the pairs accumulate.
        slices = []
        for chunk in maybe_buckets.chunks(_EMIT_PAIRS):
            left, right = pair_kernels.emit_pairs(chunk)
            _progress.advance(left.size)
            if whole is not None:
                left, right = whole[left], whole[right]
            slices.append(pair_kernels.sorted_unique(left * np.int64(n_right) + right))
        code = (
            pair_kernels.sorted_unique(np.concatenate(slices))
            if len(slices) > 1
            else slices[0]
        )
        coded_parts.append((code << np.int64(_KEY_BITS)) | np.int64(index))
    labels = [key.label for key in context.keys]
    if collapsed is not None:
        coded_parts.append(identical_codes(collapsed.rows, n_right, len(labels)))
        _progress.advance(identical)
        labels.append(IDENTICAL)
    if len(coded_parts) == 1:
        coded = coded_parts[0]  # already sorted and distinct
    elif coded_parts:
        coded = np.sort(np.concatenate(coded_parts))
    else:
        coded = np.empty(0, np.int64)
    _progress.advance(total)
    codes = coded >> np.int64(_KEY_BITS)
    bits = np.left_shift(np.uint64(1), (coded & np.int64(63)).astype(np.uint64))
    first = np.ones(codes.size, dtype=bool)
    first[1:] = codes[1:] != codes[:-1]
    starts = np.flatnonzero(first)
    masks = np.bitwise_or.reduceat(bits, starts) if starts.size else bits[:0]
    left_positions, right_positions = np.divmod(codes[starts], np.int64(n_right))
    left_index = context.left_index if collapsed is None else collapsed.index
    right_index = context.right_index if context.right_index is not None else left_index
    left_labels = left_index.take(left_positions)
    _progress.advance(total)
    right_labels = right_index.take(right_positions)
    _progress.advance(total)
    found_by = _found_by(masks, labels)
    pairs = pd.DataFrame(
        {"left": left_labels, "right": right_labels, "found_by": found_by}
    )
    pairs.attrs["lsh_frame"] = {"link": context.link}
    _progress.advance(total)
    return pairs


def _found_by(
    masks: npt.NDArray[np.uint64],
    labels: list[str],
    present: npt.NDArray[np.uint64] | None = None,
) -> pd.Categorical:
    """Categorical naming the keys of each pair, e.g. ``"record|dob"``.

    A categorical rather than a bitmask column: readable, compact, and it keeps
    working when pairs are written to Parquet or concatenated. Its categories
    are the combinations ``present`` (by default, those in ``masks``) in
    ascending order of their bits.
    """
    if present is None:
        if len(labels) <= 16:
            seen = np.bincount(masks.astype(np.int64), minlength=1)
            present = np.flatnonzero(seen).astype(np.uint64)
        else:
            present = pair_kernels.sorted_unique(masks)
    codes = np.searchsorted(present, masks).astype(np.int32)
    names = [
        "|".join(label for bit, label in enumerate(labels) if int(mask) >> bit & 1)
        for mask in present
    ]
    return pd.Categorical.from_codes(codes, categories=names)  # type: ignore[call-overload]
