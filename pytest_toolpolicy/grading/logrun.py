"""One grading run of a repository whose tests are not run by pytest (django's
``tests/runtests.py``, sympy's ``bin/test``): the spec's ``test_cmd`` with the directives of the
instance (``directives.py``), in the sandbox, and the log read as SWE-bench's parser for that
repository reads it (``parsers.py``).

The log is the run's output, which the tests themselves also write to: unlike the pytest
plugin's side channel, a test that prints a status line could be read as one. What decides how
the tests run (the runner's own files, ``spec.runner_files``, and every test file) is put back
before the run as for pytest (``guard.py``), and the rest is SWE-bench's own exposure.
"""

from __future__ import annotations

import shlex
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..envs.environment import Environment
from ..envs.layout import TESTBED
from ..primitives.sandbox import Sandbox
from .infra import blames_patch
from .outcomes import TestOutcome
from .parsers import outcomes, parse_log
from .run import Broken, Infra


@dataclass(frozen=True)
class LogOutcome:
    tests: dict[str, TestOutcome] | None  # None: the run hit its timeout
    output: str


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
    command = " ".join([test_cmd, *(shlex.quote(d) for d in directives)])
    result = env.sandbox(sandbox, root).run(
        ["/bin/bash", "-c", command],
        cwd=root,
        writable=root,
        stdin=None,
        timeout=timeout,
        merge_stderr=True,
        python=env.python,
    )
    output = result.stdout.decode("utf-8", errors="replace")
    if result.workspace_over:  # the tests' own disk use, not a verdict on the patch
        raise Infra(f"grading run stopped: {result.workspace_over}")
    if result.timed_out:
        return LogOutcome(None, output)
    statuses = parse_log(output, parser)
    if not statuses:
        tail = " | ".join(output.strip().splitlines()[-3:])[:400]
        why = f"the test runner reported no test (exit {result.exit_code}): {tail}"
        if blames_patch(output, touched, (str(root), TESTBED)):
            raise Broken(why)
        raise Infra(why)
    # None: every test the log reports (mining derives its lists from all of them)
    return LogOutcome(outcomes(statuses, statuses if ids is None else ids), output)
