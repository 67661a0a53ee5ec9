"""The reporter of sympy's own runner (``bin/test``, its library ``sympy/utilities/runtests.py``,
``sympy/testing/runtests.py`` from sympy 1.6), installed by the own-runner launcher
(``own_launch.py``) before the runner's code runs.

The runner's library is part of the repository, imported long after the launcher starts, so
the launcher puts an import hook first on ``sys.meta_path``: when either module is imported,
it is loaded as usual and then, before anyone can use it, these of its names are wrapped:

- ``PyTestReporter``'s methods, at class level: ``entering_test(f)`` starts the test
  ``f.__name__`` (the bare function name SWE-bench's sympy ids are, printed by ``--verbose``
  as ``test_name ok``); ``test_pass`` passed, ``test_fail`` failed, ``test_exception`` error,
  ``test_skip`` skipped (with its reason), ``test_xfail`` "xfailed" (passed, as grading counts
  pytest's xfail), ``test_xpass`` "xpassed"; ``import_error`` and a ``test_exception`` outside
  a test are a test file that failed to load. Each reports, then does what it did.
- ``SymPyTests.test_file``, to know the file a load error belongs to.
- ``run_in_subprocess_with_hash_randomization``: where ``PYTHONHASHSEED`` is unset, the runner
  runs the tests in a child Python with a random one (``python -R -c "from <module> import
  _test; ..."``; the sandbox sets it, so they run in this process unless something unsets it).
  The replacement does what sympy's does, but starts the child through the launcher (``-c``
  mode) with the channel's descriptor passed on, so the child takes it over and reports in
  turn.

A module that defines none of them (1.6's ``sympy.utilities.runtests`` re-exports
``sympy.testing.runtests``'s) is left alone; the launcher's host side is told which reporter
was installed (``hooked``), so a runner that never loaded it is named, not graded. Python 3.6
syntax (see ``own_launch.py``).
"""

import contextlib
import importlib.abc
import inspect
import os
import random
import subprocess
import sys
import traceback
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations stay strings: Python 3.6 evaluates them
    from collections.abc import Callable
    from types import ModuleType

    Send = Callable[[dict[str, Any]], None]

MODULES = ("sympy.utilities.runtests", "sympy.testing.runtests")
_TEXT_CHARS = 4000
_MARK = "_toolpolicy_reporting"
_VARIABLE = "TOOLPOLICY_CHANNEL_FD"
_RESULTS = {
    "test_pass": "passed",
    "test_fail": "failed",
    "test_exception": "error",
    "test_skip": "skipped",
    "test_xfail": "xfailed",
    "test_xpass": "xpassed",
}


def install(send: "Send", fd: int, launcher: str) -> None:
    """Put the import hook first on ``sys.meta_path``."""
    sys.meta_path.insert(0, _Finder(_State(send, fd, launcher)))


class _State:
    def __init__(self, send: "Send", fd: int, launcher: str) -> None:
        self.send = send
        self.fd = fd
        self.launcher = launcher
        self.file = ""  # the test file being run
        self.test = None  # type: str | None  # the test under way

    def report(self, name: str, args: "tuple[Any, ...]") -> None:
        if name in ("test_file", "entering_filename"):
            self.file, self.test = str(args[0]), None
        elif name == "leaving_filename":
            self.test = None
        elif name == "entering_test":
            self.test = str(getattr(args[0], "__name__", args[0]))
            self.send({"k": "start", "n": self.test})
        elif name == "import_error":
            self.send({"k": "collect", "n": str(args[0]), "text": _text(args[1])})
        elif self.test is None:  # a result outside a test: the file's own code raised
            if name == "test_exception":
                self.send({"k": "collect", "n": self.file, "text": _text(args[0])})
        else:
            record = {"k": "result", "n": self.test, "outcome": _RESULTS[name]}
            if name in ("test_fail", "test_exception"):
                record["text"] = _text(args[0])
                record["msg"] = _crash(args[0])
            elif name == "test_skip" and args and args[0] is not None:
                record["msg"] = str(args[0])[:500]
            self.test = None
            self.send(record)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, state: _State) -> None:
        self.state = state

    def find_spec(self, fullname: str, path: "Any", target: "Any" = None) -> "Any":
        if fullname not in MODULES:
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                if getattr(spec.loader, "exec_module", None) is not None:
                    spec.loader = _Loader(spec.loader, self.state)
                return spec
        return None


class _Loader(importlib.abc.Loader):
    """The module's own loader, which then wraps the module's reporting names."""

    def __init__(self, loader: "Any", state: _State) -> None:
        self._loader = loader
        self._state = state

    def create_module(self, spec: "Any") -> "Any":
        return self._loader.create_module(spec)

    def exec_module(self, module: "ModuleType") -> None:
        self._loader.exec_module(module)
        _wrap_module(module, self._state)

    def __getattr__(self, name: str) -> "Any":  # get_source, get_filename, is_package ...
        return getattr(self._loader, name)


def _wrap_module(module: "ModuleType", state: _State) -> None:
    names: dict[str, Any] = vars(module)
    reporter = names.get("PyTestReporter")
    if _defined_in(reporter, module):
        for name in ("entering_filename", "leaving_filename", "entering_test", "import_error"):
            _wrap_method(reporter, name, state)
        for name in _RESULTS:
            _wrap_method(reporter, name, state)
        state.send({"k": "hooked", "n": "sympy"})
    tests = names.get("SymPyTests")
    if _defined_in(tests, module):
        _wrap_method(tests, "test_file", state)
    name = "run_in_subprocess_with_hash_randomization"
    if _defined_in(names.get(name), module):
        setattr(module, name, _child_runner(names[name], module, state))


def _defined_in(thing: "Any", module: "ModuleType") -> bool:
    return getattr(thing, "__module__", None) == module.__name__


def _wrap_method(cls: "Any", name: str, state: _State) -> None:
    method = getattr(cls, name, None)
    if method is None or getattr(method, _MARK, False):
        return

    def wrapper(self: "Any", *args: "Any", **kwargs: "Any") -> "Any":
        with contextlib.suppress(Exception):  # what cannot be told reads as never reported
            state.report(name, args or tuple(kwargs.values()))
        return method(self, *args, **kwargs)

    wrapper.__name__ = name
    wrapper.__doc__ = method.__doc__
    setattr(wrapper, _MARK, True)
    setattr(cls, name, wrapper)


def _child_runner(original: "Any", module: "ModuleType", state: _State) -> "Any":
    """``run_in_subprocess_with_hash_randomization`` as sympy has it, the child started
    through the launcher with the channel's descriptor."""
    default = inspect.signature(original).parameters["module"].default
    # later sympy (1.5 on) runs the child in its own directory
    in_sympy_dir = "get_sympy_dir" in original.__code__.co_names

    def run(
        function: str,
        function_args: "tuple[Any, ...]" = (),
        function_kwargs: "dict[str, object] | None" = None,
        command: str = sys.executable,
        module: str = default,
        force: bool = False,
    ) -> "Any":
        hash_seed = os.getenv("PYTHONHASHSEED")
        if hash_seed and not force:
            return False  # the caller runs the tests in this process, as sympy does
        # sympy's own command string, as it builds it
        code = "import sys; from %s import %s;sys.exit(%s(*%s, **%s))" % (  # noqa: UP031
            module, function, function, repr(function_args), repr(function_kwargs or {}),
        )  # fmt: skip
        env = dict(os.environ)
        env["PYTHONHASHSEED"] = hash_seed or str(random.randrange(2**32))
        env[_VARIABLE] = str(state.fd)
        cwd = names_dir() if in_sympy_dir else None
        child = subprocess.Popen(
            [command, "-R", state.launcher, "-c", code], env=env, pass_fds=(state.fd,), cwd=cwd
        )
        try:
            child.communicate()
        except KeyboardInterrupt:
            child.wait()
        return child.returncode

    def names_dir() -> str:
        return str(vars(module)["get_sympy_dir"]())

    run.__name__ = original.__name__
    run.__doc__ = original.__doc__
    return run


def _text(exc_info: "Any") -> str:
    kind, value, tb = exc_info
    return "".join(traceback.format_exception(kind, value, tb))[-_TEXT_CHARS:]


def _crash(exc_info: "Any") -> str:
    kind, value, _ = exc_info
    last = traceback.format_exception_only(kind, value)
    return last[-1].strip()[:500] if last else ""
