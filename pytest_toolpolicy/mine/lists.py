"""FAIL_TO_PASS and PASS_TO_PASS of a mined change, derived by running its tests as SWE-bench
derived them: the test files the test patch touches, run at the base commit with the test patch
("before"), then with the change's patch as well ("after"), each side ``RUNS`` times.

FAIL_TO_PASS: tests that pass after and did not before (failed, errored, or were not there:
a test file that imports what the patch adds does not even collect before it). PASS_TO_PASS:
tests that pass on both sides. A test whose outcome differs between two runs of one side is
flaky and in neither list. ``derive`` is a pure function of the runs' outcomes; ``run_side``
runs one side in the sandbox through grading's own runner, reporting every test it collects:
pytest's family through the grading plugin; a repository whose own runner runs its tests
(sympy's ``bin/test``, django's ``runtests.py``) through its spec's ``test_cmd`` with
SWE-bench's directives for the files, each test reported by grading's reporter for that runner
(``grading/logrun.py``), the log read by SWE-bench's parser held against it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..envs.environment import Environment
from ..envs.runners import runner_for
from ..grading.directives import as_directives
from ..grading.logrun import run_logged
from ..grading.run import Broken, Infra, Tampered, run_tests
from ..primitives.sandbox import Sandbox

RUNS = 2
_NOT_PASSED = frozenset({"failed", "error", None})


class SideFailed(Exception):
    """One side's tests could not run as a whole; the message says why."""


@dataclass(frozen=True)
class Lists:
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    flaky: tuple[str, ...]
    seen: tuple[str, ...] = ()  # every id a run of either side reported


def derive(before: Sequence[Mapping[str, str]], after: Sequence[Mapping[str, str]]) -> Lists:
    """The lists from each side's runs (id → outcome; an id a run lacks was not there)."""
    ids = sorted({i for run in (*before, *after) for i in run})
    flaky = [i for i in ids if _varies(before, i) or _varies(after, i)]
    steady = [i for i in ids if i not in set(flaky)]
    was = {i: before[0].get(i) if before else None for i in steady}
    now = {i: after[0].get(i) if after else None for i in steady}
    f2p = [i for i in steady if now[i] == "passed" and was[i] in _NOT_PASSED]
    p2p = [i for i in steady if now[i] == "passed" and was[i] == "passed"]
    return Lists(tuple(f2p), tuple(p2p), tuple(flaky), tuple(ids))


def _varies(runs: Sequence[Mapping[str, str]], test: str) -> bool:
    return len({run.get(test) for run in runs}) > 1


def run_side(
    root: Path,
    files: Sequence[str],
    *,
    parser: str,
    sandbox: Sandbox,
    env: Environment | None,
    timeout: float,
    touched: Collection[str],
) -> dict[str, str]:
    """Every test of ``files`` in the workspace at ``root``, id → outcome."""
    if not runner_for(parser).plugin:  # its own runner (envs/runners.py)
        return _run_logged(root, files, parser, sandbox, env, timeout, touched)
    try:
        outcome = run_tests(root, files, None, parser, sandbox, env, timeout, touched)
    except (Infra, Broken, Tampered) as exc:
        raise SideFailed(str(exc)) from None
    if outcome.run is None:
        where = f" in {outcome.last_started}" if outcome.last_started else ""
        raise SideFailed(f"timed out after {timeout:g}s{where}")
    return dict(outcome.run.outcomes)


def _run_logged(
    root: Path, files: Sequence[str], parser: str, sandbox: Sandbox, env: Environment | None,
    timeout: float, touched: Collection[str],
) -> dict[str, str]:  # fmt: skip
    spec = env.spec if env is not None else None
    if env is None or spec is None or not spec.test_cmd:
        raise SideFailed(f"{parser}'s runner needs its spec's test command; there is none")
    directives = as_directives(parser, files)
    try:
        logged = run_logged(
            root, spec.test_cmd, directives, None, parser, sandbox, env, timeout, touched
        )
    except (Infra, Broken, Tampered) as exc:
        raise SideFailed(str(exc)) from None
    if logged.tests is None:
        raise SideFailed(f"timed out after {timeout:g}s")
    return dict(logged.tests)
