"""The spec's symbol-like token (§3.1), found in time linear in the text: the policy's symbol
trigger and the gold-label derivation read issue texts and captured output with it."""

from __future__ import annotations

import re

# Exact (spec §3.1). It also matches file names such as ``setup.py`` or ``test_x.py``; the spec's
# regex is the contract, and such a search just finds nothing or the module. It cannot end in
# ".", so trailing punctuation ("see foo.bar.") is never part of a token.
SYMBOL_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+")
# SYMBOL_RE's matches, found in time linear in the text. ``SYMBOL_RE.finditer`` tries every
# position of a word and reads on to the word's end from each: a 20,000-character word took 6.5 s.
# Yet a match at a position depends only on where its run of [A-Za-z0-9_] ends (it needs ".",
# then a letter or "_", right there), so all positions of one run succeed or fail together, and
# the leftmost a scan can reach is the run's first letter or "_" (after any digits). This pattern
# is tried only at the start of a run (the lookbehind rejects any other position at once) and
# reads the run's leading digits itself: each run is read once. ``token`` is then exactly the
# match SYMBOL_RE would give there, since SYMBOL_RE's own greedy reading takes the rest.
_SYMBOL_SCAN = re.compile(
    r"(?<![A-Za-z0-9_])[0-9]*(?P<token>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)"
)


def symbol_spans(text: str) -> list[tuple[int, int]]:
    """The ``(start, end)`` of each match ``SYMBOL_RE.finditer(text)`` gives, in order."""
    return [m.span("token") for m in _SYMBOL_SCAN.finditer(text)]


__all__ = ["SYMBOL_RE", "symbol_spans"]
