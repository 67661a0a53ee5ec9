"""A model that answers from a script, for users' tests and ours (spec ``scripted:<file>``).

A script is a JSON-lines file, one reply per line, or a Python list. A reply is either a JSON
string (the reply text) or an object ``{"text": ..., "usage": {...}, "cost_usd": ...,
"latency_s": ..., "logprobs": [...], "tool_calls": [...]}`` where all but ``text`` are optional
(``logprobs`` as an endpoint's are recorded: ``[{"token", "logprob", "top": [[token, logprob],
...]}, ...]``; ``tool_calls`` as an endpoint returns the functions a reply calls: ``[{"id",
"type": "function", "function": {"name", "arguments"}}, ...]``). Replies are handed out in order
whatever the request says.

A scripted reply costs nothing, so ``cost_usd`` is 0.0 unless the script says otherwise (``null``
for a test of an unknown price); likewise no tokens are used unless ``usage`` gives them.

A line that is not a reply (not JSON, nested deeper than ``jsonsafe.MAX_DEPTH`` levels, a number
past Python's digit limit, a wrong field) is a ``ScriptError`` naming the file and line, raised
when the script is read. The reply *text* is the model's: JSON inside it is the arm's to parse.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import jsonsafe
from .base import Completion, ModelError, ModelRequest, Usage

if TYPE_CHECKING:
    from .backends import BuildOptions

_REPLY_KEYS = {"text", "usage", "cost_usd", "latency_s", "logprobs", "tool_calls"}
_USAGE_KEYS = {f.name for f in fields(Usage)}


class ScriptError(ValueError):
    """A script that cannot be read: a malformed line or reply, named by file and line."""


class ScriptedModel:
    def __init__(
        self, replies: Sequence[str | Mapping[str, Any]] | os.PathLike[str], name: str = "scripted"
    ) -> None:
        if isinstance(replies, str):
            raise TypeError("ScriptedModel takes a list of replies or a Path; use from_file(path)")
        self.name = name
        if isinstance(replies, os.PathLike):
            self._replies = _read_script(Path(replies), name)
        else:
            self._replies = [_to_completion(r, name, f"reply {i}") for i, r in enumerate(replies)]
        self._used = 0
        self._lock = threading.Lock()

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], name: str = "scripted") -> ScriptedModel:
        return cls(Path(path), name=name)

    @property
    def used(self) -> int:
        return self._used

    @property
    def remaining(self) -> int:
        return len(self._replies) - self._used

    def complete(self, request: ModelRequest) -> Completion:
        with self._lock:
            if self._used == len(self._replies):
                raise ModelError(
                    f"scripted model has no reply left for item {request.item or '?'}"
                    f" turn {request.turn} (used {self._used} of {len(self._replies)})"
                )
            self._used += 1
            return self._replies[self._used - 1]


def build(arg: str | None, options: BuildOptions) -> ScriptedModel:
    """The ``scripted:<file>`` backend (``backends.py``)."""
    return ScriptedModel.from_file(arg or "")


def check(arg: str | None) -> None:
    """The script reads and parses, or a ``ValueError`` naming the file and what is wrong."""
    try:
        ScriptedModel.from_file(arg or "")
    except OSError as exc:
        reason = "it is a directory" if isinstance(exc, IsADirectoryError) else exc.strerror or exc
        raise ValueError(f"cannot read scripted file {arg}: {reason}") from None
    except UnicodeDecodeError:
        raise ValueError(f"cannot read scripted file {arg}: not UTF-8 text") from None


def _read_script(path: Path, name: str) -> list[Completion]:
    replies = []
    # Bytes, split on "\n" only: a bad byte is named by its line, and a U+2028 inside a JSON
    # string (which str.splitlines would break at) stays part of its line.
    for number, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        where = f"{path}:{number}"
        try:
            line = raw.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise ScriptError(f"{where}: not UTF-8 text (byte {exc.start + 1})") from None
        if not line.strip():
            continue
        try:
            reply = jsonsafe.loads(line)
        except json.JSONDecodeError as exc:
            raise ScriptError(f"{where}: not a JSON value: {exc.msg}") from None
        except jsonsafe.TooDeep as exc:
            raise ScriptError(f"{where}: not a reply: {exc}") from None
        except ValueError as exc:  # e.g. an integer past Python's digit limit
            raise ScriptError(f"{where}: not a JSON value: {str(exc)[:80]}") from None
        replies.append(_to_completion(reply, name, where))
    return replies


def _to_completion(reply: Any, name: str, where: str) -> Completion:
    if isinstance(reply, str):
        return Completion(text=reply, usage=Usage(), cost_usd=0.0, latency_s=0.0, model=name)
    if not isinstance(reply, Mapping) or not isinstance(reply.get("text"), str):
        raise ScriptError(f"{where}: a reply is a string or an object with a string 'text'")
    unknown = set(reply) - _REPLY_KEYS
    usage = reply.get("usage", {})
    if not isinstance(usage, Mapping):
        raise ScriptError(f"{where}: 'usage' must be an object")
    unknown |= {f"usage.{key}" for key in set(usage) - _USAGE_KEYS}
    if unknown:
        raise ScriptError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    cost = reply.get("cost_usd", 0.0)
    latency = reply.get("latency_s", 0.0)
    if not (cost is None or _is_number(cost)) or not _is_number(latency):
        raise ScriptError(f"{where}: 'cost_usd' and 'latency_s' must be non-negative numbers")
    flags = {"estimated", "missing"}
    if not all(isinstance(usage[k], bool) for k in flags & set(usage)):
        raise ScriptError(f"{where}: {' and '.join(sorted(flags))} in 'usage' must be booleans")
    if not all(_is_count(v) for k, v in usage.items() if k not in flags):
        raise ScriptError(f"{where}: token counts in 'usage' must be non-negative integers")
    logprobs = reply.get("logprobs")
    if logprobs is not None and not isinstance(logprobs, list):
        raise ScriptError(f"{where}: 'logprobs' must be a list, as an endpoint returns them")
    extra: dict[str, Any] = {"logprobs": logprobs} if logprobs is not None else {}
    calls = reply.get("tool_calls")
    if calls is not None:
        extra["tool_calls"] = _tool_calls(calls, where)
    return Completion(
        text=reply["text"],
        usage=Usage(**usage),
        cost_usd=None if cost is None else float(cost),
        latency_s=float(latency),
        model=name,
        extra=extra,
    )


def _tool_calls(calls: Any, where: str) -> list[dict[str, Any]]:
    def function(call: Any) -> Any:
        return call.get("function") if isinstance(call, Mapping) else None

    if not isinstance(calls, list) or not all(
        isinstance(call, Mapping)
        and isinstance(call.get("id"), str)
        and isinstance(function(call), Mapping)
        and isinstance(function(call).get("name"), str)
        and isinstance(function(call).get("arguments"), str)
        for call in calls
    ):
        raise ScriptError(
            f"{where}: 'tool_calls' must be a list of"
            ' {"id", "type": "function", "function": {"name", "arguments"}}'
        )
    return [{"id": c["id"], "type": "function", "function": dict(c["function"])} for c in calls]


def _is_number(value: Any) -> bool:
    # NaN (which json reads) would poison every sum of costs it entered.
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < math.inf


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
