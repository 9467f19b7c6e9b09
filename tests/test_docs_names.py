"""Every ``lf.<module>.<name>`` the docs and the README give exists.

Docs name constants and classes by where a user reaches them
(``lf.decide.model.MatchModel``, ``lf.compare.text.FUZZY_MAX_CHARS``); a name
moved or renamed in the code must be renamed in the docs too.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import lsh_frame as lf

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
NAME = re.compile(r"`(lf(?:\.[A-Za-z_][A-Za-z0-9_]*)+)")


def _names() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        if page.exists():
            for name in sorted(set(NAME.findall(page.read_text(encoding="utf-8")))):
                found.append((page.name, name))
    return found


@pytest.mark.skipif(not (ROOT / "docs").is_dir(), reason="no docs beside the tests")
@pytest.mark.parametrize(("page", "name"), _names())
def test_a_name_the_docs_give_exists(page: str, name: str) -> None:
    target = lf
    for part in name.split(".")[1:]:
        assert hasattr(target, part), f"{page} names {name}, which does not exist"
        target = getattr(target, part)
