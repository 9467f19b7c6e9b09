"""Exact Hamming-distance search over SimHash fingerprints.

:func:`hamming_pairs` finds every pair of fingerprints within a distance,
:func:`hamming_nearest` each query's nearest fingerprints, by the block
permutation scheme of Manku, Jain and Das Sarma (WWW 2007): split the bits
into blocks; two fingerprints within ``d`` bits agree exactly on at least
``blocks - d`` blocks, so exact matches on those blocks find every candidate
and the true distance filters them. :func:`entities` groups a column's
near-identical values into entities.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame._kernels import simhash as kernels
from lsh_frame._kernels.neighbours import run_starts
from lsh_frame._validation import check_int
from lsh_frame._warn import warn_giant
from lsh_frame.errors import ConfigError, ConfigTypeError, TooManyPairsError
from lsh_frame.sketch.minhash import default_workers
from lsh_frame.sketch.simhash import (
    Codes,
    _check_pair,
    _make_config,
    fingerprint_array,
    fingerprint_codes,
    simhash,
)
from lsh_frame.sketch.simhash_arrow import fingerprint_config

__all__ = ["hamming_nearest", "hamming_pairs"]


#: Pairs a Hamming search may return unless told otherwise.
DEFAULT_MAX_PAIRS = 50_000_000


def _check_distance(distance: Any, bits: int, owner: str) -> int:
    return check_int(distance, "distance", owner, minimum=0, maximum=bits // 4)


def _search(
    left: Codes,
    right: Codes | None,
    *,
    distance: int,
    max_pairs: int,
    blocks: int | None,
    workers: int | None,
    owner: str,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Positions (in each table) and distances of every pair within ``distance``."""
    left_rows = np.flatnonzero(left.valid)
    right_rows = None if right is None else np.flatnonzero(right.valid)
    try:
        first, second, found = kernels.search(
            left.matrix[left_rows],
            None if right is None else right.matrix[right_rows],
            bits=left.bits,
            distance=distance,
            max_pairs=max_pairs,
            blocks=blocks,
            workers=workers or default_workers(),
        )
    except kernels.PairLimitExceeded as error:
        raise TooManyPairsError(
            f"{owner} would return at least {error.found:,} pairs within Hamming "
            f"distance {distance}, more than max_pairs={max_pairs:,}. Lower "
            "'distance', or raise 'max_pairs' if the memory allows (about 24 "
            "bytes a pair)."
        ) from None
    if right_rows is None:
        return left_rows[first], left_rows[second], found
    return left_rows[first], right_rows[second], found


def hamming_pairs(
    fingerprints: Any,
    /,
    *,
    other: Any = None,
    distance: int = 3,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    blocks: int | None = None,
    workers: int | None = None,
) -> pd.DataFrame:
    """Every pair of fingerprints within a Hamming distance, exactly.

    The permuted-table search of Manku, Jain and Das Sarma: the bits are cut
    into ``B > distance`` blocks, and one sorted table per choice of ``B −
    distance`` blocks is probed for equal keys. A pair within the distance
    differs in at most ``distance`` blocks, so it shares a key in some table:
    nothing is missed, and every candidate is checked, so nothing too far is
    returned. ``B`` is chosen from the distance and the number of
    fingerprints (more blocks, more tables, fewer chance collisions).
    Identical fingerprints are searched once.

    Parameters
    ----------
    fingerprints : Series or array
        A fingerprint Series from :func:`simhash`, a Series or array of
        64-bit integers, or a 2-D uint64 array. Missing values pair with
        nothing.
    other : Series or array, optional
        Link: the fingerprints of a second table. Without it, dedupe.
    distance : int
        Largest Hamming distance of a pair, from 0 to ``bits / 4``.
    max_pairs : int
        Stop with :class:`~lsh_frame.TooManyPairsError` when more pairs than
        this are found (checked before they are built).
    blocks : int, optional
        Force the number of blocks (more than ``distance``).
    workers : int, optional
        Threads; all available CPUs by default.

    Returns
    -------
    DataFrame
        Columns ``left`` and ``right`` (index labels; for dedupe each pair
        once, ``left`` before ``right`` in the input's order) and
        ``distance`` (int64), sorted by position.

    Raises
    ------
    SignatureMismatchError
        When the two tables' fingerprints were built differently.

    Examples
    --------
    >>> import numpy as np
    >>> codes = np.array([0b0000, 0b0111, 0b1111, 0xFFFF << 40], dtype=np.uint64)
    >>> hamming_pairs(codes, distance=3)
       left  right  distance
    0     0      1         3
    1     1      2         1
    """
    owner = "hamming_pairs"
    left = fingerprint_codes(fingerprints, owner=owner, role="fingerprints")
    right = None
    if other is not None:
        right = fingerprint_codes(other, owner=owner, role="other")
        _check_pair(left, right, owner)
    distance = _check_distance(distance, left.bits, owner)
    max_pairs = check_int(max_pairs, "max_pairs", owner, minimum=0)
    if blocks is not None:
        blocks = check_int(
            blocks, "blocks", owner, minimum=distance + 1, maximum=left.bits
        )
    if workers is not None:
        workers = check_int(workers, "workers", owner, minimum=1)
    first, second, found = _search(
        left, right, distance=distance, max_pairs=max_pairs, blocks=blocks,
        workers=workers, owner=owner,
    )  # fmt: skip
    right_index = left.index if right is None else right.index
    return pd.DataFrame(
        {
            "left": left.index.take(first),
            "right": right_index.take(second),
            "distance": found.astype(np.int64),
        }
    )


def hamming_nearest(
    queries: Any,
    index: Any,
    /,
    *,
    distance: int = 3,
    top: int = 1,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    workers: int | None = None,
) -> pd.DataFrame:
    """Find the closest fingerprints of an index for each new fingerprint.

    Finds, for every query, the ``top`` fingerprints of ``index`` nearest in
    Hamming distance among those within ``distance`` (exact, by the search of
    :func:`hamming_pairs`). Ties are broken by position in ``index``.

    Parameters
    ----------
    queries : Series or array
        Fingerprints of the new records.
    index : Series or array
        Fingerprints of the saved table.
    distance : int
        Largest Hamming distance considered.
    top : int
        Neighbours kept per query (at most).
    max_pairs, workers
        As for :func:`hamming_pairs` (``max_pairs`` bounds the pairs within
        ``distance`` before the ``top`` are kept).

    Returns
    -------
    DataFrame
        Columns ``left`` (query label), ``right`` (index label), ``distance``
        and ``rank`` (1 for the nearest), sorted by query position and rank.
        Queries with no fingerprint within ``distance`` have no row.

    Examples
    --------
    >>> import numpy as np
    >>> saved = np.array([0b0000, 0b0011, 0b1111], dtype=np.uint64)
    >>> new = np.array([0b0001, 0xFFFF << 40], dtype=np.uint64)
    >>> hamming_nearest(new, saved, distance=2, top=2)
       left  right  distance  rank
    0     0      0         1     1
    1     0      1         1     2
    """
    owner = "hamming_nearest"
    left = fingerprint_codes(queries, owner=owner, role="queries")
    right = fingerprint_codes(index, owner=owner, role="index")
    _check_pair(left, right, owner)
    distance = _check_distance(distance, left.bits, owner)
    top = check_int(top, "top", owner, minimum=1)
    max_pairs = check_int(max_pairs, "max_pairs", owner, minimum=0)
    if workers is not None:
        workers = check_int(workers, "workers", owner, minimum=1)
    first, second, found = _search(
        left, right, distance=distance, max_pairs=max_pairs, blocks=None,
        workers=workers, owner=owner,
    )  # fmt: skip
    order = np.lexsort((second, found, first))
    first, second, found = first[order], second[order], found[order]
    starts = np.flatnonzero(run_starts(first))
    group_start = np.repeat(starts, np.diff(np.append(starts, first.size)))
    rank = np.arange(first.size) - group_start + 1
    keep = rank <= top
    return pd.DataFrame(
        {
            "left": left.index.take(first[keep]),
            "right": right.index.take(second[keep]),
            "distance": found[keep].astype(np.int64),
            "rank": rank[keep].astype(np.int64),
        }
    )


def _column_codes(
    frame: pd.DataFrame, column: Any, options: dict[str, Any], owner: str
) -> pd.Series:
    values = frame[column]
    if fingerprint_config(values, owner=owner) is not None:
        if options:
            raise ConfigError(
                f"Column {column!r} holds fingerprints already, so {owner} cannot "
                f"apply {', '.join(map(repr, sorted(options)))}. Drop those "
                "options, or pass the text column instead."
            )
        return values
    return simhash(values, **options)


def frame_pairs(
    frame: pd.DataFrame,
    column: Any,
    /,
    *,
    other: pd.DataFrame | None = None,
    distance: int = 3,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    workers: int | None = None,
    **options: Any,
) -> pd.DataFrame:
    """Pairs of rows whose SimHash fingerprints are within ``distance``.

    ``column`` holds text (fingerprinted with ``options``, see
    :func:`simhash`) or fingerprints. With ``other`` (a frame with the same
    column) the two tables are linked; text of both tables is fingerprinted
    in one pass, so IDF weights are shared.
    """
    owner = "df.lsh.simhash_pairs"
    from lsh_frame._validation import check_columns

    (column,) = check_columns(frame, [column], owner)
    if other is None:
        codes = _column_codes(frame, column, options, owner)
        return hamming_pairs(
            codes, distance=distance, max_pairs=max_pairs, workers=workers
        )
    if not isinstance(other, pd.DataFrame):
        raise ConfigTypeError(
            f"The 'other' parameter of {owner} must be a DataFrame. "
            f"Got {type(other).__name__} instead."
        )
    check_columns(other, [column], owner, table="right table ('other')")
    left_values, right_values = frame[column], other[column]
    left_is_codes = fingerprint_config(left_values, owner=owner) is not None
    right_is_codes = fingerprint_config(right_values, owner=owner) is not None
    if left_is_codes or right_is_codes:
        left_codes = _column_codes(frame, column, options, owner)
        right_codes = _column_codes(other, column, options, owner)
    else:
        both = pd.concat(
            [left_values.reset_index(drop=True), right_values.reset_index(drop=True)],
            ignore_index=True,
        )
        fingerprinted = simhash(both, workers=workers, **options)
        left_codes = fingerprinted.iloc[: len(frame)].set_axis(frame.index)
        right_codes = fingerprinted.iloc[len(frame) :].set_axis(other.index)
    return hamming_pairs(
        left_codes, other=right_codes, distance=distance, max_pairs=max_pairs,
        workers=workers,
    )  # fmt: skip


def entities(
    frame: pd.DataFrame,
    columns: Any,
    /,
    *,
    distance: int = 3,
    max_pairs: int = DEFAULT_MAX_PAIRS,
    warn_size: int = 1_000,
    **options: Any,
) -> tuple[npt.NDArray[np.int64], dict[str, int]]:
    """Entity id per row: rows whose SimHash is within ``distance`` are one entity.

    The text of ``columns`` (joined by a space, as a record-level field) is
    fingerprinted with ``options`` (see :func:`simhash`); every pair within
    ``distance`` links its rows, and entities are the connected components,
    numbered in order of first appearance; a giant entity (more than
    ``warn_size`` rows, or a tenth of them) is warned about, as
    :func:`lsh_frame.cluster` does. Returns the ids and counts
    (``records``, ``entities``, ``pairs``) for reports. Used by
    ``lsh-frame dedupe --method simhash``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"text": ["one two three four", "one two three four",
    ...                             "five six seven eight"]})
    >>> ids, counts = entities(df, ["text"], distance=2)
    >>> ids.tolist(), counts["entities"]
    ([0, 0, 1], 2)
    """
    from lsh_frame._kernels.components import components, first_appearance_ids
    from lsh_frame._validation import check_columns
    from lsh_frame.block.fields import Field
    from lsh_frame.block.keys import _field_text

    owner = "simhash entities"
    labels = check_columns(frame, columns, owner)
    text = _field_text(frame, Field(labels), owner=owner)
    config = _make_config(None, owner=owner, **options)
    matrix, valid = fingerprint_array(text, config)
    codes = Codes(matrix, valid, config.bits, config, pd.RangeIndex(len(frame)))
    distance = _check_distance(distance, config.bits, owner)
    first, second, _ = _search(
        codes, None, distance=distance, max_pairs=max_pairs, blocks=None,
        workers=None, owner=owner,
    )  # fmt: skip
    roots = components(len(frame), first, second)
    ids = first_appearance_ids(roots)
    warn_giant(
        np.bincount(ids) if ids.size else ids,
        len(frame),
        warn_size,
        "lower distance= (texts that share a site's header and footer sit a "
        "few bits apart), or compare them with MinHash (the default method)",
    )
    counts = {
        "records": len(frame),
        "entities": int(ids.max()) + 1 if ids.size else 0,
        "pairs": int(first.size),
    }
    return ids, counts
