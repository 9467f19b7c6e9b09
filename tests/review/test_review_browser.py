"""The review page in headless Chromium: it loads, pages, filters, marks, exports.

The exported answers are the ``labels=`` frame: scoring again with them
honours every answer.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from chromium import browser_or_skip

import lsh_frame as lf

pytestmark = pytest.mark.browser

FIELDS = ["given_name", "surname", "date_of_birth", "city"]


@pytest.fixture(scope="module")
def people() -> pd.DataFrame:
    return lf.datasets.make_customers(800, seed=11)


@pytest.fixture(scope="module")
def downloads(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def page_path(scored, people, tmp_path_factory) -> Path:
    return lf.review(
        scored, people, path=tmp_path_factory.mktemp("page") / "review.html"
    )


@pytest.fixture(scope="module")
def driver(downloads):
    browser = browser_or_skip(downloads)
    yield browser
    browser.quit()


@pytest.fixture
def page(driver, page_path):
    """The page, opened afresh with no answers kept from another test."""
    driver.get(page_path.as_uri())
    driver.execute_script("localStorage.clear()")
    driver.get(page_path.as_uri())
    _ready(driver)
    driver.get_log("browser")  # start each test with an empty console
    return driver


def _wait(condition, what: str, seconds: float = 30.0) -> None:
    """Poll ``condition`` until it holds (a busy machine may be slow)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"the review page never {what}")
        time.sleep(0.05)


def _ready(driver) -> None:
    _wait(
        lambda: driver.execute_script("return document.body.dataset.ready === '1'"),
        "finished drawing",
    )


def _find(driver, selector):
    return driver.find_element("css selector", selector)


def _rows(driver):
    return driver.find_elements("css selector", "#list li.row")


def _count(driver) -> int:
    return int(_find(driver, "#count").text.split()[0].replace(",", ""))


def _set(driver, selector, value) -> None:
    """Set a filter's value as a person would; wait for the lists to follow."""
    before = driver.execute_script("return window.lshReview.refreshed")
    driver.execute_script(
        "const e = document.querySelector(arguments[0]);"
        "if (e.type === 'checkbox') e.checked = arguments[1];"
        "else e.value = arguments[1];"
        "e.dispatchEvent(new Event(e.type === 'search' ? 'input' : 'change'));",
        selector,
        value,
    )
    # The search waits for typing to pause before it filters.
    _wait(
        lambda: driver.execute_script("return window.lshReview.refreshed") > before,
        f"filtered after {selector} changed",
    )


def _errors(driver) -> list:
    return [
        entry
        for entry in driver.get_log("browser")
        if entry["level"] in ("SEVERE", "WARNING")
    ]


def test_the_page_loads_with_no_console_error(driver, page_path, scored):
    driver.get(page_path.as_uri())
    _ready(driver)
    assert _errors(driver) == []
    assert driver.execute_script("return window.lshReview.pairs") == len(scored)
    summary = _find(driver, "#summary").text
    assert f"{len(scored):,} pairs" in summary
    assert f"{int(scored['match'].sum()):,} matches" in summary
    assert len(driver.find_elements("css selector", "#histogram rect")) == 80
    assert driver.find_elements("css selector", "#cut")


def test_paging_walks_the_entities(page, scored):
    total = _count(page)
    pages = -(-total // 25)
    assert total > 25 and _find(page, "#page").text == f"1 / {pages}"
    first = [row.get_attribute("data-index") for row in _rows(page)]
    assert len(first) == 25
    _find(page, "#next").click()
    assert _find(page, "#page").text == f"2 / {pages}"
    second = [row.get_attribute("data-index") for row in _rows(page)]
    assert second and not set(first) & set(second)
    _find(page, "#prev").click()
    assert [row.get_attribute("data-index") for row in _rows(page)] == first
    # Largest first: the sizes shown never grow down the list.
    sizes = [int(row.text.split(" rec.")[0].split()[-1]) for row in _rows(page)]
    assert sizes == sorted(sizes, reverse=True)


def test_filters_narrow_the_lists(page, scored, people):
    everything = _count(page)
    _set(page, "#f-size-min", "3")
    assert 0 < _count(page) < everything
    assert all(int(row.text.split(" rec.")[0].split()[-1]) >= 3 for row in _rows(page))
    _set(page, "#f-size-min", "2")
    _set(page, "#f-doubtful", True)
    doubtful = _count(page)
    assert 0 < doubtful < everything
    assert all("doubtful" in row.text for row in _rows(page))
    _set(page, "#f-doubtful", False)
    surname = people.loc[scored["left"].iloc[0], "surname"]
    _set(page, "#f-search", surname)
    assert 0 < _count(page) < everything
    _set(page, "#f-search", "")
    assert _count(page) == everything

    _find(page, "#tab-pairs").click()
    assert _count(page) == len(scored)
    _set(page, "#f-decision", "1")
    assert _count(page) == int(scored["match"].sum())
    assert all("match" in row.text for row in _rows(page))
    _set(page, "#f-decision", "")
    keys = page.execute_script(
        "return [...document.querySelectorAll('#f-key option')].map(o => o.text)"
    )
    key = keys[1]
    _set(page, "#f-key", "0")
    found = scored["found_by"].astype(str).str.split("|").map(lambda k: key in k)
    assert _count(page) == int(found.sum())
    assert _errors(page) == []


def _mark_and_export(page, scored, downloads):
    """Mark one entity right and one non-matching pair different; export."""
    _find(page, "#list li.row").click()
    _find(page, "#entity-right").click()
    entity_pairs = page.execute_script(
        "return [...document.querySelectorAll('.pairs-of li')]"
        ".filter(li => !li.textContent.includes('another entity'))"
        ".map(li => +li.dataset.pair)"
    )
    _find(page, "#tab-pairs").click()
    _set(page, "#f-decision", "0")
    _set(page, "#f-sort", "high")
    row = _rows(page)[0]
    wrong = int(row.get_attribute("data-index"))
    row.click()
    _find(page, '#detail button.mark[data-answer="no"]').click()
    for item in downloads.iterdir():
        item.unlink()
    _find(page, "#export").click()
    target = downloads / "answers.csv"
    _wait(lambda: target.is_file() and target.stat().st_size > 0, "downloaded")
    return entity_pairs, wrong, target


def test_marking_and_exporting_give_the_labels_csv(page, scored, downloads):
    entity_pairs, wrong, target = _mark_and_export(page, scored, downloads)
    answers = pd.read_csv(target)
    assert list(answers.columns) == ["left", "right", "match"]
    expected = pd.DataFrame(
        {
            "left": scored["left"].iloc[[*sorted(entity_pairs), wrong]].to_numpy(),
            "right": scored["right"].iloc[[*sorted(entity_pairs), wrong]].to_numpy(),
            "match": [True] * len(entity_pairs) + [False],
        }
    ).sort_values(["left", "right"], ignore_index=True)
    pd.testing.assert_frame_equal(
        answers.sort_values(["left", "right"], ignore_index=True),
        expected,
        check_dtype=False,
    )
    # The answers survive a reload.
    page.refresh()
    _ready(page)
    assert _find(page, "#answered").text == f"{len(expected)} answers"
    assert page.execute_script("return window.lshReview.csv()") == target.read_text(
        encoding="utf-8"
    )
    assert _errors(page) == []


def test_labels_accept_the_exported_csv(page, scored, people, downloads):
    _, wrong, target = _mark_and_export(page, scored, downloads)
    answers = pd.read_csv(target)
    taught = lf.pairs(people, FIELDS, labels=answers)
    decided = taught.set_index(["left", "right"])["match"]
    for left, right, match in answers.itertuples(index=False):
        assert bool(decided.loc[(left, right)]) is bool(match)
    assert not decided.loc[(scored["left"].iloc[wrong], scored["right"].iloc[wrong])]
    assert np.isin(answers["match"], [True, False]).all()


def test_a_link_without_a_model_and_markup_in_values(driver, tmp_path):
    left = pd.DataFrame(
        {"name": ["<b>ann</b> lee", "bo chan", "cy park"]}, index=["a1", "a2", "a3"]
    )
    right = pd.DataFrame(
        {"name": ["<b>anne</b> lee", "bob chan", "zed"]}, index=["b1", "b2", "b3"]
    )
    scored = lf.pairs(left, ["name"], other=right, min_score=0.5)
    page = lf.review(scored, left, right, path=tmp_path / "link.html")
    driver.get(page.as_uri())
    _ready(driver)
    assert _errors(driver) == []
    assert "no learned model" in _find(driver, "#summary").text
    _find(driver, "#list li.row").click()
    detail = _find(driver, "#detail")
    assert "<b>ann</b> lee" in detail.text or "<b>anne</b> lee" in detail.text
    assert not driver.find_elements("css selector", "#detail td b")
    assert "left a1" in detail.text or "left a2" in detail.text
    _find(driver, ".pairs-of li").click()
    assert _find(driver, "#pair-title").text.startswith("Pair a")
    assert _errors(driver) == []


def test_a_page_starts_with_the_answers_given_before(driver, scored, people, tmp_path):
    unshown = [i for i in people.index if i not in set(scored["left"])][:2]
    labels = pd.DataFrame(
        {
            "left": [scored["left"].iloc[0], unshown[0]],
            "right": [scored["right"].iloc[0], unshown[1]],
            "match": ["True", "False"],
        }
    )
    page = lf.review(scored, people, path=tmp_path / "again.html", labels=labels)
    driver.get(page.as_uri())
    _ready(driver)
    assert _find(driver, "#answered").text == "2 answers"
    exported = driver.execute_script("return window.lshReview.csv()")
    assert exported == (
        "left,right,match\n"
        f"{labels['left'][0]},{labels['right'][0]},True\n"
        f"{unshown[0]},{unshown[1]},False\n"
    )
    assert _errors(driver) == []
