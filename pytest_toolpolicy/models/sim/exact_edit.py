"""One exact-string edit, as ``edit_entity`` and ``edit_file`` take it: a gold patch's change
runs, the edit that makes one run (its removed lines widened by context until the search text
occurs exactly once in its scope), and the edit applied as the primitive applies it.

The scope of an ``edit_entity`` edit is the innermost entity holding the run (then its parents,
up to the module), and the edit must fit the tool's argument caps; a whole-file edit
(``edit_file``) has no caps.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from ...primitives.codeindex import Entity
from ...primitives.codeindex import index_source as _index_source
from ...primitives.matching import occurrences
from ...primitives.specs import TOOL_ARGS

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
CAPS = {s.name: s.max_len for s in TOOL_ARGS["edit_entity"] if s.max_len is not None}


class GoldError(ValueError):
    """The gold patch cannot be turned into exact edits that reproduce it."""


@dataclass(frozen=True)
class Edit:
    file: str
    selector: str  # the entity (policy arm); "" for a whole-file edit
    search: str
    replace: str


@dataclass(frozen=True)
class Run:
    start: int  # 0-based base line of the first removed line (or the insertion point)
    removed: tuple[str, ...]
    added: tuple[str, ...]


def parse_patch(patch: str) -> dict[str, list[Run]]:
    """File → change runs (base line numbers) of a unified diff."""
    files: dict[str, list[Run]] = {}
    runs: list[Run] = []
    line: int | None = None
    removed: list[str] = []
    added: list[str] = []
    start = 0

    def flush() -> None:
        nonlocal removed, added
        if removed or added:
            runs.append(Run(start, tuple(removed), tuple(added)))
        removed, added = [], []

    for raw in patch.splitlines(keepends=True):
        if raw.startswith("+++ "):
            flush()  # a file's diff that ends in changed lines (an append at its end)
            runs = files.setdefault(raw[4:].strip().removeprefix("b/"), [])
        elif (hunk := _HUNK.match(raw)) is not None:
            flush()
            line = int(hunk.group(1)) - 1
            if hunk.group(2) == "0":
                line += 1  # an empty old range names the line before the insertion
        elif line is None or raw.startswith(("--- ", "diff ", "index ")):
            continue
        elif raw.startswith("-"):
            if not removed and not added:
                start = line
            removed.append(raw[1:])
            line += 1
        elif raw.startswith("+"):
            if not removed and not added:
                start = line
            added.append(raw[1:])
        elif raw.startswith((" ", "\n")):
            flush()
            line += 1
        # "\ No newline at end of file" lines carry no content
    if line is not None:
        flush()
    return files


def apply_runs(text: str, runs: list[Run]) -> str:
    """The file as the gold patch leaves it."""
    lines = text.splitlines(keepends=True)
    for run in sorted(runs, key=lambda r: r.start, reverse=True):
        lines[run.start : run.start + len(run.removed)] = run.added
    return "".join(lines)


def diff_edit(before: str, after: str, rel: str) -> Edit | None:
    """The one edit turning ``before`` into ``after`` (their differing lines, widened until
    unique) within the caps, or None."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    run = Run(head, tuple(a[head : len(a) - tail]), tuple(b[head : len(b) - tail]))
    try:
        edit = exact_edit(before, rel, run, head, True)
    except GoldError:
        return None
    return edit if apply_edit(before, rel, edit) == after else None


def edit_line(text: str, rel: str, marked: str, clean: str) -> Edit:
    lines = text.splitlines(keepends=True)
    at = lines.index(marked)
    return exact_edit(text, rel, Run(at, (marked,), (clean,)), at, True)


def exact_edit(text: str, rel: str, run: Run, at: int, entity_scoped: bool) -> Edit:
    lines = text.splitlines(keepends=True)
    end = at + len(run.removed)
    for entity in _scopes(text, rel, at, max(end - 1, at), entity_scoped):
        lo, hi = (entity.start - 1, entity.end) if entity else (0, len(lines))
        span = "".join(lines[lo:hi])
        a, b = at, end
        while lo <= a and b <= hi:
            search = "".join(lines[a:b])
            if search and occurrences(span, search) == 1:
                replace = "".join(lines[a:at]) + "".join(run.added) + "".join(lines[end:b])
                fits = len(search) <= CAPS["search"] and len(replace) <= CAPS["replace"]
                if fits or not entity_scoped:
                    return Edit(rel, entity.selector if entity else "", search, replace)
                break
            # Widen by one context line, before first (an insertion point needs its anchor).
            if a > lo and (b - a) % 2 == 0 or b >= hi:
                a -= 1
            else:
                b += 1
    raise GoldError(f"{rel}: no unique edit within the caps for the change at line {at + 1}")


def _scopes(text: str, rel: str, lo: int, hi: int, entity_scoped: bool) -> list[Entity | None]:
    """Innermost first: the entities whose lines hold base lines ``lo..hi`` (0-based)."""
    if not entity_scoped:
        return [None]
    holding: list[Entity | None] = [
        e for e in index_source(text, rel) if e.start - 1 <= lo and hi < e.end
    ]
    return sorted(holding, key=lambda e: e.end - e.start if e else 0)


@lru_cache(maxsize=64)
def index_source(text: str, rel: str) -> tuple[Entity, ...]:
    """The entities of one text: a plan builds and applies each edit against the same texts
    again and again (the lint-ordering step replays them), and parsing is most of its cost."""
    return tuple(_index_source(text, rel))


def apply_edit(text: str, rel: str, edit: Edit) -> str:
    """Apply as the primitive would: exactly one match within the entity's span."""
    lines = text.splitlines(keepends=True)
    lo, hi = 0, len(lines)
    if edit.selector:
        entity = next(e for e in index_source(text, rel) if e.selector == edit.selector)
        lo, hi = entity.start - 1, entity.end
    span = "".join(lines[lo:hi])
    if occurrences(span, edit.search) != 1:
        raise GoldError(f"{rel}: edit of {edit.selector or rel} does not match exactly once")
    return "".join(lines[:lo]) + span.replace(edit.search, edit.replace, 1) + "".join(lines[hi:])
