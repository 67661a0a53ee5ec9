import stat

import pytest

from pytest_toolpolicy.primitives import Toolbox, lint, safefs
from pytest_toolpolicy.primitives.envelope import HarnessFault

CART = "src/shop/cart.py"


def edit(box: Toolbox, selector: str, search: str, replace: str) -> dict:
    return box.call("edit_entity", {"selector": selector, "search": search, "replace": replace})


def test_committed_edit_returns_lint_and_diff(box: Toolbox):
    before = (box.root / CART).read_text()
    env = edit(box, "shop.cart.Cart.total", "- discount", "- 2 * discount")
    assert env["ok"], env
    data = env["data"]
    assert data["committed"] and data["matches"] == 1 and data["file"] == CART
    assert data["lint"] == {"clean": True, "errors": []}
    assert "-        return sum(p for _, p in self.items) - discount" in data["diff"]
    assert "+        return sum(p for _, p in self.items) - 2 * discount" in data["diff"]
    after = (box.root / CART).read_text()
    assert after == before.replace("- discount", "- 2 * discount")


def test_edit_is_scoped_to_the_entity_span(box: Toolbox):
    # `self.items` occurs in several methods, but exactly once inside __init__.
    env = edit(box, "shop.cart.Cart.__init__", "self.items", "self.items: list")
    assert env["ok"], env
    assert "self.items.append" in (box.root / CART).read_text()  # other methods untouched


def test_not_found_and_repeated_are_specific(box: Toolbox):
    before = (box.root / CART).read_text()
    missing = edit(box, "shop.cart.helper", "x * 3", "x")
    assert missing["error"] == "search string not found in shop.cart.helper (lines 32-32)"
    repeated = edit(box, "shop.cart.Cart.add", "self.items", "self.things")
    assert repeated["error"] == (
        "search string matched 2 times in shop.cart.Cart.add (lines 23-29); "
        "it must match exactly once"
    )
    assert (box.root / CART).read_text() == before


def test_edit_that_breaks_syntax_is_refused_and_file_unchanged(box: Toolbox):
    before = (box.root / CART).read_text()
    env = edit(box, "shop.cart.helper", "return x * 2", "return x *")
    assert not env["ok"]
    assert env["error"].startswith("lint gate refused the edit to shop.cart.helper: it adds")
    assert env["data"]["committed"] is False
    assert (box.root / CART).read_text() == before


def test_edit_that_adds_an_undefined_name_is_refused(box: Toolbox):
    env = edit(box, "shop.cart.helper", "return x * 2", "return y * 2")
    assert not env["ok"] and "F821" in env["error"] and "Undefined name `y`" in env["error"]


def test_existing_errors_do_not_block(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    (root / "m.py").write_text("import os\n\n\ndef f():\n    return missing_name + 1\n")
    box = Toolbox(root)
    env = edit(box, "m.f", "+ 1", "+ 2")
    assert env["ok"], env
    codes = sorted(e["code"] for e in env["data"]["lint"]["errors"])
    assert codes == ["F401", "F821"] and env["data"]["lint"]["clean"] is False


def test_index_is_refreshed_after_an_edit(box: Toolbox):
    assert box.index.get("shop.cart.conditional").start == 36
    new = "def helper(x, y=1):\n    return x * y"
    env = edit(box, "shop.cart.helper", "def helper(x): return x * 2", new)
    assert env["ok"], env
    assert box.index.get("shop.cart.helper").signature == "def helper(x, y=1):"
    entity = box.call("read_entity", {"selector": "shop.cart.conditional"})["data"]["entity"]
    assert entity["start"] == 37  # the added line moved it


def test_unknown_and_invalid_selectors(box: Toolbox):
    assert edit(box, "shop.cart.nope", "a", "b")["error"] == "unknown selector shop.cart.nope"
    assert edit(box, "../../etc/passwd", "a", "b")["error"].startswith("invalid selector")
    assert edit(box, "shop.cart.helper", "", "b")["error"] == "empty search string"


def test_symlinked_file_out_of_the_workspace_is_not_written(tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("def f():\n    return 1\n")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "inner.py").write_text("def g():\n    return 1\n")
    box = Toolbox(root)
    (root / "inner.py").unlink()
    (root / "inner.py").symlink_to(outside)  # swapped after indexing
    env = edit(box, "inner.g", "return 1", "return 2")
    assert env == {
        "ok": False,
        "error": "inner.g is unavailable: refusing inner.py: it is a symbolic link",
        "data": None,
    }
    assert outside.read_text() == "def f():\n    return 1\n"
    assert (root / "inner.py").is_symlink()  # nothing was written over the link either


def test_edit_keeps_the_mode_and_the_newlines(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    path = root / "m.py"
    path.write_bytes(b"def f():\r\n    return 1\r\n\r\n\r\ndef g():\n    return 2\n")
    path.chmod(0o751)
    env = edit(Toolbox(root), "m.f", "return 1", "return 3")
    assert env["ok"], env
    assert path.read_bytes() == b"def f():\r\n    return 3\r\n\r\n\r\ndef g():\n    return 2\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert sorted(p.name for p in root.iterdir()) == ["m.py"]  # no temporary file left


def test_a_lint_gate_that_cannot_run_is_a_harness_fault(box: Toolbox, monkeypatch):
    monkeypatch.setattr(lint, "_ruff_bin", lambda: None)
    before = (box.root / CART).read_text()
    with pytest.raises(HarnessFault, match="^edit_entity failed: RuntimeError: ruff is not inst"):
        edit(box, "shop.cart.helper", "x * 2", "x * 3")
    assert (box.root / CART).read_text() == before


def test_a_full_host_disk_is_a_harness_fault(tmp_path, monkeypatch):
    (tmp_path / "mod.py").write_text("def f():\n    return 1\n")
    box = Toolbox(tmp_path)

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(safefs, "write_text", full)
    with pytest.raises(HarnessFault, match="No space left"):
        box.call("edit_entity", {"selector": "mod.f", "search": "1", "replace": "2"})


def test_overlapping_matches_count_as_several(tmp_path):
    """``str.count`` sees "aa" once in "aaa"; replace would then edit the first of two places,
    maybe not the one meant. The search must name one place."""
    root = tmp_path / "r"
    root.mkdir()
    (root / "m.py").write_text("def f():\n    x = 'aaa'\n    return x\n")
    box = Toolbox(root)
    env = edit(box, "m.f", "aa", "b")
    assert env["error"] == (
        "search string matched 2 times in m.f (lines 1-3); it must match exactly once"
    )
    assert (root / "m.py").read_text() == "def f():\n    x = 'aaa'\n    return x\n"
