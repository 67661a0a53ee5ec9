"""The lint gate: ``py_compile`` + ``ruff --select E9,F`` on one file's text."""

from __future__ import annotations

import json
import os
import subprocess
import warnings
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cache

# One lint of one file's text (at most ``limits.read_mb``): seconds at worst for ruff.
RUFF_TIMEOUT_S = 60


@dataclass(frozen=True)
class LintError:
    code: str
    message: str
    line: int

    def record(self) -> dict[str, object]:
        return asdict(self)

    def __str__(self) -> str:
        return f"{self.code} {self.message} (line {self.line})"


@cache
def _ruff_bin() -> str | None:
    try:
        from ruff.__main__ import find_ruff_bin

        return str(find_ruff_bin())
    except (ImportError, FileNotFoundError):
        return None


def compile_errors(text: str, rel: str) -> list[LintError]:
    try:
        with warnings.catch_warnings():  # the file's own warnings are not a lint verdict
            warnings.simplefilter("ignore")
            compile(text, rel, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return [LintError("py_compile", f"{type(exc).__name__}: {exc.msg}", exc.lineno or 0)]
    except ValueError as exc:  # e.g. NUL bytes
        return [LintError("py_compile", str(exc), 0)]
    except (RecursionError, MemoryError) as exc:  # pathologically nested code: still the text's
        return [LintError("py_compile", f"{type(exc).__name__}: {exc or 'too deeply nested'}", 0)]
    return []


def _ruff_env() -> dict[str, str]:
    """A host-side subprocess over text a model wrote gets none of the harness's secrets;
    ``--isolated`` already keeps every configuration file out."""
    return {"PATH": os.environ.get("PATH", os.defpath), "LC_ALL": "C.UTF-8"}


def ruff_errors(text: str, rel: str) -> list[LintError]:
    binary = _ruff_bin()
    if binary is None:
        raise RuntimeError("ruff is not installed")
    argv = [binary, "check", "--isolated", "--select", "E9,F", "--output-format", "json"]
    argv += ["--no-cache", "--stdin-filename", rel, "-"]
    try:
        proc = subprocess.run(
            argv,
            input=text,
            capture_output=True,
            encoding="utf-8",
            errors="replace",
            check=False,
            timeout=RUFF_TIMEOUT_S,
            env=_ruff_env(),
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"ruff took over {RUFF_TIMEOUT_S} s") from None
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"ruff failed: {proc.stderr.strip()[:300]}")
    out = []
    for item in json.loads(proc.stdout or "[]"):
        line = (item.get("location") or {}).get("row") or 0
        out.append(LintError(item.get("code") or "syntax", item.get("message", ""), line))
    return out


def lint_text(text: str, rel: str) -> list[LintError]:
    """Every py_compile and ``ruff --select E9,F`` error of a file's text (``ruff --isolated``,
    so a repository's own ruff settings cannot silence the gate)."""
    errors = compile_errors(text, rel)
    seen = {(e.line, e.message) for e in errors}
    return errors + [e for e in ruff_errors(text, rel) if (e.line, e.message) not in seen]


def added_errors(before: Sequence[LintError], after: Sequence[LintError]) -> list[LintError]:
    """Errors in ``after`` that ``before`` did not have. Lines shift under an edit, so errors are
    compared by code and message, as a multiset."""
    budget = Counter((e.code, e.message) for e in before)
    added = []
    for error in after:
        key = (error.code, error.message)
        if budget[key]:
            budget[key] -= 1
        else:
            added.append(error)
    return added
