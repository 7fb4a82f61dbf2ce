"""The ``browser`` fixture for tests under tests/browser/ (sync tests: Playwright's sync API)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from tests.browser.chromium import launched, require_browser

if TYPE_CHECKING:
    from playwright.sync_api import Browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    require_browser()
    with launched() as chromium:
        yield chromium
