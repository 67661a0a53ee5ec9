"""Event-driven triggers over a real Toolbox: symbol token, post-edit lint, post-patch test."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.policy import triggers
from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.ledger import Ledger
from pytest_toolpolicy.policy.triggers import (
    lint_trigger,
    symbol_tokens,
    symbol_trigger,
)
from pytest_toolpolicy.primitives import Toolbox
from pytest_toolpolicy.primitives.symbols import SYMBOL_RE

FULL = PolicyConfig()
ISSUE = "Calling memstore.MemStore.remember twice loses the first key."
FILES = {
    "memstore/__init__.py": "",
    "memstore/store.py": (
        "class MemStore:\n"
        "    def __init__(self):\n"
        "        self.keys = []\n\n"
        "    def remember(self, key):\n"
        "        self.keys = [key]\n"
        "        return self.keys\n"
    ),
    "memstore/legacy.py": "def old():\n    return undefined_name\n\n\ndef keep(x):\n    return x\n",
    "tests/test_store.py": (
        "from memstore.store import MemStore\n\n\n"
        "def test_remember_twice():\n"
        "    store = MemStore()\n"
        "    store.remember('a')\n"
        "    assert store.remember('b') == ['a', 'b']\n"
    ),
}
TARGET = "tests/test_store.py::test_remember_twice"
# The sandboxed pytest runs (the post-patch test trigger, run_test) without this venv's other
# pytest plugins, as the A/B's own toolbox for a bundled project (run/arms.py): the project needs
# none, and loading them costs ~2.4 s a run in the sandbox (PYTHONDONTWRITEBYTECODE=1 there, so
# pytest assertion-rewrites hypothesis, anyio and xdist again each time).
NO_PLUGINS = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


@pytest.fixture
def box(tmp_path: Path) -> Toolbox:
    for rel, text in FILES.items():
        path = tmp_path / "ws" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return Toolbox(tmp_path / "ws", sandbox_env=NO_PLUGINS)


# -- symbol token -----------------------------------------------------------------------------


def test_symbol_regex_is_the_spec_regex() -> None:
    assert SYMBOL_RE.pattern == r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+"
    assert triggers.CAMEL_RE.pattern == r"\b[A-Z][a-zA-Z0-9_]+\b"


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        (ISSUE, ["memstore.MemStore.remember"]),
        ("see foo.bar. and foo.bar, then a.b_c.D9!", ["foo.bar", "a.b_c.D9"]),
        ("no dots here, MemStore either", []),
        ("edit setup.py and test_x.py", ["setup.py", "test_x.py"]),  # the exact regex, documented
        ("1.5 and .5 and x.1", []),
    ],
)
def test_symbol_tokens(text: str, tokens: list[str]) -> None:
    assert symbol_tokens(text) == tokens


def test_camel_tokens_only_when_enabled_and_not_inside_a_dotted_token() -> None:
    text = "MemStore breaks memstore.MemStore.remember; see Store and MemStore."
    assert symbol_tokens(text) == ["memstore.MemStore.remember"]
    assert symbol_tokens(text, camel=True) == ["MemStore", "memstore.MemStore.remember", "Store"]


def test_issue_naming_a_symbol_fires_a_symbol_observation(box: Toolbox) -> None:
    ledger, fired = symbol_trigger([ISSUE], Ledger(), box.call, FULL)
    [observation] = fired
    assert ledger.entries == (observation,)
    assert (observation.kind, observation.target, observation.source) == (
        "symbol",
        "memstore.MemStore.remember",
        "trigger",
    )
    assert set(observation.data) == {"kind", "query", "matches"}
    assert observation.data["kind"] == "symbol"
    assert observation.data["query"] == "memstore.MemStore.remember"
    [match] = observation.data["matches"]
    assert match["selector"] == "memstore.store.MemStore.remember"
    assert match["signature"] == "def remember(self, key):"
    assert "body" not in match  # signature-only
    assert observation.result == "1 match: memstore.store.MemStore.remember"
    assert "memstore.store.MemStore.remember" in ledger.evidence
    assert "symbol:memstore.MemStore.remember" in ledger.fired


def test_symbol_fires_once_per_token(box: Toolbox) -> None:
    ledger, _ = symbol_trigger([ISSUE], Ledger(), box.call, FULL)
    again, fired = symbol_trigger(
        [ISSUE, "memstore.MemStore.remember again"], ledger, box.call, FULL
    )
    assert fired == [] and again == ledger


def test_symbol_fires_for_at_most_k_new_tokens_per_call() -> None:
    calls: list[dict[str, Any]] = []

    def run(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        calls.append(args)
        return {"ok": True, "error": None, "data": {"query": args["query"], "matches": []}}

    texts = ["a.a b.b", "c.c a.a d.d", "e.e"]
    ledger, fired = symbol_trigger(texts, Ledger(), run, FULL)
    assert [o.target for o in fired] == ["a.a", "b.b", "c.c"]
    assert fired[0].result == "no matches"
    ledger, fired = symbol_trigger(texts, ledger, run, FULL)
    assert [o.target for o in fired] == ["d.d", "e.e"]
    _, fired = symbol_trigger(texts, Ledger(), run, PolicyConfig(symbol_k=1))
    assert [o.target for o in fired] == ["a.a"]
    assert [c["query"] for c in calls] == ["a.a", "b.b", "c.c", "d.d", "e.e", "a.a"]


def test_failed_search_still_fires_once() -> None:
    def run(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": False, "error": "boom", "data": None}

    ledger, [observation] = symbol_trigger(["x.y"], Ledger(), run, FULL)
    assert observation.result == "search_symbol failed: boom"
    assert observation.data == {"kind": "symbol", "query": "x.y", "matches": []}
    assert symbol_trigger(["x.y"], ledger, run, FULL)[1] == []


def test_camel_flag_fires_on_bare_camel_case(box: Toolbox) -> None:
    assert symbol_trigger(["MemStore is broken"], Ledger(), box.call, FULL)[1] == []
    config = PolicyConfig(symbol_camel=True)
    [observation] = symbol_trigger(["MemStore is broken"], Ledger(), box.call, config)[1]
    assert observation.data["matches"][0]["selector"] == "memstore.store.MemStore"


def test_symbol_gate_off_fires_nothing(box: Toolbox) -> None:
    ledger = Ledger()
    assert symbol_trigger([ISSUE], ledger, box.call, FULL.without("trigger.symbol")) == (ledger, [])


# -- post-edit lint ---------------------------------------------------------------------------


def commit(box: Toolbox, selector: str, search: str, replace: str) -> dict[str, Any]:
    envelope = box.call("edit_entity", {"selector": selector, "search": search, "replace": replace})
    assert envelope["ok"] and envelope["data"]["committed"], envelope
    return envelope["data"]


def test_committed_edit_fires_a_clean_lint_observation(box: Toolbox) -> None:
    selector = "memstore.store.MemStore.remember"
    data = commit(box, selector, "self.keys = [key]", "self.keys.append(key)")
    ledger, [observation] = lint_trigger(selector, data["file"], box.root, Ledger(), FULL)
    assert observation.data == {"kind": "lint", "target": selector, "result": "clean"}
    assert (observation.kind, observation.target, observation.result) == ("lint", selector, "clean")
    assert observation.source == "trigger" and ledger.entries == (observation,)


def test_lint_reports_errors_of_the_committed_file(box: Toolbox) -> None:
    data = commit(box, "memstore.legacy.keep", "return x", "return x + 1")
    _, [observation] = lint_trigger("memstore.legacy.keep", data["file"], box.root, Ledger(), FULL)
    assert observation.result == "F821 Undefined name `undefined_name` (line 2)"
    assert observation.data["result"] == observation.result


def test_lint_fires_once_per_selector_and_file_state(box: Toolbox) -> None:
    selector = "memstore.store.MemStore.remember"
    data = commit(box, selector, "self.keys = [key]", "self.keys.append(key)")
    ledger, _ = lint_trigger(selector, data["file"], box.root, Ledger(), FULL)
    assert lint_trigger(selector, data["file"], box.root, ledger, FULL) == (ledger, [])
    other = lint_trigger("memstore.store.MemStore", data["file"], box.root, ledger, FULL)[1]
    assert len(other) == 1  # another selector in the same state is its own condition
    commit(box, selector, "return self.keys", "return list(self.keys)")
    ledger, fired = lint_trigger(selector, data["file"], box.root, ledger, FULL)
    assert len(fired) == 1 and len(ledger.entries) == 2
    assert sum(key.startswith(f"lint:{selector}:") for key in ledger.fired) == 2


def test_lint_gate_off_fires_nothing(box: Toolbox) -> None:
    data = commit(box, "memstore.legacy.keep", "return x", "return x + 1")
    config = FULL.without("trigger.lint")
    assert lint_trigger("memstore.legacy.keep", data["file"], box.root, Ledger(), config) == (
        Ledger(),
        [],
    )


# -- post-patch test --------------------------------------------------------------------------


def test_formed_patch_fires_a_test_observation_per_patch(box: Toolbox) -> None:
    ledger, [failing] = triggers.test_trigger("patch-0", TARGET, Ledger(), box.call, FULL)
    assert failing.result == {"passed": False, "exit_code": 1}
    assert failing.data["envelope"]["data"]["exit_code"] == 1
    assert {k: failing.data[k] for k in ("kind", "target", "result")} == {
        "kind": "test",
        "target": TARGET,
        "result": {"passed": False, "exit_code": 1},
    }
    assert failing.line() == f'test, {TARGET}, {{"passed": false, "exit_code": 1}}'
    assert triggers.test_trigger("patch-0", TARGET, ledger, box.call, FULL) == (ledger, [])

    commit(box, "memstore.store.MemStore.remember", "self.keys = [key]", "self.keys.append(key)")
    ledger, [passing] = triggers.test_trigger("patch-1", TARGET, ledger, box.call, FULL)
    assert passing.data["result"] == {"passed": True, "exit_code": 0}
    assert [o.kind for o in ledger.entries] == ["test", "test"]


def test_envelope_without_exit_code_counts_as_failed() -> None:
    def run(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        assert (tool, args) == ("run_test", {"target": "nothing"})
        return {"ok": False, "error": "empty target", "data": None}

    _, [observation] = triggers.test_trigger("p", "nothing", Ledger(), run, FULL)
    assert observation.result == {"passed": False, "exit_code": -1}


def test_test_gate_off_fires_nothing() -> None:
    def run(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        raise AssertionError("must not run")

    config = FULL.without("trigger.test")
    assert triggers.test_trigger("p", TARGET, Ledger(), run, config) == (Ledger(), [])


def test_lint_key_hashes_the_file_content(box: Toolbox) -> None:
    ledger, _ = lint_trigger("memstore.legacy.keep", "memstore/legacy.py", box.root, Ledger(), FULL)
    [key] = ledger.fired
    assert re.fullmatch(r"lint:memstore\.legacy\.keep:[0-9a-f]{64}", key)
