"""What the bridge sends, in the shapes an OpenAI client reads: a chat completion, its
server-sent events, the model list, and an error (``{"error": {"message", "type", "code"}}``,
the bridge's own refusals and its server's alike)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from ..models.base import Completion

INVALID = "invalid_request_error"


def error_body(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": kind}}


def reply_body(completion: Completion, model: str, index: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": completion.text}
    calls = completion.extra.get("tool_calls")
    if calls:  # the functions the model called, as the endpoint sent them
        message["tool_calls"] = calls
        message["content"] = completion.text or None
    return {
        "id": f"chatcmpl-bridge-{index}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": completion.usage.prompt_tokens,
            "completion_tokens": completion.usage.completion_tokens,
            "total_tokens": completion.usage.total_tokens,
        },
    }


def models_body(model: str) -> dict[str, Any]:
    return {"object": "list", "data": [{"id": model, "object": "model", "owned_by": "toolpolicy"}]}


def stream_events(reply: Mapping[str, Any]) -> list[bytes]:
    """A reply as server-sent events: its text (and calls) in one chunk, then the usage chunk, then
    ``[DONE]`` (what OpenAI sends with ``stream_options.include_usage``)."""
    base = {k: reply[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    choice = reply["choices"][0]
    delta: dict[str, Any] = {"role": "assistant", "content": choice["message"]["content"]}
    if choice["message"].get("tool_calls"):  # each call whole, with its index, in one chunk
        delta["tool_calls"] = [
            {"index": n} | call for n, call in enumerate(choice["message"]["tool_calls"])
        ]
    chunks = [
        base | {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        base | {"choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]},
        base | {"choices": [], "usage": reply["usage"]},
    ]
    return [f"data: {json.dumps(c)}\n\n".encode() for c in chunks] + [b"data: [DONE]\n\n"]


def one_line(text: str, chars: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1] + "\u2026"
