"""The baseline's chat protocol: the system prompt (every tool schema, every turn), the reply
format and its parser, and the user messages that carry tool results back.

A reply is one JSON object ``{"tool": NAME, "args": {...}}`` or a JSON list of them, optionally
inside one code fence. The history grows: ``[system, issue, reply 1, results 1, reply 2, ...]``.
The issue message, the result blocks and the format-error message are written in the shown-state
format of ``shown.py``, which ``sim`` reads them back with.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .. import jsonsafe, shown
from ..primitives.envelope import Envelope
from ..primitives.volatile import mask_volatile
from ..types import ToolCall

SUBMIT = "submit"
_FENCE = re.compile(r"\A```[\w-]*[ \t]*\n(.*?)\n?```\Z", re.DOTALL)


def _schema(
    name: str, description: str, props: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    params = {"type": "object", "properties": props, "required": required}
    return {"name": name, "description": description, "parameters": params}


_STR = {"type": "string"}
TOOL_SCHEMAS = (
    _schema(
        "read_file",
        "Show a file with line numbers (cat -n style), at most 400 lines / 20,000 chars per call.",
        {"path": _STR, "start": {"type": "integer", "default": 1}, "end": {"type": "integer"}},
        ["path"],
    ),
    _schema(
        "write_file",
        "Create or overwrite a file with the given content (parent directories are created).",
        {"path": _STR, "content": _STR},
        ["path", "content"],
    ),
    _schema(
        "edit_file",
        "Replace the text `old` with `new` in a file. `old` must match exactly (whitespace and "
        "indentation included) and exactly once; include surrounding lines to make it unique.",
        {"path": _STR, "old": _STR, "new": _STR},
        ["path", "old", "new"],
    ),
    _schema(
        "bash",
        "Run a command with /bin/bash -c at the repository root; stdout and stderr are merged, "
        "the last 10,000 chars are shown with the exit code. No network. Each call is a fresh "
        "shell (cd and environment variables do not persist).",
        {"command": _STR, "timeout": {"type": "integer", "default": 120}},
        ["command"],
    ),
    _schema(
        SUBMIT,
        "Say you are done: the run ends and the workspace as it stands is your answer.",
        {"message": _STR},
        ["message"],
    ),
)

_CALL = {
    "type": "object",
    "properties": {"tool": {"type": "string"}, "args": {"type": "object"}},
    "required": ["tool", "args"],
    "additionalProperties": False,
}
# The reply format as a JSON schema (structured output on): one call or a list of calls, the
# shape only, like the policy's, so neither arm gets more help from the server than the other.
# The list is bounded because a base model otherwise repeats one call until the token limit (seen:
# 4,096 tokens of `submit` calls, 200 s a turn); the parser itself takes a list of any length.
MAX_SCHEMA_CALLS = 8
REPLY_SCHEMA: dict[str, Any] = {
    "anyOf": [
        _CALL,
        {"type": "array", "items": _CALL, "minItems": 1, "maxItems": MAX_SCHEMA_CALLS},
    ]
}

SYSTEM = """\
You are a software engineer fixing an issue in the Python repository in your working directory.
Make the smallest change to the non-test source files that resolves the issue. You may run the
tests (`python -m pytest ...`) and write scripts to reproduce the problem; you cannot ask
questions and have no network.

Tools (JSON schemas):
{schemas}

Reply with JSON only: one call {{"tool": NAME, "args": {{...}}}}, or a JSON list of calls
[{{"tool": ..., "args": ...}}, ...] that are run in order. Paths are relative to the repository
root. After each reply you get every call's result. When the issue is resolved (ideally after
running the relevant tests), reply {{"tool": "submit", "args": {{"message": "<what you changed>"}}}}
as the last call."""


def system_message() -> dict[str, str]:
    schemas = "\n".join(json.dumps(s) for s in TOOL_SCHEMAS)
    return {"role": "system", "content": SYSTEM.format(schemas=schemas)}


def issue_message(issue_text: str) -> dict[str, str]:
    return {"role": "user", "content": shown.issue_text(issue_text)}


def format_error_message(reason: str) -> dict[str, str]:
    return {
        "role": "user",
        "content": f"{shown.format_error_line(reason)}\nReply with one JSON object "
        '{"tool": NAME, "args": {...}} or a JSON list of such objects, and nothing else.',
    }


def parse_reply(text: str) -> tuple[list[ToolCall], str | None]:
    """The calls of a reply, or an empty list and why it cannot be parsed. It never raises, and
    takes time linear in the reply's length; JSON nested deeper than ``jsonsafe.MAX_DEPTH``
    levels is refused before it is decoded."""
    body = text.strip()
    if fenced := _FENCE.match(body):
        body = fenced.group(1).strip()
    try:
        value = jsonsafe.loads(body)
    except json.JSONDecodeError as exc:
        return [], f"the reply is not valid JSON ({exc.msg} at line {exc.lineno})"
    except jsonsafe.TooDeep as exc:
        return [], f"the reply is {exc}"
    except ValueError as exc:  # e.g. an integer past Python's digit limit
        return [], f"the reply is not valid JSON ({str(exc)[:80]})"
    items = value if isinstance(value, list) else [value]
    if not items:
        return [], "the reply is an empty list"
    calls = []
    for position, item in enumerate(items, 1):
        if not isinstance(item, dict) or not isinstance(item.get("tool"), str):
            return [], f'call {position} is not an object with a string "tool"'
        args = item.get("args", {})
        if not isinstance(args, dict):
            return [], f'the "args" of call {position} ({item["tool"]}) is not an object'
        calls.append(ToolCall(item["tool"], args))
    return calls, None


DEFERRED_SUBMIT = (
    "not run: submit came after calls whose results you had not seen. Read them; when the"
    " issue is resolved, reply with submit alone."
)


def deferred_submit() -> Envelope:
    """The result a blind submit gets (``loop._execute``): an error the model reads."""
    return {"ok": False, "data": None, "error": DEFERRED_SUBMIT}


def results_message(results: list[tuple[ToolCall, Envelope]]) -> dict[str, str]:
    blocks = [render_result(i, call, env) for i, (call, env) in enumerate(results, 1)]
    # Empty only when a counterfactual rerun removed every call of the reply.
    return {"role": "user", "content": shown.results_text(blocks)}


def render_result(position: int, call: ToolCall, envelope: Envelope) -> str:
    data = envelope.get("data") if isinstance(envelope.get("data"), dict) else {}
    lines = [shown.result_head(position, call.tool, target_of(call))]
    if not envelope["ok"]:
        lines.append(shown.error_line(envelope["error"]))
    if call.tool == "bash" and data:
        output = mask_volatile(data["output"]) or "(no output)"
        lines += [shown.exit_code_line(data["exit_code"]), shown.OUTPUT, output]
    elif envelope["ok"] and call.tool == "read_file":
        lines += [f"lines {data['start']}-{data['end']} of {data['total_lines']}:", data["content"]]
    elif envelope["ok"] and call.tool == "write_file":
        state = "new file" if data["created"] else "replaced"
        lines.append(f"wrote {data['chars']} chars ({state})")
    elif envelope["ok"] and call.tool == "edit_file":
        lines += [f"edited at line {data['line']}; the file there now reads:", data["snippet"]]
    return "\n".join(lines)


def target_of(call: ToolCall) -> str:
    """The path or command a call is about, for headers and ``Observation.target``."""
    value = call.args.get("command" if call.tool == "bash" else "path", "")
    return value if isinstance(value, str) else json.dumps(value)
