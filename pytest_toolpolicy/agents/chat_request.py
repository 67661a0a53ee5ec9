"""What the bridge reads of an agent's chat request, checked before any of it is sent.

Each parameter the bridge reads is checked here, and one it cannot take is a ``BadRequest``
naming the parameter and the value (``invalid temperature: 'hot' (expected a number 0..2)``):
the agent's own mistake, answered 400 and counted against it, never a traceback on the host
nor a request the endpoint refuses on its behalf. What it does not read (``top_p``,
``response_format``, ``model``...) is not sent either, so it cannot fail there.

``prompt_bound`` is what a request can cost before it is sent: its prompt's tokens bounded
above by the UTF-8 bytes of its messages (a byte-level BPE never makes more tokens than bytes;
a SentencePiece vocabulary with byte fallback at most one more) plus each message's and the
reply's chat-template overhead; the tools it offers and the calls in its history count by
their JSON, which the chat template renders into the prompt.

Tools: an agent may offer functions (``tools``: each ``{"type": "function", "function":
{"name", "description", "parameters"}}``, at most ``TOOLS_MAX``), choose among them
(``tool_choice``: "auto", "none", "required" or one function), and send back an assistant's
``tool_calls`` and each result as a ``tool`` message with its ``tool_call_id``, all passed to
the endpoint as they are, so a model whose template knows tools (llama.cpp's Jinja templates,
an OpenAI-compatible endpoint) sees them as it was trained to.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

TEMPERATURE_MAX = 2.0  # OpenAI's range, 0..2
STOP_MAX = 4  # OpenAI's: at most four stop sequences
SEED_RANGE = (-(2**63), 2**63)  # a 64-bit signed integer, what endpoints take
# Chat-template tokens a message adds beside its text (role markers, separators: 5 in ChatML,
# Llama 3's and Gemma's templates), and what a request adds once (BOS, the reply's header, a
# template's own system lines), each with room to spare.
MESSAGE_OVERHEAD = 16
REQUEST_OVERHEAD = 32
SHOWN_CHARS = 80  # of a value, in the reason
TOOLS_MAX = 128  # OpenAI's limit on functions offered in one request
TOOL_CHOICES = ("auto", "none", "required")


class BadRequest(ValueError):
    """A parameter the agent got wrong; the message names it and its value."""

    def __init__(self, name: str, value: object, expected: str) -> None:
        super().__init__(f"invalid {name}: {shown(value)} (expected {expected})")
        self.name = name


@dataclass(frozen=True)
class ChatRequest:
    messages: tuple[dict[str, Any], ...]
    temperature: float
    max_tokens: int | None  # what the agent asked for a reply (None: not said)
    seed: int | None
    stop: tuple[str, ...]
    stream: bool
    tools: tuple[dict[str, Any], ...] = ()  # the functions it offers the model
    tool_choice: str | dict[str, Any] | None = None


def read_chat(body: Mapping[str, Any]) -> ChatRequest:
    """The request ``body`` makes, or the ``BadRequest`` of its first bad parameter."""
    limit = _count(body, "max_completion_tokens")
    _one_choice(body.get("n"))
    return ChatRequest(
        messages=_messages(body.get("messages")),
        temperature=_temperature(body.get("temperature")),
        # The newer name wins where both are given, as at OpenAI.
        max_tokens=limit if limit is not None else _count(body, "max_tokens"),
        seed=_seed(body.get("seed")),
        stop=_stop(body.get("stop")),
        stream=_stream(body.get("stream")),
        tools=_tools(body),
        tool_choice=_tool_choice(body.get("tool_choice")),
    )


def prompt_bound(
    messages: tuple[dict[str, Any], ...], tools: tuple[Mapping[str, Any], ...] = ()
) -> int:
    """At most how many prompt tokens ``messages`` and ``tools`` make (the module docstring)."""
    sizes = [_bytes(m["content"]) + _bytes(_json(m.get("tool_calls"))) for m in messages]
    offered = _bytes(_json(list(tools))) + MESSAGE_OVERHEAD if tools else 0
    return sum(size + MESSAGE_OVERHEAD for size in sizes) + offered + REQUEST_OVERHEAD


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _json(value: object) -> str:
    return "" if value is None else json.dumps(value, ensure_ascii=False)


def shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "\u2026"


def params_of(body: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters a request set that the bridge reads, as the exchange keeps them (a long
    value cut to its ``shown`` form: the record of a refusal, not a copy of its payload)."""
    names = ("temperature", "max_tokens", "max_completion_tokens", "stop", "seed", "n",
             "tool_choice")  # fmt: skip
    return {k: _kept(body[k]) for k in names if k in body}


def _kept(value: object) -> object:
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str) and len(value) <= SHOWN_CHARS:
        return value
    if (
        isinstance(value, list)
        and len(value) <= STOP_MAX
        and all(isinstance(v, str) and len(v) <= SHOWN_CHARS for v in value)
    ):
        return list(value)
    return shown(value)


def _temperature(value: object) -> float:
    if value is None:
        return 0.0
    # NaN and infinity fail the range too
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadRequest("temperature", value, f"a number 0..{TEMPERATURE_MAX:g}")
    if not 0 <= value <= TEMPERATURE_MAX:
        raise BadRequest("temperature", value, f"a number 0..{TEMPERATURE_MAX:g}")
    return float(value)


def _count(body: Mapping[str, Any], name: str) -> int | None:
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise BadRequest(name, value, "a whole number of tokens, at least 1")
    return value


def _seed(value: object) -> int | None:
    if value is None:
        return None
    low, high = SEED_RANGE
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value < high:
        raise BadRequest("seed", value, "a 64-bit integer")
    # 0 and below are read but not sent (llama.cpp reads -1 as "random"), as before they
    # were checked: a recording made then keeps its keys.
    return value if value > 0 else None


def _one_choice(value: object) -> None:
    if value is not None and (isinstance(value, bool) or value != 1):
        raise BadRequest("n", value, "1: the bridge serves one choice")


def _stop(value: object) -> tuple[str, ...]:
    expected = f"a string or a list of at most {STOP_MAX} strings"
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value else ()
    if not isinstance(value, list) or len(value) > STOP_MAX:
        raise BadRequest("stop", value, expected)
    if not all(isinstance(v, str) for v in value):
        raise BadRequest("stop", value, expected)
    return tuple(v for v in value if v)


def _stream(value: object) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise BadRequest("stream", value, "true or false")
    return value


def _tools(body: Mapping[str, Any]) -> tuple[dict[str, Any], ...]:
    if body.get("functions") is not None:  # the deprecated form, which endpoints differ on
        raise BadRequest("functions", body["functions"], "tools: functions is deprecated")
    raw = body.get("tools")
    if raw is None:
        return ()
    if not isinstance(raw, list) or len(raw) > TOOLS_MAX:
        raise BadRequest("tools", raw, f"a list of at most {TOOLS_MAX} functions")
    return tuple(_tool(f"tools[{n}]", tool) for n, tool in enumerate(raw))


def _tool(where: str, tool: object) -> dict[str, Any]:
    expected = '{"type": "function", "function": {"name": ..., "parameters": {...}}}'
    if not isinstance(tool, dict) or tool.get("type") != "function":
        raise BadRequest(where, tool, expected)
    function = tool.get("function")
    if not isinstance(function, dict) or not _name(function.get("name")):
        raise BadRequest(f"{where}.function", function, "a function with a name")
    parameters = function.get("parameters")
    if parameters is not None and not isinstance(parameters, dict):
        raise BadRequest(f"{where}.function.parameters", parameters, "a JSON schema object")
    return {"type": "function", "function": dict(function)}


def _name(value: object) -> bool:
    return isinstance(value, str) and 0 < len(value) <= 64


def _tool_choice(value: object) -> str | dict[str, Any] | None:
    if value is None or (isinstance(value, str) and value in TOOL_CHOICES):
        return value
    if (
        isinstance(value, dict)
        and value.get("type") == "function"
        and isinstance(value.get("function"), dict)
        and _name(value["function"].get("name"))
    ):
        return {"type": "function", "function": {"name": value["function"]["name"]}}
    raise BadRequest("tool_choice", value, '"auto", "none", "required" or one function')


def _messages(raw: object) -> tuple[dict[str, Any], ...]:
    if not isinstance(raw, list) or not raw:
        raise BadRequest("messages", raw, "a non-empty list of chat messages")
    return tuple(_message(number, message) for number, message in enumerate(raw))


def _message(number: int, message: object) -> dict[str, Any]:
    where = f"messages[{number}]"
    if not isinstance(message, dict) or not isinstance(message.get("role"), str):
        raise BadRequest(where, message, "a chat message with a role")
    content = message.get("content")
    if isinstance(content, list):  # parts: the text ones, in order
        content = "".join(_part(f"{where}.content[{i}]", p) for i, p in enumerate(content))
    elif content is None:
        content = ""
    if not isinstance(content, str):
        raise BadRequest(f"{where}.content", content, "text or a list of text parts")
    role = message["role"]
    if role == "tool" and isinstance(message.get("tool_call_id"), str):
        # a tool's result answers the call its id names, as the template expects
        return {"role": "tool", "content": content, "tool_call_id": message["tool_call_id"]}
    if role == "assistant" and message.get("tool_calls"):
        calls = _calls(f"{where}.tool_calls", message["tool_calls"])
        return {"role": "assistant", "content": content, "tool_calls": calls}
    # Other roles (function, developer, a tool result without its call) are shown to the
    # model as the user's words.
    role = role if role in ("system", "user", "assistant") else "user"
    return {"role": role, "content": content}


def _calls(where: str, raw: object) -> list[dict[str, Any]]:
    expected = 'a list of {"id", "type": "function", "function": {"name", "arguments"}}'
    if not isinstance(raw, list):
        raise BadRequest(where, raw, expected)
    calls = []
    for n, call in enumerate(raw):
        function = call.get("function") if isinstance(call, dict) else None
        if (
            not isinstance(call, dict)
            or not isinstance(call.get("id"), str)
            or not isinstance(function, dict)
            or not _name(function.get("name"))
            or not isinstance(function.get("arguments"), str)
        ):
            raise BadRequest(f"{where}[{n}]", call, expected)
        calls.append({
            "id": call["id"], "type": "function",
            "function": {"name": function["name"], "arguments": function["arguments"]},
        })  # fmt: skip
    return calls


def _part(where: str, part: object) -> str:
    if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
        return str(part["text"])
    raise BadRequest(
        where, part, 'a text part {"type": "text", "text": ...}: the bridge serves text'
    )
