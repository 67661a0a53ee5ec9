"""Hidden states of prompts, for row 10's probe: the same ``local:`` model served in
llama.cpp's embeddings mode (the last token's state), one server per process, started the
first time a state is asked for and stopped when the process ends (it also dies with it).

``states_for(model_name)`` is the loop's hook: a function from a prompt's messages to its state
(``text_states_for``: from its text, what ``toolpolicy probe`` trains on), or to None where
there is none to be had (the model is not ``local:``; the server would not
start, which is said once on stderr and recorded by the probe's verdict as nothing judged).
"""

from __future__ import annotations

import atexit
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from .probe import prompt_text

States = Callable[[Sequence[dict[str, Any]]], list[float] | None]
_servers: dict[str, Any] = {}
_failed: dict[str, str] = {}
_lock = threading.Lock()
CHARS = 20_000  # of a prompt's text, from its end (the state is the last token's)


def states_for(model_name: str) -> States:
    text_state = text_states_for(model_name)
    return lambda messages: text_state(prompt_text(messages))


def text_states_for(model_name: str, threads: int = 1) -> Callable[[str], list[float] | None]:
    """A text's state (the prompt's text as ``prompt_text`` writes it), or None. ``threads``:
    the server's, when this call starts it (``toolpolicy probe`` alone on a machine can use
    every core; beside an A/B's own server, 1)."""
    arg = model_name.partition(":")[2] if model_name.startswith("local:") else None

    def state(text: str) -> list[float] | None:
        if arg is None:
            return None
        client = _client(arg, threads)
        if client is None:
            return None
        reply = client.embeddings.create(model=model_name, input=[text[-CHARS:]])
        return [float(v) for v in reply.data[0].embedding]

    return state


def _client(arg: str, threads: int = 1) -> Any:
    with _lock:
        if arg in _failed:
            return None
        if arg not in _servers:
            from ..models.local.server import LocalServer, ServerError, ServerSettings
            from ..models.local.weights import WeightsError, resolve

            try:
                settings = ServerSettings(threads=threads, embedding=True)
                server = LocalServer(resolve(arg), settings).start()
            except (ServerError, WeightsError) as exc:
                _failed[arg] = str(exc)
                print(f"toolpolicy: no hidden states for local:{arg}: {exc}", file=sys.stderr)
                return None
            atexit.register(server.stop)
            import openai

            _servers[arg] = openai.OpenAI(base_url=server.base_url, api_key="local", max_retries=0)
        return _servers[arg]
