"""Parameter and column checks shared by every public function.

One message shape everywhere: what was wrong, the bad value, what is allowed.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Hashable, Iterable, Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from lsh_frame.errors import ColumnError, ConfigError, ConfigTypeError


def check_int(
    value: Any,
    name: str,
    owner: str,
    *,
    minimum: int | None = None,
    maximum: int | None = None,
) -> int:
    """Return ``value`` as an int, or raise if it is not an integer in range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ConfigTypeError(
            f"The '{name}' parameter of {owner} must be an int. "
            f"Got {value!r} of type {type(value).__name__} instead."
        )
    value = int(value)
    if (minimum is not None and value < minimum) or (
        maximum is not None and value > maximum
    ):
        if maximum is None:
            allowed = f">= {minimum}"
        elif minimum is None:
            allowed = f"<= {maximum}"
        else:
            allowed = f"in [{minimum}, {maximum}]"
        raise ConfigError(
            f"The '{name}' parameter of {owner} must be {allowed}. Got {value} instead."
        )
    return value


def check_bool(value: Any, name: str, owner: str) -> bool:
    """Return ``value`` if it is a bool, or raise."""
    if not isinstance(value, bool):
        raise ConfigTypeError(
            f"The '{name}' parameter of {owner} must be True or False. "
            f"Got {value!r} instead."
        )
    return value


def check_progress(value: Any, owner: str) -> bool | None:
    """Return a job's ``progress``: True, False, or None (shown when watched)."""
    if value is not None and not isinstance(value, bool):
        raise ConfigTypeError(
            f"The 'progress' parameter of {owner} must be True, False or None "
            f"(shown when stderr is a terminal or in a notebook, for a job over "
            f"a few seconds). Got {value!r} instead."
        )
    return value


def check_fraction(
    value: Any, name: str, owner: str, *, optional: bool = False
) -> float | None:
    """Return ``value`` as a float in (0, 1], or raise (NaN is refused too).

    ``optional`` lets None through (a parameter the data decides when omitted).
    """
    if value is None and optional:
        return None
    allowed = "a number in (0, 1]" + (" or None" if optional else "")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ConfigTypeError(
            f"The '{name}' parameter of {owner} must be {allowed}. "
            f"Got {value!r} of type {type(value).__name__} instead."
        )
    value = float(value)
    if math.isnan(value) or not 0 < value <= 1:
        raise ConfigError(
            f"The '{name}' parameter of {owner} must be {allowed}. "
            f"Got {value!r} instead."
        )
    return value


def refuse_set(value: Any, name: str, owner: str) -> None:
    """Raise if ``value`` is a set: a set's order depends on PYTHONHASHSEED.

    Columns are taken in order (the first one's text comes first, the fields'
    columns are joined in order), so a set would give different results in
    different processes.
    """
    if isinstance(value, Set):
        shown = sorted(map(repr, value))
        raise ConfigTypeError(
            f"The '{name}' parameter of {owner} must be a column label or a list "
            f"of them. Got a set ({{{', '.join(shown)}}}) instead; a set has no "
            "order, so its columns would come in a different order in each "
            f"process. Pass a list, for example [{', '.join(shown)}]."
        )


def check_choice(value: Any, name: str, owner: str, allowed: Iterable[Any]) -> Any:
    """Return ``value`` if it is one of ``allowed``, or raise listing the choices."""
    allowed = tuple(allowed)
    if value not in allowed:
        choices = ", ".join(repr(item) for item in allowed)
        raise ConfigError(
            f"The '{name}' parameter of {owner} must be one of {choices}. "
            f"Got {value!r} instead."
        )
    return value


def _describe_columns(columns: Sequence[Hashable], limit: int = 12) -> str:
    shown = ", ".join(_short(str(column)) for column in columns[:limit])
    if len(columns) > limit:
        shown += f", … ({len(columns)} in all)"
    return shown


def _short(label: str, limit: int = 60) -> str:
    """Return a label as a message shows it: one line, its start when long."""
    label = label.replace("\r", "\\r").replace("\n", "\\n")
    return (
        label
        if len(label) <= limit
        else f"{label[: limit - 1]}… ({len(label):,} characters)"
    )


def check_columns(
    frame: pd.DataFrame, columns: Any, owner: str, *, table: str = "frame"
) -> list[Hashable]:
    """Return ``columns`` as a list of labels present in ``frame``.

    A single label is accepted as well as a list of labels. A missing label
    raises :class:`~lsh_frame.errors.ColumnError` with a did-you-mean hint;
    ``table`` names the frame in the message (e.g. "right table ('other')").
    """
    refuse_set(columns, "columns", owner)
    if isinstance(columns, (str, bytes)) or not isinstance(columns, Iterable):
        columns = [columns]
    columns = list(columns)
    if not columns:
        raise ConfigError(
            f"The 'columns' parameter of {owner} must name at least one column. "
            "Got an empty list instead."
        )
    existing = list(frame.columns)
    for column in columns:
        if not isinstance(column, Hashable) or column not in frame.columns:
            labels = [str(label) for label in existing]
            close = difflib.get_close_matches(str(column), labels, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise ColumnError(
                f"Column {column!r} is not in the {table}.{hint} "
                f"Columns: {_describe_columns(existing)}."
            )
    duplicated = [column for column in columns if columns.count(column) > 1]
    if duplicated:
        raise ConfigError(
            f"The 'columns' parameter of {owner} names column {duplicated[0]!r} "
            "more than once. Name each column once."
        )
    if frame.columns.has_duplicates:
        for column in columns:
            if (frame.columns == column).sum() > 1:
                raise ColumnError(
                    f"Column {column!r} appears more than once in the {table}, so it "
                    "is ambiguous. Rename the duplicate columns first."
                )
    return columns


def _shown(labels: Sequence[Any]) -> str:
    return ", ".join(repr(label) for label in labels)


def right_columns(
    right: pd.DataFrame | None,
    left_columns: Sequence[Hashable],
    right_on: Any,
    *,
    owner: str,
    role: str,
    left_source: str = "the fields",
) -> list[tuple[Hashable, Hashable]] | None:
    """Pair each left column with the right table's column that stands for it.

    The one place where ``right_on`` is read and checked, for every two-table
    call. ``right_on`` is None (the right table uses the left names), a list
    naming one right column per entry of ``left_columns``, in that order, or a
    mapping ``{left column: right column}`` (columns it leaves out keep their
    name). ``right`` is the right table (or an empty frame of its columns) and
    None when there is none; ``role`` is its argument's name, ``left_source``
    what ``left_columns`` come from, both for messages.

    Returns the ``(left name, right name)`` pairs, or None when every name is
    the same, so the right table can be used as it is (see :func:`present`).
    """
    if right is None:
        if right_on is not None:
            raise ConfigError(
                f"The 'right_on' parameter of {owner} names columns of a right "
                f"table, but no right table was given. Got right_on={right_on!r} "
                f"and {role}=None. Pass the right table as {role}=, or drop "
                "right_on."
            )
        return None
    table = f"right table ({role!r})"
    left_columns = list(left_columns)
    refuse_set(right_on, "right_on", owner)
    if right_on is None:
        names = left_columns
    elif isinstance(right_on, Mapping):
        unknown = [key for key in right_on if key not in left_columns]
        if unknown:
            raise ConfigError(
                f"The 'right_on' mapping of {owner} has keys that are not columns "
                f"of {left_source}: {_shown(unknown)}. Its keys are left columns "
                f"({_shown(left_columns)}), its values the right table's columns."
            )
        names = [right_on.get(column, column) for column in left_columns]
    else:
        names = (
            [right_on]
            if isinstance(right_on, (str, bytes)) or not isinstance(right_on, Sequence)
            else list(right_on)
        )
        if len(names) != len(left_columns):
            raise ConfigError(
                f"The 'right_on' parameter of {owner} must name one column of the "
                f"right table for each of the {len(left_columns)} columns of "
                f"{left_source} ({_shown(left_columns)}), in that order; they pair "
                f"up one to one. Got {len(names)} instead: {_shown(names)}."
            )
    # Checked one by one: two left columns may read the same right column.
    for name in names:
        check_columns(right, [name], owner, table=table)
    pairs = list(zip(left_columns, names, strict=True))
    if all(left is name or left == name for left, name in pairs):
        return None
    return pairs


def present(
    right: pd.DataFrame, pairs: Sequence[tuple[Hashable, Hashable]]
) -> pd.DataFrame:
    """Return the right table's columns under the left names (see right_columns).

    A new frame holding only those columns, on the right table's index; it
    shares their data (no copy) and leaves ``right`` untouched.
    """
    return pd.DataFrame(
        {left: right[name] for left, name in pairs}, index=right.index, copy=False
    )


def check_frame(frame: Any, role: str, owner: str) -> pd.DataFrame:
    if not isinstance(frame, pd.DataFrame):
        raise ConfigTypeError(
            f"The '{role}' argument of {owner} must be a pandas DataFrame. "
            f"Got {type(frame).__name__} instead."
        )
    if frame.index.has_duplicates:
        duplicated = frame.index[frame.index.duplicated()].unique()[:3].tolist()
        raise ColumnError(
            f"The index of the '{role}' frame has duplicate labels (for example "
            f"{duplicated}), but candidate pairs name records by their index label. "
            "Make the labels unique first, for example with reset_index()."
        )
    return frame


def pair_positions(
    labels: pd.Series, index: pd.Index, role: str, owner: str
) -> npt.NDArray[np.int64]:
    positions = np.asarray(index.get_indexer(pd.Index(labels)), dtype=np.int64)
    if (positions < 0).any():
        unknown = pd.unique(labels[positions < 0])[:3].tolist()
        raise ColumnError(
            f"The '{role}' column of the pairs passed to {owner} names records that "
            f"are not in the {'left' if role == 'left' else 'right'} frame (for "
            f"example {unknown}). Score pairs with the frame(s) they were built from."
        )
    return positions


def check_pairs(pairs: Any, owner: str) -> pd.DataFrame:
    if not isinstance(pairs, pd.DataFrame):
        raise ConfigTypeError(
            f"The 'pairs' argument of {owner} must be a DataFrame with 'left' and "
            f"'right' columns (from candidates()). Got {type(pairs).__name__} instead."
        )
    missing = [column for column in ("left", "right") if column not in pairs.columns]
    if missing:
        raise ColumnError(
            f"The pairs passed to {owner} have no {missing[0]!r} column. Columns: "
            f"{', '.join(map(str, pairs.columns))}. Pass the frame returned by "
            "candidates()."
        )
    return pairs


_YES = frozenset({"true", "yes", "y", "1", "match", "same"})
_NO = frozenset({"false", "no", "n", "0", "different", "distinct"})
_UNSURE = frozenset({"", "u", "unsure", "nan", "none", "?"})


@dataclass(frozen=True)
class Answers:
    """A person's answers as given: ``labels=`` read (see :func:`check_labels`)."""

    left: pd.Index
    right: pd.Index
    #: 1.0 (match), 0.0 (no match) or NaN (unsure), per pair.
    match: npt.NDArray[np.float64]

    def __len__(self) -> int:
        return int(self.match.size)


def _match_values(column: pd.Series, owner: str) -> npt.NDArray[np.float64]:
    """Read the ``match`` column: booleans, 0/1, yes/no words, missing = unsure."""
    result = np.full(len(column), np.nan)
    if pd.api.types.is_bool_dtype(column.dtype) and not column.isna().any():
        return column.to_numpy(dtype=np.float64)
    for position, value in enumerate(column.tolist()):
        if value is None or value is pd.NA or value is pd.NaT:
            continue
        if isinstance(value, (bool, np.bool_)):
            result[position] = float(value)
            continue
        if isinstance(value, (int, float, np.integer, np.floating)):
            if np.isnan(value):
                continue
            if value in (0, 1):
                result[position] = float(value)
                continue
        elif isinstance(value, str):
            word = value.strip().lower()
            if word in _YES:
                result[position] = 1.0
                continue
            if word in _NO:
                result[position] = 0.0
                continue
            if word in _UNSURE:
                continue
        raise ConfigError(
            f"The 'match' column of the labels passed to {owner} holds {value!r} "
            f"(row {position}), which is no answer. Allowed: True or False (also "
            "1 / 0, 'yes' / 'no', 'y' / 'n'), or missing for unsure."
        )
    return result


def check_labels(labels: Any, owner: str) -> Answers | None:
    """Check a ``labels=`` argument's shape and answers; None when there is none.

    Examples
    --------
    >>> labels = pd.DataFrame({"left": [1, 3, 1], "right": [2, 4, 2],
    ...                        "match": ["y", "n", None]})
    >>> check_labels(labels, "pairs").match.tolist()
    [1.0, 0.0, nan]
    """
    if labels is None:
        return None
    if not isinstance(labels, pd.DataFrame):
        raise ConfigTypeError(
            f"The 'labels' parameter of {owner} must be a DataFrame with columns "
            f"'left', 'right' and 'match'. Got {type(labels).__name__} instead."
        )
    missing = [name for name in ("left", "right", "match") if name not in labels]
    if missing:
        raise ColumnError(
            f"The labels passed to {owner} have no {missing[0]!r} column. Columns: "
            f"{', '.join(map(str, labels.columns))}. Labels need 'left' and 'right' "
            "(the records' index labels, as in a pair frame) and 'match' (True, "
            "False, or missing for unsure)."
        )
    return Answers(
        pd.Index(labels["left"].to_numpy(), tupleize_cols=False),
        pd.Index(labels["right"].to_numpy(), tupleize_cols=False),
        _match_values(labels["match"], owner),
    )
