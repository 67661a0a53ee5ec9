"""The selection prompt (spec §5), assembled deterministically in the spec's exact order.

Two chat messages:

- ``system``: (1) the fixed policy preamble, with the exact output schema.
- ``user``: three headed sections, in the spec's order (a candidate may reorder them:
  ``PolicyConfig.prompt_order``) —
  ``## Candidate tools`` (2: one ``name — description — args`` line per candidate, then the
  reserved ``ask_user`` / ``stop`` lines), ``## Current state`` (3: ``### Ledger`` with the last
  ``config.ledger_window`` entries one line each, then ``### Latest observation`` verbatim as
  JSON) and ``## Issue`` (4: the issue text verbatim).

The prompt does not grow with the run: the ledger window bounds the number of lines, each line is
capped at ``MAX_LINE_CHARS`` and the one verbatim observation at ``MAX_VERBATIM_CHARS``, each with
a marker saying how much was cut. A ledger line over its cap loses the middle of its target first:
the result is what the line is for (a real repository's test ids make targets of hundreds of
characters, which a plain cut would leave with no exit code in sight). Without ``noop.affordances`` (``affordances=False``) the
reserved lines and every mention of ``ask_user`` / ``stop`` are left out.

The user message's layout, its headings and markers are the shown-state format of ``shown.py``,
which ``sim`` reads the prompt back with.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import shown
from ..primitives.volatile import without_volatile
from ..types import Observation
from .config import PolicyConfig
from .ledger import Ledger
from .registry import RESERVED, RESERVED_LINES, candidate_line
from .retrieve import Candidates

MAX_VERBATIM_CHARS = 4000
MAX_LINE_CHARS = 240
_TARGET_MIN = 40  # of a target cut to fit its line, at least this much stays

_PREAMBLE = """\
You are the selection step of a tool-calling policy for fixing a code issue.
Agentless-first: act rarely, act correctly, verify what you're told.
One action per turn: choose exactly one tool from the candidate toolset, or one of the reserved \
names, and bind its arguments. A call that depends on another call's result must wait for that \
result to appear in the current state.
{affordances}Prefer the minimal action.
Reply with exactly one JSON object, no prose, no list, no code fence:
{schema}"""

_AFFORDANCES = """\
ask_user and stop are valid and encouraged when you lack enough to act:
{"tool": "ask_user", "args": {"question": "..."}}
{"tool": "stop", "args": {"reason": "..."}}
"""
_SCHEMA = '{"tool": "<name|ask_user|stop>", "args": {"<arg>": "<value>", ...}}'
_SCHEMA_NO_AFFORDANCES = '{"tool": "<name>", "args": {"<arg>": "<value>", ...}}'


def preamble(affordances: bool = True) -> str:
    """Section 1, the fixed policy text (one of two fixed texts, by ``noop.affordances``)."""
    return _PREAMBLE.format(
        affordances=_AFFORDANCES if affordances else "",
        schema=_SCHEMA if affordances else _SCHEMA_NO_AFFORDANCES,
    )


def build_prompt(
    candidates: Candidates,
    ledger: Ledger,
    issue_text: str,
    config: PolicyConfig,
    *,
    latest: Observation | None = None,
    affordances: bool = True,
) -> list[dict[str, str]]:
    """The chat messages for one selection; ``latest`` defaults to the ledger's last entry."""
    tools = [candidate_line(name) for name in candidates.tools]
    if affordances:
        tools += [RESERVED_LINES[name] for name in RESERVED]
    window = ledger.entries[-config.ledger_window :]
    lines = [ledger_line(entry, MAX_LINE_CHARS) for entry in window]
    observation = latest if latest is not None else ledger.latest
    user = shown.policy_user(
        tools,
        lines,
        len(window),
        len(ledger.entries),
        verbatim(observation),
        issue_text,
        config.prompt_order,
    )
    return [
        {"role": "system", "content": preamble(affordances)},
        {"role": "user", "content": user},
    ]


def verbatim(observation: Observation | None) -> str:
    """The observation's full captured record as JSON, capped at ``MAX_VERBATIM_CHARS``."""
    if observation is None:
        return shown.observation_text(None, MAX_VERBATIM_CHARS)
    record: dict[str, Any] = {
        "kind": observation.kind,
        "target": observation.target,
        "source": observation.source,
        "trust": observation.trust,
        "caveat": observation.caveat,
        "data": without_volatile(
            observation.data if observation.data is not None else observation.result
        ),
    }
    return shown.observation_text(record, MAX_VERBATIM_CHARS)


def ledger_line(entry: Observation, limit: int) -> str:
    """``kind, target, result`` within ``limit`` chars (then the usual marker): a long target
    is cut in its middle first, keeping its start and end, so the result stays on the line."""
    line = entry.line()
    over = len(line) - limit
    if over > 0 and len(entry.target) > over + _TARGET_MIN:
        keep = len(entry.target) - over - 1  # the "…" takes one
        head, tail = keep - keep // 3, keep // 3
        short = entry.target[:head] + "…" + entry.target[len(entry.target) - tail :]
        line = dataclasses.replace(entry, target=short).line()
    return shown.cap(line, limit)
