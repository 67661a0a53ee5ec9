"""A spec's ``test_cmd`` for a repository's own runner, read as what grading's own-runner
launcher (``own_launch.py``) runs in its place: the runner script, run in-process as
``__main__`` with the argv the command gives it, from the directory the command runs it in.

The launcher takes over exactly what a shell would do with the forms SWE-bench's specs use:
``./tests/runtests.py --verbosity 2 ...`` and ``bin/test -C --verbose`` (a script of the
repository, run by its ``#!`` line), ``python tests/runtests.py ...``, and either after
``cd <dir> &&``. Anything else (a program found on ``PATH``, an interpreter option, a pipe, a
variable, a glob, quoting) is refused with the reason: grading never falls back to running a
command whose outcomes only its printed log would tell.

The instance's directives (``directives.py``) follow the command's own arguments, passed on
as they are: no shell reads them. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

# What a word of a command the launcher takes over may hold: no quoting, expansion or operator.
_WORD = re.compile(r"[\w./=:,+@%-]+")
_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)?)?")
FORMS = "[cd DIR &&] [python] SCRIPT ARGS..., SCRIPT a path in the repository"


class Unlaunchable(ValueError):
    """The command is not one the launcher can run in the shell's place; the message says
    why."""


@dataclass(frozen=True)
class Invocation:
    chdir: str  # where the runner runs, relative to the workspace root ("." for the root)
    script: str  # the runner script, as the command names it (relative to ``chdir``)
    args: tuple[str, ...]  # its arguments: the command's, then the directives


def invocation(test_cmd: str, directives: Sequence[str]) -> Invocation:
    """What the launcher runs for ``test_cmd`` followed by ``directives``."""
    words = test_cmd.split()
    chdir = "."
    if words[:1] == ["cd"]:
        if len(words) < 3 or words[2] != "&&":
            raise _refused(test_cmd, "a `cd` that is not `cd DIR && ...`")
        chdir, words = words[1], words[3:]
        _inside(test_cmd, chdir, "directory")
    odd = [w for w in words if not _WORD.fullmatch(w)]
    if odd:
        raise _refused(test_cmd, f"{odd[0]!r} is more than a plain word")
    if words and _PYTHON.fullmatch(words[0]):
        words = words[1:]
        if words and words[0].startswith("-"):
            raise _refused(test_cmd, f"the interpreter option {words[0]!r}")
    elif words and "/" not in words[0]:
        raise _refused(test_cmd, f"{words[0]!r} is a program on PATH, not a script")
    if not words:
        raise _refused(test_cmd, "no script")
    _inside(test_cmd, words[0], "script")
    return Invocation(chdir, words[0], (*words[1:], *directives))


def _inside(test_cmd: str, path: str, what: str) -> None:
    parts = PurePosixPath(path).parts
    if path.startswith("/") or ".." in parts or path.startswith("-"):
        raise _refused(test_cmd, f"the {what} {path!r} is not a path in the repository")


def _refused(test_cmd: str, why: str) -> Unlaunchable:
    return Unlaunchable(
        f"grading's launcher cannot run the test command {test_cmd!r} ({why}); "
        f"it takes over {FORMS}"
    )
