"""URL slugs."""

from __future__ import annotations

import re
import unicodedata

_NOT_WORD = re.compile(r"[^a-z0-9]+", re.IGNORECASE)
_APOSTROPHES = re.compile(r"['\u2019]")


def slugify(text: str, sep: str = "-", max_length: int | None = None,
            lowercase: bool = True) -> str:
    """Make a URL slug: ASCII letters and digits joined by ``sep``.

    Accents are stripped (``"Crème brûlée"`` → ``"creme-brulee"``), apostrophes are dropped
    rather than splitting words (``"don't"`` → ``"dont"``), and every other run of
    non-alphanumeric characters becomes one ``sep``. With ``max_length`` the slug is cut to at
    most that many characters and never ends with ``sep``.
    """
    if max_length is not None and max_length < 1:
        raise ValueError(f"max_length must be positive, got {max_length}")
    ascii_text = _strip_accents(_APOSTROPHES.sub("", text))
    if lowercase:
        ascii_text = ascii_text.lower()
    slug = _NOT_WORD.sub(sep, ascii_text).strip(sep)
    if max_length is not None:
        slug = slug[:max_length]
    return slug


def _strip_accents(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return decomposed.encode("ascii", "ignore").decode("ascii")
