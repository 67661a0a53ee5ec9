"""Grading as SWE-bench does it: apply ``test_patch``, run FAIL_TO_PASS and PASS_TO_PASS with
pytest in the sandbox, read each test's outcome from the junit report; resolved iff all passed.

Only the junit report counts, never what the agent said. Listed ids follow SWE-bench's
conventions (``testids.py``): the plugin matches each collected test by its node id or by the
id SWE-bench's log ``parser`` makes of it, and when several tests share an id the outcome
combines as SWE-bench's "last status line wins" does (``junit.py``). A listed id whose file is
neither in the base commit nor in ``test_patch`` names no test ("[100%]", an artifact of
wrapped progress lines): it is left out of the verdict, listed in ``GradeResult.ignored`` and
noted in the reason.

An environment that cannot run the tests is ``infra_error`` with the reason, apart from a
wrong patch (the rules are ``infra.py``'s): pytest wrote no report or ended with an internal or
usage error (exit 3 or 4), or a test module failed to collect, and the output does not put it
on a touched file; every listed test errors at setup with one cause in no touched file; a
FAIL_TO_PASS test fails for want of a network (a PASS_TO_PASS one is left out of the verdict
and listed). A run that hits the timeout is unresolved, naming the test that was running.

The workspace is hostile while it is graded too: what the tests ran in the sandbox may have
replaced a test file by a link, or the junit report and progress log by links, FIFOs or huge
files. The test files are reset and removed through ``safefs`` (a link is replaced, never
written through; a link above a test file is refused) and the reports read through it, bounded
by ``limits.read_mb``; a refusal is an ``infra_error`` naming it. git runs via ``Workspace.git``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import time
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .. import limits
from ..primitives import safefs
from ..primitives.sandbox import Sandbox
from ..primitives.workspace import Workspace
from .envs import Environment, EnvironmentSetupError, environment_for
from .infra import blames_patch, needs_network, shared_setup_error
from .junit import JunitReport, TestOutcome, module_of, parse_junit
from .testids import PYTEST_PARSERS, path_of
from .workspaces import WorkspaceSetupError, materialize, remove_tree

if TYPE_CHECKING:
    from .instance import Instance

Status = Literal["resolved", "unresolved", "infra_error", "patch_error"]
_PLUGIN = Path(__file__).with_name("grade_plugin.py")


@dataclass(frozen=True)
class GradeResult:
    instance_id: str
    resolved: bool
    status: Status
    tests: dict[str, TestOutcome]
    reason: str | None
    duration_s: float
    # Listed ids left out of the verdict: ids naming no test file, PASS_TO_PASS tests that
    # need the network. (A default, so that results saved before the field load.)
    ignored: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "ignored", tuple(self.ignored))  # a list, read back from JSON


def _parser_of(env: Environment | None) -> str:
    return env.spec.log_parser if env is not None and env.spec is not None else "pytest"


class _Infra(Exception):
    pass


class _Broken(Exception):
    """pytest could not run the tests, and the output puts that on a touched file."""


def grade(
    workspace: Workspace,
    instance: Instance,
    *,
    sandbox: Sandbox,
    env: Environment | None = None,
    timeout: float = 300.0,
    parser: str | None = None,
) -> GradeResult:
    """Grade the workspace as it is now; afterwards it is restored exactly (no test_patch).
    ``parser``: the SWE-bench log parser the instance's ids follow (``testids.PYTEST_PARSERS``);
    by default the one its environment's spec names."""
    parser = parser or _parser_of(env)
    start = time.monotonic()
    touched = set(workspace.changed_files())
    ref = workspace.checkpoint()
    try:
        return _grade_here(workspace, instance, touched, sandbox, env, timeout, start, parser)
    finally:
        workspace.restore(ref)


def grade_patch(
    instance: Instance,
    patch: str,
    *,
    sandbox: Sandbox,
    parent: Path | None = None,
    env: Environment | None = None,
    repos: Path | None = None,
    cache_dir: Path | None = None,
    timeout: float = 300.0,
    parser: str | None = None,
) -> GradeResult:
    """Apply ``patch`` to a fresh workspace of ``instance`` and grade it."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="toolpolicy-grade-", dir=parent) as tmp:
        try:
            env = env or environment_for(instance, repos=repos, cache_dir=cache_dir)
            workspace = materialize(instance, Path(tmp), repos=repos, cache_dir=cache_dir)
        except (WorkspaceSetupError, EnvironmentSetupError) as exc:
            return _result(instance, "infra_error", {}, str(exc), start)
        # What the install generated (setuptools_scm's _version.py) is in the environment's
        # checkout only; the tests import it from this one.
        env.seed(workspace.root)
        parser = parser or _parser_of(env)
        if patch.strip():
            error = apply_patch(workspace, patch)
            if error:
                return _result(instance, "patch_error", {}, f"patch does not apply: {error}", start)
        touched = set(workspace.changed_files())
        return _grade_here(workspace, instance, touched, sandbox, env, timeout, start, parser)


def _grade_here(
    workspace: Workspace,
    instance: Instance,
    touched: set[str],
    sandbox: Sandbox,
    env: Environment | None,
    timeout: float,
    start: float,
    parser: str,
) -> GradeResult:
    ids = list(dict.fromkeys([*instance.FAIL_TO_PASS, *instance.PASS_TO_PASS]))
    tests: dict[str, TestOutcome] = dict.fromkeys(ids, "missing")
    if parser not in PYTEST_PARSERS:
        why = f"log parser {parser!r} does not read pytest's output; grading runs pytest"
        return _result(instance, "infra_error", tests, why, start)
    root = workspace.root
    test_files = _patch_files(instance.test_patch)
    try:
        _reset_to_base(workspace, test_files, instance.base_commit)
    except safefs.UnsafePath as exc:
        return _result(instance, "infra_error", tests, f"cannot reset the test files: {exc}", start)
    error = apply_patch(workspace, instance.test_patch) if instance.test_patch.strip() else None
    if error:
        return _result(instance, "infra_error", tests, f"test_patch does not apply: {error}", start)
    junk = _naming_no_file(workspace, ids, instance.base_commit, test_files)
    notes = [f"left out of the verdict, naming no test file: {_listing(junk)}"] if junk else []
    graded = [i for i in ids if i not in junk]
    if instance.FAIL_TO_PASS and not set(instance.FAIL_TO_PASS) - set(junk):
        why = f"no FAIL_TO_PASS id names a test file: {_listing(junk)}"
        return _result(instance, "infra_error", tests, why, start, junk)
    if not graded:
        why = f"no listed id names a test file: {_listing(junk)}"
        return _result(instance, "infra_error", tests, why, start, junk)
    files = sorted({path_of(i) for i in graded if (root / path_of(i)).is_file()})
    if not files:
        gone = _join(["none of the listed tests exists", *notes])
        return _result(instance, "unresolved", tests, gone, start, junk)
    gdir = root / f".toolpolicy-grade-{uuid.uuid4().hex[:8]}"
    gdir.mkdir()
    try:
        config = {"ids": graded, "parser": parser}
        (gdir / "grade.json").write_text(json.dumps(config), encoding="utf-8")
        shutil.copyfile(_PLUGIN, gdir / "toolpolicy_grade_plugin.py")
        try:
            report = _run(root, gdir, files, graded, sandbox, env, timeout, touched | test_files)
            log = _read_report(root, f"{gdir.name}/progress.log") if report is None else None
        except _Infra as exc:
            return _result(instance, "infra_error", tests, str(exc), start, junk)
        except _Broken as exc:
            tests |= {i: "error" for i in graded if path_of(i) in files}
            return _result(instance, "unresolved", tests, _join([str(exc), *notes]), start, junk)
        if report is None:
            hung = (log or b"").decode("utf-8", errors="replace").splitlines()
            why = f"timed out after {timeout:g}s" + (f" while running {hung[-1]}" if hung else "")
            tests |= {i: "failed" for i in graded if path_of(i) in files}
            return _result(instance, "unresolved", tests, _join([why, *notes]), start, junk)
    finally:
        with contextlib.suppress(OSError):  # a leftover is the restore's (or tempdir's) to drop
            remove_tree(gdir)
    return _verdict(instance, graded, tests, report, touched | test_files, junk, notes, start)


def _verdict(
    instance: Instance,
    graded: list[str],
    tests: dict[str, TestOutcome],
    report: JunitReport,
    touched: set[str],
    junk: list[str],
    notes: list[str],
    start: float,
) -> GradeResult:
    broken = {module for module, _ in report.collection_errors}
    for nodeid in graded:
        if nodeid in report.outcomes:
            tests[nodeid] = report.outcomes[nodeid]
        elif module_of(nodeid) in broken:
            tests[nodeid] = "error"
        failure = report.failures.get(nodeid)
        if tests[nodeid] in ("failed", "error") and failure and needs_network(failure):
            tests[nodeid] = "network"
    shared = shared_setup_error(graded, tests, report.failures, touched)
    if shared:
        return _result(instance, "infra_error", tests, shared, start, junk)
    offline = [i for i in graded if tests[i] == "network"]
    needed = [i for i in offline if i in instance.FAIL_TO_PASS]
    if needed:
        why = f"needs the network: {_listing(needed)}"
        return _result(instance, "infra_error", tests, why, start, [*junk, *offline])
    if offline:
        notes.append(f"left out of the verdict, needing the network: {_listing(offline)}")
    bad = [f"{i} {tests[i]}" for i in graded if i not in offline and tests[i] != "passed"]
    summary = "; ".join(bad[:5]) + (f"; ... {len(bad) - 5} more" if len(bad) > 5 else "")
    status: Status = "unresolved" if bad else "resolved"
    reason = _join([summary, *notes]) if bad else _join(notes)
    return _result(instance, status, tests, reason, start, [*junk, *offline])


def _run(
    root: Path,
    gdir: Path,
    files: list[str],
    ids: list[str],
    sandbox: Sandbox,
    env: Environment | None,
    timeout: float,
    touched: set[str],
) -> JunitReport | None:
    env = env or Environment(sys.executable, plugin_autoload=False)
    junit = gdir / "junit.xml"
    pythonpath = ":".join([str(gdir), *env.pythonpath(root)])
    argv = ["/usr/bin/env", f"PYTHONPATH={pythonpath}", f"TOOLPOLICY_GRADE_DIR={gdir}"]
    if not env.plugin_autoload:
        argv.append("PYTEST_DISABLE_PLUGIN_AUTOLOAD=1")
    argv += [env.python, "-m", "pytest", "-p", "no:toolpolicy", "-p", "toolpolicy_grade_plugin"]
    # The cache plugin stays on as in SWE-bench's runs (some tests use its ``cache`` fixture),
    # its directory in the grading dir, not the workspace. xunit1: see junit.py.
    argv += ["-o", f"cache_dir={gdir / 'cache'}", "-o", "junit_family=xunit1"]
    argv += ["-q", "--continue-on-collection-errors", f"--junitxml={junit}", *files]
    result = sandbox.run(
        argv,
        cwd=root,
        writable=root,
        stdin=None,
        timeout=timeout,
        merge_stderr=True,
        python=env.python,
    )
    if result.workspace_over:  # the tests' own disk use, not a verdict on the patch
        raise _Infra(f"grading run stopped: {result.workspace_over}")
    if result.timed_out:
        return None
    output = result.stdout.decode("utf-8", errors="replace")
    tail = " | ".join(output.strip().splitlines()[-3:])[:400]
    data = _read_report(root, f"{gdir.name}/{junit.name}")
    if data is None or result.exit_code in (3, 4):
        why = f"pytest could not run the tests (exit {result.exit_code}): {tail}"
        if blames_patch(output, touched):
            raise _Broken(why)
        raise _Infra(why)
    try:
        report = parse_junit(data, ids)
    except ET.ParseError as exc:
        raise _Infra(f"the junit report is not valid XML: {exc}") from None
    for module, text in report.collection_errors:
        if not blames_patch(text, touched):
            last = [line for line in text.splitlines() if line.startswith("E ")][-1:] or [
                text[:200]
            ]
            raise _Infra(
                f"collection error in {module} unrelated to the patch: {last[0][1:].strip()}"
            )
    return report


def _naming_no_file(
    workspace: Workspace, ids: Sequence[str], base: str, test_files: set[str]
) -> list[str]:
    """The ids whose path part is a file neither at the base commit nor in test_patch: they
    name no test whatever the patch does (a patch that deletes a test file leaves its ids
    "missing", not ignored)."""
    known = set(test_files)
    asked = {path_of(i) for i in ids} - known
    plain = sorted(p for p in asked if p and not p.startswith(("/", "-")) and ".." not in p)
    if plain:
        listing = workspace.git("ls-tree", "-z", base, "--", *plain).text
        for line in filter(None, listing.split("\0")):
            meta, _, rel = line.partition("\t")
            if meta.split()[1:2] == ["blob"]:
                known.add(rel)
    return [i for i in ids if path_of(i) not in known]


def _listing(ids: Sequence[str]) -> str:
    return ", ".join(ids[:5]) + (f", ... {len(ids) - 5} more" if len(ids) > 5 else "")


def _join(parts: Sequence[str]) -> str | None:
    return "; ".join(p for p in parts if p) or None


def _patch_files(patch: str) -> set[str]:
    found = set()
    for a, b in re.findall(r"^diff --git a/(\S+) b/(\S+)$", patch, flags=re.MULTILINE):
        found |= {a, b}
    return found


def _read_report(root: Path, rel: str) -> bytes | None:
    """A file the tests wrote in the sandbox, or None when there is none; a link, a FIFO or a
    file over the read limit is refused (``_Infra``), never followed or read unbounded."""
    try:
        return safefs.read_bytes(root, rel, limits.current().read_bytes)
    except FileNotFoundError:
        return None
    except (safefs.UnsafePath, OSError) as exc:
        raise _Infra(f"grading report refused: {exc}") from None


def _reset_to_base(workspace: Workspace, paths: set[str], base: str) -> None:
    """The files test_patch touches, as they were at the instance's base commit (SWE-bench does
    the same) — not the workspace's base, which may already hold visible tests. A link or a
    directory at such a path is replaced; ``UnsafePath`` when a link lies above one."""
    root = workspace.root
    at_base = {}
    if paths:
        listing = workspace.git("ls-tree", "-z", base, "--", *sorted(paths)).text
        for line in filter(None, listing.split("\0")):
            meta, _, rel = line.partition("\t")
            mode, kind, oid = meta.split()
            if kind == "blob":
                at_base[rel] = (mode, oid)
    for rel in sorted(paths):
        path = safefs.inside(root, rel, final_link_ok=True)
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISDIR(os.lstat(path).st_mode):
                remove_tree(path)
        if rel not in at_base:
            safefs.remove(root, rel)
            continue
        mode, oid = at_base[rel]
        data = workspace.git("cat-file", "blob", oid).stdout
        if mode == "120000":
            safefs.remove(root, rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(data, path)
        else:
            safefs.write_bytes(root, rel, data, mode=0o755 if mode == "100755" else 0o644)


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
) -> GradeResult:
    duration = round(time.monotonic() - start, 3)
    return GradeResult(
        instance.instance_id, status == "resolved", status, tests, reason, duration, tuple(ignored)
    )
