"""Finding and launching Debian's Chromium under Playwright, and where screenshots go."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

REQUIRED = os.environ.get("MNEMOGATE_TEST_BROWSER", "").lower() == "required"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
FLAGS = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-quic",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}


def chromium_path() -> str | None:
    """Debian's Chromium, or a browser named by ``MNEMOGATE_TEST_CHROMIUM``."""
    named = os.environ.get("MNEMOGATE_TEST_CHROMIUM")
    if named:
        return named if Path(named).exists() else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


def unavailable_reason() -> str | None:
    if chromium_path() is None:
        return "Chromium is not installed (apt-get install chromium; .ci/run does it)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (make test installs the test extras)"
    return None


def require_browser() -> None:
    """Skip (or, when required, fail) the calling test without a browser to drive."""
    reason = unavailable_reason()
    if reason is None:
        return
    if REQUIRED:
        pytest.fail(f"{reason}; MNEMOGATE_TEST_BROWSER=required, so this is a failure, not a skip")
    pytest.skip(f"{reason} (or set MNEMOGATE_TEST_BROWSER=required to fail)")


@contextmanager
def launched() -> Iterator[Browser]:
    """One headless Chromium for the duration of the block."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    assert path is not None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, headless=True, args=list(FLAGS))
        try:
            yield browser
        finally:
            browser.close()


def screenshot(page: Page, name: str) -> Path:
    """Save a full-page screenshot as ``test-artifacts/<name>.png`` (for people, never asserted on)."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
