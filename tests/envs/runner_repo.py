"""A real-repository dataset that builds offline: a package of ours with an in-tree PEP 517
backend, its tests run by its own runner (unittest, django's line format, as
``tests/grading/test_logrun.py``'s), a bug, its gold patch and its test patch; served as a git
mirror, the instance a ``.jsonl`` row, the spec a TOML file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_toolpolicy.bench.instance import Instance, instance_from_row
from pytest_toolpolicy.envs.spec import SPECS_ENV

from ..bench.gitmirrors import git
from ..grading.test_logrun import NEW_TEST, RUNNER, RUNTESTS, TESTS
from .test_cache import SPECS, make_repo, package

INSTANCE = "acme__runner-1"
FIXED = "def div(a, b):\n    return a / b\n"


@dataclass(frozen=True)
class RunnerRepo:
    data: Path  # the dataset: one row
    mirrors: Path  # the directory of mirrors (--repos)
    specs: Path  # its environment spec
    base: str

    def instance(self) -> Instance:
        return instance_from_row(json.loads(self.data.read_text(encoding="utf-8")), "local")

    def use(self, monkeypatch: pytest.MonkeyPatch, cache: Path) -> None:
        """Its specs, no package index, and ``cache`` as the harness's cache directory."""
        monkeypatch.setenv(SPECS_ENV, str(self.specs))
        monkeypatch.setenv("PIP_NO_INDEX", "1")
        monkeypatch.setenv("TOOLPOLICY_CACHE_DIR", str(cache))


def make_runner_repo(root: Path, *, pre_install: str = "") -> RunnerRepo:
    """``pre_install``: a shell command the build runs first (one that fails breaks it)."""
    root.mkdir(parents=True, exist_ok=True)
    specs = root / "specs.toml"
    spec = f'[repo."acme/runner"]\ntest_cmd = "{RUNNER}"\nlog_parser = "django"\n'
    spec += 'runner_files = ["tests/runtests.py"]\n'
    if pre_install:
        spec += f"pre_install = [{json.dumps(pre_install)}]\n"
    specs.write_text(SPECS + spec, encoding="utf-8")
    files = {
        **package("calc"),
        "calc/__init__.py": "def div(a, b):\n    return a // b\n",
        "tests/test_div.py": TESTS,
        "tests/runtests.py": RUNTESTS,
    }
    mirror = root / "mirrors" / "acme__runner"
    (base,) = make_repo(mirror, files)
    test_patch = _patch(mirror, "tests/test_div.py", TESTS + NEW_TEST)
    gold = _patch(mirror, "calc/__init__.py", FIXED)
    row = {
        "instance_id": INSTANCE,
        "repo": "acme/runner",
        "base_commit": base,
        "problem_statement": "div(1, 2) is 0, not 0.5",
        "patch": gold,
        "test_patch": test_patch,
        "FAIL_TO_PASS": ["test_float (test_div.DivTests)"],
        "PASS_TO_PASS": ["test_exact (test_div.DivTests)"],
        "version": "1.0",
    }
    data = root / "data.jsonl"
    data.write_text(json.dumps(row) + "\n", encoding="utf-8")
    return RunnerRepo(data, mirror.parent, specs, base)


def _patch(repo: Path, rel: str, text: str) -> str:
    (repo / rel).write_text(text, encoding="utf-8")
    patch = git(repo, "diff") + "\n"
    git(repo, "checkout", "--", ".")
    return patch
