"""``run_test``: run pytest node ids, or a shell command, in the sandbox over the workspace.

Whether a test passed is the exit code's word alone (spec §6.2), never anything it printed. A
run that grows the workspace past its bound (``limits.workspace_mb``) is stopped, and the failed
envelope says so in words, its ``data`` still the run's.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable
from pathlib import Path

from .bwrap import python_prefixes, resolve_python
from .envelope import Envelope, fail, ok
from .sandbox import Sandbox

MAX_LINES = 50
MAX_CHARS = 2000
_PYTEST_FLAGS = ["-q", "-p", "no:cacheprovider", "-p", "no:toolpolicy", "--no-header", "-rfE"]
# A token is a run of non-space characters, where a "[...]" parameter part may hold spaces.
_TOKEN = re.compile(r"(?:[^\s\[]+|\[[^\]]*\])+")
_PLAIN = re.compile(r"[^\s\[]+")  # a token with no "[...]" part
_NODE_PATH = re.compile(r"[\w./-]+")
# Inside a shell token, the characters that can separate a path from what surrounds it.
_SHELL_SEPARATORS = re.compile(r"[=<>:,;|&()]+")
_SYSTEM_PREFIXES = ("/usr/", "/bin/", "/sbin/", "/dev/null/")
_PYTEST_NOT_FOUND = (4, 5)  # usage error (e.g. unknown node id), no tests collected


def run_test(
    root: Path,
    sandbox: Sandbox,
    target: str,
    timeout: int = 120,
    python: str | None = None,
    env: dict[str, str] | None = None,
    runner: Callable[[str], str | None] | None = None,
) -> Envelope:
    """Run ``target`` in the workspace ``root`` and report how it ended.

    ``runner``: the repository's own test runner, where its tests have one: the command
    running ``target`` when it is written in that repository's test-id convention (django's
    ``test_name (module.Class)``), None otherwise; such a target runs as that command.

    ``target`` is run as pytest node ids iff every whitespace-separated token (a ``[...]``
    parameter suffix may contain spaces) has the form ``PATH`` or ``PATH::NAME[::NAME...]`` where
    PATH is made only of letters, digits and ``_ . - /``, does not start with ``-``, and the token
    has a ``::`` part, or PATH ends in ``.py`` or ``/``, or PATH names an existing directory of
    the workspace. Anything else is a shell command, run by bash (or sh) in the workspace.
    """
    if not isinstance(target, str):
        return fail(f"invalid arg: target (expected str, got {type(target).__name__})")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        return fail(
            f"invalid arg: timeout (expected a positive number of seconds, got {timeout!r})"
        )
    root = Path(root).resolve()
    if not root.is_dir():
        return fail(f"workspace not found: {root}")
    target = target.strip()
    if not target:
        return fail("empty target")
    python = resolve_python(python)
    tokens = target_tokens(target)
    whole = _squeeze("".join(tokens)) == _squeeze(target)  # no stray "[" was skipped
    own = runner(target) if runner is not None else None
    if own is not None:
        mode, error = "runner", None
        argv = ["/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh", "-c", own]
    elif whole and all(_is_node_id(root, token) for token in tokens):
        mode, error = "pytest", _check_node_ids(root, tokens)
        argv = [python, "-m", "pytest", *_PYTEST_FLAGS, *tokens]
    else:
        mode, error = "shell", _check_shell(root, target, python)
        argv = ["/bin/bash" if os.path.exists("/bin/bash") else "/bin/sh", "-c", target]
    if error:
        return fail(error)
    result = sandbox.run(
        argv,
        cwd=root,
        writable=root,
        stdin=None,
        timeout=timeout,
        merge_stderr=True,
        python=python,
        env=env,
    )
    full = result.stdout.decode("utf-8", errors="replace")
    output, truncated = tail_lines(full, result.stdout_dropped)
    data = {
        "target": target,
        "mode": mode,
        **({"command": argv[-1]} if mode == "runner" else {}),
        "passed": result.exit_code == 0,
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "duration_s": result.duration_s,
        "output": output,
        "output_truncated": truncated,
        "sandbox": result.sandbox,
    }
    if result.workspace_over:  # stopped, or it ended over the bound: the words say which
        return fail(result.workspace_over, data)
    if mode == "pytest" and not result.timed_out and result.exit_code in _PYTEST_NOT_FOUND:
        return fail(f"pytest found no test for target {target}: {_first_error(full)}", data)
    return ok(data)


def target_tokens(target: str) -> list[str]:
    """``_TOKEN.findall(target)``, in time linear in the target.

    A "[" that no "]" follows is tried as a parameter part and read to the end of the target,
    from every such "[" again: a target of 20,000 of them took 0.45 s, and it is the model's to
    write. Past the last "]" no "[" can open a parameter part, so tokens there are runs of other
    non-space characters; before it every "[" finds its "]". The one token that can cross the
    last "]" is the one ending on it, which runs on through the run after it."""
    cut = target.rfind("]") + 1
    tokens = [m.group() for m in _TOKEN.finditer(target, 0, cut)]
    rest = _PLAIN.finditer(target, cut)
    first = next(rest, None)
    if first is not None and cut and first.start() == cut:  # the token ending on the "]"
        tokens[-1] += first.group()
    elif first is not None:
        tokens.append(first.group())
    tokens += [m.group() for m in rest]
    return tokens


def _squeeze(text: str) -> str:
    return "".join(text.split())


def _is_node_id(root: Path, token: str) -> bool:
    path, sep, _ = token.partition("::")
    if not _NODE_PATH.fullmatch(path) or path.startswith("-"):
        return False
    return bool(sep) or path.endswith((".py", "/")) or (root / path).is_dir()


def _check_node_ids(root: Path, tokens: list[str]) -> str | None:
    for token in tokens:
        path = token.partition("::")[0]
        if os.path.isabs(path) or not _inside(root, root / path):
            return f"target leaves the workspace: {token}"
        if not (root / path).exists():
            return f"test target not found: {token}"
    return None


def _check_shell(root: Path, target: str, python: str) -> str | None:
    try:
        words = shlex.split(target)
    except ValueError as exc:
        return f"cannot parse shell target ({exc}): {target}"
    # System executables and the interpreter are visible read-only in the sandbox anyway.
    allowed = (*_SYSTEM_PREFIXES, *(p + "/" for p in python_prefixes(python)))
    for word in words:
        for part in _SHELL_SEPARATORS.split(word):
            if not (part.startswith(("/", "~")) or "/" in part or part == ".."):
                continue
            path = Path(os.path.expanduser(part)) if part.startswith("~") else root / part
            if not _inside(root, path) and not (os.path.normpath(path) + "/").startswith(allowed):
                return f"target leaves the workspace: {part}"
    return None


def _inside(root: Path, path: Path) -> bool:
    resolved = path.resolve()
    return resolved == root or root in resolved.parents


def tail_lines(text: str, dropped_bytes: int = 0) -> tuple[str, bool]:
    """The last lines of ``text`` within MAX_LINES and MAX_CHARS, a leading marker line included."""
    lines = text.splitlines()
    if len(lines) <= MAX_LINES and len(text) <= MAX_CHARS and not dropped_bytes:
        return text, False
    lost = f" and {dropped_bytes} bytes" if dropped_bytes else ""
    budget = MAX_CHARS - len(f"[... {len(lines)} earlier lines{lost} truncated ...]")
    kept: list[str] = []
    partial = 0
    for line in reversed(lines):
        if len(kept) == MAX_LINES - 1 or len(line) + 1 > budget:
            if not kept:  # one line longer than the whole budget: keep its end
                kept.append(line[len(line) - budget + 1 :])
                partial = 1
            break
        kept.append(line)
        budget -= len(line) + 1
    marker = f"[... {len(lines) - len(kept) + partial} earlier lines{lost} truncated ...]"
    return "\n".join([marker, *reversed(kept)]), True


def _first_error(output: str) -> str:
    """pytest's first ``ERROR`` line, else its last line (e.g. "no tests ran in 0.01s")."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith("ERROR")]
    if errors:
        return errors[0][:300]
    return lines[-1][:300] if lines else "no output"
