import os
from pathlib import Path

import pytest

from pytest_toolpolicy.limits import ENV as LIMITS_ENV
from pytest_toolpolicy.primitives import codeindex
from pytest_toolpolicy.primitives.codeindex import CodeIndex, index_source, module_path, read_text
from pytest_toolpolicy.primitives.envelope import PrimitiveError


def test_module_paths_follow_src_layout_and_packages():
    assert module_path("src/shop/cart.py") == "shop.cart"
    assert module_path("src/shop/__init__.py") == "shop"
    assert module_path("memstore.py") == "memstore"
    assert module_path("tests/test_cart.py") == "tests.test_cart"
    assert module_path("my-scripts/run.py") is None  # not importable, not indexed


def test_entities_kinds_selectors_and_spans(repo: Path):
    index = CodeIndex(repo)
    kinds = {e.selector: e.kind for e in index.entities()}
    assert kinds["shop.cart"] == "module"
    assert kinds["shop.cart.Cart"] == "class"
    assert kinds["shop.cart.Cart.total"] == "method"
    assert kinds["shop.cart.Cart.add.audit"] == "function"  # nested in a method
    assert kinds["shop.cart.helper"] == "function"
    assert kinds["shop.cart.conditional"] == "function"  # defined under `if`
    total = index.get("shop.cart.Cart.total")
    assert total.file == "src/shop/cart.py"
    assert (total.start, total.end) == (15, 21)  # decorator line included
    assert total.doc == "Sum of prices minus discount."
    assert index.get("shop.cart.Cart").doc == "A cart of priced items."


def test_signature_text_is_as_written_with_decorators(repo: Path):
    index = CodeIndex(repo)
    assert index.get("shop.cart.Cart.total").signature == (
        "@functools.lru_cache(maxsize=None)\ndef total(\n    self,\n    discount=0,\n):"
    )
    assert index.get("shop.cart.helper").signature == "def helper(x):"
    assert index.get("shop.cart.Cart").signature == "class Cart:"


def test_broken_file_stays_indexed_as_module_with_error(repo: Path):
    index = CodeIndex(repo)
    broken = index.get("shop.broken")
    assert broken.kind == "module"
    assert broken.error.startswith("SyntaxError") and "line 1" in broken.error
    assert [e.selector for e in index.by_file["src/shop/broken.py"]] == ["shop.broken"]


def test_non_utf8_and_binary_files_are_skipped(repo: Path):
    index = CodeIndex(repo)
    assert index.get("shop.latin1") is None
    assert index.get("shop.blob") is None
    assert index.get("shop.cart") is not None
    why = "refusing src/shop/blob.py: binary or not UTF-8 text"
    assert index.refused["src/shop/blob.py"] == why
    assert index.why_missing("shop.blob") == why


def test_reindex_touches_only_the_edited_file(repo: Path):
    index = CodeIndex(repo)
    before = {rel: list(ents) for rel, ents in index.by_file.items()}
    path = repo / "src/shop/cart.py"
    path.write_text(path.read_text() + "\n\ndef added():\n    return 1\n")
    index.reindex("src/shop/cart.py")
    assert index.get("shop.cart.added").start > 30
    assert index.version == 1
    for rel, ents in index.by_file.items():
        if rel != "src/shop/cart.py":
            assert all(a is b for a, b in zip(ents, before[rel], strict=True))
    path.unlink()
    index.reindex("src/shop/cart.py")
    assert index.get("shop.cart.Cart") is None


def test_one_liner_and_async_defs():
    src = "class A:\n    async def run(self): return 1\n    x = 1\n"
    ents = {e.selector: e for e in index_source(src, "m.py")}
    assert ents["m.A.run"].signature == "async def run(self):"
    assert ents["m.A.run"].kind == "method"


def test_no_link_is_followed_whether_it_points_inside_or_out(tmp_path: Path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.py").write_text("def secret():\n    pass\n")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "mod.py").symlink_to(outside / "secret.py")
    (root / "ok.py").write_text("def fine():\n    pass\n")
    (root / "alias.py").symlink_to(root / "ok.py")  # inside today, retargetable tomorrow
    (root / "hostpkg").symlink_to(outside)
    (root / "innerpkg").symlink_to(root)  # a loop, were links followed
    index = CodeIndex(root)
    assert sorted(index.by_file) == ["ok.py"]
    assert index.get("ok.fine") is not None
    assert index.get("mod.secret") is None and index.get("hostpkg.secret.secret") is None
    assert index.refused == {
        "alias.py": "refusing alias.py: it is a symbolic link",
        "hostpkg": "refusing hostpkg: it is a symbolic link",
        "innerpkg": "refusing innerpkg: it is a symbolic link",
        "mod.py": "refusing mod.py: it is a symbolic link",
    }
    assert index.why_missing("hostpkg.secret.secret") == "refusing hostpkg: it is a symbolic link"
    assert index.why_missing("ok.nope") is None  # its module is indexed: just an unknown name


def test_a_fifo_and_an_oversized_file_do_not_stall_or_break_indexing(tmp_path: Path, monkeypatch):
    monkeypatch.setenv(LIMITS_ENV, "read_mb=0.001")  # 1048 bytes
    (tmp_path / "ok.py").write_text("def fine():\n    pass\n")
    (tmp_path / "big.py").write_text("x = 1\n" * 200)
    os.mkfifo(tmp_path / "pipe.py")
    index = CodeIndex(tmp_path)  # a blocked open of pipe.py would hang here
    assert sorted(index.by_file) == ["ok.py"]
    assert index.refused == {
        "big.py": "refusing big.py: 1200 bytes, over the 1048-byte read limit",
        "pipe.py": "refusing pipe.py: not a regular file",
    }


def test_pathologically_nested_code_is_a_module_with_an_error():
    (module,) = index_source("x = " + "+".join(["a"] * 100_000) + "\n", "deep.py")
    assert module.selector == "deep" and module.error.startswith("RecursionError")


def test_refresh_reindexes_only_new_changed_and_removed_files(repo: Path):
    index = CodeIndex(repo)
    before = dict(index.by_file)
    assert index.refresh() == [] and index.version == 0
    cart = repo / "src/shop/cart.py"
    cart.write_text(cart.read_text() + "\n\ndef added():\n    return 1\n")
    (repo / "src/shop/new.py").write_text("def fresh():\n    pass\n")
    (repo / "tests/test_cart.py").unlink()
    (repo / "src/shop/__init__.py").touch()  # a new signature, the same content
    assert index.refresh() == ["src/shop/cart.py", "src/shop/new.py", "tests/test_cart.py"]
    assert index.version == 1
    assert index.get("shop.cart.added") is not None and index.get("shop.new.fresh") is not None
    assert index.get("tests.test_cart.test_add") is None
    assert index.why_missing("tests.test_cart.test_add") == "tests/test_cart.py no longer exists"
    assert index.by_file["src/shop/__init__.py"] is before["src/shop/__init__.py"]
    assert index.refresh() == [] and index.version == 1


def test_a_backdated_rewrite_is_still_seen(repo: Path, monkeypatch):
    """Same size, same inode, mtime set back (``touch -d``): ctime still moves."""
    monkeypatch.setattr(codeindex, "_RACY_NS", 0)  # only the signature can tell
    index = CodeIndex(repo)
    cart = repo / "src/shop/cart.py"
    info = cart.stat()
    with open(cart, "r+b") as handle:
        handle.write(b"#")  # the first byte: '"' becomes '#', the docstring a comment
    os.utime(cart, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert index.refresh() == ["src/shop/cart.py"]
    assert index.get("shop.cart").doc == ""


def test_a_racy_file_is_compared_by_content(repo: Path, monkeypatch):
    """A clock too coarse to tell two writes apart: the file written just before indexing is
    re-read and compared by digest on the next refresh."""
    coarse = lambda info: (info.st_size, info.st_ino, info.st_mode)  # noqa: E731
    monkeypatch.setattr(codeindex, "signature", coarse)
    index = CodeIndex(repo)
    with open(repo / "src/shop/cart.py", "r+b") as handle:
        handle.write(b"#")
    assert index.refresh() == ["src/shop/cart.py"]
    assert index.refresh() == []


def test_a_shadowed_module_takes_over_when_the_first_goes(tmp_path: Path):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text("def f():\n    return 1\n")
    (tmp_path / "src" / "pkg" / "m.py").write_text("def f():\n    return 2\n")
    index = CodeIndex(tmp_path)
    assert index.get("pkg.m.f").file == "pkg/m.py"  # first in the scan wins
    (tmp_path / "pkg" / "m.py").unlink()
    assert index.refresh() == ["pkg/m.py"]
    assert index.get("pkg.m.f").file == "src/pkg/m.py"


def test_sync_and_reindex_refuse_a_file_that_became_a_link(tmp_path: Path):
    (tmp_path / "outside.py").write_text("def secret():\n    pass\n")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "m.py").write_text("def f():\n    pass\n")
    index = CodeIndex(root)
    assert index.sync("m.py") is False  # unchanged: one lstat, nothing re-read
    (root / "m.py").unlink()
    (root / "m.py").symlink_to(tmp_path / "outside.py")
    assert index.sync("m.py") is True and index.get("m.f") is None and index.version == 1
    assert index.why_missing("m.f") == "refusing m.py: it is a symbolic link"
    index.reindex("m.py")
    assert index.get("m.secret") is None and "m.py" not in index.by_file
    with pytest.raises(PrimitiveError, match="refusing m.py: it is a symbolic link"):
        index.read_source("m.py")
    index.reindex("../outside.py")  # a path out of the workspace is never read
    assert index.get("outside.secret") is None


def test_read_text_follows_no_link(tmp_path: Path):
    (tmp_path / "real.py").write_text("x = 1\n")
    (tmp_path / "link.py").symlink_to(tmp_path / "real.py")
    (tmp_path / "dir").symlink_to(tmp_path)
    assert read_text(tmp_path.resolve() / "real.py") == "x = 1\n"
    assert read_text(tmp_path.resolve() / "link.py") is None
    assert read_text(tmp_path.resolve() / "dir" / "real.py") is None


def test_a_files_own_warnings_are_not_the_harness_users(recwarn: pytest.WarningsRecorder) -> None:
    """An old repository's invalid escapes warned in the A/B's own summary, once per file."""
    from pytest_toolpolicy.primitives.codeindex import index_source
    from pytest_toolpolicy.primitives.lint import compile_errors

    source = 'def f():\n    return "\\*"\n'
    assert [e.selector for e in index_source(source, "m.py")] == ["m", "m.f"]
    assert compile_errors(source, "m.py") == []
    assert not [w for w in recwarn.list if "escape" in str(w.message)]
