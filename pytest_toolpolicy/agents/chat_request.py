"""What the bridge reads of an agent's chat request, checked before any of it is sent.

Each parameter the bridge reads is checked here, and one it cannot take is a ``BadRequest``
naming the parameter and the value (``invalid temperature: 'hot' (expected a number 0..2)``):
the agent's own mistake, answered 400 and counted against it, never a traceback on the host
nor a request the endpoint refuses on its behalf. What it does not read (``top_p``,
``response_format``, ``model``...) is not sent either, so it cannot fail there.

``prompt_bound`` is what a request can cost before it is sent: its prompt's tokens bounded
above by the UTF-8 bytes of its messages (a byte-level BPE never makes more tokens than bytes;
a SentencePiece vocabulary with byte fallback at most one more) plus each message's and the
reply's chat-template overhead.
"""

from __future__ import annotations

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


class BadRequest(ValueError):
    """A parameter the agent got wrong; the message names it and its value."""

    def __init__(self, name: str, value: object, expected: str) -> None:
        super().__init__(f"invalid {name}: {shown(value)} (expected {expected})")
        self.name = name


@dataclass(frozen=True)
class ChatRequest:
    messages: tuple[dict[str, str], ...]
    temperature: float
    max_tokens: int | None  # what the agent asked for a reply (None: not said)
    seed: int | None
    stop: tuple[str, ...]
    stream: bool
    tools: bool  # it offered the model tools (or functions)


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
        tools=bool(body.get("tools") or body.get("functions")),
    )


def prompt_bound(messages: tuple[dict[str, str], ...]) -> int:
    """At most how many prompt tokens ``messages`` make (see the module docstring)."""
    sizes = (len(m["content"].encode("utf-8", "surrogatepass")) for m in messages)
    return sum(size + MESSAGE_OVERHEAD for size in sizes) + REQUEST_OVERHEAD


def shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "\u2026"


def params_of(body: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters a request set that the bridge reads, as the exchange keeps them (a long
    value cut to its ``shown`` form: the record of a refusal, not a copy of its payload)."""
    names = ("temperature", "max_tokens", "max_completion_tokens", "stop", "seed", "n")
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


def _messages(raw: object) -> tuple[dict[str, str], ...]:
    if not isinstance(raw, list) or not raw:
        raise BadRequest("messages", raw, "a non-empty list of chat messages")
    return tuple(_message(number, message) for number, message in enumerate(raw))


def _message(number: int, message: object) -> dict[str, str]:
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
    # Other roles (tool, function, developer) are shown to the model as the user's words.
    role = message["role"] if message["role"] in ("system", "user", "assistant") else "user"
    return {"role": role, "content": content}


def _part(where: str, part: object) -> str:
    if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
        return str(part["text"])
    raise BadRequest(
        where, part, 'a text part {"type": "text", "text": ...}: the bridge serves text'
    )
