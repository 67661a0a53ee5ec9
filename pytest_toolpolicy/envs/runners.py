"""One record per test-runner convention, by the name an environment spec gives its
``log_parser`` (SWE-bench's ``log_parsers`` ``PARSER_REGISTRY`` and ``TestSpec``, together).

A record says, as data, everything that differs between runners; the code that acts on each
fact stays where it is used, keyed by what the record names:

- how it runs and reports: ``plugin`` (pytest, under grading's plugin: the spec's ``test_cmd``
  is pytest's) or ``own`` (the spec's ``test_cmd`` run by grading's launcher, each outcome sent by
  ``reporter``: ``grading/own_<reporter>.py``);
- how SWE-bench's parser reads its log (``log``, a reader of ``grading/parsers.py``), and what
  comes off a line or an id before it is read (``cleans``: ``colours``, ``mouse_buttons``;
  ``short_paths``; ``verbose_status``: pytest 3's ``<test> <status>`` lines too) —
  ``grading/testids.py``;
- its directives, what grading runs for the listed ids (``directives``: ``ids``, the files they
  name; ``files``, test_patch's test files; ``modules``, those as dotted modules), and how a
  listed id becomes the runner's arguments (``targets``: pytest ``node`` ids, django's
  ``label``, sympy's ``name`` with ``-k``) — ``grading/directives.py``,
  ``grading/own_runner.py``.

A new convention is one record in ``RUNNERS``. Pure data: this module imports nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Runner:
    name: str
    reports: Literal["plugin", "own"] = "plugin"
    reporter: str | None = None  # ``own``: the reporter grading's launcher installs
    log: str = "pytest"  # pytest | seaborn | django | sympy
    cleans: tuple[str, ...] = ()  # colours | mouse_buttons, in order
    short_paths: bool = False  # a bracketed path in an id shortened to its last part
    verbose_status: bool = False  # also reads ``<test> <status> ...`` lines
    directives: Literal["ids", "files", "modules"] = "ids"
    targets: Literal["node", "label", "name"] = "node"

    @property
    def plugin(self) -> bool:
        """It reports through grading's pytest plugin (its ids are pytest node ids)."""
        return self.reports == "plugin"

    @property
    def node_ids(self) -> bool:
        """Its listed ids become pytest node ids to run; else the runner's own ids stand."""
        return self.targets == "node"


RUNNERS: dict[str, Runner] = {
    "pytest": Runner("pytest"),
    "pytest_v2": Runner("pytest_v2", cleans=("colours",), verbose_status=True),
    "pytest_options": Runner("pytest_options", short_paths=True),
    "matplotlib": Runner("matplotlib", cleans=("mouse_buttons",)),
    "seaborn": Runner("seaborn", log="seaborn"),
    "django": Runner("django", "own", "unittest", "django", directives="modules", targets="label"),
    "sympy": Runner("sympy", "own", "sympy", "sympy", directives="files", targets="name"),
}


def runner_for(name: str) -> Runner:
    """``ValueError`` for a name no record has."""
    found = RUNNERS.get(name)
    if found is None:
        raise ValueError(f"log parser {name!r} is not one of {', '.join(RUNNERS)}")
    return found


def runner_names(reports: str | None = None) -> tuple[str, ...]:
    """Every record's name, or those that report as ``reports`` says (``plugin``, ``own``)."""
    return tuple(n for n, r in RUNNERS.items() if reports is None or r.reports == reports)
