"""The A/B over pytest-xdist's remote workers: two execnet socket servers that share no disk
with the controller (``remote_workers.py``) give the table a local ``-n 2`` run gives, and the
controller alone writes the report directory."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from pytest_toolpolicy.bench.load import BUNDLED_DIR

from .remote_workers import socket_workers
from .sessions import session_env

ARGS = ["--toolpolicy=ab", "--toolpolicy-sample=2", "--toolpolicy-seed=3", "--toolpolicy-max-turns=3",
        "--toolpolicy-ablate=trigger.test", "-p", "no:randomly", "-p", "no:cacheprovider"]  # fmt: skip
# Counts of tool executions depend on which memo a run found warm: each remote worker has its
# own (local workers share one); an operational count, not a measure.
VOLATILE = ("cf_tool_executions",)


# Whole A/B sessions under xdist (~15-70 s each): `make test-slow`, which CI runs.
pytestmark = pytest.mark.slow


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pytest", *args]
    env = session_env()
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def _table(report: Path) -> pd.DataFrame:
    table = pd.read_csv(report / "decision.csv", index_col=0)
    return table.drop(columns=[c for c in table.columns if c in VOLATILE])


def test_socket_workers_give_the_local_table_and_only_the_controller_writes(tmp_path: Path) -> None:
    local, remote = tmp_path / "local", tmp_path / "controller"
    local.mkdir()
    remote.mkdir()
    done = _pytest(local, *ARGS, "-n", "2", "--toolpolicy-report=report")
    assert done.returncode == 0, done.stdout[-3000:]
    with socket_workers(tmp_path, hidden=remote) as specs:
        tx = [arg for spec in specs for arg in ("--tx", spec)]
        done = _pytest(remote, *ARGS, "-d", *tx, "--toolpolicy-report=report")
    assert done.returncode == 0, done.stdout[-3000:]
    pd.testing.assert_frame_equal(_table(remote / "report"), _table(local / "report"))
    # Every item's trajectory reached the controller, through the test reports.
    lines = (remote / "report" / "trajectories.jsonl").read_text(encoding="utf-8").splitlines()
    items = pd.read_parquet(remote / "report" / "results.parquet")["item"]
    assert len(lines) == len(items) == 6 and all(json.loads(line)["turns"] for line in lines)
    assert len(list((remote / "report" / "items").glob("*.json"))) == 6
    for worker in ("w1", "w2"):  # nothing of the report on a worker; a memo of its own
        home = tmp_path / worker
        assert not list(home.rglob("decision.csv")) and not list(home.rglob("items"))
        assert len(list((home / "cache" / "memo").glob("*.sqlite"))) == 1


def test_a_worker_that_lacks_the_dataset_fails_its_items_with_the_reason(tmp_path: Path) -> None:
    """The dataset is a directory next to the controller, named relatively: the workers, each
    in a directory of its own, cannot load it. Their items fail saying so; the session ends."""
    controller = tmp_path / "controller"
    controller.mkdir()
    shutil.copytree(BUNDLED_DIR.parent, controller / "bench")  # the instances and their repos
    with socket_workers(tmp_path, hidden=controller) as specs:
        tx = [arg for spec in specs for arg in ("--tx", spec)]
        done = _pytest(controller, "--toolpolicy=ab", "--toolpolicy-sample=1", "--toolpolicy-dataset=bundled:bench/instances",
                       "-p", "no:cacheprovider", "-d", *tx, "--toolpolicy-report=report", "-rf")  # fmt: skip
    assert done.returncode == 1, done.stdout[-3000:]
    assert "2 failed" in done.stdout and "INTERNALERROR" not in done.stdout + done.stderr
    assert (
        "cannot run items: --toolpolicy-dataset bundled:bench/instances: bundled benchmark directory bench/instances does not exist"
        in done.stdout
    )
    results = pd.read_parquet(controller / "report" / "results.parquet")
    assert set(results["status"]) == {"error"} and len(results) == 2
    assert results["error"].str.contains("does not exist").all()


def test_resume_under_xdist_hands_the_finished_rows_to_the_workers(tmp_path: Path) -> None:
    """The workers read no report directory: the controller hands them the finished rows, and
    the trajectories come from its own disk."""
    args = ["--toolpolicy=ab", "--toolpolicy-sample=1", "--toolpolicy-max-turns=2", "-p", "no:cacheprovider",
            "-n", "2", "--toolpolicy-report=report", "--toolpolicy-no-view"]  # fmt: skip
    first = _pytest(tmp_path, *args)
    assert first.returncode == 0, first.stdout[-3000:]
    before = (tmp_path / "report" / "trajectories.jsonl").read_text(encoding="utf-8")
    again = _pytest(tmp_path, *args, "--toolpolicy-resume")
    assert again.returncode == 0, again.stdout[-3000:]
    assert "resumed: 2 items" in again.stdout
    results = pd.read_parquet(tmp_path / "report" / "results.parquet")
    assert results["resumed"].fillna(False).astype(bool).all()
    after = (tmp_path / "report" / "trajectories.jsonl").read_text(encoding="utf-8")
    assert (
        sorted(after.splitlines()) == sorted(before.splitlines()) and len(after.splitlines()) == 2
    )


# The agent of a command line: one call to the bridge (stdlib only), the reply left as its edit.
ONE_CALL = (
    "import json, os, urllib.request as u; "
    "body = json.dumps({'model': 'm', 'messages': [{'role': 'user', 'content': 'hi'}]}).encode(); "
    "r = u.urlopen(u.Request(os.environ['OPENAI_BASE_URL'] + '/chat/completions', body, "
    "{'Content-Type': 'application/json'})); "
    "open('AGENT_WAS_HERE', 'w').write(json.load(r)['choices'][0]['message']['content'])"
)


def test_an_external_agent_runs_on_socket_workers(tmp_path: Path) -> None:
    """On an execnet socket server ``socketserver`` is execnet's script: the bridge, which
    imports neither it nor ``http.server``, starts, and the agent's call is served and
    recorded."""
    from pytest_toolpolicy.primitives.sandbox import Sandbox

    if Sandbox.from_env().mode != "bwrap":
        pytest.skip("an external agent runs only in the sandbox")
    controller = tmp_path / "controller"
    controller.mkdir()
    script = tmp_path / "replies.jsonl"  # outside the directory the workers cannot see
    stop = {"text": json.dumps({"tool": "stop", "args": {"reason": "done"}}),
            "usage": {"prompt_tokens": 77, "completion_tokens": 5}}  # fmt: skip
    script.write_text("\n".join(json.dumps(stop) for _ in range(4)) + "\n")
    agent = f'cmd:{sys.executable} -c "{ONE_CALL}"'
    with socket_workers(tmp_path, hidden=controller) as specs:
        tx = [arg for spec in specs for arg in ("--tx", spec)]
        done = _pytest(controller, "--toolpolicy=ab", "--toolpolicy-sample=1",
                       f"--toolpolicy-model=scripted:{script}", f"--toolpolicy-current={agent}",
                       "-p", "no:cacheprovider", "-d", *tx, "--toolpolicy-report=report",
                       "--toolpolicy-no-view")  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    lines = (controller / "report" / "trajectories.jsonl").read_text().splitlines()
    (current,) = [r for r in map(json.loads, lines) if r["arm"] == "current"]
    assert current["meta"]["agent_exit"] == 0, current["meta"]["agent_output"]
    assert current["turns"][0]["completion"]["usage"]["prompt_tokens"] == 77
    assert "AGENT_WAS_HERE" in current["patch"]
