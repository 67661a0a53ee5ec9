"""How grading starts pytest inside the sandbox: ``python <this file> <pytest args>``, from a
read-only directory outside the workspace that holds this file, the grading plugin and its
settings.

The plugin is imported first, from this directory, before anything of the workspace is on the
path, so it takes the result channel over before any code of the repository runs and no
module the workspace holds can stand in for it. Then the path is what ``python -m pytest``
gives (the working directory first, ``PYTHONPATH`` after), and pytest runs as that would run
it, the plugin handed to it as a registered object. When pytest returns, the launcher sends
the status it returned as the run's last record. Python 3.6 syntax, like the plugin.
"""

import json
import os
import sys
import tempfile

if __name__ == "__main__":  # a script in the sandbox; imported as a module, it does nothing
    import toolpolicy_grade_plugin  # type: ignore[import-not-found]

    SEND = toolpolicy_grade_plugin.claim_sender()

    sys.path[0] = os.getcwd()

    import pytest

    # pytest's cache (some tests use its ``cache`` fixture) in the sandbox's /tmp.
    CACHE = os.path.join(tempfile.gettempdir(), "toolpolicy-pytest-cache")
    # Registered as the object it is (``-p`` would have pytest import it for assertion
    # rewriting, and warn that it is imported already: an error where a project's
    # filterwarnings says so).
    ARGS = [*sys.argv[1:], "-o", "cache_dir=" + CACHE]
    # The environment's own plugins, by name, where pytest honours its switch that turns its
    # own loading of them off (3.7 on): before, it loads them itself, and naming them again
    # would register them twice.
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "grade.json")) as FILE:
        PLUGINS = json.load(FILE).get("plugins") or []
    VERSION = tuple(int(p) for p in pytest.__version__.split(".")[:2] if p.isdigit())
    if VERSION >= (3, 7):
        for NAME in PLUGINS:
            ARGS[:0] = ["-p", NAME]
        # A named plugin may import another before its own turn (xdist.looponfail imports
        # xdist.plugin), which pytest reports as "already imported, cannot be rewritten": an
        # error under a project's filterwarnings = error (astropy 4.3 and 5.0), though the
        # plugin loads as it would have. Autoload marks them all first and never says so.
        if hasattr(pytest, "PytestAssertRewriteWarning"):
            ARGS[:0] = ["-W", "ignore::pytest.PytestAssertRewriteWarning"]
    # Made now, not when pytest first writes there: a project's plugin may own an ini of the
    # same name and make subdirectories of it before any test (astropy 1.3's cache_dir).
    if not os.path.isdir(CACHE):
        os.makedirs(CACHE)
    STATUS = int(pytest.main(ARGS, plugins=[toolpolicy_grade_plugin.PLUGIN]))
    # The process's own end, after pytest returned: the host holds it against the exit status
    # it sees (code that ends the process another way, or later, cannot agree with both).
    SEND({"k": "exit", "status": STATUS})
    sys.exit(STATUS)
