"""The A/B's layers, read off every module's syntax tree (imports inside functions included; those
under ``if TYPE_CHECKING:`` are annotations, not imports): ``session/`` is the only part of the
package that imports pytest (with ``plugin.py`` and ``plugin_impl.py``, its entrances, and the
sandbox's own scripts that run a project's pytest); ``run/`` imports nothing of ``session/``;
``decide/`` nothing of ``run/`` or ``session/``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest_toolpolicy

PACKAGE = Path(pytest_toolpolicy.__file__).parent
ENTRANCES = {"plugin.py", "plugin_impl.py"}
# Run inside the sandbox, never imported by the harness: ``launch.py`` imports the project's
# pytest under ``if __name__ == "__main__":`` only (skipped below).
SANDBOX_SCRIPTS = {"grading/launch.py"}


def _guarded(node: ast.If) -> bool:
    """``if TYPE_CHECKING:`` or ``if __name__ == "__main__":``."""
    test = ast.unparse(node.test)
    return test in ("TYPE_CHECKING", "typing.TYPE_CHECKING") or "__main__" in test


def imported(source: str, module: str) -> list[tuple[int, str]]:
    """(line, absolute module) of every import of ``module``'s source that runs."""
    package = module.rpartition(".")[0]
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _guarded(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            base = parts[: len(parts) - node.level + 1] if node.level else []
            head = ".".join([*base, *([node.module] if node.module else [])])
            found.append((node.lineno, head))
            found.extend((node.lineno, f"{head}.{alias.name}") for alias in node.names)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return found


def modules() -> dict[str, list[tuple[int, str]]]:
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        name = "pytest_toolpolicy." + rel.removesuffix(".py").replace("/", ".")
        out[rel] = imported(path.read_text(encoding="utf-8"), name)
    return out


def hits(found: list[tuple[int, str]], *roots: str) -> list[str]:
    return [f"{n}: {m}" for n, m in found if any(m == r or m.startswith(r + ".") for r in roots)]


def test_only_the_session_imports_pytest() -> None:
    every = modules()
    assert len(every) > 200  # the whole package was read
    allowed = ("session/", *ENTRANCES, *SANDBOX_SCRIPTS)
    importers = {rel: hits(found, "pytest", "_pytest") for rel, found in every.items()}
    outside = {rel: h for rel, h in importers.items() if h and not rel.startswith(allowed)}
    assert outside == {}
    assert importers["session/session.py"]  # the check sees an import where it is


def test_run_imports_no_session_and_decide_neither() -> None:
    every = modules()
    above = {
        rel: hits(found, "pytest_toolpolicy.session", "pytest_toolpolicy.run")
        if rel.startswith("decide/")
        else hits(found, "pytest_toolpolicy.session")
        for rel, found in every.items()
        if rel.startswith(("run/", "decide/"))
    }
    assert {rel: h for rel, h in above.items() if h} == {}
    assert len(above) > 40  # both folders were read
    assert hits(every["session/harness.py"], "pytest_toolpolicy.run")  # seen where it is


def test_the_guarded_and_the_lazy_imports_are_told_apart() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    import pytest\n"
        "def f():\n"
        "    import _pytest.nodes\n"
        "if __name__ == '__main__':\n"
        "    import pytest\n"
        "from ..session import hooks\n"
    )
    found = imported(source, "pytest_toolpolicy.run.x")
    assert hits(found, "pytest", "_pytest") == ["5: _pytest.nodes"]
    assert hits(found, "pytest_toolpolicy.session") == [
        "8: pytest_toolpolicy.session",
        "8: pytest_toolpolicy.session.hooks",
    ]
