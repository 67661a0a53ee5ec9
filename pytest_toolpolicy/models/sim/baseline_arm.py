"""The simulator in the baseline arm: its next calls, read off the chat history (its own earlier
replies and the results that followed each), the results through the shown-state format of
``shown.py``."""

from __future__ import annotations

import json
from typing import Any

from ... import shown
from ...bench.instance import Instance
from .base_tree import BaseTree
from .dice import Dice
from .plan import blind_search, make_plan

Call = dict[str, Any]
_EDITS = ("edit_file", "write_file")


def history(messages: list[dict[str, str]]) -> list[tuple[Call, str]]:
    """Each earlier call with its result block."""
    out: list[tuple[Call, str]] = []
    for i, message in enumerate(messages):
        if message.get("role") != "assistant":
            continue
        try:
            value = json.loads(message.get("content", ""))
        except ValueError:
            continue
        calls = value if isinstance(value, list) else [value]
        reply = messages[i + 1]["content"] if i + 1 < len(messages) else ""
        results = shown.result_blocks(reply)
        out += [(c, results.get(str(n), "")) for n, c in enumerate(calls, 1) if isinstance(c, dict)]
    return out


def baseline_action(
    instance: Instance, tree: BaseTree | None, messages: list[dict[str, str]], dice: Dice
) -> Call:
    if instance.underspecified or not instance.patch:
        if dice.roll("guess", "issue"):
            return _call("submit", message="Fixed the issue as I understood it.")
        return _call("submit", message=f"No change made. Question: {_question(instance)}")
    past = history(messages)
    ok = [(c, r) for c, r in past if _ok(r)]
    edits_done = [
        i for i, (c, r) in enumerate(past) if c.get("tool") in _EDITS and _ok(r)
    ]  # fmt: skip
    tests = [i for i, (c, _) in enumerate(past) if c.get("tool") == "bash"]
    plan = make_plan(instance, tree, dice, entity_scoped=False)
    edits = plan.first + plan.fix
    done = len(edits_done)
    seen = tests[-1] if tests and (not edits_done or tests[-1] > edits_done[-1]) else None
    failed = seen is not None and not shown.block_passed(past[seen][1])
    if done < len(plan.first) or (failed and done < len(edits)):
        edit = edits[done]
        if not edit.search and not edit.selector:  # a file the gold patch adds
            return _call("write_file", path=edit.file, content=edit.replace)
        read = any(
            c.get("tool") == "read_file" and c["args"].get("path") == edit.file for c, _ in ok
        )
        tried = any(c.get("tool") == "edit_file" and not _ok(r) for c, r in past)
        if not read and (tried or not dice.roll("blind_edit", f"edit{done}")):
            return _call("read_file", path=edit.file)
        old = edit.search
        if not read and dice.roll("blind_wrong", f"edit{done}"):
            old = blind_search(old)
        return _call("edit_file", path=edit.file, old=old, new=edit.replace)
    if seen is not None:
        return _call("submit", message="Fixed." if not failed else "Tests still fail.")
    if dice.roll("premature_success", "patch"):
        return _call("submit", message="Fixed.")
    return _call("bash", command=f"python -m pytest -q {instance.test_target or 'tests'}")


def _ok(result: str) -> bool:
    return shown.block_ok(result)


def _question(instance: Instance) -> str:
    first = instance.problem_statement.strip().splitlines()[0][:120]
    return f"The issue does not say what the correct behaviour is ({first}). What should it be?"


def _call(tool: str, **args: Any) -> Call:
    return {"tool": tool, "args": args}
