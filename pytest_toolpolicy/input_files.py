"""The files a command is given, read so that a bad one is named by file and line, never a
traceback.

A JSON-lines file (``trajectories.jsonl``, ``toolformer.jsonl``, a dataset's rows, a record
file) is read line by line: a line that is not JSON (a run killed mid-write leaves its last
line torn) or whose record has the wrong shape (the typed record's builder raises
``RecordError``) is skipped and counted in a ``Skipped``, whose ``summary`` is the one line a
command prints for the file. A file that is one value (a TOML file, a Parquet table) either
reads or is an ``InputError``: ``<file>:<line>: <what is wrong>``, the line where there is one.
The lines are read as bytes and counted by offset, so a reader can come back for one record
(the viewer does) without holding the file.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

if TYPE_CHECKING:
    import pandas as pd

T = TypeVar("T")

# tomllib's messages end so (it has no line attribute before Python 3.14).
_TOML_AT = re.compile(r"\s*\(at (?:line (\d+), column \d+|end of document)\)$")
_SHOWN = 10  # line numbers a summary lists


class RecordError(ValueError):
    """A record of the wrong shape; the message says which field and what is wrong with it."""


class InputError(ValueError):
    """A file the command cannot go on without: ``<file>:<line>: <what is wrong>``."""

    def __init__(self, path: Path | str, what: str, line: int | None = None) -> None:
        self.path, self.what, self.line = Path(path), " ".join(what.split()), line
        super().__init__(f"{path}:{line}: {self.what}" if line else f"{path}: {self.what}")


@dataclass
class Skipped:
    """The lines of one file that held no usable record, each with why."""

    path: Path
    lines: list[tuple[int, str]] = field(default_factory=list)

    def add(self, line: int, why: str) -> None:
        self.lines.append((line, " ".join(why.split())))

    def __bool__(self) -> bool:
        return bool(self.lines)

    def summary(self) -> str:
        """One line: the first bad line and why, and how many were skipped."""
        if not self.lines:
            return ""
        (first, why), count = self.lines[0], len(self.lines)
        numbers = ", ".join(str(n) for n, _ in self.lines[:_SHOWN])
        more = ", ..." if count > _SHOWN else ""
        noun = "line" if count == 1 else "lines"
        return f"{self.path}:{first}: {why} ({count} malformed {noun} skipped: {numbers}{more})"

    def error(self) -> InputError:
        """The first bad line as the error of a file that must be read whole."""
        line, why = self.lines[0]
        return InputError(self.path, why, line)


@dataclass(frozen=True)
class Entry(Generic[T]):
    """A good line: its record, its number (1-based) and where its bytes are."""

    record: T
    line: int
    offset: int
    length: int


def scan_jsonl(
    path: Path, build: Callable[[Any], T], skipped: Skipped | None = None
) -> Iterator[Entry[T]]:
    """Each line of ``path`` whose JSON ``build`` makes a record of, streamed; every other
    non-blank line is added to ``skipped``. ``build`` raises ``ValueError`` (``RecordError``)
    for a value of the wrong shape. A missing file has no lines; one that cannot be read is an
    ``InputError``."""
    skipped = skipped if skipped is not None else Skipped(path)
    offset = 0
    try:
        with path.open("rb") as handle:
            for number, raw in enumerate(handle, start=1):
                if raw.strip():
                    try:
                        record = build(decode(raw, torn=not raw.endswith(b"\n")))
                    except ValueError as exc:
                        skipped.add(number, str(exc))
                    else:
                        yield Entry(record, number, offset, len(raw))
                offset += len(raw)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise InputError(path, f"cannot be read: {exc.strerror or exc}") from None


def read_jsonl(path: Path, build: Callable[[Any], T]) -> tuple[list[T], Skipped]:
    """Every record of ``path`` and the lines skipped."""
    skipped = Skipped(path)
    return [entry.record for entry in scan_jsonl(path, build, skipped)], skipped


def decode(raw: bytes, *, torn: bool = False) -> Any:
    """One line's JSON; ``RecordError`` saying why it is none (``torn``: the file's last line
    has no end, so it was cut short)."""
    try:
        return json.loads(raw)
    except UnicodeDecodeError as exc:
        raise RecordError(f"not UTF-8 text (byte {exc.start + 1})") from None
    except json.JSONDecodeError as exc:
        cut = "cut short: " if torn else ""
        raise RecordError(f"{cut}not JSON: {exc.msg} (column {exc.colno})") from None
    except (ValueError, RecursionError) as exc:  # a number past the digit limit; too deep
        raise RecordError(f"not readable JSON ({type(exc).__name__}: {exc})") from None


def end_torn_line(path: Path) -> int | None:
    """End a last line a killed writer left without its newline, so that what is appended
    next starts a line of its own instead of joining the torn one. The torn line's number if
    there was one (None: the file is missing, empty or whole)."""
    try:
        with path.open("rb+") as handle:
            data = handle.read()
            if not data or data.endswith(b"\n"):
                return None
            handle.write(b"\n")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise InputError(path, f"cannot be appended to: {exc.strerror or exc}") from None
    return data.count(b"\n") + 1


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file's table; ``InputError`` naming the line tomllib stopped at."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise InputError(path, f"cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text (byte {exc.start + 1})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        at = _TOML_AT.search(message)
        what = f"not TOML: {message[: at.start()] if at else message}"
        line = (int(at.group(1)) if at.group(1) else text.count("\n") + 1) if at else None
        raise InputError(path, what, line) from None


def read_parquet(path: Path) -> pd.DataFrame:
    """A Parquet table; ``InputError`` for a file cut short or not Parquet at all."""
    import pandas as pd

    try:
        return pd.read_parquet(path)
    # Arrow's errors are these: ArrowInvalid a ValueError, ArrowIOError an OSError.
    except (OSError, ValueError) as exc:
        message = str(exc).split("': ", 1)[-1] if "input source '" in str(exc) else str(exc)
        raise InputError(path, f"not a readable Parquet table: {message}") from None
