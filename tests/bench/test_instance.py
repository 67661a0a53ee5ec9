from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.bench import Instance, InstanceError, instance_from_row

# The 3 complete SWE-bench Verified rows, committed (tests/data/swebench/README.md).
FULL = Path(__file__).resolve().parents[1] / "data" / "swebench" / "verified_full_sample.jsonl"


@pytest.fixture
def real_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in FULL.read_text(encoding="utf-8").splitlines()]


def row(**changes: Any) -> dict[str, Any]:
    base = {
        "instance_id": "bundled__shop-1",
        "repo": "bundled/shop",
        "base_commit": "a" * 40,
        "problem_statement": "Cart.total ignores the discount",
        "patch": "diff --git a/x b/x\n",
        "test_patch": "diff --git a/t b/t\n",
        "FAIL_TO_PASS": ["tests/test_cart.py::test_discount"],
        "PASS_TO_PASS": [],
        "version": "1.0",
    }
    return {key: value for key, value in {**base, **changes}.items() if value is not ...}


def error_of(raw: dict[str, Any], **kwargs: Any) -> InstanceError:
    with pytest.raises(InstanceError) as caught:
        instance_from_row(raw, "test", **kwargs)
    return caught.value


def test_a_real_row_decodes_its_json_encoded_test_lists(real_rows: list[dict[str, Any]]) -> None:
    raw = next(r for r in real_rows if r["instance_id"] == "psf__requests-1142")
    assert isinstance(raw["FAIL_TO_PASS"], str)
    instance = instance_from_row(raw, "shared")
    assert instance.FAIL_TO_PASS == ("test_requests.py::RequestsTestCase::test_no_content_length",)
    assert "test_requests.py::RequestsTestCase::test_basic_building" in instance.PASS_TO_PASS
    assert instance.environment_setup_commit == "ba25184ed5f0bf9b876dea3cf4312fa35b539a7c"
    assert (instance.version, instance.source, instance.path) == ("1.1", "shared", None)
    assert instance.test_target == "test_requests.py::RequestsTestCase::test_no_content_length"


def test_lists_and_json_strings_give_the_same_instance() -> None:
    ids = ["t.py::a", "t.py::b"]
    as_list = instance_from_row(row(FAIL_TO_PASS=ids), "x")
    as_json = instance_from_row(row(FAIL_TO_PASS=json.dumps(ids)), "x")
    assert as_list == as_json
    assert as_list.test_target == "t.py::a t.py::b"


def test_repro_target_wins_over_fail_to_pass_as_test_target() -> None:
    instance = instance_from_row(row(repro_target="tests/test_cart.py"), "x")
    assert instance.test_target == "tests/test_cart.py"


def test_malformed_fail_to_pass_names_instance_and_field() -> None:
    error = error_of(row(instance_id="psf__requests-1142", FAIL_TO_PASS="[oops"))
    assert (error.instance_id, error.field) == ("psf__requests-1142", "FAIL_TO_PASS")
    assert str(error) == (
        "instance psf__requests-1142: field FAIL_TO_PASS: not a JSON list of test ids ('[oops')"
    )


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"repo": ...}, "repo", "missing"),
        ({"problem_statement": ""}, "problem_statement", "empty"),
        ({"base_commit": "abc12"}, "base_commit", "malformed"),
        ({"base_commit": "z" * 40}, "base_commit", "malformed"),
        ({"patch": ""}, "patch", "empty"),
        ({"version": 1.1}, "version", "not a string"),
        ({"PASS_TO_PASS": '{"a": 1}'}, "PASS_TO_PASS", "not a JSON list"),
        ({"PASS_TO_PASS": ["ok", 3]}, "PASS_TO_PASS", "not a list of test ids"),
        ({"FAIL_TO_PASS": []}, "FAIL_TO_PASS", "empty"),
        ({"underspecified": "yes"}, "underspecified", "not a boolean"),
        ({"instance_id": "a/b"}, "instance_id", "contains a path separator"),
    ],
)
def test_each_bad_field_is_named(changes: dict[str, Any], field: str, message: str) -> None:
    error = error_of(row(**changes))
    assert error.field == field
    assert error.message.startswith(message)


ABSOLUTE = "diff --git a//etc/passwd b//etc/passwd\n--- a//etc/passwd\n+++ b//etc/passwd\n"
RENAME_UP = "diff --git a/x b/y\nsimilarity index 90%\nrename from x\nrename to ../../y\n"
QUOTED_NUL = 'diff --git "a/x\\000y" "b/x\\000y"\n'


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"test_patch": ABSOLUTE}, "test_patch", "line 1 names '/etc/passwd', which is absolute"),
        ({"patch": RENAME_UP}, "patch", "line 4 names '../../y', which goes up with '..'"),
        ({"patch": "diff --git a/.git/hooks/x b/.git/hooks/x\n"}, "patch", "line 1 names"
         " '.git/hooks/x', which is inside .git"),
        ({"test_patch": QUOTED_NUL}, "test_patch", "line 1 names 'x\\x00y', which contains a NUL"),
        ({"instance_id": "x" * 129}, "instance_id", "too long: 129 bytes, at most 128"),
        ({"instance_id": "\u00e9" * 65}, "instance_id", "too long: 130 bytes, at most 128"),
        ({"instance_id": "a\nb"}, "instance_id", "contains a control character"),
        ({"instance_id": "a\x00b"}, "instance_id", "contains a control character"),
        ({"instance_id": "a\\b"}, "instance_id", "contains a path separator"),
        ({"instance_id": "a b"}, "instance_id", "malformed"),
        ({"repo": "a/.."}, "repo", "its name '..' is not a directory name"),
        ({"repo": "-c/x"}, "repo", "its owner '-c' is not a directory name"),
        ({"repo": "a__b/c"}, "repo", "its owner holds '__'"),
        ({"repo": "a/b/c"}, "repo", "not owner/name"),
        ({"repo": "a/" + "n" * 101}, "repo", "its name is 101 characters long, at most 100"),
        ({"version": "1/2"}, "version", "contains a path separator"),
        ({"version": "1.0\n"}, "version", "contains a path separator or a control character"),
        ({"version": "1" * 65}, "version", "too long: 65 characters, at most 64"),
        ({"FAIL_TO_PASS": ["/etc/t.py::x"]}, "FAIL_TO_PASS", "a test id '/etc/t.py::x' names"
         " a file that is absolute"),
        ({"PASS_TO_PASS": ["--rootdir=/"]}, "PASS_TO_PASS", "a test id '--rootdir=/' would be"
         " read as an option"),
        ({"PASS_TO_PASS": ["../t.py::x"]}, "PASS_TO_PASS", "a test id '../t.py::x' names a file"
         " that goes up with '..'"),
    ],
)  # fmt: skip
def test_a_value_that_cannot_be_a_name_or_a_path_is_named(
    changes: dict[str, Any], field: str, message: str
) -> None:
    """What becomes a file name, a path in the repository or an argument is refused when the
    row is read, naming the instance and the field, never later as an OSError or a git error."""
    error = error_of(row(**changes))
    assert error.field == field
    assert error.message.startswith(message), error.message


@pytest.mark.parametrize(
    "changes",
    [
        {"instance_id": "x" * 128},  # the bound itself
        {"instance_id": "scikit-learn__scikit-learn-25747"},
        {"repo": "a/.github"},
        {"patch": "diff --git a/my file.py b/my file.py\n--- a/my file.py\t2020-01-01\n"},
        {"patch": "diff --git a/.gitignore b/.gitignore\n--- a/a..b/x\n+++ b/a..b/x\n"},
        # A removed line that reads like a header is hunk content, not a name.
        {"patch": "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1 @@\n--- /etc/passwd\n x\n"},
        {"PASS_TO_PASS": ["t.py::test[../x]", "[100%]", "test_x (a.b.C)"]},
    ],
)
def test_names_and_paths_inside_the_bounds_are_kept(changes: dict[str, Any]) -> None:
    instance = instance_from_row(row(**changes), "x")
    for field, value in changes.items():
        assert getattr(instance, field) == (tuple(value) if isinstance(value, list) else value)


def test_an_id_that_cannot_be_printed_on_a_line_is_named_by_its_label() -> None:
    error = error_of(row(instance_id="x" * 300), label="<line 3 of x.jsonl>")
    assert str(error).startswith("instance <line 3 of x.jsonl>: field instance_id: too long")
    assert "'xxxxxxxx" in error.message and len(str(error)) < 300
    error = error_of(row(instance_id="a\nb"))
    assert error.instance_id == "'a\\nb'" and "\n" not in str(error)


def test_a_row_without_an_id_is_named_by_its_label() -> None:
    error = error_of(row(instance_id=...), label="<row 3 of x.jsonl>")
    assert str(error).startswith("instance <row 3 of x.jsonl>: field instance_id: missing")


def test_under_specified_instances_may_have_no_patch_and_no_tests() -> None:
    raw = row(underspecified=True, patch="", test_patch="", FAIL_TO_PASS=[])
    instance = instance_from_row(raw, "bundled")
    assert instance.underspecified
    assert instance.test_target is None


def test_statements_only_rows_need_require_tests_false() -> None:
    raw = row(test_patch=..., FAIL_TO_PASS=..., PASS_TO_PASS=..., version=...)
    error = error_of(raw)
    assert error.field == "FAIL_TO_PASS"
    assert "also missing: PASS_TO_PASS, test_patch, version" in error.message
    instance = instance_from_row(raw, "x", require_tests=False)
    assert (instance.FAIL_TO_PASS, instance.PASS_TO_PASS, instance.test_patch) == ((), (), "")
    assert instance.version == ""


def test_instances_are_frozen() -> None:
    instance = instance_from_row(row(), "x")
    assert isinstance(instance, Instance)
    with pytest.raises(AttributeError):
        instance.patch = ""  # type: ignore[misc]
