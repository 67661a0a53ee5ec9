"""Grading as SWE-bench does it: apply ``test_patch``, run FAIL_TO_PASS and PASS_TO_PASS with
pytest in the sandbox, read each test's outcome from the junit report; resolved iff all passed.

Only the junit report counts, never what the agent said. An environment that cannot run the
tests is ``infra_error``, apart from a wrong patch:
- pytest wrote no report, or ended with an internal or usage error (exit 3 or 4);
- a test module failed to collect because a top-level module is missing (the package itself or
  a dependency is not importable) and the patch did not add or remove that module;
- any other collection error whose report mentions no file the patch or ``test_patch`` touched.
A collection error that does mention a touched file is the patch's doing: its tests are
"error" and the instance is unresolved. A run that hits the timeout is unresolved, naming the
test that was running.

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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from .. import limits
from ..primitives import safefs
from ..primitives.sandbox import Sandbox
from ..primitives.workspace import Workspace
from .envs import Environment, EnvironmentSetupError, environment_for
from .junit import JunitReport, TestOutcome, module_of, parse_junit
from .workspaces import WorkspaceSetupError, materialize, remove_tree

if TYPE_CHECKING:
    from .instance import Instance

Status = Literal["resolved", "unresolved", "infra_error", "patch_error"]
_PLUGIN = Path(__file__).with_name("grade_plugin.py")
_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


@dataclass(frozen=True)
class GradeResult:
    instance_id: str
    resolved: bool
    status: Status
    tests: dict[str, TestOutcome]
    reason: str | None
    duration_s: float


class _Infra(Exception):
    pass


def grade(
    workspace: Workspace,
    instance: Instance,
    *,
    sandbox: Sandbox,
    env: Environment | None = None,
    timeout: float = 300.0,
) -> GradeResult:
    """Grade the workspace as it is now; afterwards it is restored exactly (no test_patch)."""
    start = time.monotonic()
    touched = set(workspace.changed_files())
    ref = workspace.checkpoint()
    try:
        return _grade_here(workspace, instance, touched, sandbox, env, timeout, start)
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
) -> GradeResult:
    """Apply ``patch`` to a fresh workspace of ``instance`` and grade it."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="toolpolicy-grade-", dir=parent) as tmp:
        try:
            env = env or environment_for(instance, repos=repos, cache_dir=cache_dir)
            workspace = materialize(instance, Path(tmp), repos=repos, cache_dir=cache_dir)
        except (WorkspaceSetupError, EnvironmentSetupError) as exc:
            return _result(instance, "infra_error", {}, str(exc), start)
        if patch.strip():
            error = apply_patch(workspace, patch)
            if error:
                return _result(instance, "patch_error", {}, f"patch does not apply: {error}", start)
        touched = set(workspace.changed_files())
        return _grade_here(workspace, instance, touched, sandbox, env, timeout, start)


def _grade_here(
    workspace: Workspace,
    instance: Instance,
    touched: set[str],
    sandbox: Sandbox,
    env: Environment | None,
    timeout: float,
    start: float,
) -> GradeResult:
    ids = list(dict.fromkeys([*instance.FAIL_TO_PASS, *instance.PASS_TO_PASS]))
    tests: dict[str, TestOutcome] = dict.fromkeys(ids, "missing")
    root = workspace.root
    test_files = _patch_files(instance.test_patch)
    try:
        _reset_to_base(workspace, test_files, instance.base_commit)
    except safefs.UnsafePath as exc:
        return _result(instance, "infra_error", tests, f"cannot reset the test files: {exc}", start)
    error = apply_patch(workspace, instance.test_patch) if instance.test_patch.strip() else None
    if error:
        return _result(instance, "infra_error", tests, f"test_patch does not apply: {error}", start)
    files = sorted({i.partition("::")[0] for i in ids if (root / i.partition("::")[0]).is_file()})
    if not files:
        return _result(instance, "unresolved", tests, "none of the listed tests exists", start)
    gdir = root / f".toolpolicy-grade-{uuid.uuid4().hex[:8]}"
    gdir.mkdir()
    try:
        (gdir / "ids.json").write_text(json.dumps(ids), encoding="utf-8")
        shutil.copyfile(_PLUGIN, gdir / "toolpolicy_grade_plugin.py")
        try:
            report = _run(root, gdir, files, ids, sandbox, env, timeout, touched | test_files)
            log = _read_report(root, f"{gdir.name}/progress.log") if report is None else None
        except _Infra as exc:
            return _result(instance, "infra_error", tests, str(exc), start)
        if report is None:
            hung = (log or b"").decode("utf-8", errors="replace").splitlines()
            why = f"timed out after {timeout:g}s" + (f" while running {hung[-1]}" if hung else "")
            tests = {i: "failed" if i.partition("::")[0] in files else o for i, o in tests.items()}
            return _result(instance, "unresolved", tests, why, start)
    finally:
        with contextlib.suppress(OSError):  # a leftover is the restore's (or tempdir's) to drop
            remove_tree(gdir)
    broken = {module for module, _ in report.collection_errors}
    for nodeid in ids:
        if nodeid in report.outcomes:
            tests[nodeid] = report.outcomes[nodeid]
        elif module_of(nodeid) in broken:
            tests[nodeid] = "error"
    bad = [f"{i} {o}" for i, o in tests.items() if o != "passed"]
    reason = "; ".join(bad[:5]) + (f"; ... {len(bad) - 5} more" if len(bad) > 5 else "")
    return _result(instance, "unresolved" if bad else "resolved", tests, reason or None, start)


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
    argv += [env.python, "-m", "pytest", "-p", "no:toolpolicy", "-p", "no:cacheprovider"]
    argv += ["-p", "toolpolicy_grade_plugin", "-q", "--continue-on-collection-errors"]
    argv += [f"--junitxml={junit}", *files]
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
        raise _Infra(f"pytest could not run the tests (exit {result.exit_code}): {tail}")
    try:
        report = parse_junit(data, ids)
    except ET.ParseError as exc:
        raise _Infra(f"the junit report is not valid XML: {exc}") from None
    for module, text in report.collection_errors:
        if _is_infra(text, touched):
            last = [line for line in text.splitlines() if line.startswith("E ")][-1:] or [
                text[:200]
            ]
            raise _Infra(
                f"collection error in {module} unrelated to the patch: {last[0][1:].strip()}"
            )
    return report


def _is_infra(text: str, touched: set[str]) -> bool:
    modules = {f.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for f in touched}
    modules |= {m.removeprefix("src.") for m in modules}
    missing = _MISSING_MODULE.search(text)
    if missing and "." not in missing.group(1):
        return missing.group(1) not in modules
    return not any(f in text for f in touched) and not any(m in text for m in modules if m)


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
) -> GradeResult:
    duration = round(time.monotonic() - start, 3)
    return GradeResult(instance.instance_id, status == "resolved", status, tests, reason, duration)
