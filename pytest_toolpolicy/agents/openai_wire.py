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
    return {
        "id": f"chatcmpl-bridge-{index}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": completion.text},
                "finish_reason": "stop",
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
    """A reply as server-sent events: its text in one chunk, then the usage chunk, then
    ``[DONE]`` (what OpenAI sends with ``stream_options.include_usage``)."""
    base = {k: reply[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    text = reply["choices"][0]["message"]["content"]
    chunks = [
        base
        | {
            "choices": [
                {"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": None}
            ]
        },  # fmt: skip
        base | {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        base | {"choices": [], "usage": reply["usage"]},
    ]
    return [f"data: {json.dumps(c)}\n\n".encode() for c in chunks] + [b"data: [DONE]\n\n"]


def one_line(text: str, chars: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1] + "\u2026"
