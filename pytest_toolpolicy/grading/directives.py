"""What to run for an instance's listed tests, in its repository's own convention: the
arguments that follow a spec's ``test_cmd``.

SWE-bench (``get_test_directives`` in harness/test_spec/python.py) appends the files
``test_patch`` touches: the path after the last " b/" of each line holding "diff --git a/",
less those ending in one of ``NON_TEST_SUFFIXES`` ("csv" without its dot, as SWE-bench has
it); for django, each as a dotted module of ``tests/runtests.py`` (``tests/foo/tests.py`` ->
``foo.tests``: ".py" and "tests/" dropped, "/" made "."), so a non-Python file there becomes a
label too. Grading runs, as the parser's record says (``envs/runners.py``: ``directives``):

- ``ids`` (the pytest-based ones): the path part of each listed id, the files the grading
  plugin collects from (a listed id names its file);
- ``modules`` (django): test_patch's modules (its ids, ``test_name (module.Class)`` or a
  docstring's first line, do not always name one);
- ``files`` (sympy): test_patch's files (its ids are bare function names: ``test_issue_12092``).

For one listed id, or a list of them (the agent's ``run_test``), ``runner_args`` gives what
selects those tests (the record's ``targets``): a ``node`` id pytest can find (the whole
function where SWE-bench's id is not the node id: cut at whitespace, a shortened path, a
MouseButton number); django's ``module.Class.test_name`` ``label`` (test_patch's modules for an
id that names no class); sympy's test_patch files and ``-k`` with the names (sympy
matches them as substrings).

Pure functions over the ids and the patch text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from ..envs.runners import Runner, runner_for
from .testids import path_of

NON_TEST_SUFFIXES = (
    ".json", ".png", "csv", ".txt", ".md", ".jpg", ".jpeg", ".pkl", ".yml", ".yaml", ".toml",
)  # fmt: skip
_DIFF = "diff --git a/"
# ``test_name (module.Class)``, or from Python 3.11 ``test_name (module.Class.test_name)``;
# a subTest's id goes on with " (value=2)" or " [message]".
_DJANGO_ID = re.compile(r"(\w+) \(([\w.]+)\)")


def patch_test_files(test_patch: str) -> list[str]:
    """The files ``test_patch`` touches, as SWE-bench reads them, less non-test files (each
    once, where SWE-bench would name a file twice that two diffs of it touch)."""
    files = []
    for line in test_patch.split("\n"):
        start = line.find(_DIFF)
        if start >= 0:
            b_side = line.rfind(" b/", start + len(_DIFF))
            if b_side >= 0 and not line.endswith(NON_TEST_SUFFIXES):
                files.append(line[b_side + 3 :])
    return list(dict.fromkeys(files))


def django_module(path: str) -> str:
    """``tests/foo/tests.py`` -> ``foo.tests``, as SWE-bench labels django's tests."""
    path = path.removesuffix(".py")
    return path.removeprefix("tests/").replace("/", ".")


def as_directives(parser: str, files: Iterable[str]) -> list[str]:
    """Test files as ``parser``'s runner takes them (django's as dotted modules)."""
    modules = runner_for(parser).directives == "modules"
    return [django_module(f) if modules else f for f in files]


def swebench_directives(parser: str, test_patch: str) -> list[str]:
    """What SWE-bench appends to the test command: test_patch's test files (django's as
    modules)."""
    return as_directives(parser, patch_test_files(test_patch))


def grading_directives(parser: str, ids: Iterable[str], test_patch: str) -> list[str]:
    """What grading runs for the listed ``ids`` (see the module)."""
    if runner_for(parser).directives == "ids":
        return list(dict.fromkeys(p for p in map(path_of, ids) if _names_file(p)))
    return swebench_directives(parser, test_patch)


def runner_args(parser: str, ids: Iterable[str], test_patch: str = "") -> list[str]:
    """Arguments that make ``parser``'s runner run (at least) the tests ``ids`` list."""
    runner = runner_for(parser)
    return _TARGETS[runner.targets](runner, list(ids), test_patch)


def _node_args(runner: Runner, ids: Sequence[str], test_patch: str) -> list[str]:
    targets = (pytest_target(i, runner.name) for i in ids)
    return list(dict.fromkeys(t for t in targets if t))


def _name_args(runner: Runner, ids: Sequence[str], test_patch: str) -> list[str]:
    names = list(dict.fromkeys(ids))
    return [*swebench_directives(runner.name, test_patch), *(["-k", *names] if names else [])]


def _label_args(runner: Runner, ids: Sequence[str], test_patch: str) -> list[str]:
    labels = [django_label(i) for i in ids]
    modules = swebench_directives(runner.name, test_patch) if None in labels else []
    return list(dict.fromkeys([*(label for label in labels if label), *modules]))


_TARGETS: dict[str, Callable[[Runner, Sequence[str], str], list[str]]] = {
    "node": _node_args,
    "name": _name_args,
    "label": _label_args,
}


def pytest_target(test_id: str, parser: str) -> str | None:
    """The node id pytest runs for a listed id: the id itself, or its whole function where
    SWE-bench's id may not be the parameter's own (None: the id names no file)."""
    if not _names_file(path_of(test_id)):
        return None
    function, bracket, param = test_id.partition("[")
    if not bracket:
        return test_id
    if not param.endswith("]"):  # cut at whitespace
        return function
    param = param[:-1]
    runner = runner_for(parser)
    if runner.short_paths and param.startswith("/") and not param.startswith("//"):
        return function if "*" not in param else test_id
    if "mouse_buttons" in runner.cleans and {"1", "3"} & set(param.split("-")):
        return function
    return test_id


def django_label(test_id: str) -> str | None:
    """``test_name (module.Class)`` -> ``module.Class.test_name``, what ``runtests.py`` takes;
    None for an id that names no class (a docstring's first line)."""
    found = _DJANGO_ID.match(test_id)
    if found is None:
        return None
    name, where = found.groups()
    return where if where.endswith(f".{name}") else f"{where}.{name}"


def _names_file(path: str) -> bool:
    # "[100%]" and "[2]": what SWE-bench's parser took from a progress or a skip line
    return bool(path) and not path.startswith("[")
