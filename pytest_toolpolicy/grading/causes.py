"""Why a grade came out as it did, in a few words a coverage table can count: a pure function of
the grade's status and reason (``GradeResult.reason`` is the full sentence; its leading words
are fixed by the code that writes each one, so results saved by an earlier version classify
the same).

The first rule that matches wins, so the more specific come first.
"""

from __future__ import annotations

import re

# (cause, pattern searched in the reason), for infra_error: first what a grading run writes
# (each at the start of its reason), then what an environment build's failure says.
_INFRA = (
    ("test patch does not apply", r"^test_patch does not apply"),
    ("test ids name no file", r"^no (FAIL_TO_PASS|listed) id names a test file"),
    ("network", r"^needs the network"),
    ("collection error", r"^collection error"),
    (
        "runner did not start",
        r"^(pytest could not run|the test runner reported no test|cannot run)",
    ),
    ("disk bound", r"^grading run stopped"),
    ("records over bound", r"^the grading records went over"),
    ("shared setup error", r"^every listed test errors at setup"),
    ("system package missing", r"needs the Debian package"),
    ("submodule missing", r"needs the git submodule"),
    ("spec file", r"environment spec file"),
    ("no interpreter", r"no Python \d|interpreter"),
    ("build timed out", r"timed out after"),
    ("dependency resolution", r"No solution found|conflicting dependencies|resolv"),
    ("environment build", r"install|build|venv|pre_install|layer"),
    ("mirror incomplete", r"an incomplete mirror"),
    ("workspace", r"workspace|mirror|clone|checkout"),
)
# For a row that is not validated and not an infra error: what the gold or empty run showed.
_FAILED = (
    ("tests failed", r"\bfailed\b"),
    # a listed test skipped: the environment lacks what it needs (xarray's cdms2, conda-only)
    ("tests skipped", r"\bskipped\b"),
    ("tests errored", r"\berror\b"),
    ("tests missing", r"\bmissing\b"),
    ("timed out", r"timed out"),
    ("agent's changes broke the run", r"could not run with the agent's changes"),
    ("run ended early", r"ended in .* before finishing"),
    ("patch does not apply", r"patch does not apply"),
    ("tampered", r"result channel"),
)
_COMPILED = {
    kind: tuple((cause, re.compile(p, re.IGNORECASE)) for cause, p in table)
    for kind, table in (("infra", _INFRA), ("failed", _FAILED))
}


def cause_of(status: str, reason: str | None) -> str:
    """A short cause for a grade that is not ``resolved``: "environment build", "network",
    "tests failed", ...; "other" when no rule matches, "" for a resolved grade."""
    if status == "resolved":
        return ""
    text = reason or ""
    if status == "patch_error":
        return "patch does not apply"
    if status == "?":  # validation's own row for an exception the harness did not expect
        return "harness fault: " + (text.split(":", 1)[0] or "unknown")
    table = _COMPILED["infra" if status == "infra_error" else "failed"]
    return next((cause for cause, pattern in table if pattern.search(text)), "other")
