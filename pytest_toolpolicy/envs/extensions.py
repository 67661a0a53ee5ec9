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


def changed_sources(checkout: Path, commit: str, base: str) -> list[str]:
    """The compiled sources that differ between two commits of the checkout (host git reads
    the object store only; ``--no-ext-diff --no-textconv``: no driver runs)."""
    argv = ["diff", "--name-only", "--no-renames", "--no-ext-diff", "--no-textconv"]
    argv += [commit, base, "--", *SOURCE_GLOBS]
    out = hostgit.run(argv, cwd=checkout, error=EnvironmentSetupError).text
    return [line for line in out.splitlines() if line]


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
