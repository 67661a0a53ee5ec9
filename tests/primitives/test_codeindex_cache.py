"""The code index's parse cache: a second checkout of the same files parses none of them, a
changed file is parsed again, and nothing stored is trusted unchecked."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from pytest_toolpolicy.primitives import codeindex
from pytest_toolpolicy.primitives.codeindex import CodeIndex
from pytest_toolpolicy.primitives.parsecache import ParseCache


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths ``index_source`` parses, in order."""
    calls: list[str] = []
    real = codeindex.index_source

    def spy(source: str, rel: str):
        calls.append(rel)
        return real(source, rel)

    monkeypatch.setattr(codeindex, "index_source", spy)
    return calls


def _records(index: CodeIndex) -> dict[str, list[dict]]:
    return {rel: [e.record() for e in ents] for rel, ents in sorted(index.by_file.items())}


def test_a_second_checkout_of_the_same_files_parses_none(
    repo: Path, tmp_path: Path, parsed: list[str]
) -> None:
    first = CodeIndex(repo)
    assert sorted(parsed) == sorted(first.by_file)
    parsed.clear()
    again = CodeIndex(repo)
    assert parsed == [] and _records(again) == _records(first)
    assert again.refused == first.refused
    # Another directory with the same files: the key is the content and the path inside it.
    copy = tmp_path / "copy"
    for rel in first.by_file:
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).write_bytes((repo / rel).read_bytes())
    assert _records(CodeIndex(copy)) == _records(first) and parsed == []


def test_a_changed_file_is_parsed_again_and_the_same_bytes_elsewhere_are_another_module(
    repo: Path, parsed: list[str]
) -> None:
    CodeIndex(repo)
    cart = repo / "src/shop/cart.py"
    cart.write_text(cart.read_text() + "\n\ndef added():\n    return 1\n")
    moved = repo / "src/shop/cart_copy.py"
    moved.write_bytes(cart.read_bytes())
    parsed.clear()
    index = CodeIndex(repo)
    assert sorted(parsed) == ["src/shop/cart.py", "src/shop/cart_copy.py"]
    assert index.get("shop.cart.added") and index.get("shop.cart_copy.added")


def test_only_the_first_scan_stores(repo: Path, parsed: list[str]) -> None:
    """What a run writes later is parsed, never stored: a model cannot grow the cache."""
    index = CodeIndex(repo)
    (repo / "src/shop/later.py").write_text("def later():\n    pass\n")
    index.refresh()
    assert index.get("shop.later.later")
    parsed.clear()
    CodeIndex(repo)
    assert parsed == ["src/shop/later.py"]


def test_a_row_that_does_not_describe_the_file_is_ignored(
    repo: Path, cache: Path, parsed: list[str]
) -> None:
    first = _records(CodeIndex(repo))
    rel = "src/shop/cart.py"
    db = cache / "code-index.sqlite3"
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT key, vec FROM entities").fetchall()
        assert len(rows) == len(first)  # one row per file the first scan parsed
        bad = {
            "not json": b"\x80(",
            "empty": b"[]",
            "no module first": json.dumps([["shop.cart.x", "function", "x", "", "", 1, 1, None]]),
            "other module": json.dumps([["evil", "module", "evil", "", "", 1, 1, None]]),
            "span past the end": json.dumps([["shop.cart", "module", "cart", "", "", 1, 10**6, None]]),
            "not a selector": json.dumps([["shop.cart", "module", "cart", "", "", 1, 1, None],
                                          ["shop.cart.a b", "function", "a b", "", "", 1, 1, None]]),
            "wrong kind": json.dumps([["shop.cart", "module", "cart", "", "", 1, 1, None],
                                      ["shop.cart.x", "lambda", "x", "", "", 1, 1, None]]),
            "bool line": json.dumps([["shop.cart", "module", "cart", "", "", True, 1, None]]),
        }  # fmt: skip
        for name, value in bad.items():
            data = value.encode() if isinstance(value, str) else value
            conn.execute("UPDATE entities SET vec = ?", (data,))
            conn.commit()
            parsed.clear()
            assert _records(CodeIndex(repo)) == first, name
            assert rel in parsed, name  # parsed, the stored row not taken


def test_a_broken_cache_warns_and_indexing_goes_on(repo: Path, tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-dir"
    blocked.write_text("")
    with pytest.warns(RuntimeWarning, match="code index cache .* disabled"):
        index = CodeIndex(repo, cache=ParseCache(blocked / "code-index.sqlite3"))
    assert index.get("shop.cart.Cart.total")
    assert _records(CodeIndex(repo, cache=False)) == _records(index)
