"""The pytest plugin grading loads inside the sandbox (copied there, with its launcher, into a
read-only directory outside the workspace, as standalone modules).

It runs every test of the test files given on the command line, in their order, as SWE-bench
runs them (tests share state: sphinx's build directories outlive a test, so leaving out one a
list does not name changes what the next one sees), and reports the listed ones: a listed id
that matches no test is simply not reported ("missing"), where pytest itself would stop the
whole session with a usage error. A collected test matches a listed id by its node id, by its
node id relative to the invocation directory (the workspace root: how instances spell them,
whatever rootdir pytest picked), or by the SWE-bench id of the latter (``testids.py``: cut at
the first space, a path parameter shortened for the ``pytest_options`` parser, MouseButton
names as numbers for ``matplotlib``'s); several tests may match one id (``t.py::test[a b]``
and ``t.py::test[a c]`` are both ``t.py::test[a``). Asked for no list (``"ids": null``: mining
a repository's history derives the lists by running), it reports every test it collects,
each under its SWE-bench id.

What it saw goes to the host as JSON lines on a pipe (``records.py`` reads them): each
test's start (so that a hung test can be named after the process is killed), the count of
tests it kept, every report of a kept test (phase, outcome, expected failure, and for a failure
its crash and traceback), every failed collection, and the session's end with pytest's exit
status and how many reports of every test, kept or not, fell in each of pytest's own
categories (``pytest_report_teststatus``: what the terminal summary counts). The pipe is the
sandbox's side channel: this module takes the descriptor over when it is imported, before any
conftest, test or code of the repository runs, keeps a private non-inheritable copy and closes
the original and its variable, so no file in the workspace, no child process and no later
session can write a result; only code running inside this very process could. Against that
code, the plugin is one object (``PLUGIN``) whose hooks pytest captured when it registered
them and whose writer (``os.write`` as it was at import) lives in a closure: rebinding a name
of this module or of ``os`` changes nothing it sends. What such code can still do, and what
the host cross-checks against it (the exit status, pytest's own summary), is in ``run.py``.

It must load in every environment an instance's spec makes: pytest 3.3 to 9 on Python 3.6 and
later. So: no ``from __future__ import annotations`` (3.7) and annotations as strings
(``pytest.Config`` is pytest 7), ``item.fspath`` where ``item.path`` (7.0) is missing,
``config.invocation_dir`` where ``config.invocation_params`` (5.1) is.
"""

import json
import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations stay strings: pytest.Config and friends are pytest 7
    from collections.abc import Callable

    import pytest

    Send = Callable[[dict[str, object]], None]

_TEXT_CHARS = 4000  # of a failure's traceback, its end (where the final exception is)
_COLOUR = re.compile(r"\[(\d+)m")
_CONTROL = str.maketrans("", "", "".join(chr(c) for c in range(1, 32)))
_MOUSE_BUTTONS = (("MouseButton.LEFT", "1"), ("MouseButton.RIGHT", "3"))
_CATEGORIES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed")


def swebench_id(nodeid: str, parser: str) -> str:
    """A copy of ``testids.swebench_id`` (the package is not importable in the sandbox)."""
    if parser == "pytest_v2":
        nodeid = _COLOUR.sub("", nodeid).translate(_CONTROL)
    elif parser == "matplotlib":
        for name, value in _MOUSE_BUTTONS:
            nodeid = nodeid.replace(name, value)
    tokens = nodeid.split()
    test = tokens[0] if tokens else ""
    if parser == "pytest_options":
        # What SWE-bench's ``(.*?)\[(.*)\]`` finds, without its regex (cubic on many "["):
        # the text before the first "[" and between it and the last "]".
        first, last = test.find("["), test.rfind("]")
        if 0 <= first < last:
            main, option = test[:first], test[first + 1 : last]
            if option.startswith("/") and not option.startswith("//") and "*" not in option:
                option = "/" + option.split("/")[-1]
            test = f"{main}[{option}]"
    return test


def _invocation_dir(config: "pytest.Config") -> str:
    params = getattr(config, "invocation_params", None)
    return str(params.dir if params is not None else config.invocation_dir)  # type: ignore[attr-defined]


def _relative(path: str, rest: str, start: str) -> str:
    rel = os.path.relpath(path, start).replace(os.sep, "/")
    return rel + "::" + rest if rest else rel


def _asked_id(item: "pytest.Item", start: str) -> str:
    path = getattr(item, "path", None) or item.fspath
    return _relative(str(path), item.nodeid.partition("::")[2], start)


def _text(report: "pytest.TestReport | pytest.CollectReport") -> str:
    text = getattr(report, "longreprtext", None)
    if text is None:
        text = str(report.longrepr or "")
    return text[-_TEXT_CHARS:]


def _crash(report: "pytest.TestReport") -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    message = getattr(crash, "message", None)
    return str(message)[:500] if message else ""


def _writer(variable: str) -> "Send":
    """``send(record)``: one JSON line to the channel named by ``variable``, through a private
    copy of its descriptor and the ``os.write`` and ``json.dumps`` of this moment."""
    inherited = int(os.environ.pop(variable))
    fd = os.dup(inherited)  # not inheritable: no process the tests start holds it
    os.close(inherited)
    write, dumps = os.write, json.dumps

    def send(record: "dict[str, object]") -> None:
        data = (dumps(record, ensure_ascii=True) + "\n").encode("ascii")
        while data:
            data = data[write(fd, data) :]

    return send


def _grading(send: "Send", wanted: "frozenset[str] | None", parser: str) -> object:
    """The plugin object: its hooks close over ``send`` and the run's state."""
    kept = {}  # type: dict[str, list[str]]
    state = {}  # type: dict[str, object]
    counts = dict.fromkeys(_CATEGORIES, 0)  # every report of every test, by pytest's category

    class Grading:
        def pytest_configure(self, config: "pytest.Config") -> None:
            state["config"] = config
            state["start"] = _invocation_dir(config)
            state["rootdir"] = str(getattr(config, "rootpath", None) or config.rootdir)  # type: ignore[attr-defined]

        def pytest_collection_modifyitems(
            self, config: "pytest.Config", items: "list[pytest.Item]"
        ) -> None:
            start = _invocation_dir(config)
            for item in items:
                # pytest before 4 puts an instance's "()" in a class's test ids; listed ids lack it
                asked = _asked_id(item, start).replace("::()::", "::")
                matched = [item.nodeid, asked, swebench_id(asked, parser)]
                if wanted is None:
                    kept[item.nodeid] = [matched[-1]]
                    continue
                listed = [i for i in dict.fromkeys(matched) if i in wanted]
                if listed:
                    kept[item.nodeid] = listed
            send({"k": "collected", "n": len(kept)})

        def pytest_collectreport(self, report: "pytest.CollectReport") -> None:
            if report.failed:
                counts["error"] += 1  # pytest counts a failed collection as an error
                path, _, rest = report.nodeid.partition("::")
                full = os.path.join(str(state.get("rootdir", ".")), path)
                where = _relative(full, rest, str(state.get("start", ".")))
                send({"k": "collect", "n": where, "text": _text(report)})

        def pytest_runtest_logstart(
            self, nodeid: str, location: "tuple[str, int | None, str]"
        ) -> None:
            send({"k": "start", "n": nodeid})

        def pytest_runtest_logreport(self, report: "pytest.TestReport") -> None:
            config = state.get("config")
            if config is not None:
                found = config.hook.pytest_report_teststatus(report=report, config=config)  # type: ignore[attr-defined]
                category = found[0] if isinstance(found, tuple) and found else ""
                if category in counts:
                    counts[category] += 1
            ids = kept.get(report.nodeid)
            if ids is None or (report.when != "call" and report.passed):
                return  # a setup or teardown that went well says nothing of the test
            record = {"k": "report", "n": report.nodeid, "ids": ids, "when": report.when}  # type: dict[str, object]
            record["outcome"] = report.outcome
            record["xfail"] = getattr(report, "wasxfail", None) is not None
            if report.failed:
                record["msg"] = _crash(report)
                record["text"] = _text(report)
            elif (
                report.skipped and isinstance(report.longrepr, tuple) and len(report.longrepr) == 3
            ):
                # why it skipped ("Skipped: could not import 'cdms2'"): grading tells an environment
                # that lacks a module from a test the patch made skip
                record["msg"] = str(report.longrepr[2])[:500]
            send(record)

        def pytest_sessionfinish(self, session: "pytest.Session", exitstatus: int) -> None:
            send({"k": "finish", "status": int(exitstatus), "counts": dict(counts)})

    return Grading()


def _load() -> "tuple[object, Send | None]":
    directory = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(directory, "grade.json"), encoding="utf-8") as file:
        config = json.load(file)
    # None: every test the run collects, each under its SWE-bench id (mining derives the lists).
    wanted = None if config["ids"] is None else frozenset(config["ids"])
    send = _writer("TOOLPOLICY_CHANNEL_FD")
    return _grading(send, wanted, config["parser"]), send


PLUGIN, _SENDER = _load()


def claim_sender() -> "Send":
    """The channel's writer, once: the launcher takes it before any code of the repository
    runs, to send the process's own end after pytest returns."""
    global _SENDER
    sender, _SENDER = _SENDER, None
    if sender is None:
        raise RuntimeError("the grading channel's writer was claimed already")
    return sender
