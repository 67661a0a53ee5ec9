"""``edit_entity``'s lint gate as the simulator consults it while planning: the same check
(``primitives.lint``), cached by text, since a plan asks about the same texts many times (each
step's "after" is the next step's "before", and the lint-ordering step replays them)."""

from __future__ import annotations

from functools import lru_cache

from ...primitives.lint import LintError, compile_errors, lint_text


@lru_cache(maxsize=128)
def lint(text: str, rel: str) -> tuple[LintError, ...]:
    return tuple(lint_text(text, rel))


@lru_cache(maxsize=128)
def parses(text: str, rel: str) -> bool:
    return not compile_errors(text, rel)
