"""The site built from a real A/B report: every page there, nothing stale, nothing followed."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from pytest_toolpolicy.view import ReportError, SiteError, build_site
from pytest_toolpolicy.view.pages import page_name

from .made import sim_report


@pytest.fixture(scope="session")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return sim_report(tmp_path_factory)


def _copy(report: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "report"
    shutil.copytree(
        report, copy, ignore=shutil.ignore_patterns("view", "memo.sqlite*", "session.lock")
    )
    return copy


def test_every_instance_and_item_has_its_page(report: Path, tmp_path: Path) -> None:
    site = build_site(report, tmp_path / "site")
    results = pd.read_parquet(report / "results.parquet")
    assert (
        len(results) == 8
    )  # 2 instances x current, policy, cand:issue-first, policy-no:trigger.test
    pages = sorted(p.name for p in (tmp_path / "site" / "i").iterdir())
    assert pages == sorted(page_name(i) for i in results["instance_id"].unique())
    assert site.pages == 5 + len(pages) and site.bytes > 0 and site.notes == []
    for instance_id, group in results.groupby("instance_id"):
        markup = (tmp_path / "site" / "i" / page_name(str(instance_id))).read_text(encoding="utf-8")
        for item in group["item"]:
            assert f'data-item="{item}"' in markup
        assert "FAIL_TO_PASS:" in markup  # the instance lists came with the report
    items = (tmp_path / "site" / "items.html").read_text(encoding="utf-8")
    assert all(f'"item": "{i}"' in items for i in results["item"])


def test_the_session_built_the_site_and_its_summary_ends_with_the_index(report: Path) -> None:
    assert (report / "view" / "index.html").is_file()
    assert (report / "instances.jsonl").is_file()
    lines = (report.parent / "stdout.txt").read_text(encoding="utf-8").splitlines()
    last = lines[-2]  # before pytest's own "8 passed in ..."
    # 7 files: the stylesheet, 2 scripts, the index, the item list, 2 instance pages
    assert last.startswith(f"toolpolicy viewer: {report / 'view' / 'index.html'} (7 pages, "), last


def test_a_rebuild_removes_pages_of_instances_gone(report: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    (out / "i").mkdir(parents=True)
    (out / "i" / "old-instance-0000.html").write_text("stale", encoding="utf-8")
    build_site(report, out)
    assert not (out / "i" / "old-instance-0000.html").exists()


def test_a_link_planted_as_the_site_directory_is_not_followed(report: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "site").symlink_to(elsewhere)
    with pytest.raises(SiteError, match="symbolic link"):
        build_site(report, tmp_path / "site")
    assert list(elsewhere.iterdir()) == []


def test_a_secret_in_a_trajectory_never_reaches_a_page(report: Path, tmp_path: Path) -> None:
    copy = _copy(report, tmp_path)
    secret = "sk-live-" + "Q" * 40
    path = copy / "trajectories.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["turns"][0]["completion"]["text"] += f" OPENAI_API_KEY={secret} other=custom-token-value"
    lines[0] = json.dumps(first)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    build_site(copy, environ={"CUSTOM_TOKEN": "custom-token-value"})
    text = "".join(p.read_text(encoding="utf-8") for p in (copy / "view").rglob("*.html"))
    assert "OPENAI_API_KEY=[redacted]" in text and "other=[redacted]" in text
    assert secret not in text and "custom-token-value" not in text


def test_a_report_without_trajectories_still_lists_its_items(report: Path, tmp_path: Path) -> None:
    copy = _copy(report, tmp_path)
    os.unlink(copy / "trajectories.jsonl")
    site = build_site(copy)
    assert "no trajectory was recorded" in next((copy / "view" / "i").iterdir()).read_text(
        encoding="utf-8"
    )
    assert site.index.is_file()


def test_a_directory_that_is_no_report_is_named(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="holds no results.parquet"):
        build_site(tmp_path)
