"""Compiled extension modules at an instance's base commit.

An environment is built once, at the environment setup commit; its compiled modules (``.so``)
are copied into each item's workspace (``Environment.seed``). An instance whose base commit
has other C or Cython sources (astropy's base commits are often months from the setup
commit's: 52 changed sources is common) would run the setup commit's binaries against its own
Python code. For such a base commit the builder builds the package as a wheel, in the
sandbox, with the build isolation the spec's install had (``Builder.top_up``), and takes the
extension modules out of it (``wheel_extensions``) into the base commit's layer; the seed then
copies those in place of the setup commit's.

The host only reads what the sandboxed build wrote: a wheel found without following links,
read with a bound, each member taken only if it is an extension module under a plain relative
path and within the size bounds.
"""

from __future__ import annotations

import fnmatch
import io
import zipfile
from pathlib import Path, PurePosixPath

from ..primitives import hostgit
from .spec import EnvironmentSetupError

# What a compiled module is built from: a change to any makes the setup commit's binaries stale.
SOURCE_GLOBS = ("*.c", "*.h", "*.cpp", "*.cc", "*.cxx", "*.hpp", "*.pyx", "*.pxd", "*.pxi")
EXTENSION_SUFFIXES = (".so", ".pyd")
WHEEL_MAX_BYTES = 1 << 30
MEMBER_MAX_BYTES = 256 << 20
MEMBERS_MAX_BYTES = 2 << 30


def changed_sources(setup: Path, commit: str, checkout: Path, base: str) -> list[str]:
    """The compiled sources that differ between ``commit`` of the repository at ``setup`` and
    ``base`` of the one at ``checkout``. Two repositories, since each checkout holds one
    commit's past and nothing later (``bench/workspaces.py``): the trees are listed (host git
    reads the object store only) and compared by blob."""
    old, new = _sources(setup, commit), _sources(checkout, base)
    return sorted(p for p in old.keys() | new.keys() if old.get(p) != new.get(p))


def _sources(repository: Path, commit: str) -> dict[str, str]:
    argv = ["ls-tree", "-r", "-z", "--full-tree", commit]
    out = hostgit.run(argv, cwd=repository, error=EnvironmentSetupError).text
    found = {}
    for entry in filter(None, out.split("\0")):
        meta, _, path = entry.partition("\t")
        name = PurePosixPath(path).name
        if any(fnmatch.fnmatchcase(name, glob) for glob in SOURCE_GLOBS):
            found[path] = meta.rsplit(" ", 1)[-1]
    return found


def is_extension(rel: str) -> bool:
    return rel.endswith(EXTENSION_SUFFIXES)


def wheel_extensions(wheel: bytes, prefix: str = "") -> dict[str, bytes]:
    """The extension modules of a wheel, by the path each has in the checkout (``prefix`` +
    its path in the wheel: "src/" for a src layout). Raises ``EnvironmentSetupError`` for a
    member that is not a plain relative path or is over the bounds."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(wheel))
    except zipfile.BadZipFile as exc:
        raise EnvironmentSetupError(f"the base commit's wheel: not a zip file ({exc})") from None
    found: dict[str, bytes] = {}
    total = 0
    with archive:
        for member in archive.infolist():
            name = member.filename
            if member.is_dir() or not is_extension(name):
                continue
            path = PurePosixPath(name)
            if path.is_absolute() or ".." in path.parts or "\\" in name or not path.parts:
                raise EnvironmentSetupError(f"the base commit's wheel: unsafe member {name!r}")
            if member.file_size > MEMBER_MAX_BYTES:
                raise EnvironmentSetupError(
                    f"the base commit's wheel: {name} is {member.file_size} bytes, over "
                    f"{MEMBER_MAX_BYTES}"
                )
            total += member.file_size
            if total > MEMBERS_MAX_BYTES:
                raise EnvironmentSetupError(
                    f"the base commit's wheel: extension modules over {MEMBERS_MAX_BYTES} bytes"
                )
            with archive.open(member) as handle:  # read bounded: a header may lie
                data = handle.read(MEMBER_MAX_BYTES + 1)
            if len(data) != member.file_size:
                raise EnvironmentSetupError(f"the base commit's wheel: {name}: size mismatch")
            found[prefix + name] = data
    return found
