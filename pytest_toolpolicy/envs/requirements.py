"""A repository's requirement file as SWE-bench's images install it
(``get_requirements_by_commit`` in harness/test_spec/python.py): its ``-r`` files' lines
first, then its own; lines starting ``-e .``, ``.[test`` or ``#`` dropped (the checkout is
installed by the spec's ``install``, not by its requirement file); and the packages SWE-bench
replaces (``REPLACE_REQ_PACKAGES``: ``types-pkg_resources``, yanked from PyPI, becomes
``types-setuptools``). A pure function over a reader of the checkout's files."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable

_EXCLUDED = ("-e .", "#", ".[test")
# (package, its replacement): SWE-bench's REPLACE_REQ_PACKAGES.
REPLACED = (("types-pkg_resources", "types-setuptools"),)


def swebench_requirements(read: Callable[[str], str | None], rel: str) -> str:
    """The text SWE-bench installs for the requirement file ``rel`` of the checkout
    (``read(rel)``: a file's text, None where it has none)."""
    own: list[str] = []
    nested: list[str] = []
    folder = posixpath.dirname(rel)
    for line in (read(rel) or "").split("\n"):
        if line.strip().startswith("-r"):
            text = read(posixpath.normpath(posixpath.join(folder, line.strip()[2:].strip())))
            nested += [extra for extra in (text or "").split("\n") if not _excluded(extra)]
        elif not _excluded(line):
            own.append(line)
    text = "\n".join([*nested, "\n".join(own)])
    for package, replacement in REPLACED:
        text = re.sub(rf"^{re.escape(package)}([<>=!~]=?.*|$)", replacement, text, flags=re.M)
    return text


def _excluded(line: str) -> bool:
    return line.strip().startswith(_EXCLUDED)
