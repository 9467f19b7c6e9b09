"""The ``lsh-frame`` command line: the jobs on CSV and Parquet files.

Commands::

    lsh-frame demo                               dedupe built-in synthetic customers
    lsh-frame dedupe INPUT --on COLS [-o OUT]    entity id per row (or --drop)
    lsh-frame link LEFT RIGHT --on COLS [-o OUT] fuzzy join of two tables
    lsh-frame plan --threshold T                 bands and rows for a threshold

Files are read and written as CSV or Parquet by their extension (``-`` is CSV
on standard input or output). CSV cells are read as text, exactly as written
(only empty cells are missing), so codes such as ``0800`` keep their zeros.
Progress goes to stderr when it is a terminal; ``--quiet`` silences it and the
summary. Exit codes: 0 success, 1 the job could not be done (for example, too
many candidate pairs), 2 bad usage or unreadable input, 141 the reader of standard
output went away (``| head``): ended quietly, as a tool that SIGPIPE ends.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from collections.abc import Callable, Hashable, Sequence
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pandas as pd

from lsh_frame import __version__, datasets
from lsh_frame import _progress as progress_line
from lsh_frame.blocking import candidates
from lsh_frame.cluster import cluster
from lsh_frame.compare import score
from lsh_frame.errors import (
    ColumnError,
    ColumnTypeError,
    ConfigError,
    ConfigTypeError,
    LshFrameError,
)
from lsh_frame.evaluate import evaluate
from lsh_frame.jobs import (
    RIGHT_LABEL,
    drop_duplicates,
    keeping_scored_pairs,
    link,
    merge,
)
from lsh_frame.jobs import dedupe as dedupe_frame
from lsh_frame.lsh import plan as lsh_plan
from lsh_frame.transitive import closed_pairs

#: Exit codes.
OK, FAILED, USAGE = 0, 1, 2
#: The reader of standard output closed it early (``lsh-frame ... | head``): the
#: status a shell reports for a tool that SIGPIPE ends (128 + 13), so that the
#: truncated output is not taken for a whole one under ``set -o pipefail``.
BROKEN_PIPE = 141

_CSV = (".csv", ".csv.gz", ".csv.bz2", ".csv.zip", ".csv.xz", ".csv.zst", ".tsv")
_PARQUET = (".parquet", ".pq")


class InputError(LshFrameError):
    """A file could not be read or written, or the command line is inconsistent."""


_USAGE_ERRORS = (InputError, ColumnError, ColumnTypeError, ConfigError, ConfigTypeError)

# ----------------------------------------------------------------------------
# Files


def _format(path: str, role: str) -> str:
    if path == "-":
        return "csv"
    name = path.lower()
    if name.endswith(_PARQUET):
        return "parquet"
    if name.endswith(_CSV):
        return "csv"
    raise InputError(
        f"cannot tell the format of {role} {path!r} from its name: use a .csv "
        "(optionally compressed, e.g. .csv.gz), .tsv, .parquet or .pq file, or - "
        "for CSV on standard input/output"
    )


def read_table(
    path: str,
    role: str = "input",
    *,
    sep: str | None = None,
    encoding: str = "utf-8",
) -> pd.DataFrame:
    """Read a CSV (all cells as text) or Parquet file; ``-`` is stdin CSV.

    ``sep`` is the CSV field separator (by default a tab for ``.tsv`` files,
    else a comma) and ``encoding`` the CSV text encoding. Header names lose the
    spaces around them (FEBRL's files write ``rec_id, given_name``).
    """
    kind = _format(path, role)
    if path != "-" and not Path(path).is_file():
        reason = "it is a directory" if Path(path).is_dir() else "no such file"
        raise InputError(f"cannot read {role} {path!r}: {reason}")
    try:
        if kind == "parquet":
            return _plain(pd.read_parquet(path), path, role)
        return _read_csv(path, role, sep, encoding)
    except LookupError as error:  # an unknown encoding
        raise InputError(f"cannot read {role} {path!r}: {error}") from error
    except (OSError, ValueError, UnicodeDecodeError, ImportError) as error:
        detail = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise InputError(
            f"cannot read {role} {path!r} as {kind}: {type(error).__name__}"
            + (f": {detail}" if detail else "")
        ) from error


def _read_csv(
    path: str, role: str, sep: str | None = None, encoding: str = "utf-8"
) -> pd.DataFrame:
    """Read a CSV file's cells as text, under the names its header gives.

    pandas renames a repeated header name (the second ``name`` becomes
    ``name.1``), so the header is read first, as written (spaces around a name
    stripped), and refused if it names a column twice.
    """
    if sep is None:
        sep = "\t" if path.lower().endswith(".tsv") else ","
    options: dict[str, Any] = {"dtype": str, "keep_default_na": False, "sep": sep}
    where = "on standard input" if path == "-" else repr(path)
    fix = "give each column of its header a different name"
    if path != "-":
        # The same parser (compression, encoding, quoting) on the first row.
        header = pd.read_csv(
            path, header=None, nrows=1, encoding=encoding, **options
        ).iloc[0]
        names = [name.strip() for name in header.fillna("")]
        # Empty header cells are not repeats: pandas numbers them ("Unnamed: 2").
        _refuse_repeated([name for name in names if name], f"{role} {where}", fix)
        frame = pd.read_csv(path, na_values=[""], encoding=encoding, **options)
        frame.columns = [
            name or column for name, column in zip(names, frame.columns, strict=True)
        ]
        return frame
    # Standard input can be read only once: the csv module takes the header
    # record off it, pandas reads the rest under those names. (Its encoding is
    # the terminal's, set by Python: --encoding applies to files.)
    first = _first_record(sys.stdin, sep)
    if first is None:
        return pd.read_csv(sys.stdin, na_values=[""], **options)  # raises: empty
    first[0] = first[0].removeprefix("\ufeff")  # a byte order mark, as pandas does
    names = [name.strip() for name in first]
    _refuse_repeated([name for name in names if name], f"{role} {where}", fix)
    names = [name or f"Unnamed: {number}" for number, name in enumerate(names)]
    return pd.read_csv(sys.stdin, header=None, names=names, na_values=[""], **options)


def _first_record(stream: TextIO, separator: str) -> list[str] | None:
    """Return the first record that is not a blank line (pandas skips those)."""
    for record in csv.reader(stream, delimiter=separator):
        if record:
            return record
    return None


def _refuse_repeated(names: Sequence[str], what: str, fix: str) -> None:
    repeated = pd.Index(names)[pd.Index(names).duplicated()].unique()
    if len(repeated):
        raise InputError(
            f"the {what} has more than one column named "
            + ", ".join(repr(name) for name in repeated)
            + f"; {fix}"
        )


def _plain(frame: pd.DataFrame, path: str, role: str) -> pd.DataFrame:
    """Return a Parquet table as the command line sees files: labels as text.

    A stored index becomes a column again (usable with ``--index-col``, and not
    silently dropped on output); column labels become strings, as in CSV.
    """
    if not isinstance(frame.index, pd.RangeIndex):
        frame = frame.reset_index(allow_duplicates=True)  # refused below
    frame.columns = [str(column) for column in frame.columns]
    # Counting the stored index, with the labels as text (1 and "1" collide).
    _refuse_repeated(
        list(frame.columns),
        f"{role} {path!r} (counting its stored index, labels as text)",
        "give each column a different name",
    )
    return frame


def write_table(frame: pd.DataFrame, path: str, *, index: bool) -> None:
    """Write CSV or Parquet by the extension; ``-`` is CSV on stdout."""
    kind = _format(path, "output")
    try:
        if kind == "parquet":
            frame.to_parquet(path, index=index)
        elif path == "-":
            frame.to_csv(sys.stdout, index=index)
        else:
            frame.to_csv(
                path, index=index, sep="\t" if path.lower().endswith(".tsv") else ","
            )
    except BrokenPipeError:
        raise  # the reader went away: main ends quietly
    except OSError as error:
        raise InputError(f"cannot write {path!r}: {error.strerror or error}") from error


def check_outputs(table: str, model: str | None = None) -> None:
    """Refuse, before the job starts, outputs that could not be written after it.

    ``table`` needs an extension the writer knows; both need an existing,
    writable folder. ``-`` (standard output) is always writable.
    """
    if table != "-":
        _format(table, "output")
        _check_writable(table, "output")
    if model is not None:
        _check_writable(model, "model file")


def _check_writable(path: str, role: str) -> None:
    target = Path(path)
    folder = target.parent
    problem = None
    if target.is_dir():
        problem = "it is a directory"
    elif not folder.exists():
        problem = f"the folder {str(folder)!r} does not exist (create it first)"
    elif not folder.is_dir():
        problem = f"{str(folder)!r} is not a folder"
    elif target.exists() and not os.access(target, os.W_OK):
        problem = "the file is not writable"
    elif not target.exists() and not os.access(folder, os.W_OK | os.X_OK):
        problem = f"the folder {str(folder)!r} is not writable"
    if problem is not None:
        raise InputError(f"cannot write {role} {path!r}: {problem}")


def _columns(values: Sequence[str]) -> list[str]:
    """``--on a,b --on c`` → ``["a", "b", "c"]``."""
    names = [name.strip() for value in values for name in value.split(",")]
    names = [name for name in names if name]
    if not names:
        raise InputError("--on names no column")
    return names


# ----------------------------------------------------------------------------
# Commands


def _min_score(text: str) -> float | str:
    if text == "auto":
        return text
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a number in [0, 1] or 'auto', not {text!r}"
        ) from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], not {text}")
    return value


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, not {text!r}") from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], not {text}")
    return value


def _separator(text: str) -> str:
    """Return the one-character separator (a backslash-t or "tab" is a tab)."""
    separator = "\t" if text in ("\\t", "tab") else text
    if len(separator) != 1:
        raise argparse.ArgumentTypeError(
            f"must be one character (\\t or tab for a tab); got {text!r}"
        )
    return separator


def _digits(text: str) -> int | None:
    if text == "all":
        return None
    try:
        digits = int(text)
    except ValueError:
        digits = -1
    if not 0 <= digits <= 17:
        raise argparse.ArgumentTypeError(
            f"must be a number of decimals from 0 to 17, or 'all'; got {text!r}"
        )
    return digits


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {text}")
    return value


def _load_model(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf8") as file:
            learned = json.load(file)
    except OSError as error:
        raise InputError(
            f"cannot read the model {path!r}: {error.strerror or error}"
        ) from error
    except ValueError as error:
        raise InputError(f"the model {path!r} is not JSON: {error}") from error
    if not isinstance(learned, dict):
        raise InputError(f"the model {path!r} is not a learned model (a JSON object)")
    return learned


def _save_model(result: pd.DataFrame, path: str | None) -> str | None:
    """Write the learned model as JSON; return a note for the summary."""
    if path is None:
        return None
    learned = result.attrs.get("lsh_frame", {}).get("model")
    if learned is None:
        return (
            "  no model was learned (too few candidate pairs, or a numeric --min-score)"
        )
    try:
        with open(path, "w", encoding="utf8") as file:
            json.dump(learned, file, indent=2)
    except OSError as error:
        raise InputError(f"cannot write {path!r}: {error.strerror or error}") from error
    return f"  saved the learned model to {path}"


def _csv_options(arguments: argparse.Namespace) -> dict[str, Any]:
    """``sep`` and ``encoding`` of the CSV files read."""
    return {"sep": arguments.sep, "encoding": arguments.encoding}


def _rounded(frame: pd.DataFrame, digits: int | None) -> pd.DataFrame:
    """Scores and probabilities rounded to ``digits`` for display (None: as is)."""
    if digits is None:
        return frame
    floats = [
        column
        for column in frame.columns
        if pd.api.types.is_float_dtype(frame[column].dtype)
        and (
            str(column) in ("score", "match_probability")
            or str(column).endswith(("_score", "_jaccard"))
        )
    ]
    return frame.round(dict.fromkeys(floats, digits)) if floats else frame


def _job_options(arguments: argparse.Namespace) -> dict[str, Any]:
    min_score: Any = "auto" if arguments.min_score is None else arguments.min_score
    if arguments.model is not None:
        if arguments.min_score is not None:
            raise InputError("give --min-score or --model, not both")
        min_score = _load_model(arguments.model)
    return {
        "threshold": arguments.threshold,
        "min_score": min_score,
        "recall": arguments.recall,
        "num_perm": arguments.num_perm,
        "seed": arguments.seed,
        "max_bucket": arguments.max_bucket,
        "max_pairs": arguments.max_pairs,
    }


def _indexed(frame: pd.DataFrame, column: str | None, role: str) -> pd.DataFrame:
    """Use ``column`` as the frame's index (record ids), checked for uniqueness."""
    if column is None:
        return frame
    if column not in frame.columns:
        raise InputError(
            f"the {role} has no column {column!r} to use as the index; "
            f"its columns: {', '.join(map(str, frame.columns))}"
        )
    if frame[column].isna().any() or not frame[column].is_unique:
        raise InputError(
            f"the {role}'s column {column!r} cannot be the index: its values must "
            "be present and unique"
        )
    return frame.set_index(column)


def _say_written(
    say: Callable[[str], None], rows: int, output: str, saved: str | None
) -> None:
    where = "standard output" if output == "-" else output
    say(f"  wrote {rows:,} rows to {where}")
    if saved:
        say(saved)


def _simhash_dedupe(
    frame: pd.DataFrame, on: list[str], arguments: argparse.Namespace
) -> pd.DataFrame:
    """Dedupe by SimHash: rows within ``--distance`` bits are one entity."""
    from lsh_frame.jobs import _completeness, _first_per_entity
    from lsh_frame.simhash import entities

    ids, counts = entities(
        frame, on, distance=arguments.distance, max_pairs=arguments.max_pairs,
        seed=arguments.seed,
    )  # fmt: skip
    sizes = np.bincount(ids) if ids.size else np.zeros(0, dtype=np.int64)
    info = {"entities": counts["entities"], "pairs": counts["pairs"],
            "matches": counts["pairs"]}  # fmt: skip
    if not arguments.drop:
        result = frame.assign(
            **{arguments.id_column: ids, arguments.id_column + "_size": sizes[ids]}
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
    started = time.perf_counter()
    with keeping_scored_pairs() as scored:
        result = _dedupe_result(frame, on, arguments)
    elapsed = time.perf_counter() - started
    info = result.attrs["lsh_frame"]
    write_table(
        result, arguments.output, index=arguments.index or bool(arguments.index_col)
    )
    saved = _save_model(result, arguments.save_model)
    say(
        f"lsh-frame dedupe: {len(frame):,} records → {info['entities']:,} entities "
        f"({info['pairs']:,} candidate pairs, {info['matches']:,} matches) in "
        f"{elapsed:.1f} s"
    )
    _say_written(say, len(result), arguments.output, saved)
    if arguments.pairs_output is not None:
        pairs = _pairs_for_review(frame, on, scored[0], arguments.digits)
        write_table(pairs, arguments.pairs_output, index=False)
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
    columns: dict[str, Any] = {"left": scored["left"], "right": scored["right"]}
    left = frame.index.get_indexer(pd.Index(scored["left"]))
    right = frame.index.get_indexer(pd.Index(scored["right"]))
    for column in on:
        values = frame[column].to_numpy()
        columns[f"{column}_left"] = values[left]
        columns[f"{column}_right"] = values[right]
        if f"{column}_score" in scored:
            columns[f"{column}_score"] = scored[f"{column}_score"].to_numpy()
    for column in ("found_by", "score", "match_probability", "match"):
        if column in scored:
            columns[column] = scored[column].to_numpy()
    review = pd.DataFrame(columns, index=scored.index)
    return _rounded(review, digits)


def _dedupe_result(
    frame: pd.DataFrame, on: list[str], arguments: argparse.Namespace
) -> pd.DataFrame:
    """Return the table ``lsh-frame dedupe`` writes."""
    if arguments.method == "simhash":
        result = _simhash_dedupe(frame, on, arguments)
    elif arguments.drop:
        result = drop_duplicates(
            frame,
            on,
            keep=False if arguments.keep == "none" else arguments.keep,
            progress=arguments.progress,
            **_job_options(arguments),
        )
    else:
        result = dedupe_frame(
            frame,
            on,
            progress=arguments.progress,
            id_column=arguments.id_column,
            size_column=arguments.size_column,
            **_job_options(arguments),
        )
        if not arguments.input_order:
            # The records of an entity together, entities in the order of their
            # first row in the input (ids follow the labels' order instead).
            first = pd.factorize(result[arguments.id_column])[0]
            result = result.iloc[np.argsort(first, kind="stable")]
    return result


#: The values of --one-to-one, as the ``one_to_one`` of link and merge.
_ONE_TO_ONE: dict[str, Any] = {"auto": "auto", "yes": True, "no": False}


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
    started = time.perf_counter()
    options = _job_options(arguments)
    if arguments.one_to_one is not None:
        options["one_to_one"] = _ONE_TO_ONE[arguments.one_to_one]
    if arguments.pairs:
        result = link(
            left,
            right,
            on,
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
            right = right.reset_index()
            if left.index.name is not None and left.index.name == right.columns[0]:
                # Same id column in both files: id_x (the index) and id_y.
                name = left.index.name
                left = left.rename_axis(f"{name}_x")
                right = right.rename(columns={name: f"{name}_y"})
        result = merge(
            left,
            right,
            on,
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
    )
    saved = _save_model(result, arguments.save_model)
    say(
        f"lsh-frame link: {len(left):,} × {len(right):,} records → {matches:,} "
        f"matched pairs in {elapsed:.1f} s"
    )
    _say_written(say, len(result), arguments.output, saved)
    return OK


def run_index(arguments: argparse.Namespace, say: Callable[[str], None]) -> int:
    """``lsh-frame index build|query|add|resolve``: a saved index of records."""
    from lsh_frame.index import Index

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


def run_plan(arguments: argparse.Namespace, say: Callable[[str], None]) -> int:
    """``lsh-frame plan``: the banding for a threshold and its S-curve."""
    chosen = lsh_plan(
        arguments.threshold, num_perm=arguments.num_perm, recall=arguments.recall
    )
    say(str(chosen))
    say("")
    say("similarity  P(candidate)")
    for similarity in np.round(np.arange(0.1, 1.0001, 0.1), 2):
        probability = float(chosen.probability(similarity))
        bar = "█" * round(probability * 40)
        say(f"  {similarity:8.1f}  {probability:11.3f}  {bar}".rstrip())
    return OK


# ----------------------------------------------------------------------------
# The demo


#: Every column of ``make_customers`` but the truth (``entity_id``).
DEMO_COLUMNS = list(datasets.TEXT_COLUMNS)


def _show_entity(
    customers: pd.DataFrame,
    scored: pd.DataFrame,
    rows: pd.Index,
    say: Callable[[str], None],
) -> None:
    records = customers.loc[rows, ["given_name", "surname", "date_of_birth", "email"]]
    for line in records.fillna("").to_string().splitlines():
        say(f"    {line}")
    inside = scored[scored["left"].isin(rows) & scored["right"].isin(rows)]
    inside = inside[inside["match"]]
    shown = ", ".join(
        f"{left}–{right} {probability:.3f}"
        for left, right, probability in inside[["left", "right", "match_probability"]]
        .fillna({"match_probability": inside["score"]})
        .itertuples(index=False)
    )
    say(f"    match probability (or score) of the linked pairs: {shown}")


def run_demo(
    rows: int, seed: int, out: TextIO | None = None, *, show_progress: bool = False
) -> int:
    """Dedupe ``make_customers(rows)``, print what was found; return an exit code."""
    stream = out if out is not None else sys.stdout

    def say(line: str = "") -> None:
        print(line, file=stream)

    customers = datasets.make_customers(rows, seed=seed)
    records = customers[DEMO_COLUMNS]
    say(f"lsh_frame {__version__} demo: deduplicating synthetic customer records")
    say(
        f"  {rows:,} records of {customers['entity_id'].nunique():,} people "
        f"(seed {seed}); columns: {', '.join(DEMO_COLUMNS)}"
    )
    times = {}
    with progress_line.reporting(show_progress, "demo"):
        started = time.perf_counter()
        pairs = candidates(records, DEMO_COLUMNS)
        times["candidates"] = time.perf_counter() - started
        started = time.perf_counter()
        scored = score(records, pairs, DEMO_COLUMNS)
        times["scores"] = time.perf_counter() - started
        started = time.perf_counter()
        entity = cluster(records, scored)
        times["entities"] = time.perf_counter() - started
    sizes = entity.value_counts()
    matches = int(scored["match"].sum())
    say(
        "  "
        + " · ".join(f"{stage} {seconds:.2f} s" for stage, seconds in times.items())
        + f" (total {sum(times.values()):.2f} s, no labels used)"
    )
    say()
    say("Found")
    say(
        f"  {len(pairs):,} candidate pairs of {rows * (rows - 1) // 2:,} possible; "
        f"{matches:,} matches (match probability ≥ 0.5)"
    )
    say(
        f"  {rows:,} records → {len(sizes):,} entities; {int((sizes > 1).sum()):,} "
        f"have duplicates (largest: {int(sizes.max()) if len(sizes) else 0} records)"
    )
    say()
    say("Against the built-in truth")
    truth = customers["entity_id"]
    for label, result in (("pairs   ", scored), ("entities", entity)):
        quality = evaluate(result, truth)
        say(
            f"  {label}  precision {quality.precision:.4f}  recall "
            f"{quality.recall:.4f}  F1 {quality.f1:.4f}"
        )
    say()
    shared = sizes[sizes > 1]
    if len(shared):
        say("Three entities found")
        # The links the decision accepted itself (not the pairs that only
        # close a cluster, see lsh_frame.transitive).
        matched = scored[scored["match"].to_numpy() & ~closed_pairs(scored)]
        # A typical entity of three, the one holding the weakest accepted link,
        # and one of two: the range of what the decision accepts.
        three = shared[shared == 3]
        picks = [int(three.index[len(three) // 2])] if len(three) else []
        # Without a learned model (too few pairs) the score decided.
        strength = matched["match_probability"].fillna(matched["score"])
        if strength.notna().any():
            picks.append(int(entity.loc[matched.loc[strength.idxmin(), "left"]]))
        two = shared[shared == 2]
        if len(two):
            picks.append(int(two.index[len(two) // 2]))
        for pick in dict.fromkeys(picks):
            members = entity.index[entity.to_numpy() == pick]
            people = truth.loc[members].nunique()
            verdict = "right" if people == 1 else f"wrong: {people} people"
            say(f"  entity {pick} ({len(members)} records; truth says {verdict})")
            _show_entity(customers, scored, members, say)
        say()
    say("Next: lsh-frame dedupe customers.csv --on given_name,surname,email -o out.csv")
    return OK


# ----------------------------------------------------------------------------
# Parser


def _add_job_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--min-score",
        type=_min_score,
        default=None,
        help="score a pair needs to match, or 'auto' to learn it (default)",
    )
    parser.add_argument(
        "--model",
        help="decide with a model saved by --save-model (for small batches)",
    )
    parser.add_argument(
        "--save-model",
        help="save the learned model as JSON, to decide later batches with --model",
    )
    parser.add_argument(
        "--index-col",
        help="column of record ids: used as the index and written with the output",
    )
    parser.add_argument(
        "--recall",
        type=_fraction,
        default=0.95,
        help="least probability that an LSH key finds a pair at its threshold (0.95)",
    )
    parser.add_argument(
        "--num-perm", type=_positive, default=128, help="signature length (128)"
    )
    parser.add_argument(
        "--max-bucket",
        type=_positive,
        default=1_000,
        help="drop key buckets with more records than this (1000)",
    )
    parser.add_argument(
        "--threshold",
        type=_fraction,
        default=None,
        help="Jaccard similarity the LSH keys aim at (default: from the data)",
    )
    parser.add_argument("--seed", type=int, default=1, help="random seed (1)")
    parser.add_argument(
        "--max-pairs",
        type=_positive,
        default=50_000_000,
        help="refuse to build more candidate pairs than this (50000000)",
    )
    parser.add_argument(
        "--sep",
        type=_separator,
        default=None,
        help="CSV field separator, one character; \\t for a tab (default: a tab "
        "for .tsv files, else a comma)",
    )
    parser.add_argument(
        "--encoding",
        default="utf-8",
        help="text encoding of CSV input files (utf-8); e.g. latin-1, cp1252",
    )
    parser.add_argument(
        "-o", "--output", default="-", help="output file, .csv or .parquet (stdout)"
    )
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="no progress and no summary"
    )


def build_parser() -> argparse.ArgumentParser:
    """Return the argument parser of the ``lsh-frame`` command."""
    parser = argparse.ArgumentParser(
        prog="lsh-frame",
        description="Entity resolution for pandas with MinHash and LSH.",
    )
    parser.add_argument("--version", action="version", version=__version__)
    commands = parser.add_subparsers(dest="command", required=True)

    demo = commands.add_parser(
        "demo", help="dedupe built-in synthetic customers and show the result"
    )
    demo.add_argument("--rows", type=_positive, default=50_000, help="records (50000)")
    demo.add_argument("--seed", type=int, default=1, help="random seed (1)")

    dedupe = commands.add_parser(
        "dedupe", help="find the records of one table that are the same entity"
    )
    dedupe.add_argument("input", help="CSV or Parquet file (- for CSV on stdin)")
    dedupe.add_argument(
        "--on",
        action="append",
        required=True,
        help="columns to match on, comma separated (repeatable)",
    )
    dedupe.add_argument(
        "--drop",
        action="store_true",
        help="write one row per entity instead of adding the entity id",
    )
    dedupe.add_argument(
        "--keep",
        choices=["first", "last", "most_complete", "none"],
        default="first",
        help="with --drop, the row kept of each entity (first); none drops every "
        "row that has a duplicate",
    )
    dedupe.add_argument(
        "--id-column", default="cluster_id", help="entity id column added (cluster_id)"
    )
    dedupe.add_argument(
        "--size-column",
        default="cluster_size",
        help="entity size column added (cluster_size)",
    )
    dedupe.add_argument(
        "--pairs-output",
        help="also write the scored candidate pairs here (.csv or .parquet), with "
        "both records' values side by side, to review the decisions",
    )
    dedupe.add_argument(
        "--digits",
        type=_digits,
        default=4,
        help="round the scores of --pairs-output to this many decimals (4); 'all'",
    )
    dedupe.add_argument(
        "--input-order",
        action="store_true",
        help="write the rows in the input's order (default: the records of each "
        "entity together, entities in order of their first record)",
    )
    dedupe.add_argument(
        "--index", action="store_true", help="also write the row index (Parquet/CSV)"
    )
    dedupe.add_argument(
        "--method",
        choices=["minhash", "simhash"],
        default="minhash",
        help="minhash (default): block, score and decide; simhash: rows whose "
        "64-bit SimHash of the --on text is within --distance bits are one entity "
        "(near-identical long texts; see docs/simhash.md)",
    )
    dedupe.add_argument(
        "--distance",
        type=int,
        default=3,
        help="with --method simhash, the largest Hamming distance (3)",
    )
    _add_job_options(dedupe)

    link_parser = commands.add_parser(
        "link", help="join two tables on similarity (fuzzy merge)"
    )
    link_parser.add_argument("left", help="left CSV or Parquet file")
    link_parser.add_argument("right", help="right CSV or Parquet file")
    link_parser.add_argument(
        "--on",
        action="append",
        required=True,
        help="columns to match on (left names when --right-on is given)",
    )
    link_parser.add_argument(
        "--right-index-col",
        help="the right table's column of record ids (default: --index-col)",
    )
    link_parser.add_argument(
        "--right-on",
        action="append",
        help="the right table's columns, in the order of --on",
    )
    link_parser.add_argument(
        "--how",
        choices=["inner", "left", "right", "outer"],
        default="inner",
        help="inner (default), left, right or outer, as in pandas.merge",
    )
    link_parser.add_argument(
        "--one-to-one",
        nargs="?",
        choices=["auto", "yes", "no"],
        const="yes",
        default=None,
        help="each record matches at most one record of the other table: yes "
        "(the bare flag), no, or auto (when the data has no duplicates within a "
        "table); default: auto with --pairs, no for the join",
    )
    link_parser.add_argument(
        "--pairs",
        action="store_true",
        help="write every scored candidate pair instead of the joined rows",
    )
    link_parser.add_argument(
        "--digits",
        type=_digits,
        default=4,
        help="round scores and probabilities to this many decimals (4); 'all' "
        "keeps every digit",
    )
    _add_job_options(link_parser)

    index_parser = commands.add_parser(
        "index",
        help="a saved index of resolved records: build, query, add, resolve",
    )
    actions = index_parser.add_subparsers(dest="index_command", required=True)
    for name, text in (
        ("build", "resolve a table and save it as an index folder"),
        ("query", "each new record's best matches in the index"),
        ("add", "add records to the index (saved in place)"),
        ("resolve", "give new records entity ids and add them (saved in place)"),
    ):
        action = actions.add_parser(name, help=text)
        action.add_argument("folder", help="the index folder")
        action.add_argument("input", help="CSV or Parquet file of records")
        action.add_argument(
            "--index-col", help="column of record ids, used as the labels"
        )
        action.add_argument(
            "--sep", type=_separator, default=None, help="CSV field separator"
        )
        action.add_argument(
            "--encoding", default="utf-8", help="text encoding of CSV input (utf-8)"
        )
        action.add_argument(
            "-q", "--quiet", action="store_true", help="no progress and no summary"
        )
        if name == "build":
            action.add_argument(
                "--on", action="append", required=True, help="columns to match on"
            )
            action.add_argument(
                "--entity-column",
                help="column of integer entity ids when the table is resolved already",
            )
            action.add_argument("--min-score", type=_min_score, default=None)
            action.add_argument("--model", help="decide with a saved model")
            action.add_argument("--seed", type=int, default=1, help="random seed (1)")
            action.add_argument(
                "--overwrite", action="store_true", help="replace an existing folder"
            )
        if name == "add":
            action.add_argument(
                "--entity-column", help="column of the records' integer entity ids"
            )
        if name in ("query", "resolve"):
            action.add_argument(
                "-o", "--output", default="-", help="output file (stdout)"
            )
        if name == "query":
            action.add_argument(
                "-k", type=_positive, default=10, help="matches kept per record (10)"
            )
            action.add_argument(
                "--matches", action="store_true", help="write only the matches"
            )
            action.add_argument(
                "--digits", type=_digits, default=4, help="decimals of scores (4)"
            )
        if name == "resolve":
            action.add_argument(
                "--id-column", default="cluster_id", help="id column added (cluster_id)"
            )
            action.add_argument(
                "--no-relearn",
                action="store_true",
                help="keep the keys and model even when the index has doubled",
            )

    plan_parser = commands.add_parser(
        "plan", help="bands × rows for a similarity threshold, with its S-curve"
    )
    plan_parser.add_argument("--threshold", type=_fraction, required=True)
    plan_parser.add_argument(
        "--num-perm", type=_positive, default=128, help="signature length (128)"
    )
    plan_parser.add_argument(
        "--recall",
        type=_fraction,
        default=0.95,
        help="least probability of finding a pair at the threshold (0.95)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit code."""
    parser = build_parser()
    arguments = parser.parse_args(argv)
    quiet = getattr(arguments, "quiet", False)
    arguments.progress = not quiet and sys.stderr.isatty()

    def say(line: str = "") -> None:
        if not quiet:
            print(line, file=sys.stderr)

    def out(line: str = "") -> None:
        print(line)

    commands: dict[str, Callable[[], int]] = {
        "demo": lambda: run_demo(
            arguments.rows, arguments.seed, show_progress=arguments.progress
        ),
        "plan": lambda: run_plan(arguments, out),
        "dedupe": lambda: run_dedupe(arguments, say),
        "link": lambda: run_link(arguments, say),
        "index": lambda: run_index(arguments, say),
    }
    try:
        code = commands[arguments.command]()
        # Output still buffered meets a closed pipe here, not in Python's exit.
        sys.stdout.flush()
        return code
    except _USAGE_ERRORS as error:
        print(f"lsh-frame {arguments.command}: error: {error}", file=sys.stderr)
        return USAGE
    except LshFrameError as error:
        print(f"lsh-frame {arguments.command}: error: {error}", file=sys.stderr)
        return FAILED
    except KeyboardInterrupt:  # pragma: no cover - interactive
        print("lsh-frame: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        _silence_stdout()
        return BROKEN_PIPE


def _silence_stdout() -> None:
    """Point standard output at the null device after its reader went away.

    Python flushes ``sys.stdout`` on exit; into the closed pipe that would print
    "Exception ignored ... BrokenPipeError" (see the ``signal`` module's notes).
    """
    try:
        descriptor = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file, e.g. in tests
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, descriptor)
    finally:
        os.close(devnull)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
