"""Per-test outcomes from a pytest junit XML report, keyed by the listed ids that were asked for.

Every pytest from 4.4 on writes the same shape under ``-o junit_family=xunit1`` (which grading
passes: it was the default before pytest 6, and pytest 5 warns when it is not set): test
cases under a root ``<testsuites>`` (some old releases wrote a bare ``<testsuite>``; cases are
found at any depth), each with its ``<properties>`` (xunit2 writes those too). An error's ``message`` differs: "test setup failure" up to pytest 5,
``failed on setup with "<crash>"`` from 6; so the crash is read from the traceback's last
``E`` lines, which all versions write alike.

When several test cases map to one listed id (a teardown error writes a second case for the
same test; ``t.py::test[a`` is the SWE-bench id of every ``t.py::test[a ...]``), the outcome
is the one SWE-bench would record: its parser keeps the last status line, and ``pytest -rA``
prints the summary grouped by status in the order passed, skipped, xfailed, xpassed, error,
failed (``getreportopt``'s "PpsxXEf" in terminal.py). Skipped and xpassed lines record no id
(a skip is folded into ``SKIPPED [n] file:line``; XPASS is no status of SWE-bench's). So
failed beats error beats passed (an xfail counts as passed), and a skip or an xpass stands
only when no case of that id did anything else.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

# "network": failed for want of a network (infra.needs_network), which grading sets, not junit.
TestOutcome = Literal["passed", "failed", "error", "skipped", "xpassed", "network", "missing"]
When = Literal["setup", "call", "teardown"]
NODEID_PROPERTY = "toolpolicy_nodeid"
XPASS_PROPERTY = "toolpolicy_xpass"
_RANK = {"skipped": 0, "xpassed": 1, "passed": 2, "error": 3, "failed": 4}
_TEARDOWN = ("failed on teardown", "test teardown failure")


@dataclass(frozen=True)
class Failure:
    """What made a test fail or error, as the report tells it."""

    when: When
    message: str  # the crash: the exception's first line ("RuntimeError: no db")
    text: str  # the whole traceback


@dataclass(frozen=True)
class JunitReport:
    outcomes: dict[str, TestOutcome]
    # (test file as a dotted module path, error text) for each module that failed to collect
    collection_errors: tuple[tuple[str, str], ...]
    # for each id whose outcome is failed or error: the failure that decided it
    failures: dict[str, Failure]


def mangle(nodeid: str) -> tuple[str, str]:
    """(classname, name) as pytest's junitxml writes them for ``nodeid``."""
    path, bracket, params = nodeid.partition("[")
    names = path.split("::")
    names[0] = re.sub(r"\.py$", "", names[0].replace("/", "."))
    names[-1] += bracket + params
    return ".".join(names[:-1]), names[-1]


def module_of(nodeid: str) -> str:
    return mangle(nodeid.partition("::")[0])[1]


def read_junit(path: Path, wanted: Iterable[str]) -> JunitReport:
    """``parse_junit`` of a report file the caller trusts (grading reads a sandbox-written
    report through ``safefs`` and parses the bytes)."""
    return parse_junit(path.read_bytes(), wanted)


def parse_junit(data: bytes, wanted: Iterable[str]) -> JunitReport:
    """Outcomes of the ``wanted`` ids found in the report. A test case is matched by the ids
    the grading plugin recorded, else by its mangled (classname, name), else by a unique suffix
    of the classname (a rootdir other than the workspace root prefixes it). Malformed XML
    raises ``xml.etree.ElementTree.ParseError``, and so does a DTD: pytest never writes one,
    and entity expansion is how a small hostile file becomes a huge tree."""
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise ET.ParseError("a DTD or entity declaration is refused")
    by_pair = {mangle(nodeid): nodeid for nodeid in wanted}
    decided: dict[str, tuple[TestOutcome, Failure | None]] = {}
    errors: list[tuple[str, str]] = []
    for case in ET.fromstring(data).iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        error = case.find("error")
        if not classname and error is not None and error.get("message") == "collection failure":
            errors.append((name, error.text or ""))
            continue
        found = _recorded(case, NODEID_PROPERTY)
        if not found:
            pair = by_pair.get((classname, name)) or _suffix(by_pair, case)
            found = [pair] if pair else []
        outcome, failure = _outcome(case)
        for nodeid in found:
            # ">=": within one status group the later test's line is the later one.
            if nodeid not in decided or _RANK[outcome] >= _RANK[decided[nodeid][0]]:
                decided[nodeid] = (outcome, failure)
    outcomes = {nodeid: outcome for nodeid, (outcome, _) in decided.items()}
    failures = {nodeid: failure for nodeid, (_, failure) in decided.items() if failure}
    return JunitReport(outcomes, tuple(errors), failures)


def error_lines(text: str) -> list[str]:
    """The last block of a traceback's ``E`` lines (the final exception), without the "E"."""
    blocks: list[list[str]] = []
    previous = False
    for line in text.splitlines():
        is_e = line.startswith("E ") or line == "E"
        if is_e and not previous:
            blocks.append([])
        if is_e:
            blocks[-1].append(line[1:].strip())
        previous = is_e
    return blocks[-1] if blocks else []


def _recorded(case: ET.Element, name: str) -> list[str]:
    return [
        value
        for prop in case.iter("property")
        if prop.get("name") == name and (value := prop.get("value")) is not None
    ]


def _suffix(by_pair: dict[tuple[str, str], str], case: ET.Element) -> str | None:
    classname, name = case.get("classname", ""), case.get("name", "")
    found = [
        nodeid
        for (cls, nm), nodeid in by_pair.items()
        if nm == name and (cls.endswith("." + classname) or classname.endswith("." + cls))
    ]
    return found[0] if len(found) == 1 else None


def _outcome(case: ET.Element) -> tuple[TestOutcome, Failure | None]:
    failure, error = case.find("failure"), case.find("error")
    if failure is not None:  # a failed call, perhaps with a teardown error: SWE-bench's FAILED
        return "failed", _failure(failure, "call")
    if error is not None:
        message = error.get("message") or ""
        return "error", _failure(error, "teardown" if message.startswith(_TEARDOWN) else "setup")
    skipped = case.find("skipped")
    if skipped is not None:
        # SWE-bench counts an expected failure as passing.
        return ("passed" if skipped.get("type") == "pytest.xfail" else "skipped"), None
    return ("xpassed" if _recorded(case, XPASS_PROPERTY) else "passed"), None


def _failure(element: ET.Element, when: When) -> Failure:
    text = element.text or ""
    lines = error_lines(text)
    message = element.get("message") or ""
    if element.tag == "error" or not message:  # an error's message is no crash before pytest 6
        message = lines[0] if lines else message
    return Failure(when, message.strip()[:500], text)
