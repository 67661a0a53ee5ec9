"""A sandboxed run turns the workspace against the harness; nothing of the host may reach an
observation. Real bubblewrap: each test lets ``run_test`` (a shell command, as a model would
send it) replace files by links to host files, directories by links to host directories, a
module by a FIFO or by a huge file, then reads, searches and edits as the model would."""

from __future__ import annotations

import base64
import json
import os
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.limits import ENV as LIMITS_ENV
from pytest_toolpolicy.models.scripted import ScriptedModel
from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.ledger import Ledger
from pytest_toolpolicy.policy.loop import PolicyLoop, Task
from pytest_toolpolicy.policy.step import step
from pytest_toolpolicy.primitives import Toolbox
from pytest_toolpolicy.primitives import search_symbol as search_symbol_module
from pytest_toolpolicy.primitives.envelope import HarnessFault
from pytest_toolpolicy.primitives.run_test import run_test
from pytest_toolpolicy.primitives.sandbox import Sandbox

MOD = "def f():\n    return 'workspace'\n"


@pytest.fixture(scope="module")
def sandbox(bwrap_sandbox: Sandbox) -> Sandbox:
    return bwrap_sandbox


@pytest.fixture
def marker() -> str:
    return f"host-{uuid.uuid4().hex}"


@pytest.fixture
def host(tmp_path: Path, marker: str) -> Path:
    """A host directory outside the workspace, shaped like a package the model would want."""
    directory = tmp_path / "host"
    directory.mkdir()
    (directory / "__init__.py").write_text(f"SECRET = {marker!r}\n")
    (directory / "mod.py").write_text(f"def f():\n    return {marker!r}\n\n\ndef stolen(): ...\n")
    return directory


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "mod.py").write_text(MOD)
    (root / "pkg" / "other.py").write_text("def h():\n    return 2\n")
    return root


@pytest.fixture
def box(ws: Path, sandbox: Sandbox) -> Toolbox:
    return Toolbox(ws, sandbox=sandbox)


def link(target: Path, name: str) -> str:
    """A shell command making ``name`` a link to ``target``; the host path goes through base64
    so run_test's check of path-like words cannot see it (a model can do as much)."""
    hidden = base64.b64encode(str(target).encode()).decode()
    return f'rm -rf {name} && ln -s "$(echo {hidden} | base64 -d)" {name}'


def sandboxed(box: Toolbox, command: str) -> None:
    env = box.call("run_test", {"target": command, "timeout": 60})
    assert env["ok"] and env["data"]["mode"] == "shell", env
    assert env["data"]["passed"], env["data"]["output"]


def within(seconds: float, fn: Callable[[], Any]) -> Any:
    """``fn()``'s result, failing the test if it has not returned in ``seconds`` (a blocked
    open of a FIFO never returns: the daemon thread is left behind)."""
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # re-raised in the test's thread below
            out["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still blocked after {seconds} s"
    if "error" in out:
        raise out["error"]
    return out["value"]


def everything_the_model_can_ask(box: Toolbox) -> list[dict[str, Any]]:
    calls = [
        ("read_entity", {"selector": "pkg.mod.f", "body": True}),
        ("read_entity", {"selector": "pkg.mod", "body": True}),
        ("read_entity", {"selector": "pkg.mod.stolen", "body": True}),
        ("read_entity", {"selector": "pkg.SECRET"}),
        ("search_symbol", {"query": "stolen"}),
        ("search_symbol", {"query": "f"}),
        ("search_code", {"query": "return the secret host value stolen"}),
        ("edit_entity", {"selector": "pkg.mod.f", "search": "return", "replace": "return 0 or"}),
    ]
    return [box.call(tool, args) for tool, args in calls]


def assert_no_host_content(envelopes: list[dict[str, Any]], marker: str) -> None:
    """The host file's text never shows, nor any entity only the host file defines."""
    assert marker not in json.dumps(envelopes)
    for env in envelopes:
        data = env.get("data")
        matches = data.get("matches", []) if isinstance(data, dict) else []
        assert not [m for m in matches if "stolen" in m["selector"]], matches


def test_a_module_replaced_by_a_link_to_a_host_file_is_never_read(box, host, marker):
    before = box.call("read_entity", {"selector": "pkg.mod.f", "body": True})
    assert before["ok"] and "'workspace'" in before["data"]["body"]
    sandboxed(box, link(host / "mod.py", "pkg/mod.py"))
    assert (box.root / "pkg" / "mod.py").read_text().count(marker) == 1  # the attack is live
    assert "pkg/mod.py" not in box.index.by_file  # the stale spans are gone
    assert box.index.get("pkg.mod.f") is None and box.index.get("pkg.mod") is None
    envelopes = everything_the_model_can_ask(box)
    assert_no_host_content(envelopes, marker)
    refused = "refusing pkg/mod.py: it is a symbolic link"
    assert envelopes[0] == {
        "ok": False,
        "error": f"pkg.mod.f is unavailable: {refused}",
        "data": None,
    }
    assert envelopes[7]["error"] == f"pkg.mod.f is unavailable: {refused}"
    assert box.index.refused["pkg/mod.py"] == refused
    assert (host / "mod.py").read_text().count(marker) == 1  # the host file is untouched


def test_a_package_replaced_by_a_link_to_a_host_directory_is_never_read(box, host, marker):
    sandboxed(box, link(host, "pkg"))
    assert marker in (box.root / "pkg" / "__init__.py").read_text()  # the attack is live
    assert not [rel for rel in box.index.by_file if rel.startswith("pkg/")]
    envelopes = everything_the_model_can_ask(box)
    assert_no_host_content(envelopes, marker)
    assert envelopes[0]["error"] == "pkg.mod.f is unavailable: refusing pkg: it is a symbolic link"
    # A fresh index over the same workspace (the next ``toolpolicy call``) sees no more.
    fresh = Toolbox(box.root, sandbox=box.sandbox)
    assert_no_host_content(everything_the_model_can_ask(fresh), marker)
    assert fresh.index.refused == {"pkg": "refusing pkg: it is a symbolic link"}


def test_a_stale_index_still_never_follows_a_link(box, sandbox, host, marker):
    """The swap happens behind the toolbox's back (no refresh): every read is still refused."""
    env = run_test(box.root, sandbox, link(host / "mod.py", "pkg/mod.py"), timeout=60)
    assert env["ok"] and env["data"]["passed"], env
    assert box.index.get("pkg.mod.f") is not None  # stale: nobody refreshed
    read = box.call("read_entity", {"selector": "pkg.mod.f", "body": True})
    assert read["error"] == "pkg.mod.f is unavailable: refusing pkg/mod.py: it is a symbolic link"
    host_bytes = (host / "mod.py").read_bytes()
    edit = box.call("edit_entity", {"selector": "pkg.mod.f", "search": "return", "replace": "0"})
    assert edit["error"] == read["error"]
    assert_no_host_content([read, edit], marker)
    assert (host / "mod.py").read_bytes() == host_bytes
    assert (box.root / "pkg" / "mod.py").is_symlink()


def test_edit_of_a_module_that_became_a_link_leaves_the_host_file_untouched(box, host, marker):
    original = (host / "mod.py").read_bytes()
    mtime = (host / "mod.py").stat().st_mtime_ns
    assert box.call("read_entity", {"selector": "pkg.mod.f"})["ok"]  # evidence, as a model would
    sandboxed(box, link(host / "mod.py", "pkg/mod.py"))
    env = box.call("edit_entity", {"selector": "pkg.mod.f", "search": "return", "replace": "x ="})
    assert env == {
        "ok": False,
        "error": "pkg.mod.f is unavailable: refusing pkg/mod.py: it is a symbolic link",
        "data": None,
    }
    assert (host / "mod.py").read_bytes() == original
    assert (host / "mod.py").stat().st_mtime_ns == mtime
    assert os.readlink(box.root / "pkg" / "mod.py") == str(host / "mod.py")


def test_a_fifo_named_like_a_module_stalls_nothing(box, sandbox):
    within(30, lambda: sandboxed(box, "rm pkg/mod.py && mkfifo pkg/mod.py"))
    assert box.index.refused["pkg/mod.py"] == "refusing pkg/mod.py: not a regular file"
    env = within(10, lambda: box.call("read_entity", {"selector": "pkg.mod.f", "body": True}))
    assert env["error"] == "pkg.mod.f is unavailable: refusing pkg/mod.py: not a regular file"
    fresh = within(10, lambda: Toolbox(box.root, sandbox=sandbox))  # indexing from scratch
    assert fresh.index.get("pkg.other.h") is not None and fresh.index.get("pkg.mod") is None


def test_a_module_grown_past_the_read_limit_is_refused_not_read(box, monkeypatch):
    monkeypatch.setenv(LIMITS_ENV, "read_mb=1")
    sandboxed(box, "yes 'x = 1' | head -c 2000000 > pkg/mod.py && cp pkg/mod.py pkg/big.py")
    why = "refusing pkg/mod.py: 2000000 bytes, over the 1048576-byte read limit"
    assert box.index.refused["pkg/mod.py"] == why
    assert box.index.get("pkg.mod") is None and box.index.get("pkg.big") is None
    env = box.call("read_entity", {"selector": "pkg.mod", "body": True})
    assert env["error"] == f"pkg.mod is unavailable: {why}"
    assert box.call("read_entity", {"selector": "pkg.big"})["error"].endswith("read limit")


def test_the_index_follows_what_a_sandboxed_run_added_changed_and_removed(box):
    version = box.index.version
    sandboxed(
        box,
        "printf '\\n\\ndef added():\\n    return 3\\n' >> pkg/mod.py"
        " && printf 'def g():\\n    return 4\\n' > pkg/new.py && rm pkg/other.py",
    )
    assert box.index.version > version
    added = box.call("read_entity", {"selector": "pkg.mod.added", "body": True})
    assert added["ok"] and added["data"]["body"] == "def added():\n    return 3"
    assert added["data"]["lines"] == [5, 6]
    assert box.call("read_entity", {"selector": "pkg.new.g"})["ok"]
    found = box.call("search_symbol", {"query": "added"})["data"]["matches"]
    assert [m["selector"] for m in found] == ["pkg.mod.added"]
    gone = box.call("read_entity", {"selector": "pkg.other.h"})
    assert gone["error"] == "pkg.other.h is unavailable: pkg/other.py no longer exists"
    assert box.index.refresh() == []  # nothing changed since


def test_refresh_returns_exactly_what_changed(box, sandbox):
    env = run_test(box.root, sandbox, "printf 'y = 1\\n' >> pkg/other.py && touch pkg/mod.py")
    assert env["ok"] and env["data"]["passed"], env
    old = box.index.by_file["pkg/mod.py"]
    assert box.index.refresh() == ["pkg/other.py"]  # touched only: re-read, same content
    assert box.index.by_file["pkg/mod.py"] is old  # derived indexes keep their work


def test_a_harness_exception_in_a_tool_is_a_harness_fault_bad_args_an_envelope(box, monkeypatch):
    def broken(table, query):
        raise KeyError("index bug")

    monkeypatch.setattr(search_symbol_module, "_tiers", broken)
    with pytest.raises(HarnessFault, match=r"^search_symbol failed: KeyError: 'index bug'$"):
        box.call("search_symbol", {"query": "f"})
    assert box.call("search_symbol", {"query": 3})["ok"] is False
    assert box.call("search_symbol", {"query": "f", "k": "many"})["ok"] is False
    assert box.call("grep", {"pattern": "f"})["error"] == "unknown tool: grep"
    assert box.call("read_entity", {"selector": "../etc"})["error"].startswith("invalid selector")


def test_a_harness_fault_propagates_out_of_the_loop_and_out_of_a_step(box, monkeypatch):
    def broken(table, query):
        raise KeyError("index bug")

    monkeypatch.setattr(search_symbol_module, "_tiers", broken)
    reply = json.dumps({"tool": "search_symbol", "args": {"query": "f"}})
    loop = PolicyLoop(box, ScriptedModel([reply, reply]), PolicyConfig())
    with pytest.raises(HarnessFault, match="search_symbol failed: KeyError"):
        loop.run(Task("hostile-1", "Something is wrong somewhere.", None))
    with pytest.raises(HarnessFault, match="search_symbol failed: KeyError"):
        step(reply, box, Ledger(), PolicyConfig())
