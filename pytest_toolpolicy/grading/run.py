"""One grading run: pytest over the listed tests' files, in the sandbox, the grading plugin
reporting over the sandbox's side channel (``sandbox_plugin.py``, ``records.py``).

The plugin, its launcher and its settings are copied into a directory of the host's own,
outside the workspace, which the sandbox sees read-only: nothing the tests run can change
them, and nothing in the workspace is where they are looked for. pytest's cache directory is
the sandbox's private ``/tmp``, not the workspace. pytest loads no plugin of its own accord
(``PYTEST_DISABLE_PLUGIN_AUTOLOAD``): the environment's, recorded when it was built, are named
to it by the launcher (``launch.py``), so a package the workspace declares (a ``*.dist-info``
with a ``pytest11`` entry point) loads nothing. A pytest before 3.7 knows no such switch and
loads its entry points itself; there the launcher names none (they would be registered twice),
and what the agent may have declared is put back before the run (``guard.py``'s rule 6). What the run reports is then held against its other signals
(``signals.py``).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import limits
from ..envs.environment import Environment
from ..envs.layout import TESTBED
from ..primitives.sandbox import Sandbox
from .infra import blames_patch
from .records import RecordError, TestRun, read_records
from .signals import disagreements

_HERE = Path(__file__).parent
_FILES = {"toolpolicy_grade_plugin.py": "sandbox_plugin.py", "launch.py": "launch.py"}


class Infra(Exception):
    """The environment could not run the tests; the message says why."""


class Broken(Exception):
    """pytest could not run the tests, and what it printed puts that on a touched file."""


class Tampered(Exception):
    """The result channel held what the grading plugin never writes, or the run's independent
    signals disagree (``signals.py``): what it reports cannot be trusted."""


@dataclass(frozen=True)
class Outcome:
    run: TestRun | None  # None: the run hit its timeout
    last_started: str | None
    output: str


def as_path(rel: str) -> str:
    """A relative path no runner can read as an option: ``./`` before one starting with ``-``."""
    return f"./{rel}" if rel.startswith("-") else rel


def run_tests(
    root: Path,
    files: Sequence[str],
    ids: Sequence[str] | None,
    parser: str,
    sandbox: Sandbox,
    env: Environment | None,
    timeout: float,
    touched: Collection[str],
    summary: bool = True,
) -> Outcome:
    """``summary``: pytest prints its summary line in this run (``signals.disagreements``)."""
    env = env or Environment(sys.executable, plugin_autoload=False)
    with tempfile.TemporaryDirectory(prefix="toolpolicy-grade-") as tmp:
        gdir = Path(tmp)
        wanted = None if ids is None else list(ids)  # None: every test the files hold
        settings = {"ids": wanted, "parser": parser, "plugins": list(env.plugins)}
        (gdir / "grade.json").write_text(json.dumps(settings))
        for name, source in _FILES.items():
            shutil.copyfile(_HERE / source, gdir / name)
        argv = [env.python, str(gdir / "launch.py"), "-p", "no:toolpolicy", "-q"]
        # A file named like an option (``--output=x_test.py``) is still a file to pytest.
        argv += ["--continue-on-collection-errors", *(as_path(f) for f in files)]
        result = env.sandbox(sandbox, root).run(
            argv,
            cwd=root,
            writable=root,
            stdin=None,
            timeout=timeout,
            merge_stderr=True,
            python=env.python,
            ro_binds=(str(gdir),),
            channel=limits.current().read_bytes,
            env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
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
        run = read_records(result.channel or b"", ids)
    except RecordError as exc:
        why = f"the result channel held what the grading plugin never writes: {exc}"
        raise Tampered(why) from None
    if result.timed_out:
        return Outcome(None, run.last_started, output)
    said = disagreements(run, result.exit_code, output, summary)
    if said:
        raise Tampered(f"the run's signals disagree: {'; '.join(said)}")
    tail = " | ".join(output.strip().splitlines()[-3:])[:400]
    if not run.finished or run.collected is None or result.exit_code in (3, 4):
        why = f"pytest could not run the tests (exit {result.exit_code}): {tail}"
        if run.last_started is not None:
            # Tests had started: the run died in one of them, which an environment that
            # cannot run the tests never gets to.
            raise Broken(f"the test run ended in {run.last_started} before finishing: {tail}")
        if blames_patch(output, touched, (str(root), TESTBED)):
            raise Broken(why)
        raise Infra(why)
    for path, text in run.collection_errors:
        if not blames_patch(text, touched, (str(root), TESTBED)):
            last = [line for line in text.splitlines() if line.startswith("E ")][-1:]
            raise Infra(
                f"collection error in {path} unrelated to the patch: "
                f"{last[0][1:].strip() if last else text[:200]}"
            )
    return Outcome(run, run.last_started, output)
