"""The browser fixtures themselves: a page reports its console errors and uncaught exceptions,
and nothing else."""

from pathlib import Path

from .conftest import BrowserPage

# Logs whatever happens; reports an error only where the URL's fragment asks for one.
HTML = """<!doctype html>
<html><body><p id="out">loading</p>
<script>
console.log("viewer starting");
console.warn("a warning is no error");
if (location.hash === "#console") console.error("deliberate console error");
if (location.hash === "#throw") throw new TypeError("deliberate exception");
document.getElementById("out").textContent = "loaded";
</script>
</body></html>
"""


def _site(tmp_path: Path) -> str:
    index = tmp_path / "index.html"
    index.write_text(HTML, encoding="utf-8")
    return index.as_uri()


def test_a_clean_page_reports_no_errors(page: BrowserPage, tmp_path: Path) -> None:
    page.page.goto(_site(tmp_path))
    assert page.page.text_content("#out") == "loaded"
    assert page.errors == []


def test_a_console_error_is_caught(page: BrowserPage, tmp_path: Path) -> None:
    page.page.goto(_site(tmp_path) + "#console")
    assert page.page.text_content("#out") == "loaded"
    assert page.errors == ["console.error: deliberate console error"]


def test_an_uncaught_exception_is_caught(page: BrowserPage, tmp_path: Path) -> None:
    page.page.goto(_site(tmp_path) + "#throw")
    assert page.page.text_content("#out") == "loading"
    assert page.errors == ["pageerror: TypeError: deliberate exception"]
