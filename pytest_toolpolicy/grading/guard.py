"""What of the model's changes takes part in grading: never what decides how the tests are
collected, configured or reported.

A model that cannot fix a bug can still try to make the tests say it did: a ``conftest.py``
whose hook marks every report passed, an ``addopts`` that deselects the failing test, a
``pytest.py`` or ``sitecustomize.py`` that stands in for the real one, an edited test file or
test helper. So before the tests run, every changed path (against the instance's base commit)
is judged by these rules, in order, and the ones they name are put back as they were at the
base commit (a file the model added is removed), each with its reason in ``reverted``:

1. a file the listed tests live in, or one ``test_patch`` touches (grading also resets those);
2. a ``conftest.py`` at any depth;
3. a pytest configuration file (``pytest.ini``, ``pytest.toml``) and, in ``tox.ini``,
   ``setup.cfg`` or ``pyproject.toml``, a changed pytest section (the whole file goes back);
4. any other test file, by the rule that splits a change into ``patch`` and ``test_patch``
   (``is_test_path``): the gold patch never holds one, so a fix never needs one — except a
   module the base configuration loads as a plugin (rule 6);
5. a module the model added where the test run imports from (the workspace root, the
   environment's import paths into it, each test file's first directory without
   ``__init__.py``) whose name is a module the environment already has (the standard library,
   site-packages, pytest and its plugins, ``sitecustomize``): it would be imported instead;
6. compiled code: bytecode (``.pyc``, ``.pyo``, anything in ``__pycache__``: an
   unchecked-hash ``.pyc`` is run without its source, a sourceless one stands in for a
   module) and extension modules (``.so``, ``.pyd``): grading runs the source it can read;
   and package metadata (``*.dist-info``, ``*.egg-info``, ``entry_points.txt``): a ``pytest11``
   entry point would load a plugin wherever pytest still loads them on its own (before 3.7).

What is kept but flagged (``flagged``), because it is product code the test run executes and
grading cannot tell from the text whether it tampers: 7. a changed module the base
configuration loads as a plugin (``pytest_plugins``, ``-p``; e.g. ``sphinx.testing.fixtures``);
8. a changed module whose new text implements pytest hooks or imports pytest's internals.

What is kept, and makes the patch not count (``tampering``): 9. a changed module whose new
text reaches into the harness (``reach.py``: the process's objects, descriptors by number, an
exit on import or at exit, interpreter-wide hooks, pytest's plugin machinery outside pytest's
own repository).

Pure: the caller gives the changed paths and ways to read a path at the base commit and now.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from .guard_config import CONFIG_FILES, addopts_plugins, conftest_plugins, test_section
from .reach import reaches

Read = Callable[[str], bytes | None]
# Always protected, whatever the environment holds: what starts the interpreter or the runner.
RUNNER_MODULES = frozenset(
    {"pytest", "_pytest", "py", "pluggy", "iniconfig", "sitecustomize", "usercustomize"}
    | {"conftest", "toolpolicy_grade_plugin", "xdist"}
)
TEST_DIRS = frozenset({"test", "tests", "testing", "e2e"})
# The modules whose repository's product is the test runner itself (rule 9's exception).
RUNNER_PRODUCTS = frozenset({"_pytest", "pytest", "pluggy"})
COMPILED = (".pyc", ".pyo", ".so", ".pyd")
# [ \t]*, not \s*: a run of blank lines must not be rescanned from every line start.
_HOOKS = re.compile(
    rb"^[ \t]*(?:def[ \t]+pytest_\w+|@[ \t]*(?:pytest\.)?hookimpl)|\b_pytest\b", re.M
)


@dataclass(frozen=True)
class Guarded:
    """The paths to put back as they were at the base commit, and what was said of each."""

    paths: tuple[str, ...]
    reverted: tuple[str, ...]  # "<path>: <why>", one per reverted path the model changed
    flagged: tuple[str, ...]  # "<path>: <why>", kept in the run
    tampering: tuple[str, ...] = ()  # "<path>: <why>", kept, and the patch does not count


def is_test_path(path: str) -> bool:
    """Whether ``path`` is a test file by the rule SWE-bench-style splits use: a directory named
    test, tests, testing or e2e on its way, or a name ``test_*.py``, ``*_test.py`` or
    ``conftest.py``."""
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    return bool(TEST_DIRS & set(parts[:-1])) or (
        name.endswith(".py")
        and (name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py")
    )


def guard(
    changed: Iterable[str],
    *,
    base: Read,
    now: Read,
    test_files: Collection[str],
    roots: Sequence[str],
    installed: Collection[str],
    base_files: Collection[str],
) -> Guarded:
    """Judge each changed path (``changed``: added, modified or removed against the base);
    ``test_files`` the listed tests' files and those ``test_patch`` touches; ``roots`` the
    directories (relative, "" for the workspace root) the test run imports top-level modules
    from; ``installed`` the top-level module names the environment has; ``base_files`` every
    path at the base commit (for what the base configuration names)."""
    plugins = _plugin_files(base, base_files, roots)
    paths: list[str] = []
    reverted: list[str] = []
    flagged: list[str] = []
    tampering: list[str] = []
    shadowed = RUNNER_MODULES | set(installed)
    runner = any(RUNNER_PRODUCTS & _top_modules(p, roots) for p in base_files)
    for path in sorted(set(changed)):
        why = _revert(path, base, now, test_files, plugins, roots, shadowed, base_files)
        if why:
            paths.append(path)
            reverted.append(f"{path}: {why}")
            continue
        if path in plugins:
            flagged.append(f"{path}: product code the test run loads as a plugin (kept)")
        elif path.endswith(".py") and _touches_hooks(base(path), now(path)):
            flagged.append(f"{path}: implements pytest hooks or imports its internals (kept)")
        if path.endswith(".py") and (said := reaches(base(path), now(path), runner=runner)):
            tampering.append(f"{path}: reaches into the harness ({'; '.join(said[:3])})")
    return Guarded(tuple(paths), tuple(reverted), tuple(flagged), tuple(tampering))


def _revert(
    path: str,
    base: Read,
    now: Read,
    test_files: Collection[str],
    plugins: Collection[str],
    roots: Sequence[str],
    shadowed: Collection[str],
    base_files: Collection[str],
) -> str | None:
    name = PurePosixPath(path).name
    if path in test_files:
        return "a file of the listed tests: graded as at the base commit with test_patch"
    if name == "conftest.py":
        return "a conftest file configures the test run"
    if name in CONFIG_FILES and test_section(name, base(path)) != test_section(name, now(path)):
        return "its pytest configuration changed"
    if is_test_path(path) and path not in plugins:
        return "a test file: the repository's tests run as they are at the base commit"
    parts = PurePosixPath(path).parts
    if name.endswith(COMPILED) or "__pycache__" in parts:
        return "compiled code (bytecode or an extension module): grading runs the source"
    if any(p.endswith((".dist-info", ".egg-info")) for p in parts) or name == "entry_points.txt":
        return "package metadata: it declares plugins and entry points the test run would load"
    if path not in base_files:
        hidden = sorted(_top_modules(path, roots) & set(shadowed))
        if hidden:
            return f"shadows the module {hidden[0]!r} the test run would import"
    return None


def _top_modules(path: str, roots: Sequence[str]) -> set[str]:
    """The top-level module names ``path`` would be imported as, from each of ``roots`` it is
    under (``src/pytest.py`` is ``src`` from the root and ``pytest`` from ``src``)."""
    found = set()
    for root in roots:
        prefix = f"{root.strip('/')}/" if root.strip("/.") else ""
        if not path.startswith(prefix):
            continue
        first = path[len(prefix) :].split("/", 1)
        head = first[0]
        if len(first) == 2:  # a package directory (or a namespace package)
            if head.isidentifier():
                found.add(head)
            continue
        stem = head.split(".", 1)[0]  # mod.py, mod.cpython-311-x86_64-linux-gnu.so, mod.pth
        if head.endswith((".py", ".pyc", ".so", ".pth")) and stem.isidentifier():
            found.add("sitecustomize" if head.endswith(".pth") else stem)
    return found


def _plugin_files(base: Read, base_files: Collection[str], roots: Sequence[str]) -> set[str]:
    """The workspace files of the modules the base commit's configuration loads as plugins."""
    modules: set[str] = set()
    for path in base_files:
        name = PurePosixPath(path).name
        if name == "conftest.py":
            modules |= conftest_plugins(base(path))
        elif name in CONFIG_FILES and "/" not in path:
            modules |= addopts_plugins(name, base(path))
    files = set()
    for module in modules:
        rel = module.replace(".", "/")
        for root in roots:
            prefix = f"{root.strip('/')}/" if root.strip("/.") else ""
            for candidate in (f"{prefix}{rel}.py", f"{prefix}{rel}/__init__.py"):
                if candidate in base_files:
                    files.add(candidate)
    return files


def _touches_hooks(before: bytes | None, after: bytes | None) -> bool:
    """Whether the new text has hook implementations or pytest internals the old text had
    fewer of (a module that always had them is flagged only when it gains one)."""
    if after is None:
        return False
    return len(_HOOKS.findall(after)) > len(_HOOKS.findall(before or b""))
