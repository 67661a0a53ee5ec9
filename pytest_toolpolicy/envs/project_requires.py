"""A checkout's own requirements, from pip's dry-run report, as a requirement file uv resolves.

Resolving ``setup.py`` with uv runs the checkout's setup code inside the resolution, which may
then not share uv's cache (what it runs could reach another environment's build), and a private
cache fetches every index page again: the larger part of a second build of a repository. So the
requirements are read first, in the sandbox, without the network and without a cache: the
venv's pip prepares the project's metadata with the venv's own build tools
(``pip install --dry-run --no-deps --no-index --no-build-isolation --report``), and its report
(format: pip's "installation report", version 1) says what the project requires and for which
interpreter. What is left is text — names, version bounds, markers — that the shared cache can
resolve. Markers are evaluated as pip evaluates them for that install: with the report's
``environment`` and each requested extra.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName
from packaging.requirements import InvalidRequirement, Requirement

REPORT_MAX_BYTES = 4 << 20


class UnreadableReport(ValueError):
    """The report is not pip's, or says nothing of one project's requirements."""


def report_argv(python: str, target: str, report: str) -> list[str]:
    """The venv's pip, asked what ``target`` (``.`` or ``.[test]``) requires; nothing installed."""
    return [
        python, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index",
        "--no-build-isolation", "--ignore-installed", "--quiet", "--report", report, target,
    ]  # fmt: skip


def requirement_lines(text: str) -> list[str]:
    """The project's requirements, one line each, the markers decided (those that hold for the
    report's interpreter and extras kept, without their markers; the others left out)."""
    try:
        report = json.loads(text)
    except ValueError as exc:
        raise UnreadableReport(f"not JSON: {exc}") from None
    if not isinstance(report, dict) or not isinstance(report.get("install"), list):
        raise UnreadableReport("no 'install' list")
    items = report["install"]
    if len(items) != 1 or not isinstance(items[0], dict):
        raise UnreadableReport(f"{len(items)} items to install, expected the project alone")
    item: dict[str, Any] = items[0]
    metadata = item.get("metadata")
    environment = report.get("environment")
    if not isinstance(metadata, dict) or not isinstance(environment, dict):
        raise UnreadableReport("no metadata or environment")
    requires = metadata.get("requires_dist") or []
    extras = item.get("requested_extras") or []
    if not isinstance(requires, list) or not isinstance(extras, list):
        raise UnreadableReport("requires_dist or requested_extras is not a list")
    env = {str(k): str(v) for k, v in environment.items()}
    lines = []
    for raw in requires:
        try:
            requirement = Requirement(str(raw))
        except InvalidRequirement as exc:
            raise UnreadableReport(f"requirement {raw!r}: {exc}") from None
        if _holds(requirement, env, [str(e) for e in extras]):
            requirement.marker = None
            lines.append(str(requirement))
    return lines


def _holds(requirement: Requirement, env: Mapping[str, str], extras: list[str]) -> bool:
    if requirement.marker is None:
        return True
    try:
        return any(requirement.marker.evaluate({**env, "extra": e}) for e in extras or [""])
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName) as exc:
        raise UnreadableReport(f"marker of {requirement.name}: {exc}") from None
