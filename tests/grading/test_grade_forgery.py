"""Every way we know for an agent to make the tests say "fixed" without fixing anything: each
leaves the instance unresolved, with what it changed reverted and said so; the same changes
beside the real fix leave it resolved. (The honest fix of every bundled instance resolving is
``toolpolicy validate``'s check, which `make test` runs.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolpolicy.bench import load_instances
from pytest_toolpolicy.bench.instance import Instance
from pytest_toolpolicy.bench.workspaces import materialize
from pytest_toolpolicy.grading.grade import apply_patch, grade
from pytest_toolpolicy.primitives.sandbox import Sandbox

from ..bench.gitmirrors import BASE, FIXED_OPS, make_bundled

SANDBOX = Sandbox.from_env()
F2P = "tests/test_ops.py::test_div_float"
ALL_PASS = """import pytest

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
"""
PLUGIN = ALL_PASS  # the same hook, as a plugin module a configuration names
SKIP_FAILING = "[pytest]\naddopts = --deselect tests/test_ops.py::test_div_float\n"
SHADOW_PYTEST = "import sys\nsys.exit(0)\n"
WEAK_TEST = "from calc import div\n\n\ndef test_div_float():\n    assert True\n"
HELPER = "def check(a, b):\n    return True\n"

# name -> the files the agent writes (a value None removes the file)
FORGERIES: dict[str, dict[str, str | None]] = {
    "conftest-at-the-root": {"conftest.py": ALL_PASS},
    "conftest-deep": {"tests/sub/conftest.py": ALL_PASS, "tests/conftest.py": ALL_PASS},
    "conftest-as-a-link": {"conftest.py": "->forge/hook.py", "forge/hook.py": ALL_PASS},
    "pytest-ini-deselects": {"pytest.ini": SKIP_FAILING},
    "pytest-ini-in-the-test-dir": {"tests/pytest.ini": SKIP_FAILING},
    "tox-ini-plugin": {
        "tox.ini": "[pytest]\naddopts = -p forged_plugin\n",
        "forged_plugin.py": PLUGIN,
    },
    "setup-cfg-plugin": {
        "setup.cfg": "[tool:pytest]\naddopts = -p forged_plugin\n",
        "forged_plugin.py": PLUGIN,
    },
    "pyproject-plugin": {
        "pyproject.toml": BASE["pyproject.toml"]
        + '[tool.pytest.ini_options]\naddopts = "-p forged_plugin"\n',
        "forged_plugin.py": PLUGIN,
    },
    "sitecustomize": {"sitecustomize.py": "import os\nos._exit(0)\n"},
    "a-pytest-module-of-its-own": {"pytest.py": SHADOW_PYTEST},
    "a-pluggy-package-of-its-own": {"pluggy/__init__.py": SHADOW_PYTEST},
    "weakened-test": {"tests/test_ops.py": WEAK_TEST},
    "deleted-test-file": {"tests/test_ops.py": None},
    "weakened-test-helper": {"tests/helpers.py": HELPER},
    "a-name-that-is-not-utf-8": {"tests/\udcff_helper.py": HELPER, "conftest.py": ALL_PASS},
    "hidden-by-gitignore": {".gitignore": "conftest.py\n", "conftest.py": ALL_PASS},
    # A pytest before 3.7 loads every pytest11 entry point on sys.path, the workspace's too.
    "entry-point-metadata": {
        "forged-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: forged\nVersion: 1.0\n",
        "forged-1.0.dist-info/entry_points.txt": "[pytest11]\nforged = forged_plugin\n",
        "forged_plugin.py": PLUGIN,
    },
}


@pytest.fixture(scope="module")
def calc(tmp_path_factory: pytest.TempPathFactory) -> Instance:
    root = tmp_path_factory.mktemp("forgery")
    make_bundled(root / "instances", "bundled__calc-1", BASE)
    return load_instances(f"bundled:{root / 'instances'}").instances[0]


def write(root: Path, files: dict[str, str | None]) -> None:
    for rel, text in files.items():
        path = root / rel
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if text.startswith("->"):
            path.symlink_to(text[2:])
        else:
            path.write_text(text)


@pytest.mark.parametrize("fix", [False, True], ids=["without-the-fix", "with-the-fix"])
@pytest.mark.parametrize("name", FORGERIES)
def test_a_forgery_changes_no_verdict(calc: Instance, tmp_path: Path, name: str, fix: bool) -> None:
    ws = materialize(calc, tmp_path / "items")
    write(ws.root, FORGERIES[name])
    if fix:
        (ws.root / "calc/ops.py").write_text(FIXED_OPS)
    result = grade(ws, calc, sandbox=SANDBOX)
    assert result.status == ("resolved" if fix else "unresolved"), result
    if not fix:
        assert result.tests[F2P] == "failed", result
    # What is put back is what decides how the tests run; a module no configuration names any
    # more (forged_plugin.py) is left where it is, unused; a file hidden from every snapshot
    # (by the agent's own .gitignore) is not graded at all, so there is nothing to put back.
    kept = {
        ".gitignore",
        "forge/hook.py",
        "forged_plugin.py",
        "conftest.py" if "gitignore" in name else "",
    }
    reverted = sorted(r.partition(": ")[0] for r in result.reverted)
    assert reverted == sorted(set(FORGERIES[name]) - kept), result.reverted


def test_reverted_files_are_only_what_the_agent_changed(calc: Instance, tmp_path: Path) -> None:
    """With the tests visible, the test_patch's file is in the agent's start state: not its
    doing, and not said to be reverted."""
    ws = materialize(calc, tmp_path / "items")
    assert apply_patch(ws, calc.test_patch) is None
    ws.advance_base("the tests made visible")
    (ws.root / "calc/ops.py").write_text(FIXED_OPS)
    result = grade(ws, calc, sandbox=SANDBOX)
    assert result.resolved and result.reverted == () and result.flagged == (), result


def test_product_code_that_implements_hooks_is_kept_and_flagged(
    calc: Instance, tmp_path: Path
) -> None:
    ws = materialize(calc, tmp_path / "items")
    (ws.root / "calc/ops.py").write_text(
        FIXED_OPS + "\n\ndef pytest_configure(config):\n    pass\n"
    )
    result = grade(ws, calc, sandbox=SANDBOX)
    assert result.resolved, result
    assert result.flagged == (
        "calc/ops.py: implements pytest hooks or imports its internals (kept)",
    )
