"""What the bridge answers to each request its server hands it (``http_server.Request``).

``GET .../models`` lists the one model; ``POST .../chat/completions`` is a call, answered by
``Bridge.answer`` (streamed as server-sent events when it asked to be). A chat request whose
body cannot be read — no usable Content-Length, a body past ``BridgeLimits.body_bytes`` (413,
never read whole), not JSON, not an object — and a POST to any other path are the agent's own
mistakes, kept by ``Bridge.refuse`` as exchanges (turns and refusals). What is not HTTP at all,
or another method, is answered without a record, as a web server would (400, 404, 501).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from .. import jsonsafe
from .http_server import Request, Response, json_response
from .openai_wire import INVALID, error_body, models_body, one_line, stream_events

if TYPE_CHECKING:
    from .bridge import Bridge

log = logging.getLogger("pytest_toolpolicy.agents.bridge")


def respond(bridge: Bridge, request: Request) -> Response:
    head = request.head
    if head.method == "GET":
        if head.target.rstrip("/").endswith("/models"):
            return json_response(200, models_body(bridge.model_name))
        return json_response(404, error_body(f"no such path: {head.target[:200]}", "not_found"))
    if head.method != "POST":
        return json_response(501, error_body(f"unsupported method: {head.method}", INVALID))
    try:
        return _post(bridge, request)
    except Exception as exc:  # noqa: BLE001 -- a last resort: never a traceback here
        why = one_line(f"bridge fault: {type(exc).__name__}: {exc}")
        log.error("%s (item %s)", why, bridge.item or "?")
        return json_response(500, bridge.refuse(why, "bridge_error"), close=True)


def _post(bridge: Bridge, request: Request) -> Response:
    head, size = request.head, request.head.size
    unframed = size is None  # where its body ends is unknown: the line closes after the answer
    if not head.target.rstrip("/").endswith("/chat/completions"):
        why = f"no such path: {head.target[:200]}"
        return json_response(404, bridge.refuse(why, "not_found"), close=unframed)
    if size is None or size == 0:
        why = "a chat request needs a Content-Length and a body"
        why += f" ({head.size_problem})" if head.size_problem else ""
        return json_response(400, bridge.refuse(why), close=unframed)
    limit = bridge.limits.body_bytes
    if size > limit or request.body is None:
        why = f"body too large: {size} bytes (the bridge takes at most {limit})"
        return json_response(413, bridge.refuse(why))
    try:
        body: Any = jsonsafe.loads(request.body)
    except ValueError as exc:
        return json_response(400, bridge.refuse(one_line(f"the body is not JSON ({exc})")))
    if not isinstance(body, dict):
        return json_response(400, bridge.refuse("the body is not a JSON object"))
    status, reply, kept = bridge.answer(body)
    if status == 200 and kept.stream:
        return Response(200, b"".join(stream_events(reply)), "text/event-stream")
    return json_response(status, reply)
