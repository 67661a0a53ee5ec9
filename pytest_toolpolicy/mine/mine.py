"""Mining one change into an instance: its candidate check, statement, patches, version and
environment, and (unless told not to) its test lists by running (``lists.py``). Each change is
its own base commit and version, so its environment is a stage of its own (``_environment``),
the one step of mining that builds: the runs are handed it.

``mine_change`` returns a ``Mined``: the row in SWE-bench's schema, or why the change was
dropped ("skipped"), never an exception for one change's trouble, so a long walk goes on. The
row also says where its statement came from, the commit it was mined from, and its flaky ids.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..bench.instance import Instance, InstanceError, instance_from_row
from ..bench.workspaces import WorkspaceSetupError, materialize
from ..envs.cache import environment_for
from ..envs.environment import Environment
from ..envs.spec import EnvironmentSetupError
from ..grading.directives import patch_test_files
from ..grading.grade import apply_patch
from ..grading.parsers import LOG_PARSERS
from ..primitives import safefs
from ..primitives.sandbox import Sandbox
from ..primitives.workspace import Workspace, WorkspaceError
from . import history
from .lists import RUNS, Lists, SideFailed, derive, run_side
from .statement import statement


@dataclass(frozen=True)
class Mined:
    commit: str
    row: dict[str, Any] | None  # the instance, or None: dropped
    skipped: str | None  # why it was dropped
    kind: str  # what dropped it: "candidate", "statement", "environment", "run", "lists", ""
    seconds: float
    lists: Lists | None = None  # what running derived (with the flaky ids), where it ran
    # of ``seconds``, getting the environment: a build on a version's first use, else the
    # cached one found (and its layer for the base commit)
    env_seconds: float = 0.0


@dataclass(frozen=True)
class Setup:
    repo_name: str  # owner/name
    repos: Path  # the directory holding <owner>__<name>
    sandbox: Sandbox | None
    cache_dir: Path | None = None
    timeout: float = 300.0
    run: bool = True
    supplied: Mapping[str, str] | None = None
    env: Environment | None = None  # the environment to run in (default: the spec's, built)


def mine_change(checkout: Path, commit: str, setup: Setup) -> Mined:
    start = time.monotonic()

    def dropped(kind: str, why: str) -> Mined:
        return Mined(commit, None, why, kind, time.monotonic() - start)

    try:
        change = history.change(checkout, commit)
    except history.MineError as exc:
        return dropped("candidate", str(exc))
    why = history.candidate_reason(change)
    if why:
        return dropped("candidate", why)
    told = statement(change.commit, change.message, setup.supplied, change.branch)
    if told.thin:
        return dropped("statement", f"statement too thin to act on ({told.words} words)")
    text = told.text
    if len(text) > history.MAX_MESSAGE_CHARS:  # a merge's body and its branch's messages
        text = text[: history.MAX_MESSAGE_CHARS] + "\n[... cut at 50,000 characters]"
    try:
        patch, test_patch = history.patches(checkout, change)
        own = [setup.repo_name.rpartition("/")[2]]
        version, setup_commit = history.version(checkout, change.parent, own)
    except history.MineError as exc:
        return dropped("candidate", str(exc))
    owner, _, name = setup.repo_name.partition("/")
    row: dict[str, Any] = {
        "instance_id": f"{owner}__{name}-{change.commit[:12]}",
        "repo": setup.repo_name,
        "base_commit": change.parent,
        "patch": patch,
        "test_patch": test_patch,
        "problem_statement": text,
        "hints_text": "",
        "created_at": change.created_at,
        "version": version,
        "environment_setup_commit": setup_commit,
        "FAIL_TO_PASS": [],
        "PASS_TO_PASS": [],
        "mined_from": change.commit,
        "merge": change.merge,
        "statement_source": told.source,
        "issue_numbers": list(told.issues),
        "flaky": [],
    }
    if not setup.run:
        return Mined(commit, row, None, "", time.monotonic() - start)
    return with_lists(row, change.files, setup, start)


def with_lists(row: dict[str, Any], touched: tuple[str, ...], setup: Setup, start: float) -> Mined:
    """``row`` with its lists derived by running, or why it was dropped: the change's instance,
    its environment (``_environment``, the one step of mining that builds), then its runs in
    it (``_lists``, which never builds)."""
    commit = str(row.get("mined_from") or row["instance_id"])
    took: list[float] = []  # the environment's seconds, when it was asked for
    try:
        instance = _instance(row)
        env = _environment(instance, setup, took)
        lists = _lists(instance, env, touched, setup)
    except _Dropped as exc:
        return Mined(commit, None, str(exc), exc.kind, time.monotonic() - start, None, sum(took))
    if not lists.fail_to_pass:
        why = "no test fails before the patch and passes after it"
        return Mined(commit, None, why, "lists", time.monotonic() - start, lists, sum(took))
    row = row | {
        "FAIL_TO_PASS": list(lists.fail_to_pass),
        "PASS_TO_PASS": list(lists.pass_to_pass),
        "flaky": list(lists.flaky),
    }
    return Mined(commit, row, None, "", time.monotonic() - start, lists, sum(took))


class _Dropped(Exception):
    def __init__(self, kind: str, why: str) -> None:
        super().__init__(why)
        self.kind = kind


def _instance(row: dict[str, Any]) -> Instance:
    try:
        return instance_from_row(row, "local", require_tests=False)
    except InstanceError as exc:
        raise _Dropped("candidate", exc.message) from None


def _environment(instance: Instance, setup: Setup, took: list[float]) -> Environment:
    """The change's environment stage: the one given, else its own built or found (each change
    its own version and base commit); its seconds into ``took``."""
    began = time.monotonic()
    try:
        return setup.env or environment_for(instance, repos=setup.repos, cache_dir=setup.cache_dir)
    except (EnvironmentSetupError, WorkspaceSetupError) as exc:  # the build, or its checkout
        raise _Dropped("environment", f"environment: {exc}") from None
    finally:
        took.append(time.monotonic() - began)


def _lists(instance: Instance, env: Environment, touched: tuple[str, ...], setup: Setup) -> Lists:
    parser = env.spec.log_parser if env.spec is not None else "pytest"
    if parser not in LOG_PARSERS:
        raise _Dropped("run", f"log parser {parser!r} is not one of {', '.join(LOG_PARSERS)}")
    sandbox = setup.sandbox or Sandbox.from_env()
    with tempfile.TemporaryDirectory(prefix="toolpolicy-mine-") as tmp:
        try:
            ws = materialize(instance, Path(tmp), repos=setup.repos, cache_dir=setup.cache_dir)
        except WorkspaceSetupError as exc:
            raise _Dropped("environment", f"workspace: {exc}") from None
        # the test patch's Python files: a data file it touches (sphinx's tests/roots/*.po) is
        # run through the tests that read it, and named to pytest it fails the whole run
        files = [f for f in patch_test_files(instance.test_patch) if f.endswith(".py")]
        sides = []
        for patch in (instance.test_patch, instance.patch):
            error = apply_patch(ws, patch)
            if error:
                raise _Dropped("run", f"does not apply at its parent: {error}")
            present = [f for f in files if safefs.is_regular(ws.root, f)]
            if not present:
                raise _Dropped("run", "the test patch leaves no test file to run")
            sides.append(_runs(ws, present, parser, sandbox, env, setup.timeout, touched))
        return derive(sides[0], sides[1])


def _runs(
    ws: Workspace, files: list[str], parser: str, sandbox: Sandbox, env: Environment,
    timeout: float,
    touched: tuple[str, ...],
) -> list[dict[str, str]]:  # fmt: skip
    try:
        ref = ws.checkpoint()
    except WorkspaceError as exc:
        raise _Dropped("run", f"workspace: {exc}") from None
    runs = []
    for _ in range(RUNS):
        ws.restore(ref, ignored=True)  # what a run wrote is not the next one's start
        env.seed(ws.root)
        try:
            runs.append(
                run_side(ws.root, files, parser=parser, sandbox=sandbox, env=env,
                         timeout=timeout, touched=touched)
            )  # fmt: skip
        except SideFailed as exc:
            raise _Dropped("run", f"the tests could not run: {exc}") from None
    ws.restore(ref, ignored=True)
    return runs
