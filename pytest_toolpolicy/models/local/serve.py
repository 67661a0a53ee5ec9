"""The server process: ``python -m pytest_toolpolicy.models.local.serve '<settings json>'``.

It serves one GGUF file with llama.cpp's server (``xllamacpp``) on 127.0.0.1 and a free port,
prints one JSON line ``{"address": "http://127.0.0.1:PORT"}`` (or ``{"error": ...}``) on
stdout, and then lives exactly as long as its stdin stays open: the harness holds the other
end, so when the harness exits, is interrupted or crashes, the pipe closes and the server goes
with it. (On Linux it also asks the kernel for SIGTERM when its parent dies.)
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import signal
import sys
from typing import Any

_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    with contextlib.suppress(OSError, AttributeError):  # not Linux: the stdin pipe alone ends it
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def main(argv: list[str]) -> int:
    _die_with_parent()
    settings: dict[str, Any] = json.loads(argv[1])
    try:
        import xllamacpp
    except ImportError:
        print(json.dumps({"error": "xllamacpp is not installed"}), flush=True)
        return 2
    params = xllamacpp.CommonParams()
    params.model.path = settings["model"]
    # llama.cpp splits its context among the slots: each slot is to have the whole ``ctx``
    params.n_ctx = int(settings["ctx"]) * int(settings["parallel"])
    params.cpuparams.n_threads = int(settings["threads"])
    params.cpuparams_batch.n_threads = int(settings["threads"])
    params.n_parallel = int(settings["parallel"])
    params.hostnames = ["127.0.0.1"]
    params.port = 0  # a free port, which the server reports
    if settings.get("embedding"):
        params.embedding = True
        params.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_LAST
        # a prompt is embedded in one batch: the batch holds the whole context
        params.n_batch = params.n_ubatch = params.n_ctx
    template = settings.get("chat_template")
    if template == "jinja":  # the file's own template, by the Jinja engine (tool calls and all)
        params.use_jinja = True
    elif template:
        params.chat_template = template
        # A Jinja source is rendered by llama.cpp's Jinja engine; a bare name ("gemma",
        # "chatml", ...) picks one of its built-in formats, which the Jinja engine would
        # instead print literally.
        params.use_jinja = "{{" in template or "{%" in template
    try:
        server = xllamacpp.Server(params)
    except Exception as exc:  # a bad file, too little memory: said, not a traceback
        print(json.dumps({"error": f"{type(exc).__name__}: {exc}"}), flush=True)
        return 1
    print(json.dumps({"address": server.listening_address}), flush=True)
    sys.stdin.buffer.read()  # until the harness closes its end
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
