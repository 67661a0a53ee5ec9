"""Which failures are the environment's and not the patch's: pure functions over what the grading
records and pytest's output say. grade.py makes each an ``infra_error`` with its reason (or,
for a PASS_TO_PASS test that needs the network, leaves the test out of the verdict), never
a verdict on the patch:

- pytest could not start, or a test module failed to collect, and the output names no file
  the patch or ``test_patch`` touched (nor its module) — or it names one, but what is missing
  is a top-level module the patch did not add or remove (the package itself or a dependency is
  not importable: the environment's doing whichever file imports it), a name of an installed
  package outside the workspace, or a compiled module the loader cannot link;
- every listed test errors at setup with one and the same crash (a broken conftest fixture,
  a fixture a plugin that is not installed should provide), and no traceback names a touched
  file;
- a test skipped because a module it needs is not installed (``pytest.importorskip``'s
  "could not import 'cdms2'", xarray's "requires cdms2"), where that module is no module of
  the environment and no touched file provides it (conda-only packages pip cannot install);
- a test failed for want of a network. Grading runs only inside the sandbox, which has
  loopback alone: a name never resolves ("Temporary failure in name resolution"), a route
  never exists ("Network is unreachable"), so a test that goes out can never pass there,
  whatever the patch. A refused connection counts too, unless the traceback names a loopback
  host (a local test server that is down may well be the patch's doing).

Every rule leans one way: a mention of a touched file keeps a failure the patch's, since an
environment fault that is blamed on a patch is seen (gold unresolved), while a patch's fault
excused as the environment's would hide.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from .outcomes import Failure, TestOutcome, error_lines

_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
# Python 3.8+: "cannot import name 'x' from 'pkg.mod' (/path/to/pkg/mod.py)".
_CANNOT_IMPORT = re.compile(r"ImportError: cannot import name '\w+' from '([\w.]+)' \((/[^)]*)\)")
# A compiled module the dynamic loader refuses: built for another tree, interpreter or library.
_LINKER = (
    "cannot open shared object file",
    "undefined symbol",
    "wrong ELF class",
    "invalid ELF header",
)
_FIXTURE_LOOKUP = re.compile(r"^fixture '[^']+' not found$")
_LOCATION = re.compile(r"^(\S.*?):(\d+)(?:: .*)?$")
# Never a local matter: no name resolves and no route leads out of the sandbox.
_OFFLINE = (
    "gaierror",
    "Temporary failure in name resolution",
    "Name or service not known",
    "No address associated with hostname",
    "Network is unreachable",
    "[Errno -2]",
    "[Errno -3]",
    "[Errno 101]",
)
# A connection that failed: the network's absence, unless it was to a loopback host.
_CONNECT = (
    "Connection refused",
    "[Errno 111]",
    "Max retries exceeded",
    "NewConnectionError",
    "ConnectTimeoutError",
    "requests.exceptions.ConnectionError",
    "requests.exceptions.ConnectTimeout",
)
# A skip for want of a module: importorskip's words, an ImportError's, a "requires X" marker.
_SKIP_MODULE = (
    re.compile(r"could not import '([\w.]+)'"),
    re.compile(r"No module named '([\w.]+)'"),
    re.compile(r"^(?:Skipped: )?requires ([A-Za-z_]\w*(?:\.\w+)*)\s*$"),
)
_LOOPBACK = re.compile(r"localhost|127\.\d+\.\d+\.\d+|'::1'|\[::1\]")


def blames_patch(text: str, touched: Collection[str], roots: Sequence[str] = ()) -> bool:
    """Whether pytest's ``text`` (a traceback, a collection error, its output) puts a failure
    on the files in ``touched`` rather than on the environment. ``roots``: where the run saw
    the workspace; a name that cannot be imported from a module outside them (an installed
    package: ``cannot import name 'x' from 'docutils.utils' (/venv/...)``) is the
    environment's, as is a compiled module the loader cannot link."""
    if any(sign in text for sign in _LINKER):
        return False
    named = _CANNOT_IMPORT.search(text)
    if named and roots and not any(_below(named[2], r) for r in roots if r):
        return False
    modules = {f.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for f in touched}
    modules |= {m.removeprefix("src.") for m in modules}
    missing = _MISSING_MODULE.search(text)
    if missing and "." not in missing.group(1):
        return missing.group(1) in modules
    return any(f in text for f in touched) or any(m in text for m in modules if m)


def _below(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def needs_network(failure: Failure) -> bool:
    crash = "\n".join([failure.message, *error_lines(failure.text)])
    if any(sign in crash for sign in _OFFLINE):
        return True
    # The host may be in the crash (urllib3 names it) or only in the traceback's source lines.
    return any(sign in crash for sign in _CONNECT) and not _LOOPBACK.search(failure.text + crash)


def lacking_module(
    failure: Failure, touched: Collection[str], installed: Collection[str]
) -> str | None:
    """The module a skipped test's reason says it lacks, when the environment has no such
    top-level module (``installed``) and no touched file is it; else None."""
    for pattern in _SKIP_MODULE:
        found = pattern.search(failure.message.strip())
        if found:
            name = found[1]
            top = name.split(".", 1)[0]
            if top in installed or blames_patch(f"No module named '{top}'", touched):
                return None
            return name
    return None


def shared_setup_error(
    ids: Sequence[str],
    outcomes: Mapping[str, TestOutcome],
    failures: Mapping[str, Failure],
    touched: Collection[str],
) -> str | None:
    """The reason, when every one of ``ids`` errored at setup with one crash that names no
    touched file; else None."""
    found = [failures.get(i) for i in ids if outcomes.get(i) == "error"]
    if not ids or len(found) != len(ids):
        return None
    setups = [f for f in found if f is not None and f.when == "setup"]
    causes = {f.message for f in setups}
    if len(setups) != len(ids) or len(causes) != 1 or not setups[0].message:
        return None
    cause = setups[0].message
    if _FIXTURE_LOOKUP.match(cause):
        # Its traceback shows only the test that asked for the fixture, which is no cause.
        return f"every listed test errors at setup: {cause}"
    if any(blames_patch(f.text, touched) for f in setups):
        return None
    where = _location(setups[-1].text)
    return f"every listed test errors at setup: {cause}" + (f" (at {where})" if where else "")


def _location(text: str) -> str | None:
    """Where the crash happened: the traceback's last "path:line: Error" line."""
    for line in reversed(text.strip().splitlines()):
        found = _LOCATION.match(line.strip())
        if found:
            return f"{found.group(1)}:{found.group(2)}"
    return None
