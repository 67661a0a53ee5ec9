"""``edit_entity``: an exact-string replace inside one entity's span, behind the lint gate.

The search string must occur exactly once within the entity's lines. The edit is refused when
it *adds* py_compile / ``ruff --select E9,F`` errors; errors the file already had do not block.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from pathlib import Path

from .codeindex import CodeIndex, read_text
from .envelope import Envelope, PrimitiveError, fail, ok
from .lint import added_errors, lint_text
from .read_entity import resolve


def edit_entity(index: CodeIndex, selector: str, search: str, replace: str) -> Envelope:
    """data = ``{"selector", "file", "committed": bool, "matches": 1, "lint": {"clean": bool,
    "errors": [...]}, "diff": str}``. ``committed`` means the new text was written to the file."""
    try:
        entity = resolve(index, selector)
    except PrimitiveError as exc:
        return fail(str(exc))
    if not search:
        return fail("empty search string")
    path = index.root / entity.file
    if path.is_symlink() or index.root not in path.resolve().parents:
        return fail(f"refusing to edit {entity.file}: it resolves outside the workspace")
    text = read_text(path)
    if text is None:
        return fail(f"cannot read {entity.file}: file is gone or no longer UTF-8 text")
    lines = text.splitlines(keepends=True)
    head = "".join(lines[: entity.start - 1])
    span = "".join(lines[entity.start - 1 : entity.end])
    tail = "".join(lines[entity.end :])
    count = span.count(search)
    where = f"{selector} (lines {entity.start}-{entity.end})"
    if count == 0:
        return fail(f"search string not found in {where}")
    if count > 1:
        return fail(f"search string matched {count} times in {where}; it must match exactly once")
    new_text = head + span.replace(search, replace, 1) + tail
    try:
        before = lint_text(text, entity.file)
        after = lint_text(new_text, entity.file)
    except RuntimeError as exc:
        return fail(f"lint gate unavailable: {exc}")
    lint = {"clean": not after, "errors": [e.record() for e in after]}
    added = added_errors(before, after)
    if added:
        listed = "; ".join(str(e) for e in added[:5])
        return fail(
            f"lint gate refused the edit to {selector}: it adds {len(added)} error(s): {listed}",
            {"selector": selector, "file": entity.file, "committed": False, "lint": lint},
        )
    _write_atomic(path, new_text)
    index.reindex(entity.file)
    diff = "".join(
        difflib.unified_diff(
            text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            f"a/{entity.file}",
            f"b/{entity.file}",
        )
    )
    data = {"selector": selector, "file": entity.file, "committed": True, "matches": 1}
    return ok({**data, "lint": lint, "diff": diff})


def _write_atomic(path: Path, text: str) -> None:
    mode = path.stat().st_mode
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
