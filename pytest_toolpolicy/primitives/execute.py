"""``execute``: run Python code in the sandbox, in a private directory, nothing writable.

The code goes in through stdin (``python -``), so its size is not bound by argv limits, and it
runs in a private temporary directory: in bwrap mode the sandbox's own tmpfs ``/tmp``. For a
real repository the code imports the workspace's package as grading does: ``env`` carries the
``PYTHONPATH`` into the workspace, and ``readable`` makes those paths visible, read-only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from .bwrap import resolve_python
from .envelope import Envelope, fail, ok
from .sandbox import Sandbox

MAX_CHARS = 8000
_TAIL_CHARS = (
    2000  # of MAX_CHARS, kept from the end: a traceback's last line is the one that matters
)


def execute(
    sandbox: Sandbox,
    code: str,
    timeout: int = 10,
    python: str | None = None,
    env: Mapping[str, str] | None = None,
    readable: Sequence[str] = (),
    view: Path | None = None,
) -> Envelope:
    if not isinstance(code, str):
        return fail(f"invalid arg: code (expected str, got {type(code).__name__})")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        return fail(
            f"invalid arg: timeout (expected a positive number of seconds, got {timeout!r})"
        )
    if not code.strip():
        return fail("empty code")
    python = resolve_python(python)
    result = sandbox.run(
        [python, "-"],
        cwd=None,
        writable=None,
        stdin=code.encode("utf-8", errors="surrogatepass"),  # Python rejects it, clearly
        timeout=timeout,
        merge_stderr=False,
        python=python,
        env=env,
        ro_binds=readable,
        view=view,
    )
    return ok(
        {
            "stdout": cap_text(
                result.stdout.decode("utf-8", errors="replace"), result.stdout_dropped
            ),
            "stderr": cap_text(
                result.stderr.decode("utf-8", errors="replace"), result.stderr_dropped
            ),
            "exit_code": result.exit_code,
            "timed_out": result.timed_out,
            "duration_s": result.duration_s,
            "sandbox": result.sandbox,
        }
    )


def cap_text(text: str, dropped_bytes: int = 0, limit: int = MAX_CHARS) -> str:
    """``text`` if it fits in ``limit`` chars, else its start and end around a marker line."""
    if len(text) <= limit:
        return text
    tail = min(_TAIL_CHARS, limit // 4)
    lost = f", and {dropped_bytes} bytes dropped at capture" if dropped_bytes else ""
    # Sized for the largest count it could show, so the real marker always fits.
    head = limit - tail - len(f"\n[... {len(text)} chars truncated{lost} ...]\n")
    hidden = len(text) - head - tail
    return text[:head] + f"\n[... {hidden} chars truncated{lost} ...]\n" + text[len(text) - tail :]
