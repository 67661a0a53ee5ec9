"""Grading as SWE-bench does it, and stricter: the tests run on the base commit's test files
with ``test_patch`` applied, FAIL_TO_PASS and PASS_TO_PASS with pytest in the sandbox, each
test's outcome read from what the grading plugin reports; resolved iff all passed.

What is graded is the workspace's snapshot, put into a tree of its own (``tree.py``):
whatever the model changed that decides how tests are collected, configured or reported is put
back as it was at the base commit first, and listed in ``GradeResult.reverted``; product code
the run executes and grading cannot vouch for is kept and listed in ``flagged`` (``guard.py``
has the rules). The outcomes reach the host over the sandbox's side channel, which nothing in
the workspace and no process the tests start can write (``run.py``): only the plugin's
records count, never a file, never what the agent said. A run whose listed tests were not all
collected and run is not resolved: a test that never reported is "missing".

Listed ids follow SWE-bench's conventions (``testids.py``): the plugin matches each collected
test by its node id or by the id SWE-bench's log ``parser`` makes of it, and when several tests
share an id the outcome combines as SWE-bench's "last status line wins" does
(``records.py``). A listed id whose file is neither in the base commit nor in
``test_patch`` names no test ("[100%]", an artifact of wrapped progress lines): it is left out
of the verdict, listed in ``GradeResult.ignored`` and noted in the reason.

An environment that cannot run the tests is ``infra_error`` with the reason, apart from a
wrong patch (the rules are ``infra.py``'s): pytest never finished or ended with an internal or
usage error (exit 3 or 4) before any test started, or a test module failed to collect, and the
output does not put it on a touched file; every listed test errors at setup with one cause in
no touched file; a FAIL_TO_PASS test fails for want of a network (a PASS_TO_PASS one is left
out of the verdict and listed). A run that hits the timeout, or dies inside a test, is
unresolved, naming the test that was running. A model's doing is never an ``infra_error``: an
instance it could make one would leave both arms' counts.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..bench.workspaces import WorkspaceSetupError, materialize
from ..envs.cache import Environment, EnvironmentSetupError, harness_environment
from ..envs.importable import installed_modules
from ..envs.runners import RUNNERS
from ..envs.stage import Unavailable
from ..primitives.sandbox import Sandbox
from ..primitives.workspace import Workspace, WorkspaceError
from .crosscheck import Disagreement
from .directives import grading_directives
from .guard_config import CONFIG_FILES, quiet
from .infra import lacking_module, needs_network, shared_setup_error
from .logrun import run_logged
from .outcomes import TestOutcome
from .run import Broken, Infra, Tampered, run_tests
from .testids import path_of
from .tree import TreeError, grading_tree

if TYPE_CHECKING:
    from ..bench.instance import Instance
    from .records import TestRun

Status = Literal["resolved", "unresolved", "infra_error", "patch_error"]


@dataclass(frozen=True)
class GradeResult:
    instance_id: str
    resolved: bool
    status: Status
    tests: dict[str, TestOutcome]
    reason: str | None
    duration_s: float
    # Listed ids left out of the verdict: ids naming no test file, PASS_TO_PASS tests that
    # need the network. (Defaults, so that results saved before a field load.)
    ignored: tuple[str, ...] = ()
    # What of the model's changes took no part in the run ("<path>: <why>"), and what took
    # part that grading cannot vouch for (``guard.py``).
    reverted: tuple[str, ...] = ()
    flagged: tuple[str, ...] = ()
    # What makes the run's word untrustworthy, each with why: the agent's product code
    # reaching into the harness (``reach.py``), the run's signals disagreeing (``signals.py``).
    # Any entry leaves the instance unresolved, whatever the tests said.
    tampering: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("ignored", "reverted", "flagged", "tampering"):  # lists, from JSON
            object.__setattr__(self, name, tuple(getattr(self, name)))


def _parser_of(env: Environment | None) -> str:
    return env.spec.log_parser if env is not None and env.spec is not None else "pytest"


def grade(
    workspace: Workspace,
    instance: Instance,
    *,
    sandbox: Sandbox,
    env: Environment | None = None,
    timeout: float = 300.0,
    parser: str | None = None,
) -> GradeResult:
    """Grade the workspace as it is now; afterwards its snapshot is restored exactly (files
    hidden from snapshots by ``.gitignore`` are gone). ``parser``: the SWE-bench log parser the
    instance's ids follow (its record, ``envs/runners.py``); by default the one its environment's
    spec names."""
    start = time.monotonic()
    try:
        ref = workspace.checkpoint()
    except WorkspaceError as exc:  # the model's workspace, past what a snapshot can hold
        why = f"the workspace cannot be snapshotted: {exc}"
        return _result(instance, "unresolved", {}, why, start)
    # Grading's own trees (the hidden tests among them) go to a scratch store: a counterfactual
    # rerun in this workspace must not find them in its object store.
    with workspace.scratch_objects():
        try:
            return _grade_snapshot(workspace, ref, instance, sandbox, env, timeout, start, parser)
        finally:
            workspace.restore(ref)


def grade_patch(
    instance: Instance,
    patch: str,
    *,
    sandbox: Sandbox,
    parent: Path | None = None,
    env: Environment | Unavailable | None = None,
    repos: Path | None = None,
    cache_dir: Path | None = None,
    timeout: float = 300.0,
    parser: str | None = None,
) -> GradeResult:
    """Apply ``patch`` to a fresh workspace of ``instance`` and grade it in ``env``: what the
    caller's environment stage resolved for it (``envs/stage.py``; None for a bundled instance,
    which runs on the harness's interpreter). Grading never builds one: an environment that
    could not be had, or a workspace, is ``infra_error`` with the reason."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="toolpolicy-grade-", dir=parent) as tmp:
        try:
            env = _handed(instance, env)
            workspace = materialize(instance, Path(tmp), repos=repos, cache_dir=cache_dir)
        except (WorkspaceSetupError, EnvironmentSetupError) as exc:
            return _result(instance, "infra_error", {}, str(exc), start)
        if patch.strip():
            error = apply_patch(workspace, patch)
            if error:
                return _result(instance, "patch_error", {}, f"patch does not apply: {error}", start)
        return _grade_snapshot(
            workspace, workspace.checkpoint(), instance, sandbox, env, timeout, start, parser
        )


def _handed(instance: Instance, env: Environment | Unavailable | None) -> Environment:
    if isinstance(env, Unavailable):
        env.raise_error()
    if env is not None:
        return env
    if instance.path is not None:
        return harness_environment()
    why = "its environment was not resolved before grading (envs/stage.py)"
    raise EnvironmentSetupError(f"{instance.instance_id}: {why}")


def _grade_snapshot(
    workspace: Workspace,
    ref: str,
    instance: Instance,
    sandbox: Sandbox,
    env: Environment | None,
    timeout: float,
    start: float,
    parser: str | None,
) -> GradeResult:
    parser = parser or _parser_of(env)
    ids = list(dict.fromkeys([*instance.FAIL_TO_PASS, *instance.PASS_TO_PASS]))
    missing: dict[str, TestOutcome] = dict.fromkeys(ids, "missing")
    if parser not in RUNNERS:
        why = f"log parser {parser!r} is not one grading knows"
        return _result(instance, "infra_error", missing, why, start)
    python = env.python if env is not None else sys.executable
    installed = installed_modules(python)
    try:
        tree = grading_tree(
            workspace,
            ref,
            instance.base_commit,
            instance.test_patch,
            ids,
            repo_paths=env.repo_paths if env is not None else (),
            installed=installed,
            runner_files=env.spec.runner_files if env is not None and env.spec else (),
        )
    except TreeError as exc:
        why = f"test_patch does not apply: {exc}"
        return _result(instance, "infra_error", missing, why, start)
    known = tree.base_files | tree.test_patch_files
    summary = not _quiet(workspace, instance.base_commit, tree.base_files, env)
    # Ids naming no file: pytest-run ids only (django's and sympy's never name one).
    junk = [i for i in ids if path_of(i) not in known] if RUNNERS[parser].plugin else []
    judge = _Judge(
        workspace, instance, sandbox, env, timeout, parser, ids, junk, installed, summary
    )
    verdict = judge(tree.commit, tree.files, set(tree.changed) | tree.test_patch_files)
    if verdict.status == "infra_error" and tree.commit_tree != tree.control_tree:
        # An environment that cannot run the tests cannot run them without the agent's
        # changes either: what only happens with them is the agent's doing, never grounds to
        # leave the instance out of both arms.
        control = judge(tree.control, tree.control_files, set(tree.test_patch_files))
        if control.status != "infra_error":
            why = (
                f"the tests could not run with the agent's changes ({verdict.reason}); "
                "without them they did"
            )
            verdict = _Verdict("unresolved", why, verdict.tests, verdict.ignored)
    tampering = (*tree.guarded.tampering, *verdict.tampering)
    status, reason = verdict.status, verdict.reason
    if tampering and status != "infra_error":
        status = "unresolved"
        reason = _join(
            [f"not counted: {tampering[0]}", *([] if verdict.tampering else [reason or ""])]
        )
    return _result(
        instance,
        status,
        verdict.tests,
        reason,
        start,
        verdict.ignored,
        tree.guarded.reverted,
        tree.guarded.flagged,
        tampering,
    )


@dataclass(frozen=True)
class _Verdict:
    status: Status
    reason: str | None
    tests: dict[str, TestOutcome]
    ignored: Sequence[str] = ()
    tampering: Sequence[str] = ()  # what the run itself showed (``run.Tampered``)


@dataclass(frozen=True)
class _Judge:
    """Runs the listed tests in one tree checked out in the workspace, and judges them."""

    workspace: Workspace
    instance: Instance
    sandbox: Sandbox
    env: Environment | None
    timeout: float
    parser: str
    ids: list[str]
    junk: list[str]
    installed: frozenset[str] = frozenset()  # the environment's modules (envs/importable.py)
    summary: bool = True  # pytest prints its summary line (not quieted by the repository)

    def __call__(self, commit: str, files_in: frozenset[str], touched: set[str]) -> _Verdict:
        if not RUNNERS[self.parser].plugin:  # its own runner and reporter (envs/runners.py)
            return self._logged(commit, touched)
        junk, instance = self.junk, self.instance
        tests: dict[str, TestOutcome] = dict.fromkeys(self.ids, "missing")
        notes = [f"left out of the verdict, naming no test file: {_listing(junk)}"] if junk else []
        graded = [i for i in self.ids if i not in junk]
        if instance.FAIL_TO_PASS and not set(instance.FAIL_TO_PASS) - set(junk):
            why = f"no FAIL_TO_PASS id names a test file: {_listing(junk)}"
            return _Verdict("infra_error", why, tests, junk)
        if not graded:
            return _Verdict(
                "infra_error", f"no listed id names a test file: {_listing(junk)}", tests, junk
            )
        files = sorted({path_of(i) for i in graded} & files_in)
        if not files:
            return _Verdict(
                "unresolved", _join(["none of the listed tests exists", *notes]), tests, junk
            )
        self.workspace.restore(commit, ignored=True)
        if self.env is not None:  # what the install generated, dropped with the ignored files
            self.env.seed(self.workspace.root)
        root = self.workspace.root
        try:
            outcome = run_tests(
                root, files, graded, self.parser, self.sandbox, self.env, self.timeout, touched,
                self.summary,
            )  # fmt: skip
        except Infra as exc:
            return _Verdict("infra_error", str(exc), tests, junk)
        except Broken as exc:
            tests.update({i: "error" for i in graded if path_of(i) in files})
            return _Verdict("unresolved", _join([str(exc), *notes]), tests, junk)
        except Tampered as exc:
            tests.update({i: "error" for i in graded if path_of(i) in files})
            told = _join([str(exc), *notes])
            return _Verdict("unresolved", told, tests, junk, (str(exc),))
        if outcome.run is None:
            why = f"timed out after {self.timeout:g}s"
            if outcome.last_started:
                why += f" while running {outcome.last_started}"
            tests.update({i: "failed" for i in graded if path_of(i) in files})
            return _Verdict("unresolved", _join([why, *notes]), tests, junk)
        return _verdict(instance, graded, tests, outcome.run, touched, junk, notes, self.installed)

    def _logged(self, commit: str, touched: set[str]) -> _Verdict:
        """A repository whose own runner reports the tests (django, sympy): its ``test_cmd``
        over the instance's directives, run by grading's launcher with the runner's reporter
        sending each outcome over the side channel, the log read by SWE-bench's parser as a
        second signal that must agree (``logrun.py``)."""
        tests: dict[str, TestOutcome] = dict.fromkeys(self.ids, "missing")
        spec = self.env.spec if self.env is not None else None
        directives = grading_directives(self.parser, self.ids, self.instance.test_patch)
        if spec is None or not directives:
            why = "no test command" if spec is None else "test_patch names no test to run"
            return _Verdict("infra_error", f"cannot run {self.parser}'s runner: {why}", tests)
        assert self.env is not None
        self.workspace.restore(commit, ignored=True)
        self.env.seed(self.workspace.root)
        try:
            outcome = run_logged(
                self.workspace.root, spec.test_cmd, directives, self.ids, self.parser,
                self.sandbox, self.env, self.timeout, touched,
            )  # fmt: skip
        except Infra as exc:
            return _Verdict("infra_error", str(exc), tests)
        except Broken as exc:
            return _Verdict("unresolved", str(exc), dict.fromkeys(self.ids, "error"))
        except Tampered as exc:  # the reporter's outcomes, where the log disagreed with them
            said: dict[str, TestOutcome] = dict.fromkeys(self.ids, "error")
            if isinstance(exc, Disagreement):
                said = exc.tests
            return _Verdict("unresolved", str(exc), said, tampering=(str(exc),))
        if outcome.tests is None:
            why = f"timed out after {self.timeout:g}s"
            if outcome.last_started:
                why += f" while running {outcome.last_started}"
            return _Verdict("unresolved", why, dict.fromkeys(self.ids, "failed"))
        bad = [f"{i} {outcome.tests[i]}" for i in self.ids if outcome.tests[i] != "passed"]
        summary = "; ".join(bad[:5]) + (f"; ... {len(bad) - 5} more" if len(bad) > 5 else "")
        return _Verdict("unresolved" if bad else "resolved", summary or None, outcome.tests)


def _verdict(
    instance: Instance,
    graded: list[str],
    tests: dict[str, TestOutcome],
    run: TestRun,
    touched: set[str],
    junk: list[str],
    notes: list[str],
    installed: frozenset[str] = frozenset(),
) -> _Verdict:
    broken = {path_of(path) for path, _ in run.collection_errors}
    for nodeid in graded:
        if nodeid in run.outcomes:
            tests[nodeid] = run.outcomes[nodeid]
        elif path_of(nodeid) in broken:
            tests[nodeid] = "error"
        failure = run.failures.get(nodeid)
        if tests[nodeid] in ("failed", "error") and failure and needs_network(failure):
            tests[nodeid] = "network"
    shared = shared_setup_error(graded, tests, run.failures, touched)
    if shared:
        return _Verdict("infra_error", shared, tests, junk)
    offline = [i for i in graded if tests[i] == "network"]
    needed = [i for i in offline if i in instance.FAIL_TO_PASS]
    if needed:
        why = f"needs the network: {_listing(needed)}"
        return _Verdict("infra_error", why, tests, [*junk, *offline])
    if offline:
        notes.append(f"left out of the verdict, needing the network: {_listing(offline)}")
    lacking = {
        i: name
        for i in graded
        if tests[i] == "skipped"
        and (failure := run.failures.get(i))
        and (name := lacking_module(failure, touched, installed))
    }
    if needed := [i for i in lacking if i in instance.FAIL_TO_PASS]:
        modules = ", ".join(sorted({lacking[i] for i in needed}))
        why = f"the environment lacks {modules}: {_listing(needed)} skipped"
        return _Verdict("infra_error", why, tests, [*junk, *offline, *lacking])
    if lacking:
        modules = ", ".join(sorted(set(lacking.values())))
        notes.append(
            f"left out of the verdict, skipped for want of {modules}: {_listing(list(lacking))}"
        )
    left_out = {*offline, *lacking}
    bad = [f"{i} {tests[i]}" for i in graded if i not in left_out and tests[i] != "passed"]
    summary = "; ".join(bad[:5]) + (f"; ... {len(bad) - 5} more" if len(bad) > 5 else "")
    reason = _join([summary, *notes]) if bad else _join(notes)
    return _Verdict("unresolved" if bad else "resolved", reason, tests, [*junk, *offline, *lacking])


def _quiet(workspace: Workspace, base: str, files: frozenset[str], env: Environment | None) -> bool:
    """Whether the repository's own configuration (its root config files at the base commit,
    the spec's ``PYTEST_ADDOPTS``) silences pytest's summary line under grading's ``-q``."""
    spec = env.spec if env is not None else None
    extra = dict(spec.test_env).get("PYTEST_ADDOPTS", "") if spec is not None else ""
    if quiet("pytest.ini", f"[pytest]\naddopts = {extra}\n".encode()):
        return True
    for name in sorted(CONFIG_FILES & files):
        if quiet(name, workspace.git("cat-file", "blob", f"{base}:{name}").stdout):
            return True
    return False


def _listing(ids: Sequence[str]) -> str:
    return ", ".join(ids[:5]) + (f", ... {len(ids) - 5} more" if len(ids) > 5 else "")


def _join(parts: Sequence[str]) -> str | None:
    return "; ".join(p for p in parts if p) or None


def apply_patch(root: Path | Workspace, patch: str) -> str | None:
    """git's own words when ``patch`` does not apply to the working tree of the workspace
    (or of the workspace at ``root``). ``git apply`` itself refuses to write through a link."""
    workspace = root if isinstance(root, Workspace) else Workspace(root)
    if not patch.endswith("\n"):
        patch += "\n"
    result = workspace.git("apply", "--whitespace=nowarn", "-", stdin=patch, ok=range(256))
    if result.returncode == 0:
        return None
    return " ".join(result.stderr.decode("utf-8", errors="replace").split())[:300] or (
        "git apply failed"
    )


def _result(
    instance: Instance,
    status: Status,
    tests: dict[str, TestOutcome],
    reason: str | None,
    start: float,
    ignored: Sequence[str] = (),
    reverted: Sequence[str] = (),
    flagged: Sequence[str] = (),
    tampering: Sequence[str] = (),
) -> GradeResult:
    duration = round(time.monotonic() - start, 3)
    return GradeResult(
        instance.instance_id,
        status == "resolved",
        status,
        tests,
        reason,
        duration,
        tuple(ignored),
        tuple(reverted),
        tuple(flagged),
        tuple(tampering),
    )
