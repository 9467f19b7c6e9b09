"""The answers file: ``left,right,match``, rewritten whole after every answer.

The file is the ``labels=`` frame as CSV: the two records' labels (as text,
the way ``str`` writes them) and ``match`` written ``true``, ``false`` or
empty (unsure), so ``pd.read_csv(path)`` gives a frame ``labels=`` takes.

Every write is atomic: the new file is written beside the old one under a
temporary name, flushed to disk, and renamed over it (the folder's entry
flushed too), so a process killed at any moment leaves either the old
complete file or the new one, never a part (the terminal tests of
``lsh-frame label`` kill the loop with SIGKILL to check). The flushing
helpers are those of the saved index (:mod:`lsh_frame.index.files`).
"""

from __future__ import annotations

import contextlib
import csv
import os
import re
import secrets
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame._validation import check_labels
from lsh_frame.errors import ColumnError, ConfigError
from lsh_frame.index.files import _fsync, write_text

__all__ = [
    "ANSWER_COLUMNS",
    "answer_column",
    "answers_text",
    "read_answers",
    "remove_stale_copies",
    "write_answers",
]

#: The columns of an answers file, in the order they are written.
ANSWER_COLUMNS = ("left", "right", "match")


def answer_column(match: npt.NDArray[np.float64]) -> pd.arrays.BooleanArray:
    """Answers as 1.0, 0.0 or NaN → the nullable boolean ``match`` column.

    Examples
    --------
    >>> answer_column(np.array([1.0, 0.0, np.nan])).tolist()
    [True, False, <NA>]
    """
    match = np.asarray(match, dtype=np.float64)
    return pd.arrays.BooleanArray(match == 1.0, np.isnan(match))


def label_text(labels: Any) -> pd.Index:
    """Record labels as the answers file writes them (``str`` of each)."""
    return pd.Index(labels, tupleize_cols=False).astype(str)


def answers_text(labels: pd.DataFrame) -> str:
    r"""Return the answers as the file holds them (CSV, ``\n`` line ends).

    Examples
    --------
    >>> labels = pd.DataFrame({"left": [3, 7], "right": [12, 9],
    ...                        "match": pd.array([True, None], dtype="boolean")})
    >>> print(answers_text(labels), end="")
    left,right,match
    3,12,true
    7,9,
    """
    answers = check_labels(labels, "the answers file")
    assert answers is not None
    words = np.where(
        np.isnan(answers.match), "", np.where(answers.match == 1.0, "true", "false")
    )
    table = pd.DataFrame(
        {
            "left": label_text(labels["left"]),
            "right": label_text(labels["right"]),
            "match": words,
        }
    )
    return str(table.to_csv(index=False, lineterminator="\n"))


def _temporary_name(target: Path) -> Path:
    unique = f"{os.getpid()}-{secrets.token_hex(4)}"
    return target.parent / f".{target.name}.{unique}.tmp"


def _stale_pattern(target: Path) -> re.Pattern[str]:
    return re.compile(rf"\.{re.escape(target.name)}\.(\d+)-[0-9a-f]{{8}}\.tmp")


def write_answers(path: str | os.PathLike[str], labels: pd.DataFrame) -> None:
    """Replace the file at ``path`` by the answers, atomically and durably.

    Written to a temporary file in the same folder, flushed to disk (fsync),
    then renamed over ``path`` and the folder flushed: a kill at any moment
    leaves the old complete file or the new one. Raises ``OSError`` when the
    folder cannot be written.
    """
    target = Path(path)
    temporary = _temporary_name(target)
    try:
        write_text(temporary, answers_text(labels))
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    _fsync(target.parent)


def remove_stale_copies(path: str | os.PathLike[str]) -> int:
    """Delete the temporary copies a killed writer left beside ``path``.

    Only copies of another process (a writer killed between its write and
    its rename); returns how many were deleted.
    """
    target = Path(path)
    pattern = _stale_pattern(target)
    removed = 0
    with contextlib.suppress(OSError):
        for entry in target.parent.iterdir():
            found = pattern.fullmatch(entry.name)
            if found and int(found.group(1)) != os.getpid():
                with contextlib.suppress(OSError):
                    entry.unlink()
                    removed += 1
    return removed


def read_answers(
    path: str | os.PathLike[str],
    frame: pd.DataFrame,
    other: pd.DataFrame | None = None,
) -> pd.DataFrame | None:
    """Read an answers file, its labels turned back into the tables' labels.

    Returns None when there is no file at ``path`` (nothing answered yet),
    else a frame of ``left``, ``right`` (labels of ``frame`` and of ``other``,
    or of ``frame`` twice, in their dtypes) and ``match`` (pandas' nullable
    boolean: missing is unsure). A record is found by its label's text, so a
    file written for integer labels reads back as integers. Raises
    :class:`~lsh_frame.ColumnError` for a file whose columns are not exactly
    ``left``, ``right``, ``match``, and :class:`~lsh_frame.ConfigError` for
    one that is not CSV, holds an answer that is none, or names a record
    that is not in its table.
    """
    target = Path(path)
    where = repr(str(target))
    if not target.exists():
        return None
    if target.is_dir():
        raise ConfigError(
            f"The answers file {where} is a folder. Give the path of a .csv file."
        )
    if target.stat().st_size == 0:
        text = pd.DataFrame({name: pd.Series(dtype=str) for name in ANSWER_COLUMNS})
    else:
        text = _read_text_table(target, where)
    columns = [str(name).strip() for name in text.columns]
    if sorted(columns) != sorted(ANSWER_COLUMNS) or len(set(columns)) != 3:
        raise ColumnError(
            f"The answers file {where} has the columns {', '.join(columns) or '(none)'}"
            "; an answers file has exactly the columns left, right, match (the "
            "records' labels and the answer: true, false, or empty for unsure). "
            "Use another answers file, or fix its header."
        )
    text.columns = columns
    right_frame = frame if other is None else other
    left = _records(text["left"], frame.index, "left", where, "table")
    right = _records(
        text["right"],
        right_frame.index,
        "right",
        where,
        "table" if other is None else "other table",
    )
    try:
        answers = check_labels(
            pd.DataFrame({"left": left, "right": right, "match": text["match"]}),
            "the answers file",
        )
    except ConfigError as error:
        raise ConfigError(f"The answers file {where} cannot be read: {error}") from None
    assert answers is not None
    return pd.DataFrame(
        {"left": left, "right": right, "match": answer_column(answers.match)}
    )


def _read_text_table(target: Path, where: str) -> pd.DataFrame:
    try:
        return pd.read_csv(
            target, dtype=str, keep_default_na=False, na_values=[""], encoding="utf-8"
        )
    except (ValueError, UnicodeDecodeError, csv.Error, OSError) as error:
        detail = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise ConfigError(
            f"The answers file {where} cannot be read as CSV ({type(error).__name__}"
            + (f": {detail}" if detail else "")
            + "). Give the path of an answers file, or a new path."
        ) from None


def _records(
    text: pd.Series, index: pd.Index, role: str, where: str, table: str
) -> pd.Index:
    """Return the labels of ``index`` whose text the file's column holds."""
    if text.isna().any():
        row = int(np.flatnonzero(text.isna().to_numpy())[0])
        raise ConfigError(
            f"The answers file {where} names no record in its {role!r} column on "
            f"row {row + 2}. Every answer names its two records."
        )
    forms = label_text(index)
    if not forms.is_unique:
        raise ConfigError(
            f"The answers file {where} names records by their labels' text, but two "
            "labels of the table read the same as text. Make the labels unique as "
            "text first (for example with reset_index())."
        )
    at = forms.get_indexer(pd.Index(text.to_numpy(dtype=object)))
    if (at < 0).any():
        unknown = pd.unique(text.to_numpy(dtype=object)[at < 0])[:3].tolist()
        raise ConfigError(
            f"The answers file {where} names records in its {role!r} column that are "
            f"not in the {table} (for example {unknown}). Answers belong to the "
            "tables they were given for; use another answers file for these tables."
        )
    return index.take(at)
