"""The pytest plugin grading loads inside the sandbox (copied there as a standalone module).

It runs exactly the listed tests out of the test files given on the command line: a listed id
that matches no test is simply not run (reported "missing"), where pytest itself would stop the
whole session with a usage error. A collected test matches a listed id by its node id, by its
node id relative to the invocation directory (the workspace root: how instances spell them,
whatever rootdir pytest picked), or by the SWE-bench id of the latter (``testids.py``: cut at
the first space, a path parameter shortened for the ``pytest_options`` parser); several tests
may match one id (``t.py::test[a b]`` and ``t.py::test[a c]`` are both ``t.py::test[a``).

Into the junit report go, as properties of each test case: every listed id the test matched,
and a mark on a non-strict xfail that passed (junit writes a plain pass; SWE-bench's parser
records no XPASS line, so the test counts as not run). Each test's start goes to a progress
log, so that a hung test can be named after the process is killed.

It must load in every environment an instance's spec makes: pytest 4.4 to 9 on Python 3.6 and
later. So: no ``from __future__ import annotations`` (3.7) and annotations as strings
(``pytest.Config`` is pytest 7), ``item.fspath`` where ``item.path`` (7.0) is missing,
``config.invocation_dir`` where ``config.invocation_params`` (5.1) is.
"""

import json
import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations stay strings: pytest.Config and friends are pytest 7
    import pytest

_DIR = os.environ["TOOLPOLICY_GRADE_DIR"]
with open(os.path.join(_DIR, "grade.json"), encoding="utf-8") as _file:
    _CONFIG = json.load(_file)
_WANTED = frozenset(_CONFIG["ids"])
_PARSER = _CONFIG["parser"]
_PROPERTY = "toolpolicy_nodeid"
_XPASS = "toolpolicy_xpass"
_KEPT: "dict[str, pytest.Item]" = {}
_OPTION = re.compile(r"(.*?)\[(.*)\]")
_COLOUR = re.compile(r"\[(\d+)m")
_CONTROL = str.maketrans("", "", "".join(chr(c) for c in range(1, 32)))


def swebench_id(nodeid: str, parser: str) -> str:
    """A copy of ``testids.swebench_id`` (the package is not importable in the sandbox)."""
    if parser == "pytest_v2":
        nodeid = _COLOUR.sub("", nodeid).translate(_CONTROL)
    tokens = nodeid.split()
    test = tokens[0] if tokens else ""
    if parser == "pytest_options":
        found = _OPTION.search(test)
        if found:
            main, option = found.groups()
            if option.startswith("/") and not option.startswith("//") and "*" not in option:
                option = "/" + option.split("/")[-1]
            test = f"{main}[{option}]"
    return test


def _invocation_dir(config: "pytest.Config") -> str:
    params = getattr(config, "invocation_params", None)
    return str(params.dir if params is not None else config.invocation_dir)  # type: ignore[attr-defined]


def _asked_id(item: "pytest.Item", start: str) -> str:
    rest = item.nodeid.partition("::")[2]
    path = getattr(item, "path", None) or item.fspath
    rel = os.path.relpath(str(path), start).replace(os.sep, "/")
    return rel + "::" + rest if rest else rel


def pytest_collection_modifyitems(config: "pytest.Config", items: "list[pytest.Item]") -> None:
    start = _invocation_dir(config)
    keep, drop = [], []
    for item in items:
        asked = _asked_id(item, start)
        matched = [item.nodeid, asked, swebench_id(asked, _PARSER)]
        listed = [i for i in dict.fromkeys(matched) if i in _WANTED]
        if listed:
            item.user_properties.extend((_PROPERTY, i) for i in listed)
            _KEPT[item.nodeid] = item
            keep.append(item)
        else:
            drop.append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


def pytest_runtest_logreport(report: "pytest.TestReport") -> None:
    # The teardown report, which junit takes the properties from, is made after this one.
    if report.when == "call" and report.passed and getattr(report, "wasxfail", None) is not None:
        item = _KEPT.get(report.nodeid)
        if item is not None:
            item.user_properties.append((_XPASS, "1"))


def pytest_runtest_logstart(nodeid: str, location: "tuple[str, int | None, str]") -> None:
    with open(os.path.join(_DIR, "progress.log"), "a", encoding="utf-8") as log:
        log.write(nodeid + "\n")
