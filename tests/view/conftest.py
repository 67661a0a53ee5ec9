"""Browser fixtures for the report viewer's end-to-end tests: Debian's chromium (`make setup`
installs it, or TOOLPOLICY_CHROMIUM names another), driven by Playwright's sync API, never a
browser Playwright downloads. Without a chromium the tests fail, saying so: a browser test that
skips is a check that cannot fail.

A test takes ``page``, opens a file and asserts on what the page reported::

    def test_the_viewer_loads(page: BrowserPage, tmp_path: Path) -> None:
        page.page.goto((tmp_path / "index.html").as_uri())
        assert page.errors == []

Playwright's sync API refuses to run inside a running asyncio loop (xdist workers are fine).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Browser, ConsoleMessage, Error, Page

CHROMIUM_ENV = "TOOLPOLICY_CHROMIUM"
MISSING = f"chromium not found: run `make setup` (installs Debian's chromium) or set {CHROMIUM_ENV}"
# Playwright's default is 30 s an action; a static page that takes longer has failed.
TIMEOUT_MS = 10_000


def chromium_path() -> str | None:
    """The chromium to drive: TOOLPOLICY_CHROMIUM (a path or a command name), else `chromium` or
    `chromium-browser` on PATH; None where there is none."""
    configured = os.environ.get(CHROMIUM_ENV)
    if configured:
        return shutil.which(configured)
    return shutil.which("chromium") or shutil.which("chromium-browser")


@dataclass
class BrowserPage:
    """A fresh page and, as they happen, what it reported wrong: each console.error message
    (``console.error: <text>``, a resource that failed to load among them) and each uncaught
    exception (``pageerror: <name>: <message>``)."""

    page: Page
    errors: list[str] = field(default_factory=list)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.errors.append(f"console.error: {message.text}")

    def _pageerror(self, error: Error) -> None:
        self.errors.append(f"pageerror: {error.name}: {error.message}")


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Headless chromium, one per session (per xdist worker)."""
    executable = chromium_path()
    if executable is None:
        configured = os.environ.get(CHROMIUM_ENV)
        detail = f" ({CHROMIUM_ENV}={configured!r} is no executable)" if configured else ""
        pytest.fail(MISSING + detail, pytrace=False)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as exc:
        pytest.fail(f"playwright is not installed ({exc}): pip install -e '.[dev]'", pytrace=False)
    playwright = sync_playwright().start()
    try:
        # As root chromium refuses to start sandboxed: --no-sandbox (Playwright adds it too).
        launched = playwright.chromium.launch(
            executable_path=executable, headless=True, args=["--no-sandbox"]
        )
        try:
            yield launched
        finally:
            launched.close()
    finally:
        playwright.stop()


@pytest.fixture
def page(browser: Browser) -> Iterator[BrowserPage]:
    """A page in a context of its own (no storage shared between tests), closed after the
    test; its console errors and uncaught exceptions are collected in ``.errors``."""
    context = browser.new_context()
    try:
        context.set_default_timeout(TIMEOUT_MS)
        opened = BrowserPage(context.new_page())
        opened.page.on("console", opened._console)
        opened.page.on("pageerror", opened._pageerror)
        yield opened
    finally:
        context.close()
