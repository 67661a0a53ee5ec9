"""The gold patch as the edits the simulator makes: ``edit_entity`` calls for the policy arm,
``edit_file`` calls for the baseline.

Each hunk is split into change runs (consecutive removed/added lines). A run becomes one
exact-string edit: its removed lines, widened by base-file context lines until the search text
occurs exactly once in its scope — the innermost entity holding the run for ``edit_entity`` (then
its parents, up to the module), the whole file for ``edit_file`` (``exact_edit.py``); a run
too large for ``edit_entity``'s caps is made in several steps (``chunking.py``). Edits are built
against the text as the earlier edits left it, and the whole list is replayed in memory and
compared with the gold patch's result; a mismatch is a ``GoldError``, never a silently wrong
oracle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...primitives.lint import LintError, added_errors
from .base_tree import BaseTreeError
from .chunking import split_run
from .exact_edit import (
    Edit,
    GoldError,
    Run,
    apply_edit,
    apply_runs,
    diff_edit,
    edit_line,
    exact_edit,
    parse_patch,
)
from .gate import lint

__all__ = ["Edit", "GoldError", "apply_edit", "file_edits", "parse_patch"]

_MERGE_GAP = 12  # base lines between two runs that still make one edit


def file_edits(read: Callable[[str], str], patch: str, *, entity_scoped: bool) -> list[Edit]:
    """The edits that turn the base files (``read(rel)`` is one's text) into the gold patch's
    result, checked in memory.

    Nearby runs are merged into one edit where the caps allow: fewer edits keep a run's ledger
    short enough for the simulator to count its progress from the prompt."""
    edits: list[Edit] = []
    added = new_files(patch)
    for rel, runs in parse_patch(patch).items():
        code = rel.endswith(".py")
        if code and rel in added:
            if entity_scoped:
                raise GoldError(
                    f"the gold patch adds {rel}: edit_entity edits entities of files that exist,"
                    " and none of the policy's tools creates a file"
                )
            # the baseline's write_file makes it whole: an Edit with nothing to search
            edits.append(Edit(rel, "", "", "".join(line for r in runs for line in r.added)))
            continue
        if entity_scoped and not code:
            # edit_entity edits Python entities: a change to pytest's AUTHORS or its docs (most
            # changes mined from its history have one) is one the policy's tools cannot make,
            # and it changes no test's outcome.
            continue
        try:
            base = read(rel)
        except BaseTreeError:
            if code:
                raise
            # A file the patch adds that is not code (pytest's changelog/1234.bugfix.rst): the
            # simulator edits files that exist; such a file changes no test's outcome.
            continue
        edits += _first_that_fits(base, rel, runs, entity_scoped)
    return edits


def new_files(patch: str) -> set[str]:
    """The files a unified diff creates (``--- /dev/null``)."""
    found: set[str] = set()
    created = False
    for line in patch.splitlines():
        if line.startswith("--- "):
            created = line[4:].strip() == "/dev/null"
        elif line.startswith("+++ ") and created:
            found.add(line[4:].strip().removeprefix("b/"))
            created = False
    return found


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
    text, errors = base, lint(base, rel)
    cleanups: list[tuple[str, str]] = []
    i = 0
    while i < len(edits):
        edit = edits[i]
        after = apply_edit(text, rel, edit)
        after_errors = lint(after, rel)
        added = added_errors(errors, after_errors)
        if added:
            merged = _merge_following(text, rel, edits[i:], errors)
            deferred = None if merged is not None else _deferred(text, rel, edits[i:], errors)
            if merged is not None:
                edit, used = merged
                after = apply_edit(text, rel, edit)
                after_errors = lint(after, rel)
                i += used - 1
            elif deferred is not None:
                (*before, edit), used = deferred
                for earlier in before:
                    text = apply_edit(text, rel, earlier)
                    out.append(earlier)
                errors = lint(text, rel)
                after = apply_edit(text, rel, edit)
                after_errors = lint(after, rel)
                i += used - 1
            else:
                edit, noqa = _with_noqa(after, edit, added)
                after = apply_edit(text, rel, edit)
                after_errors = lint(after, rel)
                if added_errors(errors, after_errors):
                    raise GoldError(f"{rel}: an edit adds lint errors no later edit resolves")
                cleanups += noqa
        out.append(edit)
        text, errors = after, after_errors
        i += 1
    for marked, clean in cleanups:
        edit = edit_line(text, rel, marked, clean)
        after = apply_edit(text, rel, edit)
        after_errors = lint(after, rel)
        if added_errors(errors, after_errors):
            raise GoldError(f"{rel}: the lint error of {clean.strip()!r} is never resolved")
        out.append(edit)
        text, errors = after, after_errors
    final = base
    for edit in edits:
        final = apply_edit(final, rel, edit)
    if text != final:
        raise GoldError(f"{rel}: the lint-safe edits do not reproduce the gold patch")
    return out


def _merge_following(
    text: str, rel: str, edits: list[Edit], errors: Sequence[LintError]
) -> tuple[Edit, int] | None:
    """One edit doing ``edits[:n]`` that adds no lint error, for the smallest such n."""
    after = text
    for n, edit in enumerate(edits, 1):
        after = apply_edit(after, rel, edit)
        if n == 1 or added_errors(errors, lint(after, rel)):
            continue
        merged = diff_edit(text, after, rel)
        if merged is not None:
            return merged, n
        return None
    return None


def _deferred(
    text: str, rel: str, edits: list[Edit], errors: Sequence[LintError]
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
            made = apply_edit(after, rel, edit)
            later = lint(made, rel)
            added = added_errors(now, later)
            for error in added:
                marked = _mark(made, after, rel, first, error)
                if marked is None:
                    return None
                mark, first = marked
                after = apply_edit(after, rel, mark)
                out.append(mark)
            if added:
                now = lint(after, rel)
                made = apply_edit(after, rel, edit)
                later = lint(made, rel)
                if added_errors(now, later):
                    return None
        except GoldError:
            return None
        out.append(edit)
        after, now = made, later
        try:
            last = apply_edit(after, rel, first)
        except GoldError:
            continue
        if not added_errors(now, lint(last, rel)):
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
    mark = edit_line(text, rel, clean, marked)
    search = first.search.replace(clean, marked, 1)
    return mark, Edit(first.file, first.selector, search, first.replace)


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


def _first_that_fits(base: str, rel: str, runs: list[Run], entity_scoped: bool) -> list[Edit]:
    """Nearby runs merged, else one edit a run, else (``edit_entity`` on Python) runs too large
    for one edit made in steps (``chunking.py``): made the last run first (a patch that moves
    code into new functions below then adds them before it empties the old bodies, so the
    imports those use stay used), else top-down."""
    if not entity_scoped or not rel.endswith(".py"):
        try:
            return _edits(base, rel, _merged(base, runs), entity_scoped)
        except GoldError:
            return _edits(base, rel, runs, entity_scoped)
    error: GoldError | None = None
    for merged in (True, False):
        try:
            return _lint_safe(
                base, rel, _edits(base, rel, _merged(base, runs) if merged else runs, True)
            )
        except GoldError as exc:
            error = exc
    for bottom_up in (True, False):
        try:
            steps = _edits(base, rel, runs, True, split=True, bottom_up=bottom_up)
            return _lint_safe(base, rel, steps)
        except GoldError as exc:
            error = exc
    assert error is not None
    raise error


def _edits(
    base: str,
    rel: str,
    runs: list[Run],
    entity_scoped: bool,
    *,
    split: bool = False,
    bottom_up: bool = False,
) -> list[Edit]:
    edits: list[Edit] = []
    cleanups: list[tuple[str, str]] = []
    text, delta = base, 0
    order = _bottom_up(runs) if bottom_up else runs
    for run in order:
        if bottom_up:  # only the imports made before it, above it, have moved its lines
            made_before = order[: order.index(run)]
            at = run.start + sum(
                len(r.added) - len(r.removed) for r in made_before if r.start < run.start
            )
        else:
            at = run.start + delta
        try:
            made = [exact_edit(text, rel, run, at, entity_scoped)]
        except GoldError:
            if not split:
                raise
            steps = split_run(text, rel, Run(at, run.removed, run.added), at)
            made, cleanups = steps.edits, cleanups + steps.cleanups
        for edit in made:
            text = apply_edit(text, rel, edit)
        delta += len(run.added) - len(run.removed)
        edits += made
    for marked, clean in cleanups:  # the rest of the patch is in: their errors are resolved
        edit = edit_line(text, rel, marked, clean)
        text = apply_edit(text, rel, edit)
        edits.append(edit)
    if text != apply_runs(base, runs):
        raise GoldError(f"{rel}: the edits do not reproduce the gold patch")
    return edits


def _bottom_up(runs: list[Run]) -> list[Run]:
    """Runs that only add imports first (an agent imports before it uses), then the others from
    the last up."""
    imports = [r for r in runs if _adds_imports(r)]
    return imports + [r for r in reversed(runs) if r not in imports]


def _adds_imports(run: Run) -> bool:
    """A run that only adds import lines (made first when runs go bottom-up)."""
    return (
        not run.removed
        and all(
            line.lstrip().startswith(("import ", "from ")) or not line.strip() for line in run.added
        )
        and any(line.strip() for line in run.added)
    )


def _merged(base: str, runs: list[Run], gap: int = _MERGE_GAP) -> list[Run]:
    lines = base.splitlines(keepends=True)
    out: list[Run] = []
    for run in runs:
        last = out[-1] if out else None
        if last is not None and run.start - (last.start + len(last.removed)) <= gap:
            between = tuple(lines[last.start + len(last.removed) : run.start])
            removed = last.removed + between + run.removed
            out[-1] = Run(last.start, removed, last.added + between + run.added)
        else:
            out.append(run)
    return out
