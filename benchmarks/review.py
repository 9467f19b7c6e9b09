"""The review page at 100k pairs: file size and time to first render in Chromium.

make_customers(50_000) is scored by ``lf.pairs`` on the README's five columns
(255k candidate pairs); ``lf.review`` writes a page of 100k of them (a seeded
sample of whole rows, the issue's size) and one of them all, and headless
Chromium (Debian's ``chromium`` and ``chromium-driver``, driven by Selenium)
opens each from disk several times.
First render is the page's own clock (``performance.now()`` when the lists,
the histogram and the counts are drawn, from the start of navigation: it
includes reading the file, parsing the HTML and the JSON, and every derived
array); first contentful paint is the browser's. A filter change and opening
an entity are timed inside the page too.

Bars (issue 42): first render <= 2 s, file <= 20 MB, at 100k pairs.

    python benchmarks/review.py [--rows 50000] [--pairs 100000] [--loads 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from _common import log_to_stderr, markdown_table, pass_miss, report_header
from chromium import browser_or_skip

import lsh_frame as lf

FIELDS = ["given_name", "surname", "street_address", "date_of_birth", "email"]
MB = 1_000_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument("--loads", type=int, default=5)
    arguments = parser.parse_args()
    log = log_to_stderr("review")
    print(report_header("Review page benchmark", ["selenium"]))

    people = lf.datasets.make_customers(arguments.rows, seed=1)
    started = time.perf_counter()
    scored = lf.pairs(people, FIELDS)
    scoring = time.perf_counter() - started
    log(f"{len(scored):,} pairs scored in {scoring:.1f} s")

    folder = Path(tempfile.mkdtemp(prefix="lsh_review_"))
    sample = scored.sample(
        n=min(arguments.pairs, len(scored)), random_state=1
    ).sort_index()
    sample.attrs = scored.attrs
    driver = browser_or_skip(folder)
    rows = []
    try:
        for name, pairs in ((f"{len(sample):,} pairs", sample), ("all", scored)):
            rows += _measure(name, pairs, people, folder, driver, arguments.loads, log)
    finally:
        driver.quit()
    print(f"lf.pairs on make_customers({arguments.rows:,}): {scoring:.1f} s")
    print()
    print(
        markdown_table(
            [
                "page",
                "pairs",
                "lf.review",
                "file",
                "first render (median, min–max)",
                "first paint",
                "filter",
                "open entity",
                "console errors",
                "bars",
            ],
            rows,
            "lrrrrrrrrc",
        )
    )


def _measure(name, pairs, people, folder, driver, loads, log):
    started = time.perf_counter()
    page = lf.review(pairs, people, path=folder / "review.html")
    writing = time.perf_counter() - started
    size = page.stat().st_size
    log(f"{name}: page written in {writing:.2f} s, {size / MB:.1f} MB")
    renders, paints, filters, opens = [], [], [], []
    for _ in range(loads):
        driver.get("about:blank")
        driver.get(page.as_uri())  # returns after the load event
        renders.append(driver.execute_script("return window.lshReview.ready"))
        paints.append(
            driver.execute_script(
                "const p = performance.getEntriesByName('first-contentful-paint');"
                "return p.length ? p[0].startTime : null;"
            )
        )
        filters.append(
            driver.execute_script(
                "const t = performance.now();"
                "const box = document.getElementById('f-doubtful');"
                "box.checked = true; box.dispatchEvent(new Event('change'));"
                "return performance.now() - t;"
            )
        )
        opens.append(
            driver.execute_script(
                "const t = performance.now();"
                "document.querySelector('#list li.row').click();"
                "return performance.now() - t;"
            )
        )
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    render = statistics.median(renders) / 1000
    bars = pass_miss(size <= 20 * MB and render <= 2.0 and not errors)
    return [
        [
            name,
            f"{len(pairs):,}",
            f"{writing:.2f} s",
            f"{size / MB:.1f} MB",
            f"{render:.2f} s ({min(renders) / 1000:.2f}–{max(renders) / 1000:.2f})",
            f"{statistics.median(paints) / 1000:.2f} s",
            f"{statistics.median(filters):.0f} ms",
            f"{statistics.median(opens):.0f} ms",
            str(len(errors)),
            bars,
        ]
    ]


if __name__ == "__main__":
    main()
