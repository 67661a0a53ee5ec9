"""sympy's own runner in miniature, for tests: ``bin/test`` and its library
``sympy/utilities/runtests.py`` (or ``sympy/testing/runtests.py`` with the old module
re-exporting it, as sympy 1.6 on), with the names and calls of the real one (sympy 1.0-1.12)
that grading's reporter wraps: ``PyTestReporter``'s ``entering_test``/``test_pass``/``test_fail``
/``test_exception``/``test_skip``..., ``SymPyTests.test_file``, and the tests run in a child
Python through ``run_in_subprocess_with_hash_randomization``. ``--verbose`` prints
``test_name ok`` / ``F`` / ``E``, the lines SWE-bench's sympy parser reads."""

from __future__ import annotations

RUNTESTS = '''"""sympy's runtests in miniature."""
import inspect
import os
import random
import subprocess
import sys


class Skipped(Exception):
    pass


def run_in_subprocess_with_hash_randomization(function, function_args=(),
        function_kwargs={}, command=sys.executable,
        module="sympy.utilities.runtests", force=False):
    p = subprocess.Popen([command, "-RV"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    p.communicate()
    if p.returncode != 0:
        return False
    hash_seed = os.getenv("PYTHONHASHSEED")
    if not hash_seed:
        os.environ["PYTHONHASHSEED"] = str(random.randrange(2**32))
    elif not force:
        return False
    commandstring = ("import sys; from %s import %s;sys.exit(%s(*%s, **%s))" %
                     (module, function, function, repr(function_args), repr(function_kwargs)))
    try:
        p = subprocess.Popen([command, "-R", "-c", commandstring])
        p.communicate()
    finally:
        if hash_seed is None:
            del os.environ["PYTHONHASHSEED"]
        else:
            os.environ["PYTHONHASHSEED"] = hash_seed
    return p.returncode


def test(*paths, **kwargs):
    subprocess = kwargs.pop("subprocess", True)
    if subprocess:
        ret = run_in_subprocess_with_hash_randomization(
            "_test", function_args=paths, function_kwargs=kwargs)
        if ret is not False:
            return not bool(ret)
    return not bool(_test(*paths, **kwargs))


def _test(*paths, **kwargs):
    reporter = PyTestReporter(verbose=kwargs.get("verbose", False))
    tests = SymPyTests(reporter, kwargs.get("kw") or ())
    return int(not tests.test([os.path.abspath(p) for p in paths]))


class SymPyTests(object):
    def __init__(self, reporter, kw):
        self._reporter = reporter
        self._kw = kw

    def test(self, files):
        for f in files:
            self.test_file(f)
        return self._reporter.finish()

    def test_file(self, filename):
        reporter = self._reporter
        gl = {"__file__": filename}
        try:
            with open(filename) as f:
                exec(compile(f.read(), filename, "exec"), gl)
        except ImportError:
            reporter.import_error(filename, sys.exc_info())
            return
        except Exception:
            reporter.test_exception(sys.exc_info())
        funcs = [gl[n] for n in gl if n.startswith("test_") and inspect.isfunction(gl[n])]
        funcs.sort(key=lambda x: inspect.getsourcelines(x)[1])
        funcs = [f for f in funcs if not self._kw or any(k in f.__name__ for k in self._kw)]
        if not funcs:
            return
        reporter.entering_filename(filename, len(funcs))
        for f in funcs:
            reporter.entering_test(f)
            try:
                f()
            except Exception:
                t, v, tr = sys.exc_info()
                if t is AssertionError:
                    reporter.test_fail((t, v, tr))
                elif t.__name__ == "Skipped":
                    reporter.test_skip(v)
                else:
                    reporter.test_exception((t, v, tr))
            else:
                reporter.test_pass()
        reporter.leaving_filename()


class Reporter(object):
    pass


class PyTestReporter(Reporter):
    def __init__(self, verbose=False):
        self._verbose = verbose
        self._failed = 0

    def write(self, text):
        sys.stdout.write(text)
        sys.stdout.flush()

    def finish(self):
        self.write("\\n")
        return self._failed == 0

    def entering_filename(self, filename, n):
        self.write("%s[%d] " % (os.path.basename(filename), n))

    def leaving_filename(self):
        self.write("\\n")

    def entering_test(self, f):
        if self._verbose:
            self.write("\\n" + f.__name__ + " ")

    def test_xfail(self):
        self.write("f")

    def test_xpass(self, v):
        self.write("X")

    def test_fail(self, exc_info):
        self._failed += 1
        self.write("F")

    def test_pass(self, char="."):
        self.write("ok" if self._verbose else char)

    def test_skip(self, v=None):
        self.write(str(v) + " s" if self._verbose and v is not None else "s")

    def test_exception(self, exc_info):
        self._failed += 1
        self.write("E")

    def import_error(self, filename, exc_info):
        self._failed += 1
        self.write(os.path.basename(filename) + "[?]   Failed to import\\n")
'''

BIN_TEST = '''#!/usr/bin/env python
"""sympy's bin/test in miniature: [-C] [--verbose] [-k NAMES...] after the paths."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
args = sys.argv[1:]
kw = None
if "-k" in args:
    kw, args = args[args.index("-k") + 1:], args[:args.index("-k")]
if "-C" in args:
    os.environ["SYMPY_USE_CACHE"] = "no"

import sympy

sys.exit(not sympy.test(*[a for a in args if not a.startswith("-")],
                        verbose="--verbose" in args, kw=kw))
'''

# sympy 1.6 on: the library moved to sympy/testing/, the old module re-exports it.
SHIM = '"""Moved to sympy.testing.runtests."""\nfrom sympy.testing.runtests import *  # noqa\n'


def runner_files(new_layout: bool = False) -> dict[str, str]:
    """The runner's files, and the package it is part of (product code goes in ``sympy/``)."""
    files = {"bin/test": BIN_TEST, "sympy/utilities/__init__.py": ""}
    if not new_layout:
        return {**files, "sympy/utilities/runtests.py": RUNTESTS}
    moved = RUNTESTS.replace('module="sympy.utilities.runtests"', 'module="sympy.testing.runtests"')
    return {
        **files,
        "sympy/utilities/runtests.py": SHIM,
        "sympy/testing/__init__.py": "",
        "sympy/testing/runtests.py": moved,
    }
