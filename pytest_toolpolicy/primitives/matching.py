"""How many times an exact search string occurs in a text, overlapping occurrences included.

``str.count`` counts non-overlapping occurrences: a search of two blank lines "occurs once" in
three, yet ``str.replace`` then edits the first of its two places, which may not be the one
meant. An exact-string edit must name one place, so every edit counts with this.
"""

from __future__ import annotations


def occurrences(text: str, search: str) -> int:
    """Start positions of ``search`` in ``text``; 0 for an empty search."""
    if not search:
        return 0
    count, at = 0, text.find(search)
    while at != -1:
        count += 1
        at = text.find(search, at + 1)
    return count
