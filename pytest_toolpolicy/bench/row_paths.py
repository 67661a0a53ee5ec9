"""What a row's fields may hold where they become file names, paths and command arguments.

Each check gives the problem, or None. A row that fails one is an ``InstanceError`` naming the
instance and the field when it is loaded, instead of a raw ``OSError`` or ``git`` failure
minutes later, in the middle of a run.

- ``instance_id`` names files and directories: ``items/<id>-<variant>[-t<k>].json`` in the
  report, the item's workspace ``$TMPDIR/toolpolicy-ab/<item id>``, grading's and
  ``toolpolicy run``'s ``<id>-…`` names. So it is one path component, and at most
  ``MAX_ID_BYTES`` bytes of UTF-8: a file name holds 255 bytes (NAME_MAX on Linux and macOS
  file systems), and the longest name made from an id adds about 60 (``-cand:`` and a 40-
  character candidate name, ``-t`` and the trial, ``.json``). Verified's longest id is 32.
- ``repo`` names the mirror ``<owner>__<name>``, its cached checkouts and a clone URL: owner
  and name as GitHub spells them (ASCII letters, digits, ``_.-``; 39 and 100 characters at
  most), never ``.``, ``..`` or an option, and no ``__`` in the owner (two repositories would
  share one mirror).
- ``version`` names an environment directory (``<mirror>-<version>-<digest>``).
- ``patch`` and ``test_patch`` are applied in the workspace, and the files ``test_patch``
  touches are reset before grading: each name a header gives must lie inside the repository
  (relative, no ``..``, no NUL) and outside its ``.git``.
- A listed test id's file part (before ``::``) is passed to pytest: the same, and no option.
"""

from __future__ import annotations

import re

from .diff_names import header_names

MAX_ID_BYTES = 128
MAX_VERSION = 64
_REPO_PART = re.compile(r"[A-Za-z0-9_.\-]+")
_REPO_LIMITS = (("owner", 39), ("name", 100))


def id_problem(value: str) -> str | None:
    if "/" in value or "\\" in value:
        return f"contains a path separator ({_show(value)}): an id is one file name"
    if not value.isprintable():
        return f"contains a control character such as a NUL or a newline ({_show(value)})"
    size = len(value.encode("utf-8", errors="surrogatepass"))
    if size > MAX_ID_BYTES:
        return (
            f"too long: {size} bytes, at most {MAX_ID_BYTES}, since files are named by it with"
            f" the variant and trial added and a file name holds 255 bytes ({_show(value)})"
        )
    return None


def repo_problem(value: str) -> str | None:
    problem = _repo_problem(value)
    return f"{problem} ({_show(value)})" if problem else None


def _repo_problem(value: str) -> str | None:
    parts = value.split("/")
    if len(parts) != 2:
        return "not owner/name"
    for (what, limit), part in zip(_REPO_LIMITS, parts, strict=True):
        if not _REPO_PART.fullmatch(part):
            return f"its {what} holds a character other than ASCII letters, digits, '_.-'"
        if part in (".", "..") or part.startswith("-"):
            return f"its {what} {part!r} is not a directory name"
        if len(part) > limit:
            return f"its {what} is {len(part)} characters long, at most {limit}"
    if "__" in parts[0]:
        return "its owner holds '__', which separates owner and name in the mirror's name"
    return None


def version_problem(value: str) -> str | None:
    if "/" in value or not value.isprintable():
        return f"contains a path separator or a control character ({_show(value)})"
    if len(value) > MAX_VERSION:
        return f"too long: {len(value)} characters, at most {MAX_VERSION} ({_show(value)})"
    return None


def path_problem(path: str) -> str | None:
    """Why ``path``, relative to the repository's root, is not a file inside it."""
    if "\0" in path:
        return "contains a NUL"
    if path.startswith("/"):
        return "is absolute"
    parts = path.split("/")
    if ".." in parts:
        return "goes up with '..'"
    if any(part.casefold() == ".git" for part in parts):
        return "is inside .git"
    return None


def patch_problem(patch: str) -> str | None:
    for number, name in header_names(patch):
        if why := path_problem(name):
            return f"line {number} names {_show(name)}, which {why}"
    return None


def test_id_problem(test_id: str) -> str | None:
    path = test_id.partition("::")[0]
    if path.startswith("-"):
        return f"{_show(test_id)} would be read as an option"
    if why := path_problem(path):
        return f"{_show(test_id)} names a file that {why}"
    return None


def _show(value: str, limit: int = 60) -> str:
    shown = repr(value)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."
