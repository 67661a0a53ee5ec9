"""Per-test outcomes from a pytest junit XML report, keyed by the node ids that were asked for."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

TestOutcome = Literal["passed", "failed", "error", "skipped", "missing"]
NODEID_PROPERTY = "toolpolicy_nodeid"
_RANK = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}


@dataclass(frozen=True)
class JunitReport:
    outcomes: dict[str, TestOutcome]
    # (test file as a dotted module path, error text) for each module that failed to collect
    collection_errors: tuple[tuple[str, str], ...]


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
    """Outcomes of the ``wanted`` ids found in the report. A test case is matched by the node id
    the grading plugin recorded, else by its mangled (classname, name), else by a unique suffix
    of the classname (a rootdir other than the workspace root prefixes it). Malformed XML
    raises ``xml.etree.ElementTree.ParseError``, and so does a DTD: pytest never writes one,
    and entity expansion is how a small hostile file becomes a huge tree."""
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise ET.ParseError("a DTD or entity declaration is refused")
    by_pair = {mangle(nodeid): nodeid for nodeid in wanted}
    outcomes: dict[str, TestOutcome] = {}
    errors: list[tuple[str, str]] = []
    for case in ET.fromstring(data).iter("testcase"):
        classname, name = case.get("classname", ""), case.get("name", "")
        error = case.find("error")
        if not classname and error is not None and error.get("message") == "collection failure":
            errors.append((name, error.text or ""))
            continue
        nodeid = _recorded(case) or by_pair.get((classname, name)) or _suffix(by_pair, case)
        if nodeid is None:
            continue
        outcome = _outcome(case)
        if nodeid not in outcomes or _RANK[outcome] > _RANK[outcomes[nodeid]]:
            outcomes[nodeid] = outcome  # a teardown error adds a second case for the same test
    return JunitReport(outcomes, tuple(errors))


def _recorded(case: ET.Element) -> str | None:
    for prop in case.iter("property"):
        if prop.get("name") == NODEID_PROPERTY:
            return prop.get("value")
    return None


def _suffix(by_pair: dict[tuple[str, str], str], case: ET.Element) -> str | None:
    classname, name = case.get("classname", ""), case.get("name", "")
    found = [
        nodeid
        for (cls, nm), nodeid in by_pair.items()
        if nm == name and (cls.endswith("." + classname) or classname.endswith("." + cls))
    ]
    return found[0] if len(found) == 1 else None


def _outcome(case: ET.Element) -> TestOutcome:
    if case.find("error") is not None:
        return "error"
    if case.find("failure") is not None:
        return "failed"
    skipped = case.find("skipped")
    if skipped is not None:
        # SWE-bench counts an expected failure as passing.
        return "passed" if skipped.get("type") == "pytest.xfail" else "skipped"
    return "passed"
