"""Real reports for the viewer's tests, each made once per test run by an A/B session run as a
user runs it (``pytest --toolpolicy=ab`` in a project with no tests of its own)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ..once import made_once
from ..sessions import session_env

# A reply that tries to break out of every context a page puts model text in.
HOSTILE = (
    "<script>window.__pwned = 1</script></pre></template></textarea>"
    '<img src=x onerror="window.__pwned = 2">'
    "\u003c/script><b>bold?</b>"
)
CANDIDATES = '[candidate.issue-first]\nprompt_order = ["issue", "tools", "state"]\n'


def _pytest(root: Path, *args: str) -> None:
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
        *args,
    ]
    env = session_env()
    done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    (root / "stdout.txt").write_text(done.stdout, encoding="utf-8")  # for the tests to read
    if done.returncode not in (0, 1):  # 1: items failed as measured (a model error is a failure)
        raise AssertionError(
            f"the A/B session failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
        )


def sim_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two instances under ``sim``: both arms, one candidate and one ablation (8 items)."""

    def make(root: Path) -> None:
        (root / "candidates.toml").write_text(CANDIDATES, encoding="utf-8")
        _pytest(
            root,
            "--toolpolicy=ab",
            "--toolpolicy-sample=2",
            "--toolpolicy-seed=3",
            "--toolpolicy-max-turns=3",
            "--toolpolicy-ablate=trigger.test",
            "--toolpolicy-candidates=candidates.toml",
            f"--toolpolicy-report={root / 'report'}",
        )

    return made_once(tmp_path_factory, "view-sim-report", make) / "report"


def hostile_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One instance whose model replies only markup (a scripted model): every reply a no-op."""

    def make(root: Path) -> None:
        script = root / "replies.jsonl"
        script.write_text("".join(json.dumps(HOSTILE) + "\n" for _ in range(8)), encoding="utf-8")
        _pytest(
            root,
            "--toolpolicy=ab",
            "--toolpolicy-sample=1",
            "--toolpolicy-max-turns=2",
            f"--toolpolicy-model=scripted:{script}",
            f"--toolpolicy-report={root / 'report'}",
        )

    return made_once(tmp_path_factory, "view-hostile-report", make) / "report"
