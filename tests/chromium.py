"""Headless Chromium for the review page's tests, through Selenium.

The browser is Debian's ``chromium`` with its ``chromium-driver`` (or any
found on the PATH, or named by ``LSH_FRAME_CHROMIUM`` and
``LSH_FRAME_CHROMEDRIVER``). Without one a developer's run skips the browser
tests and says why; under CI (``CI`` or ``LSH_FRAME_REQUIRE_BROWSER`` set, as
``.ci/run`` does) a missing browser fails them instead.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest


def _found(variable: str, names: tuple[str, ...]) -> str | None:
    given = os.environ.get(variable)
    if given:
        return given if Path(given).is_file() else None
    return next((path for path in map(shutil.which, names) if path), None)


def browser_or_skip(downloads: Path):
    """Return a headless Chromium driver, or skip (fail under CI) with the reason."""
    required = bool(os.environ.get("CI") or os.environ.get("LSH_FRAME_REQUIRE_BROWSER"))
    binary = _found("LSH_FRAME_CHROMIUM", ("chromium", "chromium-browser", "chrome"))
    driver = _found("LSH_FRAME_CHROMEDRIVER", ("chromedriver",))
    reason = None
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        reason = "selenium is not installed (pip install -e '.[test]')"
    if reason is None and (binary is None or driver is None):
        reason = (
            "no Chromium and chromedriver found (Debian: apt-get install chromium "
            "chromium-driver)"
        )
    if reason is not None:
        if required:
            pytest.fail(f"The browser tests must run under CI, but {reason}.")
        pytest.skip(f"browser tests skipped: {reason}")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1400,1000",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    options.add_experimental_option(
        "prefs",
        {
            "download.default_directory": str(downloads),
            "download.prompt_for_download": False,
        },
    )
    return webdriver.Chrome(options=options, service=Service(driver))
