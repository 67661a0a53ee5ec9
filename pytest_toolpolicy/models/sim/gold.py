"""The gold patch as the edits the simulator makes: ``edit_entity`` calls for the policy arm,
``edit_file`` calls for the baseline.

Each hunk is split into change runs (consecutive removed/added lines). A run becomes one
exact-string edit: its removed lines, widened by base-file context lines until the search text
occurs exactly once in its scope — the innermost entity holding the run for ``edit_entity`` (then
its parents, up to the module), the whole file for ``edit_file``. Edits are built against the
text as the earlier edits left it, and the whole list is replayed in memory and compared with
the gold patch's result; a mismatch is a ``GoldError``, never a silently wrong oracle.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ...primitives.codeindex import Entity, index_source
from ...primitives.lint import LintError, added_errors, lint_text
from ...primitives.specs import TOOL_ARGS

_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
_MERGE_GAP = 12  # base lines between two runs that still make one edit
_CAPS = {spec.name: spec.max_len for spec in TOOL_ARGS["edit_entity"]}


class GoldError(ValueError):
    """The gold patch cannot be turned into exact edits that reproduce it."""


@dataclass(frozen=True)
class Edit:
    file: str
    selector: str  # the entity (policy arm); "" for a whole-file edit
    search: str
    replace: str


@dataclass(frozen=True)
class _Run:
    start: int  # 0-based base line of the first removed line (or the insertion point)
    removed: tuple[str, ...]
    added: tuple[str, ...]


def parse_patch(patch: str) -> dict[str, list[_Run]]:
    """File → change runs (base line numbers) of a unified diff."""
    files: dict[str, list[_Run]] = {}
    runs: list[_Run] = []
    line = removed = added = None
    start = 0

    def flush() -> None:
        nonlocal removed, added
        if removed or added:
            runs.append(_Run(start, tuple(removed), tuple(added)))
        removed, added = [], []

    for raw in patch.splitlines(keepends=True):
        if raw.startswith("+++ "):
            runs = files.setdefault(raw[4:].strip().removeprefix("b/"), [])
        elif (hunk := _HUNK.match(raw)) is not None:
            line, removed, added = int(hunk.group(1)) - 1, [], []
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


def apply_runs(text: str, runs: list[_Run]) -> str:
    """The file as the gold patch leaves it."""
    lines = text.splitlines(keepends=True)
    for run in sorted(runs, key=lambda r: r.start, reverse=True):
        lines[run.start : run.start + len(run.removed)] = run.added
    return "".join(lines)


def file_edits(read: Callable[[str], str], patch: str, *, entity_scoped: bool) -> list[Edit]:
    """The edits that turn the base files (``read(rel)`` is one's text) into the gold patch's
    result, checked in memory.

    Nearby runs are merged into one edit where the caps allow: fewer edits keep a run's ledger
    short enough for the simulator to count its progress from the prompt."""
    edits: list[Edit] = []
    for rel, runs in parse_patch(patch).items():
        base = read(rel)
        try:
            mine = _edits(base, rel, _merged(base, runs), entity_scoped)
        except GoldError:
            mine = _edits(base, rel, runs, entity_scoped)
        if entity_scoped and rel.endswith(".py"):
            mine = _lint_safe(base, rel, mine)
        edits += mine
    return edits


def _lint_safe(base: str, rel: str, edits: list[Edit]) -> list[Edit]:
    """The edits reordered for ``edit_entity``'s lint gate, which refuses an edit that adds
    py_compile/ruff E9,F errors: an edit that adds an error a later edit resolves (an import
    added before its use) is first merged with the edits up to the resolving one, as one edit of
    the smallest entity holding them all, when that fits the caps; else it is made after the
    following edits up to the one that resolves the error, when each of them passes the gate so
    (an import removed before its last use is: real patches do that); else it is staged with
    ``# noqa: CODE`` on the offending lines, and one last edit takes the comments off again
    once the use is in. The result is checked: every edit passes the gate and the file ends
    as the gold patch leaves it."""
    out: list[Edit] = []
    text, errors = base, lint_text(base, rel)
    cleanups: list[tuple[str, str]] = []
    i = 0
    while i < len(edits):
        edit = edits[i]
        after = _apply(text, rel, edit)
        after_errors = lint_text(after, rel)
        added = added_errors(errors, after_errors)
        if added:
            merged = _merge_following(text, rel, edits[i:], errors)
            deferred = None if merged is not None else _deferred(text, rel, edits[i:], errors)
            if merged is not None:
                edit, used = merged
                after = _apply(text, rel, edit)
                after_errors = lint_text(after, rel)
                i += used - 1
            elif deferred is not None:
                (*before, edit), used = deferred
                for earlier in before:
                    text = _apply(text, rel, earlier)
                    out.append(earlier)
                errors = lint_text(text, rel)
                after = _apply(text, rel, edit)
                after_errors = lint_text(after, rel)
                i += used - 1
            else:
                edit, noqa = _with_noqa(after, edit, added)
                after = _apply(text, rel, edit)
                after_errors = lint_text(after, rel)
                if added_errors(errors, after_errors):
                    raise GoldError(f"{rel}: an edit adds lint errors no later edit resolves")
                cleanups += noqa
        out.append(edit)
        text, errors = after, after_errors
        i += 1
    for marked, clean in cleanups:
        edit = _edit_line(text, rel, marked, clean)
        after = _apply(text, rel, edit)
        after_errors = lint_text(after, rel)
        if added_errors(errors, after_errors):
            raise GoldError(f"{rel}: the lint error of {clean.strip()!r} is never resolved")
        out.append(edit)
        text, errors = after, after_errors
    final = base
    for edit in edits:
        final = _apply(final, rel, edit)
    if text != final:
        raise GoldError(f"{rel}: the lint-safe edits do not reproduce the gold patch")
    return out


def _merge_following(
    text: str, rel: str, edits: list[Edit], errors: list[LintError]
) -> tuple[Edit, int] | None:
    """One edit doing ``edits[:n]`` that adds no lint error, for the smallest such n."""
    after = text
    for n, edit in enumerate(edits, 1):
        after = _apply(after, rel, edit)
        if n == 1 or added_errors(errors, lint_text(after, rel)):
            continue
        merged = _diff_edit(text, after, rel)
        if merged is not None:
            return merged, n
        return None
    return None


def _deferred(
    text: str, rel: str, edits: list[Edit], errors: list[LintError]
) -> tuple[list[Edit], int] | None:
    """``edits[1:n] + [edits[0]]`` for the smallest n where each, made in that order, adds no
    lint error, and n; None when there is no such n. A line that ``edits[0]`` replaces anyway may be
    marked ``# noqa: CODE`` first, by an edit of its own, when one of the others makes it an
    error in the meantime (the use of an import changed before the import is removed)."""
    first = edits[0]
    out: list[Edit] = []
    after, now = text, errors
    for n, edit in enumerate(edits[1:], 2):
        try:
            made = _apply(after, rel, edit)
            later = lint_text(made, rel)
            added = added_errors(now, later)
            for error in added:
                marked = _mark(made, after, rel, first, error)
                if marked is None:
                    return None
                mark, first = marked
                after = _apply(after, rel, mark)
                out.append(mark)
            if added:
                now = lint_text(after, rel)
                made = _apply(after, rel, edit)
                later = lint_text(made, rel)
                if added_errors(now, later):
                    return None
        except GoldError:
            return None
        out.append(edit)
        after, now = made, later
        try:
            last = _apply(after, rel, first)
        except GoldError:
            continue
        if not added_errors(now, lint_text(last, rel)):
            return [*out, first], n
    return None


def _mark(
    made: str, text: str, rel: str, first: Edit, error: LintError
) -> tuple[Edit, Edit] | None:
    """An edit of ``text`` adding ``# noqa: CODE`` to the line ``error`` names in ``made``, and
    ``first`` matching the marked line, when ``first`` replaces that line anyway; else None."""
    lines = made.splitlines(keepends=True)
    if not 0 < error.line <= len(lines):
        return None
    clean = lines[error.line - 1]
    code = clean.rstrip("\n")
    if "#" in code or not code.strip() or clean not in first.search.splitlines(keepends=True):
        return None
    if clean not in text.splitlines(keepends=True):
        return None
    marked = f"{code}  # noqa: {error.code}" + clean[len(code) :]
    mark = _edit_line(text, rel, clean, marked)
    search = first.search.replace(clean, marked, 1)
    return mark, Edit(first.file, first.selector, search, first.replace)


def _diff_edit(before: str, after: str, rel: str) -> Edit | None:
    """The one edit turning ``before`` into ``after`` (their differing lines, widened until
    unique) within the caps, or None."""
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    run = _Run(head, tuple(a[head : len(a) - tail]), tuple(b[head : len(b) - tail]))
    try:
        edit = _edit(before, rel, run, head, True)
    except GoldError:
        return None
    return edit if _apply(before, rel, edit) == after else None


def _with_noqa(
    after: str, edit: Edit, added: list[LintError]
) -> tuple[Edit, list[tuple[str, str]]]:
    lines = after.splitlines(keepends=True)
    replace, noqa = edit.replace, []
    for error in added:
        if not 0 < error.line <= len(lines):
            continue
        clean = lines[error.line - 1]
        code = clean.rstrip("\n")
        if "#" in code or code not in replace:
            continue
        marked = f"{code}  # noqa: {error.code}" + clean[len(code) :]
        if clean in replace.splitlines(keepends=True):
            replace = replace.replace(clean, marked, 1)
            noqa.append((marked, clean))
    return Edit(edit.file, edit.selector, edit.search, replace), noqa


def _edit_line(text: str, rel: str, marked: str, clean: str) -> Edit:
    lines = text.splitlines(keepends=True)
    at = lines.index(marked)
    return _edit(text, rel, _Run(at, (marked,), (clean,)), at, True)


def _edits(base: str, rel: str, runs: list[_Run], entity_scoped: bool) -> list[Edit]:
    edits: list[Edit] = []
    text, delta = base, 0
    for run in runs:
        edit = _edit(text, rel, run, run.start + delta, entity_scoped)
        text = _apply(text, rel, edit)
        delta += len(run.added) - len(run.removed)
        edits.append(edit)
    if text != apply_runs(base, runs):
        raise GoldError(f"{rel}: the edits do not reproduce the gold patch")
    return edits


def _merged(base: str, runs: list[_Run], gap: int = _MERGE_GAP) -> list[_Run]:
    lines = base.splitlines(keepends=True)
    out: list[_Run] = []
    for run in runs:
        last = out[-1] if out else None
        if last is not None and run.start - (last.start + len(last.removed)) <= gap:
            between = tuple(lines[last.start + len(last.removed) : run.start])
            removed = last.removed + between + run.removed
            out[-1] = _Run(last.start, removed, last.added + between + run.added)
        else:
            out.append(run)
    return out


def _edit(text: str, rel: str, run: _Run, at: int, entity_scoped: bool) -> Edit:
    lines = text.splitlines(keepends=True)
    end = at + len(run.removed)
    for entity in _scopes(text, rel, at, max(end - 1, at), entity_scoped):
        lo, hi = (entity.start - 1, entity.end) if entity else (0, len(lines))
        span = "".join(lines[lo:hi])
        a, b = at, end
        while lo <= a and b <= hi:
            search = "".join(lines[a:b])
            if search and span.count(search) == 1:
                replace = "".join(lines[a:at]) + "".join(run.added) + "".join(lines[end:b])
                fits = len(search) <= _CAPS["search"] and len(replace) <= _CAPS["replace"]
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
    holding = [e for e in index_source(text, rel) if e.start - 1 <= lo and hi < e.end]
    return sorted(holding, key=lambda e: e.end - e.start)


def _apply(text: str, rel: str, edit: Edit) -> str:
    """Apply as the primitive would: exactly one match within the entity's span."""
    lines = text.splitlines(keepends=True)
    lo, hi = 0, len(lines)
    if edit.selector:
        entity = next(e for e in index_source(text, rel) if e.selector == edit.selector)
        lo, hi = entity.start - 1, entity.end
    span = "".join(lines[lo:hi])
    if span.count(edit.search) != 1:
        raise GoldError(f"{rel}: edit of {edit.selector or rel} does not match exactly once")
    return "".join(lines[:lo]) + span.replace(edit.search, edit.replace, 1) + "".join(lines[hi:])
