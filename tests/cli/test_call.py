import json
import shutil
from pathlib import Path

import pytest

from pytest_toolpolicy.cli import main
from pytest_toolpolicy.demo import EXAMPLE
from pytest_toolpolicy.primitives import Workspace

RECALL = "memstore.store.MemStore.recall"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "memstore"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__"))
    Workspace.create(root)
    return root


def call(repo: Path, reply: dict | str, capsys, ledger: Path | None = None) -> dict:
    argv = ["call", "--workspace", str(repo)]
    if ledger is not None:
        argv += ["--ledger", str(ledger)]
    text = reply if isinstance(reply, str) else json.dumps(reply)
    assert main([*argv, text]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_read_in_one_call_is_evidence_for_an_edit_in_the_next(repo, tmp_path, capsys):
    ledger = tmp_path / "ledger.json"
    edit = {
        "tool": "edit_entity",
        "args": {"selector": RECALL, "search": "> expires", "replace": ">= expires"},
    }
    refused = call(repo, edit, capsys)  # no ledger: no evidence
    assert refused == {
        "ok": False,
        "rejected": True,
        "tool": "edit_entity",
        "reason": f"precondition failed: no evidence for selector {RECALL}",
    }
    read = call(repo, {"tool": "read_entity", "args": {"selector": RECALL}}, capsys, ledger)
    assert read["observation"]["ok"] and read["observation"]["data"]["entity"]["selector"] == RECALL
    done = call(repo, edit, capsys, ledger)
    assert done["observation"]["data"]["committed"] is True
    assert done["triggers"] == [{"kind": "lint", "target": RECALL, "result": "clean"}]
    assert len(json.loads(ledger.read_text())["entries"]) == 3


def test_terminal_noop_and_deferred(repo, capsys):
    assert call(repo, {"tool": "stop", "args": {"reason": "done"}}, capsys) == {
        "outcome": "stop",
        "reason": "done",
    }
    noop = call(repo, "let me think", capsys)
    assert noop["noop"] is True and noop["reason"]
    two = json.dumps(
        [{"tool": "search_symbol", "args": {"query": "recall"}}, {"tool": "stop", "args": {}}]
    )
    result = call(repo, two, capsys)
    assert result["observation"]["data"]["matches"][0]["selector"] == RECALL
    assert [d["tool"] for d in result["deferred"]] == ["stop"]


def test_unusable_input_exits_two(tmp_path, capsys):
    assert main(["call", "--workspace", str(tmp_path / "missing"), "{}"]) == 2
    bad = tmp_path / "ledger.json"
    bad.write_text("{oops")
    assert main(["call", "--workspace", str(tmp_path), "--ledger", str(bad), "{}"]) == 2
    assert "cannot read ledger" in capsys.readouterr().err
