"""The shown state: how each piece of state a prompt shows the model is written, and read back.

``sim`` plays the model in both arms of the offline A/B and decides from what the prompt shows it
(besides the instance's gold patch). So every piece of shown state it reads has one definition,
here: a writer, which the prompt builders (``policy/prompt.py``, ``current/prompt.py``) render it
with, and a reader, which the simulator (``models/sim/``) parses it back with. The readers look
the format's strings up here when called, never keeping copies of their own, so a change of a
writer is a change of its reader; ``tests/test_shown.py`` builds real prompts and reads them back,
so a prompt change the simulator would misread fails a test instead of silently changing the
offline A/B. A reader reproduces what the simulator has always read (the recorded trajectories
stay the same); where that is a plain search rather than a parse, its docstring says so.

The policy arm (spec §5): the selection prompt's user message, lines joined by ``\\n``::

    ## Candidate tools                          CANDIDATES
    <one line per candidate, then the reserved ask_user / stop lines>
                                                (blank)
    ## Current state                            STATE
    ### Ledger (last <shown> of <total> entries)    LEDGER + WINDOW
    <one ledger line per entry of the window, or (empty)>   EMPTY_LEDGER
                                                (blank)
    ### Latest observation                      LATEST
    <the observation's record as one line of JSON, or (none); a cut one is not JSON>
                                                (blank)
    ## Issue                                    ISSUE
    <the issue text, verbatim, to the end>

A ledger line is ``kind, target, result`` (``ENTRY_SEP``; ``Observation.line()`` in ``types.py``
joins it, ``policy/observe.py`` writes the results: ``committed``, ``error: …``, a JSON object
with ``"exit_code": N`` for a test) and may end in `` [unverified: <caveat>]``. A line or record
over its cap is cut and marked (``cap``): ``<start>… [truncated: N of M chars shown]``.

The baseline arm: the chat ``system``, ``<issue>\\n<issue text>\\n</issue>`` (``issue_text``),
then each reply (one JSON call or a list of them) followed by one user message: a block per call,
blocks separated by a blank line (``RESULTS_SEP``), or ``(no results)``::

    [<n>] <tool> <target>                       RESULT_HEAD
    error: <error>                              ERROR  (when the call failed)
    exit_code: <code>                           EXIT_CODE  (bash)
    output:                                     OUTPUT
    <output>

or, for a reply that could not be parsed, ``Format error: <reason>…`` (``FORMAT_ERROR``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

# --- the policy arm: the selection prompt's user message ----------------------------------------

CANDIDATES = "## Candidate tools"
STATE = "## Current state"
LEDGER = "### Ledger"
WINDOW = "(last {shown} of {total} entries)"
EMPTY_LEDGER = "(empty)"
LATEST = "### Latest observation"
NO_OBSERVATION = "(none)"
ISSUE = "## Issue"
TRUNCATED = "… [truncated: {limit} of {total} chars shown]"

ENTRY_SEP = ", "
COMMITTED = "committed"
ERROR = "error"  # a failed call's result (and a baseline block's line): ``error: <message>``
EXIT_CODE_KEY = "exit_code"


# The three sections of the user message by name, and the spec's order (§5: candidate toolset,
# current state, task context). A candidate policy may order them otherwise (``PolicyConfig.
# prompt_order``): each section keeps its heading and layout, so the reader finds them in any order.
SECTIONS = ("tools", "state", "issue")
SPEC_ORDER: tuple[str, ...] = SECTIONS


def policy_user(
    tools: Sequence[str],
    ledger: Sequence[str],
    shown: int,
    total: int,
    latest: str,
    issue: str,
    order: Sequence[str] = SPEC_ORDER,
) -> str:
    """The user message: ``tools`` (the candidate lines), the ledger window (``shown`` of
    ``total`` entries, one line each), the latest observation's text (``observation_text``) and
    the issue text, as sections in ``order`` (a blank line between two)."""
    check_order(order)
    sections = {
        "tools": [CANDIDATES, *tools],
        "state": [
            STATE,
            f"{LEDGER} {WINDOW.format(shown=shown, total=total)}",
            *(ledger or [EMPTY_LEDGER]),
            "",
            LATEST,
            latest,
        ],
        "issue": [ISSUE, issue],
    }
    return "\n\n".join("\n".join(sections[name]) for name in order)


def check_order(order: Sequence[str]) -> None:
    if sorted(order) != sorted(SECTIONS):
        raise ValueError(
            f"a prompt order names each of {', '.join(SECTIONS)} once, got {', '.join(order)}"
        )


def observation_text(record: dict[str, Any] | None, limit: int) -> str:
    """The latest observation: its record as JSON, capped at ``limit``; ``(none)`` without one."""
    if record is None:
        return NO_OBSERVATION
    return cap(json.dumps(record, ensure_ascii=False, default=str), limit)


def cap(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` chars, then the marker saying how much was shown."""
    if len(text) <= limit:
        return text
    return text[:limit] + TRUNCATED.format(limit=limit, total=len(text))


@dataclass(frozen=True)
class PolicyView:
    """What a policy prompt shows, as the simulator reads it."""

    tools: tuple[str, ...]  # the candidate lines, reserved ones included
    ledger: tuple[str, ...]  # the window's lines, in order ((empty) is no line)
    shown: int | None  # the window's size and the whole ledger's, from the heading
    total: int | None
    latest: dict[str, Any]  # the latest observation's record; {} for none or a cut one
    latest_text: str
    issue: str

    @property
    def truncated(self) -> bool:
        """Whether the window leaves out older entries."""
        return self.shown is not None and self.total is not None and self.shown < self.total


def is_policy(user: str) -> bool:
    """Whether a first user message is the policy arm's (the baseline's is the issue)."""
    return CANDIDATES in user


def _headings() -> dict[str, str]:
    # Looked up at each call, as every reader here does: the format may change under it.
    return {"tools": CANDIDATES, "state": STATE, "issue": ISSUE}


def read_policy(user: str) -> PolicyView:
    """The ledger window, its heading's counts, the latest observation and the issue of a
    policy prompt's user message (``policy_user``), whatever the order of its sections."""
    parts = _sections(user)
    tools = parts.get("tools", "").partition(f"{CANDIDATES}\n")[2]
    state = parts.get("state", "")
    _, _, rest = state.partition(LEDGER)
    ledger_part, _, latest_raw = rest.partition(f"\n{LATEST}\n")
    issue = parts.get("issue", "").partition(f"{ISSUE}\n")[2]
    lines = tuple(line for line in ledger_part.splitlines()[1:] if line and line != EMPTY_LEDGER)
    counts = _window_pattern(WINDOW).search(rest[:80])
    shown, total = (int(counts["shown"]), int(counts["total"])) if counts else (None, None)
    latest_text = latest_raw.strip()
    try:
        latest = json.loads(latest_text)
    except ValueError:
        latest = {}
    return PolicyView(
        tools=tuple(tools.splitlines()),
        ledger=lines,
        shown=shown,
        total=total,
        latest=latest if isinstance(latest, dict) else {},
        latest_text=latest_text,
        issue=issue,
    )


def _sections(user: str) -> dict[str, str]:
    """Each section's text (its heading included) by name. The message opens with its first
    section's heading and each other one follows a blank line. Only the issue is free text (it
    may hold a heading line of its own); the harness's sections never do. So the first issue
    heading is the real one, a heading found before it is real, and one that comes after the
    issue is its last occurrence."""
    headings = _headings()
    first = next((n for n, h in headings.items() if user.startswith(f"{h}\n")), None)
    if first is None:
        return {}
    marker = {name: f"\n\n{heading}\n" for name, heading in headings.items()}
    starts = {first: 0}
    issue = 0 if first == "issue" else user.find(marker["issue"]) + 2
    if issue >= 2:
        starts["issue"] = issue
    for name in ("tools", "state"):
        if name == first:
            continue
        before = user.find(marker[name], 0, max(issue - 2, 0))
        found = before if before >= 0 else user.rfind(marker[name])
        if found >= 0:
            starts[name] = found + 2
    names = sorted(starts, key=starts.__getitem__)
    return {
        name: user[starts[name] : len(user) if nxt is None else starts[nxt] - 2]
        for name, nxt in zip(names, [*names[1:], None], strict=True)
    }


def entry_prefix(*fields: str) -> str:
    """The start of a ledger line with these leading fields: ``entry_prefix("read_entity", sel,
    "")`` is what every line of a read of ``sel`` starts with."""
    return ENTRY_SEP.join(fields)


def entry_fields(line: str) -> list[str]:
    """``[kind, target, result]`` of a ledger line (fewer for a line without them)."""
    return line.split(ENTRY_SEP, 2)


def entry_is_error(line: str) -> bool:
    """Whether the line's result is an error (a search of the line for ``, error:``)."""
    return f"{ENTRY_SEP}{ERROR}:" in line


def entry_is_commit(line: str) -> bool:
    """An ``edit_entity`` line whose result says committed (not ``not committed``)."""
    return line.startswith(entry_prefix("edit_entity", "")) and f"{ENTRY_SEP}{COMMITTED}" in line


def entry_exit_code(line: str) -> int | None:
    """The ``"exit_code": N`` of a line's JSON result (a test's), if it has one."""
    found = _exit_code_pattern(EXIT_CODE_KEY).search(line)
    return int(found.group(1)) if found else None


@lru_cache(maxsize=8)
def _window_pattern(template: str) -> re.Pattern[str]:
    """``WINDOW`` as a pattern: each ``{field}`` a run of digits named after it."""
    parts = re.split(r"\{(\w+)\}", template)
    return re.compile(
        "".join(re.escape(p) if i % 2 == 0 else rf"(?P<{p}>\d+)" for i, p in enumerate(parts))
    )


@lru_cache(maxsize=8)
def _exit_code_pattern(key: str) -> re.Pattern[str]:
    return re.compile(re.escape(f"{json.dumps(key)}: ") + r"(-?\d+)")  # json.dumps' separators


# --- the baseline arm: the chat ----------------------------------------------------------------

ISSUE_OPEN, ISSUE_CLOSE = "<issue>", "</issue>"
RESULT_HEAD = "[{position}] {tool} {target}"
EXIT_CODE = "exit_code: {code}"
OUTPUT = "output:"
RESULTS_SEP = "\n\n"
NO_RESULTS = "(no results)"
FORMAT_ERROR = "Format error: {reason}"


def issue_text(text: str) -> str:
    """The baseline's first user message: the issue text, stripped, in ``<issue>`` tags."""
    return f"{ISSUE_OPEN}\n{text.strip()}\n{ISSUE_CLOSE}"


def read_issue(content: str) -> str | None:
    """The issue text of ``issue_text``'s message; None for another message."""
    head, tail = f"{ISSUE_OPEN}\n", f"\n{ISSUE_CLOSE}"
    if content.startswith(head) and content.endswith(tail):
        return content[len(head) : len(content) - len(tail)]
    return None


def result_head(position: int, tool: str, target: str) -> str:
    """A result block's first line: the call's position in its reply, tool and target."""
    return RESULT_HEAD.format(position=position, tool=tool, target=target).rstrip()


def error_line(error: Any) -> str:
    return f"{ERROR}: {error}"


def exit_code_line(code: Any) -> str:
    return EXIT_CODE.format(code=code)


def results_text(blocks: Sequence[str]) -> str:
    """The user message after a reply: its calls' blocks (``(no results)`` for none)."""
    return RESULTS_SEP.join(blocks) or NO_RESULTS


def format_error_line(reason: str) -> str:
    """The first line of the message answering a reply that cannot be parsed."""
    return FORMAT_ERROR.format(reason=reason)


def result_blocks(content: str) -> dict[str, str]:
    """The blocks of a results message by position (``"1"``, ``"2"``, ...), each the text after
    its ``[n] ``: ``<tool> <target>``, then the block's lines (and the separator after it)."""
    parts = _head_pattern(RESULT_HEAD).split(content)[1:]
    return dict(zip(parts[::2], parts[1::2], strict=False))


def block_ok(block: str) -> bool:
    """Whether a block (``result_blocks``) has no error line under its head."""
    lines = block.split("\n")
    return not (len(lines) > 1 and lines[1].startswith(f"{ERROR}:"))


def block_passed(block: str) -> bool:
    """Whether a bash block shows exit code 0 (a search of the block for its line)."""
    return f"{exit_code_line(0)}\n" in block


def is_format_error(content: str) -> bool:
    return content.startswith(FORMAT_ERROR.partition("{")[0].rstrip(": "))


def mentions_error(content: str) -> bool:
    """Whether a message says a call failed or a reply could not be parsed (a search of the
    whole message for ``error:``, as the simulator has always read it)."""
    return f"{ERROR}:" in content or is_format_error(content)


@lru_cache(maxsize=8)
def _head_pattern(template: str) -> re.Pattern[str]:
    """The start of a block: ``RESULT_HEAD`` up to its ``{tool}``, the position captured."""
    before, _, after = template.partition("{position}")
    between = after.partition("{tool}")[0]
    return re.compile(rf"^{re.escape(before)}(\d+){re.escape(between)}", re.MULTILINE)
