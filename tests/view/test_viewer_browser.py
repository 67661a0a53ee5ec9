"""The viewer in headless chromium, on real reports: it loads clean, its links and filters work,
an instance page shows both arms turn by turn, and a reply that is markup stays text."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import pandas as pd
import pytest

from pytest_toolpolicy.view import build_site
from pytest_toolpolicy.view.pages import page_name

from .conftest import BrowserPage
from .made import HOSTILE, hostile_report, sim_report


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_site(sim_report(tmp_path_factory), tmp_path_factory.mktemp("site")).index.parent


def _count(page: BrowserPage) -> tuple[int, int]:
    text = page.page.text_content("#items-count") or ""
    match = re.fullmatch(r"(\d+) of (\d+) items", text)
    assert match, text
    return int(match[1]), int(match[2])


def test_the_index_loads_without_errors_and_shows_the_decision(
    site: Path, page: BrowserPage
) -> None:
    page.page.goto((site / "index.html").as_uri())
    assert page.page.locator("table").first.is_visible()
    assert "sim is a fault-injecting simulator" in (page.page.text_content("body") or "")
    assert page.page.locator("svg").count() >= 6  # the measures per arm, then the deltas
    assert page.errors == []


def test_a_table_cell_links_to_the_items_behind_it(site: Path, page: BrowserPage) -> None:
    page.page.goto((site / "index.html").as_uri())
    cell = (
        page.page.locator("table").first.locator("tr", has_text="policy").first.locator("td").nth(1)
    )
    with page.page.expect_navigation():
        cell.locator("a").click()
    assert "variant=policy" in page.page.url and "resolved=yes" in page.page.url
    shown, total = _count(page)
    rows = page.page.locator("#items-body tr")
    assert rows.count() == shown and total == 8
    for n in range(shown):
        cells = rows.nth(n).locator("td")
        assert cells.nth(1).text_content() == "policy" and cells.nth(5).text_content() == "yes"
    assert page.errors == []


def test_a_filter_changes_what_is_listed(site: Path, page: BrowserPage) -> None:
    page.page.goto((site / "items.html").as_uri())
    assert _count(page) == (8, 8)
    page.page.select_option("#filter-variant", "current")
    assert _count(page) == (2, 8)
    assert "variant=current" in page.page.url  # the filter is in the address, to link or reload
    page.page.select_option("#filter-variant", "")
    assert _count(page) == (8, 8)
    assert page.errors == []


def test_an_instance_page_shows_both_arms_turns_and_the_diff(site: Path, page: BrowserPage) -> None:
    instance = sorted((site / "i").iterdir())[0]
    page.page.goto(instance.as_uri())
    left, right = page.page.locator("#col-left"), page.page.locator("#col-right")
    assert re.search(r"-current$", left.locator("h3").text_content() or "")
    assert re.search(r"-policy$", right.locator("h3").text_content() or "")
    for column in (left, right):
        assert column.locator(".turn").count() >= 1
        assert column.locator("h4", has_text="final diff").count() == 1
        assert column.locator("h4", has_text="grade").count() == 1
    # Another item for the right column, from the picker: the address follows.
    options = page.page.locator("#pick-right option").all_text_contents()
    ablation = next(o for o in options if "policy-no:trigger.test" in o)
    page.page.select_option("#pick-right", ablation)
    assert (right.locator("h3").text_content() or "").endswith("policy-no:trigger.test")
    assert "right=" in page.page.url
    assert page.errors == []


def test_an_item_link_opens_its_instance_with_the_item_shown(site: Path, page: BrowserPage) -> None:
    page.page.goto((site / "items.html").as_uri() + "#variant=cand%3Aissue-first")
    link = page.page.locator("#items-body a").first
    item = link.text_content() or ""
    with page.page.expect_navigation():
        link.click()
    assert page.page.locator("#col-right h3").text_content() == item
    assert (page.page.locator("#col-left h3").text_content() or "").endswith("-current")
    assert page.errors == []


def test_a_reply_that_is_markup_is_shown_as_text(
    tmp_path_factory: pytest.TempPathFactory, page: BrowserPage
) -> None:
    report = hostile_report(tmp_path_factory)
    site = build_site(report, tmp_path_factory.mktemp("hostile-site")).index.parent
    results = pd.read_parquet(report / "results.parquet")
    instance = str(results["instance_id"].iloc[0])
    page.page.goto((site / "i" / page_name(instance)).as_uri() + "#" + quote(f"{instance}-current"))
    replies = page.page.locator("#col-left pre", has_text="window.__pwned")
    assert replies.count() >= 1
    assert HOSTILE.split("<img")[0] in (replies.first.text_content() or "")
    assert page.page.evaluate("window.__pwned") is None
    assert page.page.locator("#col-left b", has_text="bold?").count() == 0  # not made bold
    assert page.page.locator("img").count() == 0
    assert page.errors == []
