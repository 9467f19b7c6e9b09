r"""A pair drawn side by side, the characters that differ marked.

:func:`differing` finds them (the longest matching blocks of the two values,
letter case aside); :func:`pair_text` draws the pair for a terminal, a caret
line under the differing characters (readable without colour) and, when asked,
those characters in colour too; :func:`pair_html` draws it as an HTML table
(differing characters in ``<mark>``) for a notebook. Values are shown as
text with control characters escaped (``\n``, ``\x1b``), so a record cannot
move the cursor or recolour the terminal.
"""

from __future__ import annotations

import difflib
import html
import math
import unicodedata
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

__all__ = [
    "Question",
    "differing",
    "display_text",
    "pair_html",
    "pair_text",
    "text_width",
]

#: ANSI: differing characters bold red; the rest of a line as it was.
_MARK_ON, _MARK_OFF = "\x1b[1;31m", "\x1b[0m"

#: Shown for a missing value.
MISSING = "(missing)"


@dataclass(frozen=True)
class Question:
    """A pair to ask about, as it is shown."""

    left: Hashable
    right: Hashable
    #: The model's match probability of the pair when it was asked (NaN: none).
    probability: float
    #: The keys that found the pair (None: not among the candidates).
    found_by: str | None
    #: (column shown, left value, right value), in the order shown.
    values: tuple[tuple[str, Any, Any], ...]


def display_text(value: Any) -> str | None:
    r"""Return a value as one line of text; None when it is missing.

    Examples
    --------
    >>> display_text("Main St\nFlat 2"), display_text(float("nan")), display_text(7)
    ('Main St\\nFlat 2', None, '7')
    """
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    text = str(value)
    if text.isprintable():
        return text
    escaped = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return "".join(
        character
        if character.isprintable()
        else escaped.get(character, f"\\x{ord(character):02x}")
        if ord(character) < 0x100
        else f"\\u{ord(character):04x}"
        for character in text
    )


def differing(left: str, right: str) -> tuple[list[bool], list[bool]]:
    """Mark each character of two values that the other does not match.

    The matching blocks of :class:`difflib.SequenceMatcher` (without its
    junk heuristic), letter case aside: ``Smith`` and ``SMITH`` differ in no
    character.

    Examples
    --------
    >>> left, right = differing("Catherine", "CATHARINE")
    >>> "".join("^" if mark else " " for mark in left)
    '    ^    '
    """
    matcher = difflib.SequenceMatcher(
        None,
        [character.casefold() for character in left],
        [character.casefold() for character in right],
        autojunk=False,
    )
    left_marks, right_marks = [True] * len(left), [True] * len(right)
    for start_left, start_right, size in matcher.get_matching_blocks():
        left_marks[start_left : start_left + size] = [False] * size
        right_marks[start_right : start_right + size] = [False] * size
    return left_marks, right_marks


def _width(character: str) -> int:
    if unicodedata.combining(character) or unicodedata.category(character) in (
        "Mn",
        "Me",
        "Cf",
    ):
        return 0
    return 2 if unicodedata.east_asian_width(character) in ("W", "F") else 1


def text_width(text: str) -> int:
    """Return the terminal columns a text takes (wide characters take two).

    Examples
    --------
    >>> text_width("abc"), text_width("東京")
    (3, 4)
    """
    return sum(_width(character) for character in text)


def _chunks(text: str, marks: list[bool], width: int) -> list[tuple[str, list[bool]]]:
    """Cut a value into pieces of at most ``width`` columns (at least one)."""
    pieces: list[tuple[str, list[bool]]] = []
    start, used = 0, 0
    for position, character in enumerate(text):
        size = _width(character)
        if used + size > width and position > start:
            pieces.append((text[start:position], marks[start:position]))
            start, used = position, 0
        used += size
    pieces.append((text[start:], marks[start:]))
    return pieces


def _carets(text: str, marks: list[bool]) -> str:
    return "".join(
        ("^" if mark else " ") * _width(character)
        for character, mark in zip(text, marks, strict=True)
    )


def _coloured(text: str, marks: list[bool]) -> str:
    pieces: list[str] = []
    inside = False
    for character, mark in zip(text, marks, strict=True):
        if mark != inside:
            pieces.append(_MARK_ON if mark else _MARK_OFF)
            inside = mark
        pieces.append(character)
    if inside:
        pieces.append(_MARK_OFF)
    return "".join(pieces)


def _padded(text: str, width: int) -> str:
    return text + " " * max(width - text_width(text), 0)


def _heading(question: Question, number: int) -> str:
    probability = (
        "no match probability"
        if math.isnan(question.probability)
        else f"match probability {question.probability:.2f}"
    )
    found = "" if question.found_by is None else f", found by {question.found_by}"
    return f"Pair {number}: {probability}{found}"


def pair_text(
    question: Question, number: int, *, width: int = 100, colour: bool = False
) -> str:
    """Draw a pair for a terminal: fields in rows, the two records in columns.

    Each row starts with the field's name and a sign: ``=`` the values are
    the same (letter case aside), ``~`` they differ (a caret line marks the
    characters that differ), ``?`` one or both are missing. ``colour`` also
    shows the differing characters bold red (ANSI). Long values wrap within
    their column of a ``width``-column screen.

    Examples
    --------
    >>> question = Question(12, 250, 0.53, "record", (
    ...     ("given_name", "Tony", "Anthony"), ("city", "Wyong", "Wyong")))
    >>> print(pair_text(question, 3, width=60))
    Pair 3: match probability 0.53, found by record
                    left 12                right 250
    given_name  ~   Tony                   Anthony
                                           ^^ ^
    city        =   Wyong                  Wyong
    """
    names = [str(name) for name, _, _ in question.values]
    name_width = max([text_width(name) for name in names] + [4])
    column = max((width - name_width - 6) // 2, 8)
    lines = [
        _heading(question, number),
        " " * (name_width + 6)
        + _padded(f"left {display_text(question.left)}", column)
        + " "
        + f"right {display_text(question.right)}",
    ]
    for name, left_value, right_value in question.values:
        left, right = display_text(left_value), display_text(right_value)
        if left is None or right is None:
            sign = "?"
            left_marks = [False] * len(left or "")
            right_marks = [False] * len(right or "")
        else:
            left_marks, right_marks = differing(left, right)
            sign = "~" if any(left_marks) or any(right_marks) else "="
        if left is None:
            left, left_marks = MISSING, [False] * len(MISSING)
        if right is None:
            right, right_marks = MISSING, [False] * len(MISSING)
        left_pieces = _chunks(left, left_marks, column)
        right_pieces = _chunks(right, right_marks, column)
        for row in range(max(len(left_pieces), len(right_pieces))):
            left_text, left_mark = (
                left_pieces[row] if row < len(left_pieces) else ("", [])
            )
            right_text, right_mark = (
                right_pieces[row] if row < len(right_pieces) else ("", [])
            )
            head = f"{_padded(name if row == 0 else '', name_width)}  "
            head += f"{sign if row == 0 else ' '}   "
            shown_left = _coloured(left_text, left_mark) if colour else left_text
            shown_right = _coloured(right_text, right_mark) if colour else right_text
            lines.append(
                (
                    head
                    + shown_left
                    + " " * max(column - text_width(left_text), 0)
                    + " "
                    + shown_right
                ).rstrip()
            )
            if any(left_mark) or any(right_mark):
                lines.append(
                    (
                        " " * (name_width + 6)
                        + _padded(_carets(left_text, left_mark), column)
                        + " "
                        + _carets(right_text, right_mark)
                    ).rstrip()
                )
    return "\n".join(lines)


def _html_value(text: str | None, marks: Sequence[bool]) -> str:
    if text is None:
        return f'<span style="opacity:0.6">{MISSING}</span>'
    pieces: list[str] = []
    inside = False
    for character, mark in zip(text, marks, strict=True):
        if mark != inside:
            pieces.append("<mark>" if mark else "</mark>")
            inside = mark
        pieces.append(html.escape(character))
    if inside:
        pieces.append("</mark>")
    return "".join(pieces)


def pair_html(question: Question, number: int) -> str:
    """Draw a pair as an HTML table, the differing characters in ``<mark>``.

    Examples
    --------
    >>> question = Question(1, 2, 0.5, None, (("name", "Ann", "Anne"),))
    >>> "Ann<mark>e</mark>" in pair_html(question, 1)
    True
    """
    rows = []
    for name, left_value, right_value in question.values:
        left, right = display_text(left_value), display_text(right_value)
        if left is None or right is None:
            left_marks: list[bool] = [False] * len(left or "")
            right_marks: list[bool] = [False] * len(right or "")
        else:
            left_marks, right_marks = differing(left, right)
        rows.append(
            f"<tr><th style='text-align:left'>{html.escape(str(name))}</th>"
            f"<td style='text-align:left'>{_html_value(left, left_marks)}</td>"
            f"<td style='text-align:left'>{_html_value(right, right_marks)}</td></tr>"
        )
    return (
        "<table style='font-family:monospace'>"
        f"<caption style='text-align:left'>{html.escape(_heading(question, number))}"
        "</caption><thead><tr><th></th>"
        f"<th style='text-align:left'>left {html.escape(str(question.left))}</th>"
        f"<th style='text-align:left'>right {html.escape(str(question.right))}</th>"
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
