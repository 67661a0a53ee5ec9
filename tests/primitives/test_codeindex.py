from pathlib import Path

from pytest_toolpolicy.primitives.codeindex import CodeIndex, index_source, module_path


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


def test_links_out_of_the_workspace_are_not_indexed(tmp_path: Path):
    outside = tmp_path / "outside.py"
    outside.write_text("def secret():\n    pass\n")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "mod.py").symlink_to(outside)
    (root / "ok.py").write_text("def fine():\n    pass\n")
    index = CodeIndex(root)
    assert index.get("ok.fine") is not None
    assert index.get("mod.secret") is None
