"""Reading and writing the command line's tables: CSV and Parquet, files and pipes."""

from __future__ import annotations

import contextlib
import csv
import lzma
import os
import shutil
import sys
import tempfile
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, TextIO

import pandas as pd

from lsh_frame import _progress
from lsh_frame.errors import LshFrameError

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


def is_null_device(path: str) -> bool:
    """Whether ``path`` is the null device (``-o /dev/null``: write nothing)."""
    return path == os.devnull or (
        os.name == "posix" and path.startswith("/dev/") and Path(path).is_char_device()
    )


def _format(path: str, role: str) -> str:
    if path == "-" or (role == "output" and is_null_device(path)):
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
    where = "from standard input" if path == "-" else repr(path)
    if path != "-" and not Path(path).is_file():
        reason = "it is a directory" if Path(path).is_dir() else "no such file"
        raise InputError(f"cannot read {role} {path!r}: {reason}")
    try:
        if kind == "parquet":
            return _plain(pd.read_parquet(path), path, role)
        return _read_csv(path, role, sep, encoding)
    except LookupError as error:  # an unknown encoding
        raise InputError(f"cannot read {role} {where}: {error}") from error
    except UnicodeDecodeError as error:
        bad = error.object[error.start : error.start + 1]
        raise InputError(
            f"cannot read {role} {where}: it holds bytes such as {bad!r} that are "
            f"not {encoding} text; pass the file's encoding, e.g. --encoding cp1252 "
            "or --encoding latin-1"
        ) from error
    except _UNREADABLE as error:
        detail = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise InputError(
            f"cannot read {role} {where} as {kind}: {type(error).__name__}"
            + (f": {detail}" if detail else "")
        ) from error


#: What reading a file that is not a whole table raises: a file cut short or
#: damaged (compressed streams raise EOFError, zlib.error, LZMAError,
#: BadZipFile), a parser's error, text that is not in the encoding.
_UNREADABLE = (
    OSError,
    ValueError,
    UnicodeDecodeError,
    ImportError,
    EOFError,
    zlib.error,
    lzma.LZMAError,
    zipfile.BadZipFile,
    csv.Error,
)


def _read_csv(
    path: str, role: str, sep: str | None = None, encoding: str = "utf-8"
) -> pd.DataFrame:
    """Read a CSV file's cells as text, under the names its header gives.

    pandas renames a repeated header name (the second ``name`` becomes
    ``name.1``), so the header is read first, as written (spaces around a name
    stripped), and refused if it names a column twice.
    """
    where = "on standard input" if path == "-" else repr(path)
    fix = "give each column of its header a different name"
    # Standard input can be read only once: it is copied aside (in memory,
    # on disk when large) and read as a file is, by the same parser, so that
    # it is read and refused exactly as the same bytes in a file. (Its
    # encoding is the terminal's, set by Python: --encoding applies to files.)
    with _spooled(sys.stdin) if path == "-" else contextlib.nullcontext(path) as source:
        sniffed = None
        if sep is None and path.lower().endswith(".tsv"):
            sep = "\t"
        elif sep is None:
            sep = sniffed = _sniff_separator(source, encoding)
        options: dict[str, Any] = {"dtype": str, "keep_default_na": False, "sep": sep}
        # The same parser (compression, encoding, quoting) on the first row.
        header = pd.read_csv(
            source, header=None, nrows=1, encoding=encoding, **options
        ).iloc[0]
        names = [name.strip() for name in header.fillna("")]
        if not isinstance(source, str):  # standard input's copy
            names[0] = names[0].removeprefix("\ufeff")  # a byte order mark
            source.seek(0)
        _refuse_misread_mark(names, f"{role} {where}", encoding)
        # Empty header cells are not repeats: pandas numbers them ("Unnamed: 2").
        _refuse_repeated([name for name in names if name], f"{role} {where}", fix)
        frame = pd.read_csv(source, na_values=[""], encoding=encoding, **options)
    frame.columns = [
        name or column for name, column in zip(names, frame.columns, strict=True)
    ]
    frame.attrs["lsh_frame_csv"] = {"sep": sep, "sniffed": sniffed is not None}
    return frame


#: Field separators the reader tries when none is given, in order of preference.
SEPARATORS = (",", ";", "\t", "|")

#: Characters that a UTF-8 byte order mark becomes when read as one of the
#: single-byte encodings (latin-1, cp1252 and their kin).
_MISREAD_MARK = "\u00ef\u00bb\u00bf"


def _sniff_separator(source: Any, encoding: str) -> str:
    """Return the separator that cuts the first lines into as many cells each.

    Of ``SEPARATORS``, the one giving the header the most cells (at least
    two) while every other sampled line has as many; a comma when none does
    (a table of one column). Quoted separators do not count.
    """
    try:
        sample = pd.read_csv(
            source, header=None, nrows=20, sep="\x1f", dtype=str,
            keep_default_na=False, encoding=encoding, quoting=csv.QUOTE_NONE,
            skip_blank_lines=True,
        )[0].tolist()  # fmt: skip
    except (ValueError, pd.errors.ParserError, IndexError):
        sample = []
    finally:
        if not isinstance(source, str):
            source.seek(0)
    best, cells = ",", 1
    for separator in SEPARATORS:
        try:
            counts = {len(row) for row in csv.reader(sample, delimiter=separator)}
        except csv.Error:  # a cell over the csv module's limit: not this one
            continue
        if len(counts) == 1 and (found := counts.pop()) > cells:
            best, cells = separator, found
    return best


def shown_name(name: object, width: int = 40) -> str:
    """Return a column name for a message, cut short when long."""
    text = str(name)
    return repr(text if len(text) <= width else text[:width] + "...")


def _refuse_misread_mark(names: list[str], what: str, encoding: str) -> None:
    """Refuse a header whose first name starts with a byte order mark misread."""
    if names and names[0].startswith(_MISREAD_MARK):
        raise InputError(
            f"the header of {what} starts with {_MISREAD_MARK!r} ({names[0]!r}): a "
            f"UTF-8 byte order mark read as {encoding}. The file is UTF-8: leave "
            "out --encoding (or pass --encoding utf-8-sig)"
        )


def separator_hint(frame: pd.DataFrame, missing: str) -> str:
    """Return a hint at ``--sep`` when a header name holds other cells' names."""
    read = frame.attrs.get("lsh_frame_csv")
    if read is None:
        return ""
    for name in map(str, frame.columns):
        for separator in SEPARATORS:
            if separator != read["sep"] and missing in name.split(separator):
                shown = "\\t" if separator == "\t" else separator
                return (
                    f"; the header name {shown_name(name)} holds {missing!r}: the "
                    f"file's separator looks like {shown!r}, pass --sep '{shown}'"
                )
    return ""


#: Standard input held in memory up to this size, then on disk.
_SPOOL_BYTES = 64 << 20


def _spooled(stream: TextIO) -> IO[str]:
    """Return a copy of a text stream that can be read twice (a context manager)."""
    copy = tempfile.SpooledTemporaryFile(  # noqa: SIM115  (returned open)
        max_size=_SPOOL_BYTES, mode="w+", encoding="utf-8", newline=""
    )
    shutil.copyfileobj(stream, copy)
    copy.seek(0)
    return copy


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


#: Rows written per piece of a CSV output, each reported to the progress line.
WRITE_ROWS = 25_000


def write_table(
    frame: pd.DataFrame, path: str, *, index: bool, progress: bool = False
) -> None:
    """Write CSV or Parquet by the extension; ``-`` is CSV on stdout.

    With ``progress`` a line counts the rows written (a plain CSV file or
    stdout is written in pieces of ``WRITE_ROWS``; a compressed file or Parquet
    at once, the line's clock moving meanwhile).
    """
    kind = _format(path, "output")
    if is_null_device(path):
        return  # nothing to write: -o /dev/null runs the job for its summary
    shown = "standard output" if path == "-" else path
    try:
        with _progress.reporting(progress, f"writing {shown}"):
            _progress.step(f"{len(frame):,} rows", total=len(frame))
            if kind == "parquet":
                frame.to_parquet(path, index=index)
                _progress.advance(len(frame))
            elif path == "-":
                _write_csv_pieces(frame, sys.stdout, index=index, sep=",")
            elif path.lower().endswith((".csv", ".tsv")):
                sep = "\t" if path.lower().endswith(".tsv") else ","
                with open(path, "w", encoding="utf-8", newline="") as file:
                    _write_csv_pieces(frame, file, index=index, sep=sep)
            else:  # compressed: pandas picks the codec by the extension
                frame.to_csv(path, index=index)
                _progress.advance(len(frame))
    except BrokenPipeError:
        raise  # the reader went away: main ends quietly
    except OSError as error:
        raise InputError(f"cannot write {path!r}: {error.strerror or error}") from error


def _write_csv_pieces(
    frame: pd.DataFrame, file: TextIO, *, index: bool, sep: str
) -> None:
    """Write ``frame`` as CSV in pieces of rows, each reported done."""
    if len(frame) <= WRITE_ROWS:
        frame.to_csv(file, index=index, sep=sep)
        _progress.advance(len(frame))
        return
    for first in range(0, len(frame), WRITE_ROWS):
        piece = frame.iloc[first : first + WRITE_ROWS]
        piece.to_csv(file, index=index, sep=sep, header=first == 0)
        _progress.advance(len(piece))


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
