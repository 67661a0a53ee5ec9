"""``edit_entity``: an exact-string replace inside one entity's span, behind the lint gate.

The search string must occur exactly once within the entity's lines. The edit is refused when
it *adds* py_compile / ``ruff --select E9,F`` errors; errors the file already had do not block.
The file is read and written through ``safefs``: never through a link, atomically (a temporary
file renamed over it), with its mode and its newlines kept.
"""

from __future__ import annotations

import difflib

from . import safefs
from .codeindex import CodeIndex
from .envelope import HOST_ERRNOS, Envelope, HarnessFault, PrimitiveError, fail, ok
from .lint import added_errors, lint_text
from .matching import occurrences
from .read_entity import resolve


def edit_entity(index: CodeIndex, selector: str, search: str, replace: str) -> Envelope:
    """data = ``{"selector", "file", "committed": bool, "matches": 1, "lint": {"clean": bool,
    "errors": [...]}, "diff": str}``. ``committed`` means the new text was written to the file."""
    try:
        entity = resolve(index, selector)
        if not search:
            return fail("empty search string")
        text = index.read_source(entity.file)
        # The mode the file has now (resolve re-indexed it if a sandboxed run changed it).
        mode = safefs.lstat(index.root, entity.file).st_mode
    except PrimitiveError as exc:
        return fail(str(exc))
    except OSError as exc:  # gone between the read and the lstat
        return fail(f"cannot read {selector}'s file: {exc.strerror or exc}")
    lines = text.splitlines(keepends=True)
    head = "".join(lines[: entity.start - 1])
    span = "".join(lines[entity.start - 1 : entity.end])
    tail = "".join(lines[entity.end :])
    count = occurrences(span, search)
    where = f"{selector} (lines {entity.start}-{entity.end})"
    if count == 0:
        return fail(f"search string not found in {where}")
    if count > 1:
        return fail(f"search string matched {count} times in {where}; it must match exactly once")
    new_text = head + span.replace(search, replace, 1) + tail
    # A lint gate that cannot run (ruff missing, crashed, hung) raises: a harness fault, which
    # Toolbox.call reports as one, never an observation the model reads.
    before = lint_text(text, entity.file)
    after = lint_text(new_text, entity.file)
    lint = {"clean": not after, "errors": [e.record() for e in after]}
    added = added_errors(before, after)
    if added:
        listed = "; ".join(str(e) for e in added[:5])
        return fail(
            f"lint gate refused the edit to {selector}: it adds {len(added)} error(s): {listed}",
            {"selector": selector, "file": entity.file, "committed": False, "lint": lint},
        )
    try:
        safefs.write_text(index.root, entity.file, new_text, mode)
    except PrimitiveError as exc:
        return fail(str(exc))
    except OSError as exc:  # e.g. a directory a sandboxed run made read-only
        if exc.errno in HOST_ERRNOS:
            raise HarnessFault(f"edit_entity failed: cannot write {entity.file}: {exc}") from exc
        return fail(f"cannot write {entity.file}: {exc.strerror or exc}")
    finally:
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
