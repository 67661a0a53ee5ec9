"""``openai:<model>``: any OpenAI-compatible chat-completions endpoint, through the official SDK.

OpenAI, DeepSeek, vLLM, a llama.cpp server and Ollama all speak this API. The SDK retries 429,
408/409, 5xx, timeouts and connection errors ``max_retries`` times with exponential backoff
(0.5 s doubling, at most 8 s, with jitter) or the server's ``retry-after(-ms)`` when that is at
most 2 minutes; past that, a ``ModelError`` names the reason. A 4xx about the request itself
(a parameter out of range, a prompt past the context) is not retried, and its ``ModelError`` is
blamed on the request (``openai_errors.blame_of``): the caller's failure, not the endpoint's.
``latency_s`` is the wall time of the whole call, retries included.

``timeout`` is a deadline for the whole call: connecting, every read and write, and every retry
together (a retry whose wait would cross it is not waited for). Each response body is read with
a cap of the ``response_mb`` limit, and decoded only when it nests at most
``jsonsafe.MAX_DEPTH`` levels deep. All are enforced at the SDK's HTTP seam (``http_bounds``).

The token limit goes out as ``max_completion_tokens`` to OpenAI itself, which refuses
``max_tokens`` for its reasoning models. Other endpoints get both names with the same value:
several still read only ``max_tokens`` and ignore the newer name, which would silently lift the
limit. An endpoint that rejects one of the names (a 400/422 naming it) is asked once more
without it, and this model keeps to what worked.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import threading
import time
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit

import openai

from .. import limits
from .base import Blame, Completion, ModelError, ModelRequest, Usage
from .http_bounds import BoundedHTTPClient, BoundedOpenAI, bounded_call, check_depth
from .openai_errors import MalformedResponse, blame_of, describe_failure, scrub
from .prices import PriceTable, load_prices
from .usage import usage_from

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

    from .backends import BuildOptions

log = logging.getLogger(__name__)

OPENAI_BASE_URL = "https://api.openai.com/v1"
_LIMIT_NAMES = ("max_completion_tokens", "max_tokens")
_REFUSED_PARAM = re.compile(
    r"unsupported|not supported|unrecognized|unknown|extra|not permitted|not allowed|unexpected",
    re.IGNORECASE,
)
# A local server needs no key, but the SDK insists on one.
_PLACEHOLDER_KEY = "no-key"


class OpenAIModel:
    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        timeout: float = 60,
        max_retries: int = 4,
        prices: PriceTable,
    ) -> None:
        if not model:
            raise ValueError("openai: needs a model name, e.g. openai:gpt-4o-mini")
        if timeout <= 0 or max_retries < 0:
            raise ValueError("timeout must be > 0 and max_retries >= 0")
        self.model = model
        self.name = f"openai:{model}"
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL
        self.api_key_env = api_key_env
        self.timeout = timeout
        self.max_retries = max_retries
        self.prices = prices
        self._limits: tuple[str, ...] = (
            _LIMIT_NAMES[:1]
            if urlsplit(self.base_url).hostname == "api.openai.com"
            else _LIMIT_NAMES
        )
        self._client: openai.OpenAI | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return (
            f"OpenAIModel(model={self.model!r}, base_url={self.base_url!r},"
            f" api_key_env={self.api_key_env!r}, timeout={self.timeout!r},"
            f" max_retries={self.max_retries!r})"
        )

    @property
    def is_local(self) -> bool:
        host = urlsplit(self.base_url).hostname or ""
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False

    def complete(self, request: ModelRequest) -> Completion:
        key = self._api_key()
        client = self._client_for(key)
        cap = limits.current().response_bytes  # read per call: TOOLPOLICY_LIMITS may change
        started = time.perf_counter()
        failure = None
        blame: Blame = "endpoint"
        response: Any = None
        try:
            with bounded_call(self.timeout, cap):
                response = self._create(client, request)
                text, usage, extra = _read_reply(response)
        except (openai.OpenAIError, ValueError) as exc:
            failure = describe_failure(
                exc,
                secret=key,
                max_retries=self.max_retries,
                timeout=self.timeout,
                api_key_env=self.api_key_env,
            )
            blame = blame_of(exc)
        latency = time.perf_counter() - started
        # Raised outside the handler, so the SDK's exception (holding the request and its
        # Authorization header) is not chained to ours.
        if failure is not None:
            # A body that arrived but could not be read may still say what it consumed.
            raise ModelError(
                scrub(f"{self.name} at {self.base_url}: {failure}", key),
                usage=_spent(response),
                blame=blame,
            )
        scrubbed: dict[str, Any] = {name: scrub(value, key) for name, value in extra.items()}
        calls = _tool_calls(response)
        if calls:
            scrubbed["tool_calls"] = [
                call | {"function": {k: scrub(v, key) for k, v in call["function"].items()}}
                for call in calls
            ]
        tokens = _logprobs(response)
        if tokens is not None:
            # A key split over tokens would survive scrubbing each one: drop them all instead.
            joined = "".join(str(t["token"]) for t in tokens)
            leaked = scrub(joined, key) != joined  # scrub's own rule of what is a secret
            scrubbed["logprobs"] = "withheld: held the API key" if leaked else tokens
        return Completion(
            text=scrub(text, key),
            usage=usage,
            cost_usd=self.prices.cost(self.model, usage),
            latency_s=latency,
            model=self.name,
            extra=scrubbed,
        )

    def cost_of(self, usage: Usage) -> float | None:
        """What ``usage`` would cost here (the price table's, as a completion is priced)."""
        return self.prices.cost(self.model, usage)

    def _api_key(self) -> str:
        key = os.environ.get(self.api_key_env, "")
        if key:
            return key
        if self.is_local:
            return _PLACEHOLDER_KEY
        raise ModelError(
            f"{self.name} at {self.base_url}: no API key; set the environment variable"
            f" {self.api_key_env} (a server that needs no key accepts any value)"
        )

    def _client_for(self, key: str) -> openai.OpenAI:
        with self._lock:
            if self._client is None or self._client.api_key != key:
                self._client = BoundedOpenAI(
                    api_key=key,
                    base_url=self.base_url,
                    timeout=self.timeout,
                    max_retries=self.max_retries,
                    http_client=BoundedHTTPClient(),
                )
            return self._client

    def _create(self, client: openai.OpenAI, request: ModelRequest) -> Any:
        limits = self._limits
        try:
            return self._send(client, request, limits)
        except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
            fallback = _without_refused_limit(exc, limits)
            if fallback is None:
                raise
        response = self._send(client, request, fallback)
        log.info("%s: %s refused %s; sending %s", self.name, self.base_url, limits, fallback)
        self._limits = fallback
        return response

    def _send(self, client: openai.OpenAI, request: ModelRequest, limits: tuple[str, ...]) -> Any:
        params = request.params()
        limit = params.pop("max_completion_tokens")
        # The SDK types each message by its role; ours are plain {"role", "content"} dicts.
        messages = cast("list[ChatCompletionMessageParam]", [dict(m) for m in request.messages])
        return client.chat.completions.create(
            model=self.model,
            messages=messages,
            **params,
            **dict.fromkeys(limits, limit),
        )


def build(arg: str | None, options: BuildOptions) -> OpenAIModel:
    """The ``openai:<model>`` backend (``backends.py``); it reads no key until a call."""
    return OpenAIModel(
        arg or "",
        base_url=options.base_url,
        api_key_env=options.api_key_env or "OPENAI_API_KEY",
        timeout=options.timeout,
        max_retries=options.max_retries,
        prices=options.prices if options.prices is not None else load_prices(),
    )


def _read_reply(response: Any) -> tuple[str, Usage, dict[str, str]]:
    """Text, usage and the notable extras of a chat completion, or ``MalformedResponse``."""
    if isinstance(response, str):  # the SDK's answer to a body that was not JSON
        # Not JSON, or not decoded: the SDK swallows json()'s refusal of a body whose
        # content-type is not JSON, so the depth is said here too.
        check_depth(response)
        raise MalformedResponse(f"not a chat completion: {response!r}")
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise MalformedResponse("no choices")
    message = getattr(choices[0], "message", None)
    text = getattr(message, "content", None)
    if message is None or not isinstance(text, (str, type(None))):
        raise MalformedResponse("the first choice has no message")
    extra = {
        "finish_reason": getattr(choices[0], "finish_reason", None),
        "served_model": getattr(response, "model", None),
    }
    usage = usage_from(getattr(response, "usage", None))
    return text or "", usage, {k: v for k, v in extra.items() if isinstance(v, str)}


def _tool_calls(response: Any) -> list[dict[str, Any]]:
    """The functions the reply calls (``message.tool_calls``), each ``{"id", "type",
    "function": {"name", "arguments"}}`` with the arguments as the JSON text sent; a call
    without a function name is not one."""
    message = getattr(response.choices[0], "message", None)
    calls = []
    for number, call in enumerate(getattr(message, "tool_calls", None) or []):
        function = getattr(call, "function", None)
        name = getattr(function, "name", None)
        arguments = getattr(function, "arguments", None)
        if not isinstance(name, str) or not name:
            continue
        call_id = getattr(call, "id", None)
        calls.append({
            "id": call_id if isinstance(call_id, str) and call_id else f"call_{number}",
            "type": "function",
            "function": {"name": name, "arguments": arguments if isinstance(arguments, str) else "{}"},
        })  # fmt: skip
    return calls


def _spent(response: Any) -> Usage | None:
    """What a reply that could not be read says it consumed, or None (unknown)."""
    try:
        usage = usage_from(getattr(response, "usage", None))
    except ValueError:
        return None
    return None if usage.missing else usage


def _logprobs(response: Any) -> list[dict[str, Any]] | None:
    """The reply's tokens with their logprobs and top alternatives, when the endpoint sent
    them (OpenAI's ``choices[0].logprobs.content``, which llama.cpp and vLLM also return)."""
    content = getattr(getattr(response.choices[0], "logprobs", None), "content", None)
    if not isinstance(content, list):
        return None
    out = []
    for item in content:
        top = getattr(item, "top_logprobs", None) or []
        out.append(
            {
                "token": getattr(item, "token", ""),
                "logprob": getattr(item, "logprob", None),
                "top": [[getattr(t, "token", ""), getattr(t, "logprob", None)] for t in top],
            }
        )
    return out


def _without_refused_limit(
    exc: openai.APIStatusError, sent: tuple[str, ...]
) -> tuple[str, ...] | None:
    """The token-limit names to retry with when ``exc`` refuses one of ``sent``, else None."""
    text = f"{exc.message} {exc.body}"
    if not _REFUSED_PARAM.search(text):
        return None
    # "Unsupported parameter: 'max_tokens' ... Use 'max_completion_tokens' instead" names both:
    # the refused one is the error's `param`, or else the one named first.
    mentioned = {m.start(): name for name in sent for m in re.finditer(rf"\b{name}\b", text)}
    refused = exc.param if exc.param in sent else mentioned[min(mentioned)] if mentioned else None
    if refused is None:
        return None
    return tuple(name for name in _LIMIT_NAMES if name != refused)
