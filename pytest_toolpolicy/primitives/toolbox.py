"""The six primitives over one workspace directory, behind one ``call(tool, args)`` entry.

``call`` never raises for bad input: an unknown tool, bad arguments, a ``PrimitiveError`` (e.g.
``UnsafePath``: a file a sandboxed run turned into a link) or a failed execution all come back
as ``{"ok": false, "error": ...}`` envelopes. Any other exception inside a tool is the
harness's own fault and is raised as ``HarnessFault``: the run stops and its item fails with
the reason; the model never reads it as a tool result.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .codeindex import CodeIndex
from .edit_entity import edit_entity
from .envelope import Envelope, HarnessFault, PrimitiveError, fail
from .read_entity import read_entity
from .search_symbol import SymbolSearch
from .specs import TOOL_ARGS, check_args
from .workspace import Workspace

if TYPE_CHECKING:
    from .sandbox import Sandbox
    from .search_code import CodeSearch

TOOLS = tuple(TOOL_ARGS)


class Toolbox:
    def __init__(
        self,
        root: str | os.PathLike[str],
        *,
        sandbox: Sandbox | None = None,
        python: str | None = None,
        code_search: CodeSearch | None = None,
        workspace: Workspace | None = None,
        sandbox_env: dict[str, str] | None = None,
        package_view: bool = False,
        runner: Callable[[str], str | None] | None = None,
    ) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise PrimitiveError(f"workspace directory not found: {root}")
        self.index = CodeIndex(self.root)
        self.symbols = SymbolSearch(self.index)
        self.python = python  # the interpreter tests run with; None = this one
        self._sandbox = sandbox
        self._code_search = code_search
        self.workspace = workspace  # checkpoints and the patch, when the root is under git
        # Added to the environment of sandboxed test runs (e.g. no pytest plugin autoloading for
        # a project that needs none: the harness's own plugins cost ~1 s a run).
        self.sandbox_env = sandbox_env
        # ``execute`` sees the workspace read-only, where the environment's package points.
        self.package_view = package_view
        # The repository's own test runner for targets in its id convention (``run_test``).
        self.runner = runner

    @property
    def sandbox(self) -> Sandbox:
        if self._sandbox is None:
            from .sandbox import Sandbox

            self._sandbox = Sandbox.from_env()
        return self._sandbox

    @property
    def code_search(self) -> CodeSearch:
        if self._code_search is None:
            from .search_code import CodeSearch

            self._code_search = CodeSearch(self.index)
        return self._code_search

    def call(self, tool: str, args: dict[str, Any] | None = None) -> Envelope:
        if tool not in TOOL_ARGS:
            return fail(f"unknown tool: {tool}")
        if not isinstance(args, dict):
            return fail(f"invalid args for {tool}: expected an object, got {type(args).__name__}")
        checked, reason = check_args(tool, args)
        if checked is None:
            return fail(reason or "invalid args")
        try:
            return getattr(self, tool)(**checked)
        except PrimitiveError as exc:
            return fail(str(exc))
        except HarnessFault:
            raise
        except Exception as exc:
            raise HarnessFault(f"{tool} failed: {type(exc).__name__}: {exc}") from exc

    def read_entity(self, selector: str, body: bool = False, window: int = 100) -> Envelope:
        return read_entity(self.index, selector, body, window)

    def search_symbol(self, query: str, keywords: list[str] | None = None, k: int = 10) -> Envelope:
        return self.symbols.search(query, keywords, k)

    def search_code(self, query: str, cap: int = 8) -> Envelope:
        if not query.strip():
            return fail("empty query")
        return self.code_search.search(query, cap)

    def edit_entity(self, selector: str, search: str, replace: str) -> Envelope:
        return edit_entity(self.index, selector, search, replace)

    def run_test(self, target: str, timeout: int = 120) -> Envelope:
        from .run_test import run_test

        envelope = run_test(
            self.root, self.sandbox, target, timeout, self.python, self.sandbox_env, self.runner
        )
        # The run had the workspace writable: it may have added, changed, removed or replaced
        # any file (by a link, a FIFO...). The index follows before anything reads it again.
        self.index.refresh()
        return envelope

    def execute(self, code: str, timeout: int = 10) -> Envelope:
        from .execute import execute

        # A real repository's package is importable, read-only, as in grading and run_test:
        # the workspace is seen where its environment's install looks for it.
        env = self.sandbox_env or {}
        view = self.root if self.package_view else None
        return execute(self.sandbox, code, timeout, self.python, env, view=view)
