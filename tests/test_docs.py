"""The documentation a user finds: a README short enough to read in five minutes, whose links work
on any clone (and on GitHub), and docs that point at nothing outside the repository.

The site itself is built by `make docs` (`mkdocs build --strict`, part of `make test`), which
fails on a link to a missing page or anchor; these checks cover what that build does not read:
the README, which is also the package's PyPI page.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
README_MAX_LINES = 250
# Paths outside the repository that a user's clone, GitHub and PyPI do not have.
OUTSIDE = ("../shared", "/work/shared")

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.MULTILINE)
EXTERNAL = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//|#)", re.IGNORECASE)


def link_targets(markdown: str) -> list[str]:
    """The targets of the Markdown links and images in the text, code left out."""
    prose = CODE_SPAN.sub("", FENCE.sub("", markdown))
    return INLINE_LINK.findall(prose) + REFERENCE_LINK.findall(prose)


def relative_targets(markdown: str) -> list[str]:
    """The link targets that name a file of the repository (no scheme, not an anchor alone)."""
    return [target for target in link_targets(markdown) if not EXTERNAL.match(target)]


def resolves(target: str, page: Path) -> bool:
    """Whether a relative link from page names a file or directory inside the repository."""
    path = unquote(target.split("#", 1)[0].split("?", 1)[0])
    resolved = (page.parent / path).resolve()
    return resolved.is_relative_to(ROOT) and resolved.exists()


def user_facing_files() -> list[Path]:
    return [
        README,
        ROOT / "mkdocs.yml",
        *sorted(p for p in (ROOT / "docs").rglob("*") if p.is_file()),
    ]


def test_readme_is_short() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_readme_keeps_the_quick_start() -> None:
    text = README.read_text(encoding="utf-8")
    assert "## Quick start\n\n```\nmake eval\nmake test\n```" in text


def test_readme_links_resolve_in_the_repository() -> None:
    targets = relative_targets(README.read_text(encoding="utf-8"))
    assert any(t.startswith("docs/") for t in targets), "the README links into docs/"
    broken = [t for t in targets if not resolves(t, README)]
    assert broken == []


@pytest.mark.parametrize("path", user_facing_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_points_outside_the_repository(path: Path) -> None:
    data = path.read_bytes()
    assert [name for name in OUTSIDE if name.encode() in data] == []


def test_docs_and_mkdocs_config_exist() -> None:
    assert (ROOT / "mkdocs.yml").is_file()
    assert (ROOT / "docs" / "index.md").is_file()


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("[a](docs/a.md) and ![b](docs/b.png)", ["docs/a.md", "docs/b.png"]),
        ("[a](https://example.org) [b](#anchor) [c](mailto:x@y)", []),
        ("[a](docs/a.md#part) [b]: docs/b.md", ["docs/a.md#part"]),
        ("[ref]: docs/ref.md\n", ["docs/ref.md"]),
        ("`[a](code.md)`\n```\n[b](fenced.md)\n```\n", []),
    ],
)
def test_relative_targets_reads_links_and_skips_code(markdown: str, expected: list[str]) -> None:
    assert relative_targets(markdown) == expected


def test_a_missing_file_does_not_resolve() -> None:
    assert resolves("docs/index.md", README)
    assert not resolves("docs/no-such-page.md", README)
    assert not resolves("../shared/DESIGN.md", README)
