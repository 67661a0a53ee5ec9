"""One grading run of a repository whose tests are not run by pytest (django's
``tests/runtests.py``, sympy's ``bin/test``): the spec's ``test_cmd`` with the directives of the
instance (``directives.py``), in the sandbox, each test's outcome reported over the sandbox's
side channel, as for pytest (``run.py``).

The command is not handed to a shell: grading's own-runner launcher (``own_launch.py``) runs
it in the shell's place (``own_command.py`` says which commands it can; any other is an
infrastructure error naming why, never a run whose printed log alone would decide). Copied
with the reporters into a directory of the host's own, outside the workspace, which the
sandbox sees read-only, it takes the channel over before any code of the repository runs,
installs the reporter for the runner (unittest's result classes for django,
``own_unittest.py``; sympy's ``PyTestReporter``, ``own_sympy.py``), and runs the runner script
in its own process. The outcomes are what the reporter sent (``own_records.py``): product code
that prints ``test_x ok`` lines, or a test that prints them, changes nothing there.

The log is still read, by SWE-bench's parser for the repository (``parsers.py``), as a second
signal: where it recorded a status for a graded id, it must be the reporter's
(``crosscheck.py``), or the run is unresolved. What decides how the tests run and are reported
(the runner's own files, ``spec.runner_files``: its script, its settings, the library its
reporter lives in, and every test file) is put back before the run as for pytest
(``guard.py``). Code running inside the runner's process can still forge a report; see
``own_launch.py`` for what that takes.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import limits
from ..envs.environment import Environment
from ..envs.layout import TESTBED
from ..envs.runners import RUNNERS
from ..primitives.sandbox import Sandbox
from .crosscheck import check
from .infra import blames_patch
from .outcomes import TestOutcome
from .own_command import Unlaunchable, invocation
from .own_records import read_own_records
from .parsers import parse_log
from .records import RecordError
from .run import Broken, Infra, Tampered

_HERE = Path(__file__).parent
_FILES = {
    "launch_own.py": "own_launch.py",
    "toolpolicy_own_unittest.py": "own_unittest.py",
    "toolpolicy_own_sympy.py": "own_sympy.py",
}
_MODULES = {"unittest": "unittest's result classes", "sympy": "sympy's runtests module"}


@dataclass(frozen=True)
class LogOutcome:
    tests: dict[str, TestOutcome] | None  # None: the run hit its timeout
    output: str
    last_started: str | None = None  # the test the run was in when it ended


def run_logged(
    root: Path,
    test_cmd: str,
    directives: Sequence[str],
    ids: Sequence[str] | None,
    parser: str,
    sandbox: Sandbox,
    env: Environment,
    timeout: float,
    touched: Collection[str],
) -> LogOutcome:
    # The reporter the runner's record names (``envs/runners.py``).
    reporter = RUNNERS[parser].reporter if parser in RUNNERS else None
    if reporter is None:
        own = ", ".join(n for n, r in RUNNERS.items() if r.reporter)
        raise Infra(f"no reporter for the {parser!r} runner: grading knows {own}")
    try:
        call = invocation(test_cmd, directives)
    except Unlaunchable as exc:
        raise Infra(str(exc)) from None
    with tempfile.TemporaryDirectory(prefix="toolpolicy-grade-") as tmp:
        gdir = Path(tmp)
        config = {"reporter": reporter, "chdir": call.chdir, "script": call.script}
        (gdir / "own.json").write_text(json.dumps({**config, "args": list(call.args)}))
        for name, source in _FILES.items():
            shutil.copyfile(_HERE / source, gdir / name)
        result = env.sandbox(sandbox, root).run(
            [env.python, str(gdir / "launch_own.py")],
            cwd=root,
            writable=root,
            stdin=None,
            timeout=timeout,
            merge_stderr=True,
            python=env.python,
            ro_binds=(str(gdir),),
            channel=limits.current().read_bytes,
        )
    output = result.stdout.decode("utf-8", errors="replace")
    if result.workspace_over:  # the tests' own disk use, not a verdict on the patch
        raise Infra(f"grading run stopped: {result.workspace_over}")
    if result.channel_dropped:
        raise Infra(
            f"the grading records went over {limits.current().read_bytes} bytes "
            f"(limit read_mb; {limits.ENV})"
        )
    try:
        run = read_own_records(result.channel or b"", ids)
    except RecordError as exc:
        why = f"the result channel held what the runner's reporter never writes: {exc}"
        raise Tampered(why) from None
    if result.timed_out:
        return LogOutcome(None, output, run.last_started)
    if not run.results:
        tail = " | ".join(output.strip().splitlines()[-3:])[:400]
        why = f"the test runner reported no test (exit {result.exit_code}): {tail}"
        if reporter not in run.hooked:
            why = f"the runner never loaded {_MODULES[reporter]}, so nothing reported a test: {why}"
        if blames_patch(output, touched, (str(root), TESTBED)):
            raise Broken(why)
        raise Infra(why)
    graded = list(run.outcomes) if ids is None else list(ids)
    tests: dict[str, TestOutcome] = {i: run.outcomes.get(i, "missing") for i in graded}
    check(tests, parse_log(output, parser), graded)
    return LogOutcome(tests, output, run.last_started)
