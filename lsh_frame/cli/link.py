"""``lsh-frame link``: two tables joined by similarity."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import pandas as pd

from lsh_frame.cli.dedupe import _side_by_side
from lsh_frame.cli.io import OK, check_outputs, read_table, write_table
from lsh_frame.cli.options import (
    _ONE_TO_ONE,
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
from lsh_frame.jobs.link import link
from lsh_frame.jobs.merge import RIGHT_LABEL, merge


def run_link(arguments: argparse.Namespace, say: Callable[[str], None]) -> int:
    """``lsh-frame link``: the fuzzy join (or the scored pairs with --pairs)."""
    check_outputs(arguments.output, arguments.save_model)
    csv_options = _csv_options(arguments)
    left = _indexed(
        read_table(arguments.left, "left input", **csv_options),
        arguments.index_col,
        "left input",
    )
    right = _indexed(
        read_table(arguments.right, "right input", **csv_options),
        arguments.right_index_col or arguments.index_col,
        "right input",
    )
    on = _columns(arguments.on)
    right_on = _columns(arguments.right_on) if arguments.right_on else None
    check_on(left, on, "left input")
    check_on(right, right_on or on, "right input")
    say_separator(say, left, "left input")
    say_separator(say, right, "right input")
    started = time.perf_counter()
    options = _job_options(arguments)
    options["labels"] = _answers(arguments, left, right)
    if arguments.one_to_one is not None:
        options["one_to_one"] = _ONE_TO_ONE[arguments.one_to_one]
    if arguments.pairs:
        result = link(
            left,
            right,
            fields_of(on, arguments.shingle),
            right_on=right_on,
            progress=arguments.progress,
            values=True,
            **options,
        )
        matches = int(result["match"].sum())
    else:
        # A merge keeps the left labels as its index; the right table's ids go
        # back into a column so that no record id is lost.
        if arguments.right_index_col or arguments.index_col:
            if options["labels"] is not None:
                # The answers name the right ids, which become row numbers.
                answers = options["labels"]
                options["labels"] = answers.assign(
                    right=right.index.get_indexer(pd.Index(answers["right"]))
                )
            right = right.reset_index()
            if left.index.name is not None and left.index.name == right.columns[0]:
                # Same id column in both files: id_x (the index) and id_y.
                name = left.index.name
                left = left.rename_axis(f"{name}_x")
                right = right.rename(columns={name: f"{name}_y"})
        result = merge(
            left,
            right,
            fields_of(on, arguments.shingle),
            right_on=right_on,
            how=arguments.how,
            progress=arguments.progress,
            **options,
        )
        # The files' ids travel as columns (above), not as pandas labels.
        result = _side_by_side(
            result.drop(columns=RIGHT_LABEL), left, right, on, right_on or on
        )
        matches = int(result["score"].notna().sum())
    elapsed = time.perf_counter() - started
    # Pairs carry the record labels in left/right; a merge keeps the left
    # labels in its index, worth writing when they are the user's ids.
    write_table(
        _rounded(result, arguments.digits),
        arguments.output,
        index=not arguments.pairs and arguments.index_col is not None,
        progress=arguments.progress,
    )
    saved = _save_model(result, arguments.save_model)
    say(
        f"lsh-frame link: {len(left):,} × {len(right):,} records → {matches:,} "
        f"matched pairs in {elapsed:.1f} s"
    )
    _say_written(say, len(result), arguments.output, saved)
    return OK
