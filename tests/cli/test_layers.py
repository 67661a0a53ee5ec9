"""The shell is the top floor: no module of the package outside ``pytest_toolpolicy/cli/``
imports ``pytest_toolpolicy.cli`` (absolutely, relatively, or as ``from .. import cli``), read
from every module's syntax tree, lazy imports inside functions included."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[2] / "pytest_toolpolicy"
CLI = "pytest_toolpolicy.cli"


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def cli_imports(source: str, module: str, is_package: bool = False) -> list[str]:
    """Each ``pytest_toolpolicy.cli`` import in ``source`` (module ``module``), as
    ``line: what``."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")  # level 1 is the package, each more dot one up
            base = parts[: len(parts) - node.level + 1] if node.level else []
            head = ".".join([*base, *([node.module] if node.module else [])])
            targets = [head, *(f"{head}.{alias.name}" for alias in node.names)]
        else:
            continue
        if any(t == CLI or t.startswith(CLI + ".") for t in targets):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_outside_cli_imports_it() -> None:
    modules = [p for p in PACKAGE.rglob("*.py") if "cli" not in p.relative_to(PACKAGE).parts[:1]]
    assert len(modules) > 200  # the whole package was read, not an empty glob
    found = {
        str(path.relative_to(PACKAGE)): hits
        for path in modules
        if (
            hits := cli_imports(
                path.read_text(encoding="utf-8"),
                module_name(path, PACKAGE),
                path.name == "__init__.py",
            )
        )
    }
    assert found == {}


def test_every_form_of_the_import_is_found() -> None:
    source = (
        "import pytest_toolpolicy.cli\n"
        "from pytest_toolpolicy.cli.errors import UsageError\n"
        "from pytest_toolpolicy import cli\n"
        "def f():\n"
        "    from ..cli import main\n"
        "    from .. import cli\n"
        "    from ..cli_like import x\n"  # another module whose name starts so: not the shell
        "    from ..envs import resolve\n"
    )
    found = cli_imports(source, "pytest_toolpolicy.envs.status")
    assert [line.partition(":")[0] for line in found] == ["1", "2", "3", "5", "6"]
    # In a package's __init__, one dot is the package itself.
    assert cli_imports("from .cli import main\n", "pytest_toolpolicy", is_package=True) != []
    assert cli_imports("from .cli import main\n", "pytest_toolpolicy.envs", is_package=True) == []
