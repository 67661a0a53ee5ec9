"""Gold labels derived from an instance's issue text and gold patch (gold_labels/FORMAT.md)."""

from __future__ import annotations

import pytest

from pytest_toolpolicy.bench.gold import GoldLabel, label_from
from pytest_toolpolicy.bench.gold_derive import derive
from pytest_toolpolicy.bench.issue_pointers import pointers
from pytest_toolpolicy.bench.patch_entities import module_of, patch_entities

METHOD_BODY = """\
diff --git a/src/shop/cart.py b/src/shop/cart.py
index 1111111..2222222 100644
--- a/src/shop/cart.py
+++ b/src/shop/cart.py
@@ -40,7 +40,7 @@ class Cart:
         if not self.items:
             return 0
         subtotal = sum(i.price for i in self.items)
-        return subtotal - self.discount
+        return max(subtotal - self.discount, 0)

     def clear(self):
         self.items = []
"""

TWO_FUNCTIONS = """\
diff --git a/shop/tax.py b/shop/tax.py
--- a/shop/tax.py
+++ b/shop/tax.py
@@ -3,7 +3,7 @@
 from decimal import ROUND_HALF_UP, Decimal
-from decimal import Decimal
+from decimal import Decimal, localcontext

 RATE = Decimal("0.2")
@@ -20,6 +20,7 @@ def gross(net):

 def rounded(value):
     \"\"\"Round to cents.\"\"\"
+    value = Decimal(value)
     return value.quantize(Decimal("0.01"))
"""

TRACEBACK = """\
Checkout crashes on an empty cart with a discount

```
Traceback (most recent call last):
  File "/srv/app/checkout.py", line 9, in <module>
    cart.total()
  File "/srv/venv/lib/python3.11/site-packages/shop/cart.py", line 43, in total
    return subtotal - self.discount
shop.errors.NegativeTotal: -5
```
"""


def decisions(label: GoldLabel | None) -> list[set[str]]:
    assert label is not None
    return [set(d) for d in label.decisions]


def test_a_method_body_below_its_hunk_is_an_unnamed_member_of_the_class() -> None:
    edits = patch_entities(METHOD_BODY)
    assert [e.name for e in edits.edited] == ["shop.cart.Cart.?"]
    assert edits.classes == {"Cart"} and edits.packages == {"shop"}
    assert [(h.module, h.start, h.length) for h in edits.hunks] == [("shop.cart", 40, 7)]


def test_def_lines_inside_the_hunk_and_top_level_headers_name_the_entity_exactly() -> None:
    edits = patch_entities(TWO_FUNCTIONS)
    # The import change is module level; the second hunk's change sits in ``rounded``,
    # whose def the hunk shows (its header names the function above it).
    assert [e.name for e in edits.edited] == ["shop.tax", "shop.tax.rounded"]
    header_only = """\
--- a/shop/tax.py
+++ b/shop/tax.py
@@ -22,4 +22,5 @@ def rounded(value):
     \"\"\"Round to cents.\"\"\"
+    value = Decimal(value)
     return value.quantize(Decimal("0.01"))
"""
    assert [e.name for e in patch_entities(header_only).edited] == ["shop.tax.rounded"]


def test_a_class_body_statement_is_the_class_and_a_new_method_is_its_own_entity() -> None:
    patch = """\
--- a/shop/item.py
+++ b/shop/item.py
@@ -10,6 +10,10 @@ class Item:
     name: str
     price: int
+    weight: int = 0
+
+    def heavy(self) -> bool:
+        return self.weight > 10
"""
    assert [e.name for e in patch_entities(patch).edited] == [
        "shop.item.Item", "shop.item.Item.heavy",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("path", "module"),
    [("src/pkg/a.py", "pkg.a"), ("pkg/__init__.py", "pkg"), ("lib/x/y/z.py", "x.y.z")],
)
def test_module_of(path: str, module: str) -> None:
    assert module_of(path) == module


def test_tests_and_non_python_files_are_not_edited_entities() -> None:
    patch = "".join(
        f"--- a/{p}\n+++ b/{p}\n@@ -1,1 +1,1 @@\n-a = 1\n+a = 2\n"
        for p in ("tests/test_cart.py", "shop/conftest.py", "docs/index.rst", "shop/cart_test.py")
    )
    assert patch_entities(patch).edited == ()
    new_file = "--- /dev/null\n+++ b/shop/new.py\n@@ -0,0 +1,2 @@\n+def f():\n+    return 1\n"
    assert [e.name for e in patch_entities(new_file).edited] == ["shop.new.f"]


def test_issue_prose_leaves_out_code_blocks_imports_and_tracebacks() -> None:
    text = """\
`shop.cart.Cart.total` is wrong after `apply_discount(...)`, see shop.tax too.

```python
from shop.cart import Cart
print(shop.other.thing)
```

    indented.code.block

>>> import shop.session
Traceback (most recent call last):
  File "shop/cart.py", line 3, in total
shop.errors.Boom: no

e.g. the price.total gets negative; call rounded() later
"""
    found = pointers(text)
    assert found.dotted == ("shop.cart.Cart.total", "shop.tax", "e.g", "price.total")
    assert {"apply_discount", "rounded", "Cart", "total"} <= found.words
    assert "price" not in found.words and "negative" not in found.words
    assert [(f.path, f.line, f.function) for f in found.frames] == [("shop/cart.py", 3, "total")]


def test_pytest_frames_are_read_too() -> None:
    found = pointers("shop/cart.py:43: in total\n    return x\nE   ValueError\n")
    assert [(f.path, f.line, f.function) for f in found.frames] == [("shop/cart.py", 43, "total")]


def test_naming_the_edited_entity_by_its_dotted_path_reads_then_edits() -> None:
    d = derive("x-1", "`shop.cart.Cart.total` goes negative with a big discount", METHOD_BODY)
    assert decisions(d.label) == [
        {"search_symbol", "read_entity"},
        {"read_entity", "edit_entity"},
        {"edit_entity", "run_test"},
    ]
    assert d.label is not None and d.label.outcome == "stop"
    assert d.reason == "derived: names shop.cart.Cart.total; the one entity edited"


def test_naming_another_entity_by_its_dotted_path_follows_it_to_the_fix() -> None:
    d = derive("x-1", "shop.checkout.pay charges a negative amount", METHOD_BODY)
    assert decisions(d.label) == [
        {"search_symbol", "read_entity"},
        {"read_entity"},
        {"read_entity", "search_symbol", "edit_entity"},
    ]


def test_a_traceback_into_the_edited_hunk_points_at_the_one_entity() -> None:
    d = derive("x-1", TRACEBACK, METHOD_BODY)
    assert decisions(d.label) == [
        {"read_entity", "search_symbol", "search_code"},
        {"read_entity", "edit_entity"},
        {"edit_entity", "run_test"},
    ]
    # The exception line's dotted name is part of the traceback, not a name the reporter wrote.
    assert d.reason.startswith("derived: traceback through total")


def test_a_traceback_away_from_the_edit_locates_but_does_not_point() -> None:
    d = derive("x-1", TRACEBACK.replace("line 43", "line 12"), METHOD_BODY)
    assert decisions(d.label) == [
        {"read_entity", "search_symbol", "search_code"},
        {"read_entity"},
        {"read_entity", "edit_entity"},
    ]


def test_a_bare_name_of_the_edited_entity_is_searched_by_symbol_or_by_code() -> None:
    d = derive("x-1", "Totals printed by `rounded` are off by a cent", TWO_FUNCTIONS)
    assert decisions(d.label) == [
        {"search_symbol", "search_code"},
        {"read_entity"},
        {"read_entity", "edit_entity"},
    ]


def test_behaviour_only_is_searched_by_code() -> None:
    statement = "Totals are off by a cent.\n\n```python\nfrom shop.tax import rounded\n```\n"
    d = derive("x-1", statement, TWO_FUNCTIONS)
    assert decisions(d.label) == [{"search_code"}, {"read_entity"}, {"read_entity", "edit_entity"}]
    assert d.reason == "derived: behaviour only; edits shop.tax, shop.tax.rounded"


def test_other_libraries_and_local_variables_are_not_the_repositorys_code() -> None:
    statement = "datetime.datetime and cart.total and e.g this do odd things"
    assert decisions(derive("x-1", statement, METHOD_BODY).label)[0] == {"search_code"}


def test_an_under_specified_instance_asks_at_every_point() -> None:
    d = derive("x-1", "Make checkout smarter?", "", underspecified=True)
    assert decisions(d.label) == [{"ask_user"}] * 3
    assert d.label is not None and d.label.outcome == "ask_user"


def test_a_patch_without_python_source_derives_nothing_and_says_why() -> None:
    d = derive(
        "x-1", "the docs are wrong", "--- a/README.rst\n+++ b/README.rst\n@@ -1 +1 @@\n-a\n+b\n"
    )
    assert d.label is None
    assert d.record() == {
        "problem": "the gold patch changes no Python source file (tests excluded)"
    }


def test_the_record_is_a_valid_label_that_reads_back_equal() -> None:
    d = derive("x-1", "`shop.cart.Cart.total` is wrong", METHOD_BODY)
    assert label_from(d.record(), "x-1", "here") == d.label


def test_a_real_swe_bench_shaped_instance() -> None:
    """The shape of SWE-bench Verified rows: git's default hunk header (the top-level ``def``),
    a repro in a fenced block importing the package, and a function named in prose that is not
    where the fix is."""
    patch = """\
diff --git a/astropy/modeling/separable.py b/astropy/modeling/separable.py
--- a/astropy/modeling/separable.py
+++ b/astropy/modeling/separable.py
@@ -242,7 +242,7 @@ def _cstack(left, right):
         cright = _coord_matrix(right, 'right', noutp)
     else:
         cright = np.zeros((noutp, right.shape[1]))
-        cright[-right.shape[0]:, -right.shape[1]:] = 1
+        cright[-right.shape[0]:, -right.shape[1]:] = right

     return np.hstack([cleft, cright])
"""
    statement = """\
Modeling's `separability_matrix` does not compute separability correctly for nested models

```python
from astropy.modeling import models as m
from astropy.modeling.separable import separability_matrix
separability_matrix(m.Pix2Sky_TAN() & (m.Linear1D(10) & m.Linear1D(5)))
```
"""
    d = derive("astropy__astropy-12907", statement, patch)
    assert [e.name for e in patch_entities(patch).edited] == ["astropy.modeling.separable._cstack"]
    assert decisions(d.label) == [{"search_code"}, {"read_entity"}, {"read_entity", "edit_entity"}]
    named = statement.replace("`separability_matrix`", "`_cstack`", 1)
    assert decisions(derive("a-1", named, patch).label)[0] == {"search_symbol", "search_code"}


def test_a_hunk_ends_where_its_header_says_even_at_a_line_that_looks_like_a_file_header() -> None:
    patch = """\
--- a/shop/notes.py
+++ b/shop/notes.py
@@ -1,3 +1,3 @@
 NOTES = '''
--- a removed rule line
+== an added rule line
 '''
--- a/shop/cart.py
+++ b/shop/cart.py
@@ -1,2 +1,2 @@
-def f(): return 1
+def f(): return 2
"""
    assert [e.name for e in patch_entities(patch).edited] == ["shop.notes", "shop.cart.f"]


def test_issue_pointers_read_a_megabyte_of_prose_at_once() -> None:
    """Each scan over the prose is one pass: a dotted name search per line and a call search
    per word were quadratic (a 20,000-character word took 6.8 s; 47 KB of words 13.6 s)."""
    word = pointers("see " + "a" * 1_000_000 + ".b")
    assert word.dotted == ("a" * 1_000_000 + ".b",)
    many = " ".join(f"w{n}" for n in range(150_000)) + " w7(x) Mixed_case"
    found = pointers(many)
    assert {"w7", "Mixed_case"} <= found.words and "w8" not in found.words
