"""``lsh-frame index``: build, query, resolve and add to a saved index."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsh_frame.cli.io import OK, InputError, check_outputs, read_table, write_table
from lsh_frame.cli.options import (
    _columns,
    _csv_options,
    _indexed,
    _load_model,
    _rounded,
    _say_written,
)


def run_index(arguments: argparse.Namespace, say: Callable[[str], None]) -> int:
    """``lsh-frame index build|query|add|resolve``: a saved index of records."""
    from lsh_frame.index.index import Index

    action = arguments.index_command
    csv_options = _csv_options(arguments)
    started = time.perf_counter()
    if action == "build":
        if Path(arguments.folder).exists() and not arguments.overwrite:
            raise InputError(
                f"{arguments.folder} exists; give --overwrite to replace it"
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
            entity_ids=arguments.entity_column,
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
    new = _indexed(
        read_table(arguments.input, **csv_options), arguments.index_col, "input"
    )
    if action == "query":
        check_outputs(arguments.output)
        found = index.query(new, k=arguments.k)
        if arguments.matches:
            found = found[found["match"]]
        write_table(_rounded(found, arguments.digits), arguments.output, index=False)
        say(
            f"lsh-frame index query: {len(new):,} new records against "
            f"{len(index):,} → {int(found['match'].sum()):,} matches in "
            f"{time.perf_counter() - started:.1f} s"
        )
        _say_written(say, len(found), arguments.output, None)
        return OK
    if action == "add":
        index.add(new, entity_ids=arguments.entity_column)
        index.save(arguments.folder, overwrite=True)
        say(
            f"lsh-frame index add: {len(new):,} records added, {len(index):,} held "
            f"({time.perf_counter() - started:.1f} s)"
        )
        return OK
    check_outputs(arguments.output)
    resolved = index.resolve(
        new, id_column=arguments.id_column, relearn=not arguments.no_relearn
    )
    index.save(arguments.folder, overwrite=True)
    info = resolved.attrs["lsh_frame"]
    write_table(resolved, arguments.output, index=arguments.index_col is not None)
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
    _say_written(say, len(resolved), arguments.output, None)
    return OK
