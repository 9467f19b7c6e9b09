"""``lsh-frame dedupe``: one table's entities, or its deduplicated rows."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import pandas as pd

from lsh_frame import _progress
from lsh_frame.cli.io import OK, InputError, check_outputs, read_table, write_table
from lsh_frame.cli.options import (
    _answers,
    _columns,
    _csv_options,
    _indexed,
    _job_options,
    _rounded,
    _save_model,
    _say_written,
    check_on,
    fields_of,
    say_separator,
)
from lsh_frame.jobs.common import keeping_scored_pairs
from lsh_frame.jobs.dedupe import dedupe as dedupe_frame
from lsh_frame.jobs.dedupe import drop_duplicates


def _simhash_dedupe(
    frame: pd.DataFrame, on: list[str], arguments: argparse.Namespace
) -> pd.DataFrame:
    """Dedupe by SimHash: rows within ``--distance`` bits are one entity."""
    from lsh_frame.block.hamming import entities
    from lsh_frame.jobs.dedupe import _completeness, _first_per_entity

    ids, counts = entities(
        frame, on, distance=arguments.distance, max_pairs=arguments.max_pairs,
        seed=arguments.seed, kind=arguments.shingle or "word",
    )  # fmt: skip
    sizes = np.bincount(ids) if ids.size else np.zeros(0, dtype=np.int64)
    info = {"entities": counts["entities"], "pairs": counts["pairs"],
            "matches": counts["pairs"]}  # fmt: skip
    if not arguments.drop:
        result = frame.assign(
            **{arguments.id_column: ids, arguments.size_column: sizes[ids]}
        )
    else:
        positions = np.arange(ids.size, dtype=np.int64)
        priority = {
            "first": positions,
            "last": -positions,
            "most_complete": -_completeness(frame),
        }
        kept = (
            np.flatnonzero(sizes[ids] == 1)
            if arguments.keep == "none"
            else _first_per_entity(ids, priority[arguments.keep])
        )
        result = frame.iloc[kept]
    result.attrs = {**frame.attrs, "lsh_frame": info}
    return result


def run_dedupe(arguments: argparse.Namespace, say: Callable[[str], None]) -> int:
    """``lsh-frame dedupe``: entity per row, or one row per entity."""
    check_outputs(arguments.output, arguments.save_model)
    if arguments.pairs_output is not None:
        if arguments.method == "simhash":
            raise InputError("--pairs-output needs --method minhash (scored pairs)")
        check_outputs(arguments.pairs_output)
    frame = _indexed(
        read_table(arguments.input, **_csv_options(arguments)),
        arguments.index_col,
        "input",
    )
    on = _columns(arguments.on)
    check_on(frame, on, "input")
    say_separator(say, frame, "input")
    started = time.perf_counter()
    with keeping_scored_pairs() as scored:
        result = _dedupe_result(frame, on, arguments)
    elapsed = time.perf_counter() - started
    info = result.attrs["lsh_frame"]
    write_table(
        result,
        arguments.output,
        index=arguments.index or bool(arguments.index_col),
        progress=arguments.progress,
    )
    saved = _save_model(result, arguments.save_model)
    say(
        f"lsh-frame dedupe: {len(frame):,} records → {info['entities']:,} entities "
        f"({info['pairs']:,} candidate pairs, {info['matches']:,} matches) in "
        f"{elapsed:.1f} s"
    )
    _say_written(say, len(result), arguments.output, saved)
    if arguments.pairs_output is not None:
        with _progress.reporting(arguments.progress, "pairs for review"):
            pairs = _pairs_for_review(frame, on, scored[0], arguments.digits)
        write_table(
            pairs,
            arguments.pairs_output,
            index=False,
            progress=arguments.progress,
        )
        say(f"  wrote {len(pairs):,} scored pairs to {arguments.pairs_output}")
    return OK


def _side_by_side(
    joined: pd.DataFrame,
    left: pd.DataFrame,
    right: pd.DataFrame,
    on: list[str],
    right_on: list[str],
) -> pd.DataFrame:
    """Put each matched field's two values and its score together in a merge.

    First, per ``--on`` column: its left value, its right value and its score;
    then ``score`` and ``match_probability``; then the other columns of the
    left table and of the right one, in their order. A name both tables have
    carries the merge's suffixes (``_x``, ``_y``).
    """
    first: list[Hashable] = []
    for left_name, right_name in zip(on, right_on, strict=True):
        pair = [
            f"{left_name}_x" if left_name in right.columns else left_name,
            f"{right_name}_y" if right_name in left.columns else right_name,
        ]
        first += [name for name in pair if name in joined.columns]
        if f"{left_name}_score" in joined.columns:
            first.append(f"{left_name}_score")
    first += [name for name in ("score", "match_probability") if name in joined]
    rest = [name for name in joined.columns if name not in set(first)]
    return joined[first + rest]


def _pairs_for_review(
    frame: pd.DataFrame, on: list[str], scored: pd.DataFrame, digits: int | None
) -> pd.DataFrame:
    """Scored pairs with both records' values, each field's side by side.

    Columns: ``left``, ``right`` (record ids), then per compared column its
    left value, right value and score, then ``found_by``, ``score``,
    ``match_probability`` and ``match``; the pairs in the order scoring gave.
    """
    # The look-ups of the pairs' labels, then the columns, reported as each ends.
    _progress.step(f"joining values to {len(scored):,} pairs", total=len(on) + 2)
    columns: dict[str, Any] = {"left": scored["left"], "right": scored["right"]}
    left = frame.index.get_indexer(pd.Index(scored["left"]))
    _progress.advance(1)
    right = frame.index.get_indexer(pd.Index(scored["right"]))
    _progress.advance(1)
    for column in on:
        # The column's own array: a take in Arrow for text, no Python objects.
        values = frame[column].array
        columns[f"{column}_left"] = values.take(left)
        columns[f"{column}_right"] = values.take(right)
        if f"{column}_score" in scored:
            columns[f"{column}_score"] = scored[f"{column}_score"].to_numpy()
        _progress.advance(1)
    for column in ("found_by", "score", "match_probability", "match"):
        if column in scored:
            columns[column] = scored[column].to_numpy()
    review = pd.DataFrame(columns, index=scored.index)
    return _rounded(review, digits)


def _dedupe_result(
    frame: pd.DataFrame, on: list[str], arguments: argparse.Namespace
) -> pd.DataFrame:
    """Return the table ``lsh-frame dedupe`` writes."""
    labels = None if arguments.method == "simhash" else _answers(arguments, frame)
    if arguments.method == "simhash":
        result = _simhash_dedupe(frame, on, arguments)
    elif arguments.drop:
        result = drop_duplicates(
            frame,
            fields_of(on, arguments.shingle),
            keep=False if arguments.keep == "none" else arguments.keep,
            progress=arguments.progress,
            labels=labels,
            **_job_options(arguments),
        )
    else:
        result = dedupe_frame(
            frame,
            fields_of(on, arguments.shingle),
            progress=arguments.progress,
            id_column=arguments.id_column,
            size_column=arguments.size_column,
            labels=labels,
            **_job_options(arguments),
        )
        if not arguments.input_order:
            # The records of an entity together, entities in the order of their
            # first row in the input (ids follow the labels' order instead).
            first = pd.factorize(result[arguments.id_column])[0]
            result = result.iloc[np.argsort(first, kind="stable")]
    return result
