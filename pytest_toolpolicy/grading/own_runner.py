"""The agent's ``run_test`` in a repository whose tests its own runner runs (django's
``tests/runtests.py``, sympy's ``bin/test``): a target written in that repository's test-id
convention becomes the spec's ``test_cmd`` with the arguments that select those tests
(``directives.runner_args``), so the post-patch test trigger can run an instance's
FAIL_TO_PASS ids as the instance lists them. Which convention is the parser's record's
(``envs/runners.py``: ``targets``):

- ``label`` (django): the target is one or more ids ``test_name (module.Class)`` and nothing
  else; each becomes the label ``module.Class.test_name``.
- ``name`` (sympy): the target is one or more bare test function names (``test_issue_12092``);
  the test files defining each (found in the workspace's code index) run, with ``-k`` and the
  names.

Anything else (a node id, a shell command) is not this runner's: ``command`` returns None and
``run_test`` runs it as it would anywhere. Whether the tests passed is still the exit code's
word alone (spec §6.2); both runners exit non-zero when a test fails.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..envs.runners import runner_for, runner_names
from .directives import runner_args

_DJANGO_TARGET = re.compile(r"\s*(?:\w+ \([\w.]+\)\s*)+")
_DJANGO_ID = re.compile(r"\w+ \([\w.]+\)")
_SYMPY_NAME = re.compile(r"test_\w+")
_TEST_FILE = re.compile(r"(?:^|/)tests?/test_\w+\.py$")
OWN_PARSERS = runner_names("own")


@dataclass(frozen=True)
class OwnRunner:
    """``command(target)``: the shell command running ``target``'s tests, or None."""

    test_cmd: str
    parser: str
    # name -> the workspace's test files that define a function of that name
    defined_in: Callable[[str], Sequence[str]]

    def command(self, target: str) -> str | None:
        own = _TARGETS.get(runner_for(self.parser).targets)
        return own(self, target) if own is not None else None

    def _labels(self, target: str) -> str | None:
        if not _DJANGO_TARGET.fullmatch(target):
            return None
        return self._line(runner_args(self.parser, _DJANGO_ID.findall(target)))

    def _names(self, target: str) -> str | None:
        names = target.split()
        if not names or not all(_SYMPY_NAME.fullmatch(n) for n in names):
            return None
        files = sorted({f for n in names for f in self.defined_in(n) if _TEST_FILE.search(f)})
        if not files:
            return None
        return self._line([*files, "-k", *dict.fromkeys(names)])

    def _line(self, args: Sequence[str]) -> str:
        return " ".join([self.test_cmd, *(shlex.quote(a) for a in args)])


# A record's ``targets`` -> how an agent's target in that convention becomes a command.
_TARGETS: dict[str, Callable[[OwnRunner, str], str | None]] = {
    "label": OwnRunner._labels,
    "name": OwnRunner._names,
}
