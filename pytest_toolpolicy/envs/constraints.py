"""What of a ``uv pip compile`` output pip accepts as the constraints of a project's install.

pip refuses unnamed requirements as constraints (``./deps/extra``, which a requirement file
may name) and a constraint on the project itself is wrong: resolved as a dependency of its
own plugins (sphinx 7.2's ``sphinxcontrib-*`` need ``sphinx>=5``), it is the release of the
cutoff day, which the checkout being installed is not. Pure functions of the text.
"""

from __future__ import annotations

import re
from collections.abc import Collection

_RESOLVED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._\-]*)(?:\[[^\]]*\])?==(\S+)")
# "    # via sphinx (/testbed/pyproject.toml)": the project, named with the file it was read from.
_PROJECT_VIA = re.compile(
    r"^\s+#\s+(?:via\s+|\s+)([A-Za-z0-9][A-Za-z0-9._\-]*)(?:\[[^\]]*\])? \([^)]*\)\s*$"
)


def normal(name: str) -> str:
    """A package name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def project_names(compiled: str) -> set[str]:
    """The projects whose own files were resolved (their ``# via NAME (file)`` lines)."""
    return {normal(m[1]) for line in compiled.splitlines() if (m := _PROJECT_VIA.match(line))}


def install_constraints(compiled: str, drop: Collection[str] = ()) -> str:
    """The ``name==version`` lines of ``compiled`` (without extras: pip refuses them in
    constraints), but those of the projects resolved and of the names in ``drop`` (compared
    as PEP 503 names)."""
    skip = project_names(compiled) | {normal(n) for n in drop}
    kept = [
        f"{m[1]}=={m[2]}"
        for line in compiled.splitlines()
        if (m := _RESOLVED.match(line)) and normal(m[1]) not in skip
    ]
    return "".join(f"{line}\n" for line in kept)


__all__ = ["install_constraints", "normal", "project_names"]
