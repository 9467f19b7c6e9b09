"""``lsh-frame index``: build, query, resolve and add to a saved index.

``build --overwrite`` replaces only an index folder (checked before the work);
``add`` and ``resolve`` save in place, atomically (:mod:`lsh_frame.index.files`).
Without ``--index-col`` a file's rows are numbered after the labels the index
holds; ``--entity-column`` reads a CSV column's cells as integers.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from lsh_frame.cli.io import OK, InputError, check_outputs, read_table, write_table
from lsh_frame.cli.options import (
    _columns,
    _csv_options,
    _indexed,
    _load_model,
    _rounded,
    _say_written,
)
from lsh_frame.index.files import check_replaceable

if TYPE_CHECKING:
    from lsh_frame.index.index import Index


def run_index(arguments: argparse.Namespace, say: Callable[[str], None]) -> int:
    """``lsh-frame index build|query|add|resolve``: a saved index of records."""
    from lsh_frame.index.index import Index

    action = arguments.index_command
    csv_options = _csv_options(arguments)
    started = time.perf_counter()
    if action == "build":
        # Before the work: a folder that is no index is never replaced.
        check_replaceable(
            Path(os.path.abspath(arguments.folder)),
            arguments.overwrite,
            "lsh-frame index build",
            "--overwrite",
        )
        frame = _indexed(
            read_table(arguments.input, **csv_options), arguments.index_col, "input"
        )
        min_score: Any = "auto" if arguments.min_score is None else arguments.min_score
        if arguments.model is not None:
            if arguments.min_score is not None:
                raise InputError("give --min-score or --model, not both")
            min_score = _load_model(arguments.model)
        index = Index.build(
            frame,
            _columns(arguments.on),
            entity_ids=_entity_ids(frame, arguments.entity_column),
            min_score=min_score,
            seed=arguments.seed,
            progress=arguments.progress,
        )
        index.save(arguments.folder, overwrite=arguments.overwrite)
        say(
            f"lsh-frame index build: {len(index):,} records, {index.entities:,} "
            f"entities in {time.perf_counter() - started:.1f} s"
        )
        say(f"  saved the index to {arguments.folder}")
        return OK
    try:
        index = Index.load(arguments.folder)
    except FileNotFoundError as error:
        raise InputError(str(error)) from None
    except OSError as error:  # (a damaged index raises DamagedIndexError)
        raise InputError(
            f"cannot read the index {arguments.folder!r}: {error.strerror or error}"
        ) from None
    new = _indexed(
        read_table(arguments.input, **csv_options), arguments.index_col, "input"
    )
    numbered = None
    if action in ("add", "resolve") and arguments.index_col is None:
        new, numbered = _numbered_after(index, new)
    if action == "query":
        check_outputs(arguments.output)
        found = index.query(new, k=arguments.k)
        if arguments.matches:
            found = found[found["match"]]
        write_table(
            _rounded(found, arguments.digits),
            arguments.output,
            index=False,
            progress=arguments.progress,
        )
        say(
            f"lsh-frame index query: {len(new):,} new records against "
            f"{len(index):,} → {int(found['match'].sum()):,} matches in "
            f"{time.perf_counter() - started:.1f} s"
        )
        _say_written(say, len(found), arguments.output, None)
        return OK
    if action == "add":
        index.add(new, entity_ids=_entity_ids(new, arguments.entity_column))
        index.save(arguments.folder, overwrite=True)
        say(
            f"lsh-frame index add: {len(new):,} records added, {len(index):,} held "
            f"({time.perf_counter() - started:.1f} s)"
        )
        if numbered:
            say(numbered)
        return OK
    check_outputs(arguments.output)
    resolved = index.resolve(
        new, id_column=arguments.id_column, relearn=not arguments.no_relearn
    )
    index.save(arguments.folder, overwrite=True)
    info = resolved.attrs["lsh_frame"]
    write_table(
        resolved,
        arguments.output,
        index=arguments.index_col is not None,
        progress=arguments.progress,
    )
    say(
        f"lsh-frame index resolve: {len(new):,} records → {info['matched']:,} "
        f"joined existing entities, {info['new_entities']:,} new entities in "
        f"{time.perf_counter() - started:.1f} s"
    )
    for merge_ in info["merges"]:
        say(
            f"  not merged: entities {merge_['entities']} also match "
            f"{merge_['into']} (records {merge_['records']})"
        )
    if numbered:
        say(numbered)
    _say_written(say, len(resolved), arguments.output, None)
    return OK


def _numbered_after(index: Index, new: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """Label a file's rows after the labels the index holds (no --index-col).

    Without ``--index-col`` a file's rows are numbered 0, 1, 2 ..., labels
    an index built the same way holds already. An index labelled by ids
    (text) needs the file's ids instead.
    """
    held = index.labels
    if len(held) and not pd.api.types.is_integer_dtype(held.dtype):
        raise InputError(
            f"the index's records are labelled by ids ({held.dtype} values, for "
            f"example {held[0]!r}), and the input's rows have none: give "
            "--index-col naming the input's column of record ids"
        )
    start = int(held.max()) + 1 if len(held) else 0
    stop = start + len(new)
    note = f"  the input's rows are held as records {start:,} to {stop - 1:,}"
    return new.set_axis(pd.RangeIndex(start, stop)), note


def _entity_ids(frame: pd.DataFrame, column: str | None) -> Any:
    """Return ``--entity-column`` read as integers (CSV cells are text).

    A column already of integers (Parquet) is given as it is.
    """
    if column is None:
        return None
    if column not in frame.columns:
        raise InputError(
            f"the input has no column {column!r} of entity ids; its columns: "
            f"{', '.join(map(str, frame.columns))}"
        )
    values = frame[column]
    if not (
        pd.api.types.is_object_dtype(values.dtype)
        or pd.api.types.is_string_dtype(values.dtype)
    ):
        return column
    text = values.astype("string").str.strip()
    digits = text.str.fullmatch(r"\+?[0-9]{1,18}").fillna(False).to_numpy(bool)
    if not digits.all():
        at = int(np.flatnonzero(~digits)[0])
        value = values.iloc[at]
        shown = "nothing (a missing id)" if pd.isna(value) else repr(value)
        raise InputError(
            f"the input's column {column!r} must hold integer entity ids from 0 "
            f"to 999999999999999999, but row {values.index[at]!r} holds {shown}; "
            "fix that cell, or leave --entity-column out to resolve the records"
        )
    return text.astype("int64").to_numpy()
