"""A change run too large for one ``edit_entity`` call, made as several that each pass its lint
gate — as an agent bound by the caps (search ≤ 400, replace ≤ 2000 characters) would make it.

Real patches move whole functions: pytest-5787 deletes 46- and 53-line bodies and adds 140
lines. Such a run is made in two phases, each step an exact edit checked against the gate:

- **shrink**: runs of whole sibling statements inside the lines still to remove are deleted,
  each step the one removing the most characters per edit it takes (a statement that is the
  only one of its block becomes ``pass``, which a later step removes with its block), or,
  where no statement lies wholly inside them (the middle of a docstring), runs of lines whose
  deletion still parses, until what is left fits one search;
- **grow**: that rest is replaced by the longest prefix of the added lines that parses and adds
  no lint error (else the longest that parses, for ``gold._lint_safe`` to order), and each
  further prefix is inserted after it, until all are in.

A step that would add a lint error first marks the line it names ``# noqa: CODE`` (nearby
marks in one edit): a line still to be removed goes anyway; any other is unmarked once the rest
of the patch is in (``Split.cleanups``). When no step fits, the run is a ``GoldError``, never a
wrong oracle.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ...primitives.lint import LintError, added_errors
from .exact_edit import CAPS, Edit, GoldError, Run, apply_edit, exact_edit
from .gate import lint, parses

# Room left under each cap for the context lines that make a search unique.
_SEARCH_BUDGET = CAPS["search"] - 80
_REPLACE_BUDGET = CAPS["replace"] - 80


@dataclass(frozen=True)
class Split:
    edits: list[Edit]
    # (marked, clean) lines: ``noqa`` marks on lines the patch keeps, to be taken off once
    # the rest of the patch has resolved their errors (an import whose last use went first).
    cleanups: list[tuple[str, str]]


def split_run(text: str, rel: str, run: Run, at: int) -> Split:
    """Edits of ``text`` that replace its lines ``at .. at+len(run.removed)`` by ``run.added``,
    each within the caps and adding no lint error."""
    edits: list[Edit] = []
    cleanups: list[tuple[str, str]] = []
    lo, hi = at, at + len(run.removed)
    while _size(text, lo, hi) > _SEARCH_BUDGET:
        steps, text, hi, marks = _shrink(text, rel, lo, hi)
        edits += steps
        cleanups += marks
    added = list(run.added)
    lines = text.splitlines(keepends=True)
    removed, point = tuple(lines[lo:hi]), lo
    if not added:
        return Split([*edits, exact_edit(text, rel, Run(lo, removed, ()), lo, True)], cleanups)
    while True:
        step, count = _grow(text, rel, point, removed, added)
        edits.append(step)
        text = apply_edit(text, rel, step)
        point, added, removed = point + count, added[count:], ()
        if not added:
            return Split(edits, cleanups)


def _size(text: str, lo: int, hi: int) -> int:
    return len("".join(text.splitlines(keepends=True)[lo:hi]))


def _shrink(
    text: str, rel: str, lo: int, hi: int
) -> tuple[list[Edit], str, int, list[tuple[str, str]]]:
    """Statements of lines ``lo..hi`` deleted (with the marks they need first): the edits, the
    text after them, the new end of the lines to remove and the marks to take off later.

    Each edit is a turn of the agent's budget, so the deletion taken is the one removing the
    most characters per edit it takes (its marks and their later removal counted); candidates
    come largest first, and the search stops once none left could do better."""
    errors = lint(text, rel)
    lines = text.splitlines(keepends=True)
    best: tuple[float, list[Edit], str, int, list[tuple[str, str]]] | None = None
    ranked = sorted(_statements(text, lo, hi), key=lambda c: _size(text, c[0], c[1]), reverse=True)
    for start, end, sole in ranked:
        gain = _size(text, start, end)
        if best is not None and gain <= best[0]:
            break  # even with no mark, no better than the best so far
        indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
        filler = (f"{indent}pass\n",) if sole else ()
        if filler == tuple(lines[start:end]):
            continue  # a block's lone ``pass``: only its block can go
        made = _marked(text, rel, errors, Run(start, tuple(lines[start:end]), filler), lo, hi)
        if made is None:
            continue
        steps, after, cleanups = made
        score = (gain - len("".join(filler))) / (len(steps) + len(cleanups))
        if best is None or score > best[0]:
            best = (score, steps, after, hi - (end - start) + len(filler), cleanups)
    if best is None:
        best = _lines_removed(text, rel, errors, lo, hi)
    if best is None:
        raise GoldError(
            f"{rel}: no statement at lines {lo + 1}-{hi} can be removed within the caps"
        )
    return best[1], best[2], best[3], best[4]


def _lines_removed(
    text: str, rel: str, errors: Sequence[LintError], lo: int, hi: int
) -> tuple[float, list[Edit], str, int, list[tuple[str, str]]] | None:
    """Where no statement lies wholly inside the lines (a docstring's middle, sympy-20154): the
    bottom-most run of lines that fits one search and whose deletion parses and adds no lint
    error, as ``_shrink``'s best."""
    lines = text.splitlines(keepends=True)
    for end in range(hi, lo, -1):
        start = end - 1
        while start > lo and _size(text, start - 1, end) <= _SEARCH_BUDGET:
            start -= 1
        if _size(text, start, end) > _SEARCH_BUDGET:
            continue  # one line too long for a search
        made = _marked(text, rel, errors, Run(start, tuple(lines[start:end]), ()), lo, hi)
        if made is not None:
            steps, after, cleanups = made
            return 0.0, steps, after, hi - (end - start), cleanups
    return None


def _statements(text: str, lo: int, hi: int) -> Iterator[tuple[int, int, bool]]:
    """Runs of sibling statements wholly inside lines ``lo..hi`` (0-based, end exclusive) that
    fit one search, bottom-most first, the longest first, as (start, end, the whole block). A
    statement too large for one search is not one: the statements of its blocks are. Siblings
    go together where they fit: fewer edits, and an assignment goes with its uses."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return
    lines = text.splitlines(keepends=True)
    found: list[tuple[int, int, bool]] = []

    def size(start: int, end: int) -> int:
        return len("".join(lines[start:end]))

    def visit(body: list[ast.stmt]) -> None:
        spans = [(_first_line(node), node.end_lineno or node.lineno) for node in body]
        for k, (node, (start, end)) in enumerate(zip(body, spans, strict=True)):
            if not (lo <= start and end <= hi):
                if start < hi and lo < end:
                    for child in _blocks(node):
                        visit(child)
                continue
            if size(start, end) > CAPS["search"]:
                for child in _blocks(node):
                    visit(child)
                continue
            first = k  # the longest run of inside siblings ending here that fits
            while (
                first > 0
                and lo <= spans[first - 1][0]
                and size(spans[first - 1][0], end) <= CAPS["search"]
            ):
                first -= 1
            whole = len(body)
            found.append((spans[first][0], end, first == 0 and k == whole - 1))
            if first != k:
                found.append((start, end, whole == 1))

    visit(tree.body)
    found.sort(key=lambda f: (f[1], f[1] - f[0]), reverse=True)
    yield from found


def _first_line(node: ast.stmt) -> int:
    """0-based: its first decorator's line, else its own."""
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) - 1


def _blocks(node: ast.stmt) -> Iterator[list[ast.stmt]]:
    for field in ("body", "orelse", "finalbody"):
        block = getattr(node, field, None)
        if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
            yield block
    for handler in getattr(node, "handlers", []):
        yield handler.body
    for case in getattr(node, "cases", []):
        yield case.body


def _marked(
    text: str, rel: str, errors: Sequence[LintError], run: Run, lo: int, hi: int
) -> tuple[list[Edit], str, list[tuple[str, str]]] | None:
    """The edit making ``run``, after edits marking ``# noqa`` each line it leaves an error on
    (a line still to be removed, ``lo..hi``, goes anyway; any other is a (marked, clean) pair to
    restore once the rest of the patch resolves its error), and the text after them; None when
    it does not fit the caps or an error is on a line that cannot carry a mark."""
    try:
        edit = exact_edit(text, rel, run, run.start, True)
    except GoldError:
        return None
    after = apply_edit(text, rel, edit)
    added = added_errors(errors, lint(after, rel))
    if not added:
        return [edit], after, []
    shift = len(run.added) - len(run.removed)
    marks: list[Edit] = []
    cleanups: list[tuple[str, str]] = []
    lines = text.splitlines(keepends=True)
    wanted: dict[int, str] = {}
    for error in added:
        # The line in ``text`` the error names in ``after``: below the run, it moved by ``shift``.
        line = error.line - 1 if error.line - 1 < run.start else error.line - 1 - shift
        if run.start <= line < run.start + len(run.removed):
            return None
        clean = lines[line]
        code = wanted.get(line, clean.rstrip("\n"))
        if code == clean.rstrip("\n") and ("#" in code or not code.strip()):
            return None
        sep = "," if "# noqa: " in code else "  # noqa:"
        wanted[line] = f"{code}{sep} {error.code}"
        if not lo <= line < hi:
            cleanups.append((wanted[line] + clean[len(clean.rstrip("\n")) :], clean))
    # Nearby marks go in one edit: each edit is a turn of the agent's budget.
    for group in _near(sorted(wanted), lines):
        first, last = group[0], group[-1]
        marked = tuple(
            wanted[i] + lines[i][len(lines[i].rstrip("\n")) :] if i in wanted else lines[i]
            for i in range(first, last + 1)
        )
        try:
            mark = exact_edit(
                text, rel, Run(first, tuple(lines[first : last + 1]), marked), first, True
            )
        except GoldError:
            return None
        text = apply_edit(text, rel, mark)
        lines = text.splitlines(keepends=True)
        marks.append(mark)
    # A cleanup restores a line as it was before any mark (the last mark of a line wins).
    cleanups = list({clean: (m, clean) for m, clean in cleanups}.values())
    lines = text.splitlines(keepends=True)
    removed = tuple(lines[run.start : run.start + len(run.removed)])
    try:
        edit = exact_edit(text, rel, Run(run.start, removed, run.added), run.start, True)
    except GoldError:
        return None
    after = apply_edit(text, rel, edit)
    if added_errors(errors, lint(after, rel)):
        return None
    return [*marks, edit], after, cleanups


def _near(marked: list[int], lines: list[str]) -> list[list[int]]:
    """Marked line numbers in groups whose span fits one search."""
    groups: list[list[int]] = []
    for line in marked:
        if groups and len("".join(lines[groups[-1][0] : line + 1])) <= _SEARCH_BUDGET:
            groups[-1].append(line)
        else:
            groups.append([line])
    return groups


def _grow(
    text: str, rel: str, point: int, removed: tuple[str, ...], added: list[str]
) -> tuple[Edit, int]:
    """The edit replacing ``removed`` (at line ``point``) by the longest prefix of ``added``
    that fits the caps, parses and adds no lint error, and that prefix's length. When every
    prefix adds an error (a call of a function the patch defines further down), the longest
    that parses: ordering such edits is the gate-ordering step's work (``gold._lint_safe``)."""
    errors = lint(text, rel)
    broken = not parses(text, rel)
    lines = text.splitlines(keepends=True)
    head, tail = "".join(lines[:point]), "".join(lines[point + len(removed) :])
    fallback: tuple[Edit, int] | None = None
    for count in range(len(added), 0, -1):
        chunk = "".join(added[:count])
        if len(chunk) > _REPLACE_BUDGET:
            continue
        if not broken and not parses(head + chunk + tail, rel):
            continue
        try:
            edit = exact_edit(text, rel, Run(point, removed, tuple(added[:count])), point, True)
        except GoldError:
            continue
        if not added_errors(errors, lint(apply_edit(text, rel, edit), rel)):
            return edit, count
        fallback = fallback or (edit, count)
    if fallback is None:
        raise GoldError(f"{rel}: no prefix of the lines added at line {point + 1} parses")
    return fallback
