"""A pair drawn side by side: the differing characters marked, in text and HTML."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from lsh_frame.review.show import (
    Question,
    differing,
    display_text,
    pair_html,
    pair_text,
    text_width,
)

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _carets(marks: list[bool]) -> str:
    return "".join("^" if mark else " " for mark in marks)


@pytest.mark.parametrize(
    ("left", "right", "left_marks", "right_marks"),
    [
        ("Smith", "Smyth", "  ^  ", "  ^  "),
        ("Smith", "SMITH", "     ", "     "),
        ("Ann", "Anne", "   ", "   ^"),
        ("", "x", "", "^"),
        ("abc", "xyz", "^^^", "^^^"),
    ],
)
def test_the_characters_the_other_value_lacks_are_marked(
    left, right, left_marks, right_marks
):
    found_left, found_right = differing(left, right)
    assert (_carets(found_left), _carets(found_right)) == (left_marks, right_marks)


def _question(*values, probability=0.42, found_by="record") -> Question:
    return Question(7, 9, probability, found_by, tuple(values))


def test_a_caret_line_sits_under_the_differing_characters():
    text = pair_text(_question(("surname", "Smith", "Smyth")), 1, width=60)
    lines = text.splitlines()
    row = next(line for line in lines if line.startswith("surname"))
    carets = lines[lines.index(row) + 1]
    assert row[carets.index("^")] == "i"
    assert row[carets.rindex("^")] == "y"
    assert carets.count("^") == 2


def test_equal_values_have_no_caret_line_and_a_sign_each():
    text = pair_text(
        _question(
            ("city", "Wyong", "WYONG"),
            ("phone", "0455", None),
            ("name", "Ann", "Anne"),
        ),
        4,
        width=60,
    )
    lines = text.splitlines()
    assert lines[0] == "Pair 4: match probability 0.42, found by record"
    assert "left 7" in lines[1] and "right 9" in lines[1]
    signs = {line.split()[0]: line.split()[1] for line in lines[2:] if line[0] != " "}
    assert signs == {"city": "=", "phone": "?", "name": "~"}
    assert "(missing)" in text
    assert sum("^" in line for line in lines) == 1


def test_the_two_columns_line_up_whatever_the_values():
    text = pair_text(
        _question(("a", "x", "y"), ("longer name", "a much longer value", "v")),
        1,
        width=80,
    )
    lines = text.splitlines()
    right_column = lines[1].index("right 9")
    left_column = lines[1].index("left 7")
    assert lines[2].index("x") == left_column
    assert lines[2].rindex("y") == right_column
    assert lines[4].index("a much") == left_column
    assert lines[4].rindex("v") == right_column


def test_long_values_wrap_within_their_column():
    left = "word " * 30
    text = pair_text(_question(("text", left, left.upper())), 1, width=60)
    assert all(text_width(line) <= 60 for line in text.splitlines()[1:])
    assert text.count("word") == 30
    assert "^" not in text


def test_wide_characters_take_two_columns_under_the_carets():
    text = pair_text(_question(("city", "東京都", "東京")), 1, width=60)
    lines = text.splitlines()
    row = next(line for line in lines if line.startswith("city"))
    carets = lines[lines.index(row) + 1]
    assert text_width(row[: row.index("都")]) == carets.index("^")
    assert carets.count("^") == 2


def test_colour_only_when_asked_and_the_text_stays_the_same():
    question = _question(("surname", "Smith", "Smyth"))
    plain = pair_text(question, 1, width=60)
    coloured = pair_text(question, 1, width=60, colour=True)
    assert "\x1b[" not in plain
    assert "\x1b[1;31mi\x1b[0m" in coloured
    assert ANSI.sub("", coloured) == plain


def test_a_value_cannot_write_control_characters_to_the_terminal():
    text = pair_text(_question(("note", "ok\x1b[2Jgone\nnext", "ok")), 1, width=80)
    assert "\x1b" not in text
    assert "\\x1b[2Jgone\\nnext" in text


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, None),
        (np.nan, None),
        (pd.NA, None),
        (pd.NaT, None),
        (3, "3"),
        (pd.Timestamp("2020-01-02"), "2020-01-02 00:00:00"),
        ("tab\there", "tab\\there"),
    ],
)
def test_values_show_as_one_line_of_text(value, shown):
    assert display_text(value) == shown


def test_a_pair_without_a_probability_says_so():
    text = pair_text(_question(("a", "x", "x"), probability=math.nan, found_by=None), 2)
    assert text.splitlines()[0] == "Pair 2: no match probability"


def test_html_marks_the_differing_characters_and_escapes_the_values():
    page = pair_html(
        _question(("name", "<b>Ann</b>", "<b>Anne</b>"), ("phone", None, "1")), 3
    )
    assert "Ann<mark>e</mark>" in page
    assert "<b>" not in page and "&lt;b&gt;" in page
    assert "(missing)" in page
    assert "Pair 3: match probability 0.42" in page
