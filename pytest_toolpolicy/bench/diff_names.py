"""The file names a patch's headers give, read as ``git apply`` reads them.

A name comes from a ``diff --git`` line, a ``---``/``+++`` line (both with a prefix such as
``a/``, which ``git apply -p1`` strips), or a ``rename``/``copy from``/``to`` line (no prefix);
git writes a name with unusual characters C-quoted (``"a/tab\\there"``). Hunk bodies are
skipped by their line counts, so a removed line that reads ``--- x`` is not taken for a header.

Pure functions: the loader checks each name when it reads a row, before any patch is applied.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_HUNK = re.compile(r"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")
_PREFIXED = ("--- ", "+++ ")
_PLAIN = ("rename from ", "rename to ", "copy from ", "copy to ")
_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}
_OCTAL = re.compile(r"[0-3][0-7]{2}")


def header_names(patch: str) -> Iterator[tuple[int, str]]:
    """(line number, name) for each file name the patch's headers give, the prefix of a
    prefixed name stripped (``a//etc/passwd`` is ``/etc/passwd``); ``/dev/null`` is none."""
    old = new = 0
    for number, raw in enumerate(patch.split("\n"), start=1):
        if old > 0 or new > 0:
            tag = raw[:1]
            if tag in ("", " ", "-"):  # an empty line is an empty context line
                old -= 1
            if tag in ("", " ", "+"):
                new -= 1
            if tag in ("", " ", "-", "+", "\\"):
                continue
            old = new = 0  # a hunk shorter than its header said: read on as headers
        line = raw.removesuffix("\r")
        if hunk := _HUNK.match(line):
            old, new = (1 if count is None else int(count) for count in hunk.groups())
            continue
        for name in _names(line):
            yield number, name


def _names(line: str) -> list[str]:
    if line.startswith("diff --git "):
        return [_strip(name) for name in _git_pair(line[len("diff --git ") :])]
    if line.startswith(_PREFIXED):
        name = _one(line[4:], timestamp=True)
        return [] if name is None or name == "/dev/null" else [_strip(name)]
    for head in _PLAIN:
        if line.startswith(head):
            name = _one(line[len(head) :], timestamp=False)
            return [] if name is None else [name]
    return []


def _one(text: str, *, timestamp: bool) -> str | None:
    if text.startswith('"'):
        quoted = unquote(text)
        return None if quoted is None else quoted[0]
    # A traditional diff puts a timestamp after a tab; git's own names never hold a tab.
    return text.split("\t", 1)[0] if timestamp else text


def _git_pair(text: str) -> list[str]:
    """Both names of a ``diff --git`` line. Unquoted names may hold spaces: git reads the
    split where the two names agree after their prefixes; else the first space splits them."""
    if text.startswith('"'):
        first = unquote(text)
        if first is None:
            return []
        rest = first[1].lstrip(" ")
        second = unquote(rest) if rest.startswith('"') else (rest, "")
        return [first[0]] + ([second[0]] if second else [])
    if ' "' in text:
        head, _, tail = text.partition(' "')
        second = unquote('"' + tail)
        return [head] + ([second[0]] if second else [])
    for index, char in enumerate(text):
        if char == " " and _strip(text[:index]) == _strip(text[index + 1 :]):
            return [text[:index], text[index + 1 :]]
    head, _, tail = text.partition(" ")
    return [head, tail] if tail else [head]


def _strip(name: str) -> str:
    """The name as ``git apply -p1`` reads it: without its first component."""
    return name.split("/", 1)[1] if "/" in name else name


def unquote(text: str) -> tuple[str, str] | None:
    """A C-quoted name at the start of ``text`` and what follows it; None when malformed.
    Octal escapes are bytes of the UTF-8 name (a NUL among them is kept, to be refused)."""
    out, index = bytearray(), 1
    while index < len(text):
        char = text[index]
        if char == '"':
            return out.decode("utf-8", errors="replace"), text[index + 1 :]
        if char != "\\":
            out += char.encode("utf-8", errors="surrogatepass")
            index += 1
            continue
        escape = text[index + 1 : index + 2]
        if escape in _ESCAPES:
            out.append(_ESCAPES[escape])
            index += 2
        elif _OCTAL.fullmatch(text[index + 1 : index + 4]):
            out.append(int(text[index + 1 : index + 4], 8))
            index += 4
        else:
            return None
    return None
