"""The simulator in the policy arm: its next call, read off the selection prompt alone
(the ledger lines ``kind, target, result`` and the latest observation), through the shown-state
format of ``shown.py``: no heading, marker or result string of the prompt is spelled here."""

from __future__ import annotations

from typing import Any

from ... import shown
from ...bench.instance import Instance
from .base_tree import BaseTree
from .dice import Dice
from .plan import Plan, blind_search, make_plan

Call = dict[str, Any]


def ledger_truncated(user: str) -> bool:
    """Whether the prompt's ledger window leaves out older entries."""
    return shown.read_policy(user).truncated


def read_prompt(user: str) -> tuple[list[str], dict[str, Any]]:
    """The ledger lines and the latest observation of a policy prompt."""
    view = shown.read_policy(user)
    return list(view.ledger), view.latest


def policy_action(instance: Instance, tree: BaseTree | None, user: str, dice: Dice) -> Call:
    view = shown.read_policy(user)
    lines, latest = list(view.ledger), view.latest
    if instance.underspecified or not instance.patch:
        if dice.roll("guess", "issue"):
            return _call("stop", reason="fixed the issue as I understood it")
        return _call("ask_user", question=_question(instance))
    # An unverified read or test result is not taken at its word: checked again, once. (A test
    # is then judged by its exit code, never by the ``passed`` beside it: see ``_failed``.)
    if latest.get("trust") == "unverified" and latest.get("kind") in ("read_entity", "run_test"):
        # As far as the comma after the target: a line its cap cuts there still counts.
        key = shown.entry_prefix(str(latest["kind"]), str(latest.get("target")), "").rstrip()
        if sum(line.startswith(key) for line in lines) <= 1:  # re-check once
            arg = "selector" if latest["kind"] == "read_entity" else "target"
            return _call(latest["kind"], **{arg: latest.get("target")})
    plan = make_plan(instance, tree, dice, entity_scoped=True)
    target = instance.test_target or "tests"
    return _next(plan, lines, view.truncated, dice, target)


def _done(edits: tuple[Any, ...], lines: list[str], truncated: bool) -> int:
    """How many planned edits are committed. The ledger window is a suffix of the whole ledger,
    so once older entries fall out of it the visible commits are matched, in order, against the
    plan's selectors (the first consistent position), not merely counted."""
    seen = [shown.entry_fields(line)[1] for line in lines if _is_commit(line)]
    if not truncated:
        return len(seen)
    selectors = [e.selector for e in edits]
    consistent = [
        k for k in range(len(seen), len(selectors) + 1) if selectors[k - len(seen) : k] == seen
    ]
    if not consistent:
        return len(seen)
    # A long run of edits of one entity fills the window alike at several positions. Reading
    # an entity comes right before its first edit, so a read after the last visible commit
    # names where the plan stands.
    last = max((i for i, line in enumerate(lines) if _is_commit(line)), default=-1)
    for line in lines[last + 1 :]:
        if line.startswith(shown.entry_prefix("read_entity", "")) and not shown.entry_is_error(
            line
        ):
            read = shown.entry_fields(line)[1]
            at = [k for k in consistent if k < len(selectors) and selectors[k] == read]
            if at:
                return at[0]
    return consistent[0]


def _next(plan: Plan, lines: list[str], truncated: bool, dice: Dice, target: str) -> Call:
    committed = [i for i, line in enumerate(lines) if _is_commit(line)]
    edits = plan.first + plan.fix
    done = _done(edits, lines, truncated)
    tests = [i for i, line in enumerate(lines) if _is_test(line)]
    seen = tests[-1] if tests and (not committed or tests[-1] > committed[-1]) else None
    if done < len(plan.first) or (seen is not None and done < len(edits) and _failed(lines[seen])):
        return _edit(edits[done], done, lines, dice)
    if seen is not None:
        if _failed(lines[seen]):
            return _call("stop", reason="the tests still fail; giving up")
        return _call("stop", reason="fixed; the tests pass")
    if done and dice.roll("premature_success", "patch"):
        return _call("stop", reason="fixed")
    # Check the patch by running the test, as the baseline does: the post-patch trigger fires
    # first (this call forms the patch), then this run's own result follows it.
    return _call("run_test", target=target)


def _edit(edit: Any, index: int, lines: list[str], dice: Dice) -> Call:
    sel = edit.selector
    last = max((i for i, line in enumerate(lines) if _is_commit(line)), default=-1)
    refusals = [r for r in (_refusal(line, sel) for line in lines[last + 1 :]) if r]
    if len(refusals) >= 2 and refusals[-1] == refusals[-2]:
        return _call("stop", reason=f"the edit of {sel} was refused twice: {refusals[-1]}")
    read = any(
        line.startswith(shown.entry_prefix("read_entity", sel, ""))
        and not shown.entry_is_error(line)
        for line in lines
    )
    tried = any(_refused(line, sel) and sel in line for line in lines)
    if not read and tried:
        return _call("read_entity", selector=sel, body=True)
    if not read and not dice.roll("blind_edit", f"edit{index}"):
        return _call("read_entity", selector=sel, body=True)
    search = edit.search
    if not read and dice.roll("blind_wrong", f"edit{index}"):
        search = blind_search(search)
    return _call("edit_entity", selector=sel, search=search, replace=edit.replace)


def _refused(line: str, sel: str) -> bool:
    """Whether this ledger line is an edit of ``sel`` that failed, or a rejected edit."""
    return line.startswith(shown.entry_prefix("edit_entity", sel, shown.ERROR)) or line.startswith(
        shown.entry_prefix("rejected", "edit_entity")
    )


def _refusal(line: str, sel: str) -> str | None:
    """The reason an edit of ``sel`` was refused on this ledger line, if it was."""
    fields = shown.entry_fields(line)
    if line.startswith(shown.entry_prefix("edit_entity", sel, shown.ERROR)):
        return fields[2]
    if line.startswith(shown.entry_prefix("rejected", "edit_entity")) and sel in line:
        return fields[2] if len(fields) == 3 else line
    return None


def _is_commit(line: str) -> bool:
    return shown.entry_is_commit(line)


def _is_test(line: str) -> bool:
    """A test result: the post-patch trigger's, or a run_test the simulator asked for (not one
    that failed to run: that line has no exit code)."""
    starts = (shown.entry_prefix("test", ""), shown.entry_prefix("run_test", ""))
    return line.startswith(starts) and shown.entry_exit_code(line) is not None


def _failed(line: str) -> bool:
    """Judged by the exit code alone: a wrapper's ``passed`` may contradict it (``flaky_tool``)."""
    return shown.entry_exit_code(line) != 0


def _question(instance: Instance) -> str:
    first = instance.problem_statement.strip().splitlines()[0][:120]
    return f"The issue does not say what the correct behaviour is ({first}). What should it be?"


def _call(tool: str, **args: Any) -> Call:
    return {"tool": tool, "args": args}
