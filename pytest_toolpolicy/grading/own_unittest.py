"""The reporter of unittest-based runners (django's ``tests/runtests.py``), installed by the
own-runner launcher (``own_launch.py``) before the runner's code runs.

It wraps, at class level, the methods of the standard library's ``unittest.TestResult`` and
``unittest.TextTestResult`` that a test's run calls (``startTest``, ``stopTest``, the ``add*``
ones, ``addSubTest``), so every result class of the runner (django's
``DebugSQLTextTestResult`` and friends subclass them) reports through them: the wrapper sends
a record, then does what the method did. One call reports once, at its outermost wrapper (a
subclass's method calls its base's). Results of a test run nested inside a running test (a
test of the test runner itself runs a suite of its own) are not the run's: while a test runs,
only its own result object reports.

A test's id is what SWE-bench's django parser would read off its verbose line, ``<description>
... <status>``: the last line of the result's ``getDescription(test)`` (``str(test)``, or the
docstring's first line printed below it), so ``test_name (module.Class)`` before Python 3.11
and ``test_name (module.Class.test_name)`` from 3.11, as the log names them. A failed subtest
fails its test and is reported under its own description too, which Python 3.11 prints.

Outcomes: ok passed, FAIL failed, ERROR error, skip skipped (with its reason), an expected
failure "xfailed" (passed, as grading counts pytest's xfail), an unexpected success "xpassed".
Python 3.6 syntax (see ``own_launch.py``).
"""

import contextlib
import threading
import traceback
import unittest
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations stay strings: Python 3.6 evaluates them
    from collections.abc import Callable

    Send = Callable[[dict[str, Any]], None]

_TEXT_CHARS = 4000  # of a failure's traceback, its end (where the final exception is)
_EVENTS = (
    "startTest", "stopTest", "addSuccess", "addFailure", "addError", "addSkip",
    "addExpectedFailure", "addUnexpectedSuccess", "addSubTest",
)  # fmt: skip
_OUTCOMES = {
    "addSuccess": "passed",
    "addFailure": "failed",
    "addError": "error",
    "addSkip": "skipped",
    "addExpectedFailure": "xfailed",
    "addUnexpectedSuccess": "xpassed",
}


def install(send: "Send") -> None:
    """Wrap the result classes' methods so they report through ``send(record)``."""
    reporter = _Reporter(send)
    for cls in (unittest.TestResult, unittest.TextTestResult):
        for name in _EVENTS:
            method = cls.__dict__.get(name)
            if method is not None:
                setattr(cls, name, _wrapped(method, name, reporter))
    reporter.send({"k": "hooked", "n": "unittest"})


def test_id(result: "object", test: "object") -> str:
    """The id SWE-bench's django parser reads off the line ``result`` prints for ``test``."""
    describe = getattr(result, "getDescription", None)
    text = describe(test) if describe is not None else str(test)
    return str(text).split("\n")[-1].strip()


class _Reporter:
    def __init__(self, send: "Send") -> None:
        self.send = send
        self.local = threading.local()
        self.running = None  # type: tuple[object, object] | None  # (result, test) under way

    def event(
        self, result: "object", name: str, test: "object", args: "tuple[object, ...]"
    ) -> None:
        running = self.running
        if running is not None and (running[0] is not result or running[1] is not test):
            return  # a run nested inside the running test
        if name == "startTest":
            if running is None:
                self.running = (result, test)
                self.send({"k": "start", "n": test_id(result, test)})
        elif name == "stopTest":
            self.running = None
        elif name == "addSubTest":
            self.subtest(result, test, args[0], args[1])
        elif name == "addSkip":
            self.send(_record(result, test, "skipped", msg=str(args[0])[:500]))
        elif name in ("addFailure", "addError"):
            self.result(result, test, _OUTCOMES[name], args[0])
        else:
            self.send(_record(result, test, _OUTCOMES[name]))

    def subtest(self, result: "object", test: "object", subtest: "object", err: "Any") -> None:
        if err is None:  # a subtest that passed says nothing of its test
            return
        failed = issubclass(err[0], getattr(test, "failureException", AssertionError))
        for named in (subtest, test):
            self.result(result, named, "failed" if failed else "error", err)

    def result(self, result: "object", test: "object", outcome: str, err: "Any") -> None:
        lines = traceback.format_exception(err[0], err[1], err[2])
        last = traceback.format_exception_only(err[0], err[1])
        msg = last[-1].strip()[:500] if last else ""
        text = "".join(lines)[-_TEXT_CHARS:]
        self.send(_record(result, test, outcome, msg=msg, text=text))


def _record(result: "object", test: "object", outcome: str, **more: str) -> "dict[str, Any]":
    record: dict[str, Any] = {"k": "result", "n": test_id(result, test), "outcome": outcome}
    record.update(more)
    return record


def _wrapped(method: "Any", name: str, reporter: _Reporter) -> "Any":
    def wrapper(self: "Any", test: "Any", *args: "Any", **kwargs: "Any") -> "Any":
        local = reporter.local
        if getattr(local, "inside", False):  # a subclass's method calling its base's
            return method(self, test, *args, **kwargs)
        local.inside = True
        try:
            with contextlib.suppress(Exception):  # what cannot be described: never reported
                reporter.event(self, name, test, args)
            return method(self, test, *args, **kwargs)
        finally:
            local.inside = False

    wrapper.__name__ = name
    wrapper.__doc__ = getattr(method, "__doc__", None)
    wrapper.__wrapped__ = method  # type: ignore[attr-defined]
    return wrapper
