"""The baseline's four tools over one workspace directory (SWE-agent / mini-swe-agent style).

Each returns an envelope ``{"ok", "error", "data"}`` and never raises for bad input; a fault
of the harness itself raises ``HarnessFault`` (the model never reads it). Paths are relative to
the workspace root (an absolute path is accepted only if it lies inside it). The file tools run
on the host over a workspace the sandbox may have rigged, so they go through ``safefs``: a path
that leaves the workspace, passes through a symbolic link (even one pointing inside), names a
FIFO or device, or has a ``.git`` component is refused before anything is touched, and reads
are bounded by ``limits.current().read_bytes``.
"""

from __future__ import annotations

import inspect
import os
import stat
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from .. import limits
from ..primitives import safefs
from ..primitives.envelope import HOST_ERRNOS, Envelope, HarnessFault, PrimitiveError, fail, ok
from ..primitives.matching import occurrences
from ..primitives.specs import is_text
from ..primitives.toolbox import Toolbox

TOOL_NAMES = ("read_file", "write_file", "edit_file", "bash")
MAX_READ_LINES = 400
MAX_READ_CHARS = 20_000
MAX_OUTPUT_CHARS = 10_000
_SNIPPET_CONTEXT = 3
# The harness's own pytest plugin is installed for the host, not importable in the sandbox; the
# model's pytest runs skip it, as run_test's do, so they see the repository's tests alone.
_SANDBOX_ENV = ["/usr/bin/env", "PYTEST_ADDOPTS=-p no:toolpolicy"]
# surrogateescape lets a file that is not valid UTF-8 round-trip through an edit unchanged.
_ERRORS = "surrogateescape"


def call_tool(toolbox: Toolbox, tool: str, args: dict[str, Any]) -> Envelope:
    """Dispatch one call. Bad input is an ``ok: false`` envelope; anything else that goes wrong
    is the harness's own fault and raises ``HarnessFault`` instead of reaching the model."""
    if tool not in TOOL_NAMES:
        return fail(f"unknown tool: {tool!r} (tools: {', '.join(TOOL_NAMES)}, submit)")
    if not isinstance(args, dict):
        return fail(f"args for {tool} must be an object, got {type(args).__name__}")
    for name, value in args.items():
        if isinstance(value, str) and not is_text(value):
            return fail(f"invalid args for {tool}: {name} is not valid text (a lone surrogate)")
    function: Callable[..., Envelope] = bash if tool == "bash" else _FILE_TOOLS[tool]
    first = toolbox if tool == "bash" else toolbox.root
    try:  # bound apart from the call, so a TypeError raised inside a tool is not "bad args"
        bound = inspect.signature(function).bind(first, **args)
    except TypeError as exc:
        return fail(f"invalid args for {tool}: {exc}")
    try:
        return function(*bound.args, **bound.kwargs)
    except PrimitiveError as exc:
        return fail(str(exc))
    except OSError as exc:
        if tool == "bash" or exc.errno in HOST_ERRNOS:
            raise HarnessFault(f"{tool} failed: {type(exc).__name__}: {exc}") from exc
        # The workspace's state at the model's path (a file where a directory is expected, a
        # name too long, a file the model made unreadable): an observation, not a fault.
        return fail(f"{args.get('path')}: {exc.strerror or exc}")
    except Exception as exc:
        raise HarnessFault(f"{tool} failed: {type(exc).__name__}: {exc}") from exc


def read_file(root: Path, path: str, start: int = 1, end: int | None = None) -> Envelope:
    if not _is_int(start) or not (end is None or _is_int(end)):
        return fail("start and end must be integers (1-based line numbers)")
    rel, error = _resolve(root, path)
    if error:
        return fail(error)
    info = _lstat(root, rel)
    if info is None or stat.S_ISDIR(info.st_mode):
        kind = "not found" if info is None else "a directory (list it with bash: ls)"
        return fail(f"{path}: {kind}")
    raw = safefs.read_bytes(root, rel, limits.current().read_bytes)
    if b"\x00" in raw[:8192]:
        return fail(f"{path}: binary file, not shown")
    lines = raw.decode("utf-8", errors="replace").splitlines()
    first = max(1, start)
    last = len(lines) if end is None else min(end, len(lines))
    shown: list[str] = []
    size = 0
    for number in range(first, last + 1):
        line = f"{number:6}\t{lines[number - 1]}"
        if len(shown) == MAX_READ_LINES or size + len(line) + 1 > MAX_READ_CHARS:
            break
        shown.append(line)
        size += len(line) + 1
    shown_end = first + len(shown) - 1
    truncated = shown_end < last
    content = "\n".join(shown)
    if truncated:
        content += (
            f"\n[... cut at line {shown_end} of {len(lines)}"
            f" (max {MAX_READ_LINES} lines / {MAX_READ_CHARS} chars);"
            f" call read_file with start={shown_end + 1} to read on ...]"
        )
    if first > len(lines):
        content = f"[{path} has {len(lines)} lines; nothing at line {first}]"
    return ok(
        {
            "path": rel,
            "start": first,
            "end": shown_end,
            "total_lines": len(lines),
            "content": content,
            "truncated": truncated,
        }
    )


def write_file(root: Path, path: str, content: str) -> Envelope:
    rel, error = _resolve(root, path)
    if error:
        return fail(error)
    if not isinstance(content, str):
        return fail(f"content must be a string, got {type(content).__name__}")
    info = _lstat(root, rel)
    if info is not None and not stat.S_ISREG(info.st_mode):
        return fail(f"{path}: is a directory" if stat.S_ISDIR(info.st_mode) else _irregular(path))
    mode = None if info is None else info.st_mode  # overwriting keeps the mode; new: 0644
    safefs.write_bytes(root, rel, _encode(content, "content"), mode)
    return ok({"path": rel, "created": info is None, "chars": len(content)})


def edit_file(root: Path, path: str, old: str, new: str) -> Envelope:
    rel, error = _resolve(root, path)
    if error:
        return fail(error)
    if not isinstance(old, str) or not isinstance(new, str):
        return fail("old and new must be strings")
    if not old:
        return fail("old is empty: give the exact text to replace (use write_file to create)")
    info = _lstat(root, rel)
    if info is None or not stat.S_ISREG(info.st_mode):
        return fail(f"{path}: not found" if info is None else _irregular(path))
    raw = safefs.read_bytes(root, rel, limits.current().read_bytes)
    text = raw.decode("utf-8", errors=_ERRORS)
    count = occurrences(text, old)
    if count == 0:
        return fail(f"old text not found in {path}; it must match exactly, whitespace included")
    if count > 1:
        return fail(f"old text matched {count} times in {path}; include more context to pick one")
    updated = text.replace(old, new, 1)
    safefs.write_bytes(root, rel, _encode(updated, "new"), info.st_mode)
    first = text[: text.index(old)].count("\n") + 1
    lines = updated.splitlines()
    low = max(1, first - _SNIPPET_CONTEXT)
    high = min(len(lines), first + new.count("\n") + _SNIPPET_CONTEXT)
    snippet = "\n".join(f"{n:6}\t{lines[n - 1]}" for n in range(low, high + 1))
    return ok({"path": rel, "replaced": 1, "line": first, "snippet": snippet})


def bash(toolbox: Toolbox, command: str, timeout: float = 120) -> Envelope:
    if not isinstance(command, str) or not command.strip():
        return fail("command must be a non-empty string")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        return fail(f"timeout must be a positive number of seconds, got {timeout!r}")
    shell = "/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh"
    result = toolbox.sandbox.run(
        [*_SANDBOX_ENV, shell, "-c", command],
        cwd=toolbox.root,
        writable=toolbox.root,
        stdin=None,
        timeout=timeout,
        merge_stderr=True,
        python=toolbox.python,
        env=toolbox.sandbox_env,
    )
    toolbox.index.refresh()  # the command may have changed any file behind the index
    output, truncated = tail_chars(result.stdout.decode("utf-8", errors="replace"))
    if result.stdout_dropped:
        output = f"[... {result.stdout_dropped} bytes dropped by the sandbox ...]\n{output}"
        truncated = True
    data = {
        "command": command,
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "output": output,
        "output_truncated": truncated,
        "duration_s": result.duration_s,
        "sandbox": result.sandbox,
    }
    if result.workspace_over:  # stopped (or over) at the disk bound: the model must know why
        return fail(result.workspace_over, data)
    if result.timed_out:
        return fail(f"timed out after {timeout:g}s; process tree killed", data)
    return ok(data)


def tail_chars(text: str, limit: int = MAX_OUTPUT_CHARS) -> tuple[str, bool]:
    """The last ``limit`` characters, cut at a line start, after a marker saying what was cut."""
    if len(text) <= limit:
        return text, False
    kept = text[-limit:]
    if "\n" in kept:
        kept = kept[kept.index("\n") + 1 :]
    return f"[... {len(text) - len(kept)} earlier characters truncated ...]\n{kept}", True


def _resolve(root: Path, path: Any) -> tuple[str, str | None]:
    """The workspace-relative form of ``path``, or why it is refused. Lexical only: the links a
    normalized path could pass through are refused component by component by ``safefs``."""
    if not isinstance(path, str) or not path.strip():
        return "", "path must be a non-empty string (relative to the workspace root)"
    if "\x00" in path:
        return "", "path must not contain a NUL character"
    full = os.path.normpath(os.path.join(root, path))  # an absolute path replaces root
    if full != str(root) and not full.startswith(f"{root}{os.sep}"):
        return "", f"path outside the workspace: {path} (use a path relative to its root)"
    rel = os.path.relpath(full, root)
    if rel == ".":
        return "", f"{path}: is the workspace root, a directory"
    if any(part.lower() == ".git" for part in PurePosixPath(rel).parts):
        # A host-side write under .git (config, hooks) would run code on the next snapshot.
        return "", f"refusing {path}: .git is the repository's metadata, not a workspace file"
    return rel, None


def _lstat(root: Path, rel: str) -> os.stat_result | None:
    """The entry at ``rel`` itself (None if missing); ``UnsafePath`` if a link is on the way."""
    try:
        return os.lstat(safefs.inside(root, rel))
    except FileNotFoundError:
        return None


def _irregular(path: str) -> str:
    return f"{path}: not a regular file (a FIFO, socket or device is never opened)"


def _encode(text: str, what: str) -> bytes:
    try:
        return text.encode("utf-8", errors=_ERRORS)
    except UnicodeEncodeError as exc:  # a lone surrogate that no file byte decodes to
        raise PrimitiveError(f"{what} is not valid text at character {exc.start}") from None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_FILE_TOOLS: dict[str, Callable[..., Envelope]] = {
    "read_file": read_file,
    "write_file": write_file,
    "edit_file": edit_file,
}
