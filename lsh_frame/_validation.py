"""Parameter and column checks shared by every public function.

One message shape everywhere: what was wrong, the bad value, what is allowed.
"""

from __future__ import annotations

import difflib
import numbers
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

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
    shown = ", ".join(str(column) for column in columns[:limit])
    if len(columns) > limit:
        shown += f", … ({len(columns)} in all)"
    return shown


def check_columns(frame: pd.DataFrame, columns: Any, owner: str) -> list[Hashable]:
    """Return ``columns`` as a list of labels present in ``frame``.

    A single label is accepted as well as a list of labels. A missing label
    raises :class:`~lsh_frame.errors.ColumnError` with a did-you-mean hint.
    """
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
                f"Column {column!r} is not in the frame.{hint} "
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
                    f"Column {column!r} appears more than once in the frame, so it "
                    "is ambiguous. Rename the duplicate columns first."
                )
    return columns
