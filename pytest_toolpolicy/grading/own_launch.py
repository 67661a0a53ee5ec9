"""How grading starts a repository's own test runner inside the sandbox (django's
``tests/runtests.py``, sympy's ``bin/test``): ``python <this file>``, from a read-only
directory outside the workspace that ``logrun.py`` fills with this file, the reporters
(``own_unittest.py``, ``own_sympy.py``) and ``own.json`` (which reporter, where, what to run).

First of all it takes the sandbox's side channel over: the descriptor the variable
``TOOLPOLICY_CHANNEL_FD`` names is copied to a private, non-inheritable one, the original and
the variable closed, before any code of the repository runs. Then it installs the reporter,
which writes each test's outcome to that descriptor as a JSON line (``own_records.py`` reads
them): no file in the workspace and no process the tests start can write one, and what the
tests print is no longer what decides (the log stays a second signal, ``crosscheck.py``).
Then it runs the runner script in this process as ``__main__`` (``runpy``), with the argv and
from the directory the spec's ``test_cmd`` gives (``own_command.py``) and the script's
directory first on ``sys.path``, as ``python SCRIPT`` would, and sends the status the runner
exits with.

``python <this file> -c CODE`` is the same for a child of the runner: sympy's runs the tests in
a subprocess with hash randomization, which its reporter (``own_sympy.py``) starts through
here with the descriptor passed on, so that the child reports too; CODE runs as ``python -c``
would run it.

What product code can still do. The reporters run in the process the tests run in, as the
pytest plugin does; what they stop is printing (``atexit`` lines, a test's own output), a
process the tests start (it holds no descriptor), and an edited runner (its files are put back
before the run). Code of the repository running in this process can still:

- write records itself: the private descriptor is open here (``/proc/self/fd``, or trying
  numbers), and a line of the right shape is taken as the reporter's;
- call the wrapped methods itself (``result.addSuccess(test)`` on the runner's result object,
  ``reporter.test_pass()`` after sympy's ``entering_test``), or change what the runner calls
  them with, in memory: patch ``unittest.TestCase.run``, django's ``SimpleTestCase.__call__``
  (``django/test/testcases.py``, product code kept as the agent left it), sympy's
  ``SymPyTests.test_file`` or a decorator that turns an exception into an outcome (``raises``,
  ``XFAIL`` in ``sympy/utilities/pytest.py``, kept too), or rebind the wrapped methods;
- leave the reporter out: a module of its own in ``sys.modules`` under the runtests name
  before the runner imports it (the import hook sees only real imports); no test is then
  reported, an infrastructure error that grading's control run turns into unresolved;
- and, to pass the cross-check too, make the log say the same (print matching lines, or
  swallow the runner's own).

``reach.py`` names much of this in the patch's text (descriptors, ``atexit``, introspection);
the rest is what an in-process reporter cannot defend against.

Python 3.6 syntax, like the pytest plugin: SWE-bench's oldest django environments are 3.6.
"""

import os  # loaded with the interpreter: no path is searched for it
import sys

if __name__ == "__main__":  # a script in the sandbox; imported as a module, it does nothing
    _INHERITED = int(os.environ.pop("TOOLPOLICY_CHANNEL_FD"))
    FD = os.dup(_INHERITED)  # not inheritable: no process the tests start holds it
    os.close(_INHERITED)
    PID = os.getpid()

    import json

    HERE = os.path.dirname(os.path.abspath(__file__))

    def send(record: "dict[str, object]") -> None:
        # A process forked from this one (django's parallel workers) holds the descriptor too,
        # but its results are replayed here: only this process writes.
        if os.getpid() != PID:
            return
        data = (json.dumps(record, ensure_ascii=True) + "\n").encode("ascii")
        while data:
            data = data[os.write(FD, data) :]

    with open(os.path.join(HERE, "own.json"), encoding="utf-8") as _file:
        CONFIG = json.load(_file)
    if CONFIG["reporter"] == "unittest":
        import toolpolicy_own_unittest  # type: ignore[import-not-found]

        toolpolicy_own_unittest.install(send)
    else:
        import toolpolicy_own_sympy  # type: ignore[import-not-found]

        toolpolicy_own_sympy.install(send, FD, os.path.abspath(__file__))

    if sys.argv[1:2] == ["-c"]:  # a child of the runner (see the module)
        import types

        CODE = sys.argv[2]
        sys.argv = ["-c", *sys.argv[3:]]
        sys.path[0] = ""
        MAIN = types.ModuleType("__main__")
        sys.modules["__main__"] = MAIN
        exec(compile(CODE, "<string>", "exec"), MAIN.__dict__)
        sys.exit(0)

    import runpy

    os.chdir(CONFIG["chdir"])
    SCRIPT = CONFIG["script"]
    sys.argv = [SCRIPT, *CONFIG["args"]]
    sys.path[0] = os.path.dirname(os.path.realpath(SCRIPT))
    try:
        runpy.run_path(SCRIPT, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        # What the interpreter makes of it: None is 0, a number itself, anything else 1.
        status = 0 if code is None else int(code) if isinstance(code, int) else 1
        send({"k": "finish", "status": status})
        raise
    send({"k": "finish", "status": 0})
