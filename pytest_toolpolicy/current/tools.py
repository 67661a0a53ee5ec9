"""The baseline's four tools over one workspace directory (SWE-agent / mini-swe-agent style).

Each returns an envelope ``{"ok", "error", "data"}`` and never raises for bad input. Paths are
relative to the workspace root (an absolute path is accepted only if it lies inside it); a path
that leaves the workspace is refused before anything is touched.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..primitives.envelope import Envelope, fail, ok
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
_ENCODING = {"encoding": "utf-8", "errors": "surrogateescape"}


def call_tool(toolbox: Toolbox, tool: str, args: dict[str, Any]) -> Envelope:
    """Dispatch one call: the only checks are the ones calling the function needs."""
    if tool not in TOOL_NAMES:
        return fail(f"unknown tool: {tool!r} (tools: {', '.join(TOOL_NAMES)}, submit)")
    if not isinstance(args, dict):
        return fail(f"args for {tool} must be an object, got {type(args).__name__}")
    try:
        if tool == "bash":
            return bash(toolbox, **args)
        return _FILE_TOOLS[tool](toolbox.root, **args)
    except TypeError as exc:
        return fail(f"invalid args for {tool}: {exc}")
    except Exception as exc:  # a harness-side fault still answers as an envelope
        return fail(f"{tool} failed: {type(exc).__name__}: {exc}")


def read_file(root: Path, path: str, start: int = 1, end: int | None = None) -> Envelope:
    if not _is_int(start) or not (end is None or _is_int(end)):
        return fail("start and end must be integers (1-based line numbers)")
    target, error = _resolve(root, path)
    if error:
        return fail(error)
    if not target.is_file():
        kind = "a directory (list it with bash: ls)" if target.is_dir() else "not found"
        return fail(f"{path}: {kind}")
    raw = target.read_bytes()
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
            "path": _rel(root, target),
            "start": first,
            "end": shown_end,
            "total_lines": len(lines),
            "content": content,
            "truncated": truncated,
        }
    )


def write_file(root: Path, path: str, content: str) -> Envelope:
    target, error = _resolve(root, path)
    if error:
        return fail(error)
    if not isinstance(content, str):
        return fail(f"content must be a string, got {type(content).__name__}")
    if target.is_dir():
        return fail(f"{path}: is a directory")
    created = not target.exists()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, **_ENCODING)
    return ok({"path": _rel(root, target), "created": created, "chars": len(content)})


def edit_file(root: Path, path: str, old: str, new: str) -> Envelope:
    target, error = _resolve(root, path)
    if error:
        return fail(error)
    if not isinstance(old, str) or not isinstance(new, str):
        return fail("old and new must be strings")
    if not old:
        return fail("old is empty: give the exact text to replace (use write_file to create)")
    if not target.is_file():
        return fail(f"{path}: not found")
    text = target.read_text(**_ENCODING)
    count = text.count(old)
    if count == 0:
        return fail(f"old text not found in {path}; it must match exactly, whitespace included")
    if count > 1:
        return fail(f"old text matched {count} times in {path}; include more context to pick one")
    updated = text.replace(old, new, 1)
    target.write_text(updated, **_ENCODING)
    first = text[: text.index(old)].count("\n") + 1
    lines = updated.splitlines()
    low = max(1, first - _SNIPPET_CONTEXT)
    high = min(len(lines), first + new.count("\n") + _SNIPPET_CONTEXT)
    snippet = "\n".join(f"{n:6}\t{lines[n - 1]}" for n in range(low, high + 1))
    return ok({"path": _rel(root, target), "replaced": 1, "line": first, "snippet": snippet})


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


def _resolve(root: Path, path: Any) -> tuple[Path, str | None]:
    if not isinstance(path, str) or not path.strip():
        return root, "path must be a non-empty string (relative to the workspace root)"
    target = (root / path).resolve()  # an absolute path replaces root; symlinks are followed
    if target != root and root not in target.parents:
        return root, f"path outside the workspace: {path} (use a path relative to its root)"
    return target, None


def _rel(root: Path, target: Path) -> str:
    return target.relative_to(root).as_posix() or "."


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_FILE_TOOLS = {"read_file": read_file, "write_file": write_file, "edit_file": edit_file}
