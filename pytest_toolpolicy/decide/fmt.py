"""Number formatting for verdicts: short, but never misleading at a threshold.

A precision drop of 0.0305 printed as "−0.030" next to "fails ≥ −0.03" would contradict itself,
so a number printed beside a boundary gains digits until its printed value sits on the same side
of the boundary as its exact value.
"""

from __future__ import annotations

from fractions import Fraction

MINUS = "\u2212"  # a real minus sign, as in the spec's notation


def _side(x: Fraction, boundary: Fraction) -> int:
    return (x > boundary) - (x < boundary)


def number(x: Fraction, places: int = 2, boundary: Fraction | None = None) -> str:
    text = f"{float(x):.{places}f}"
    while (
        boundary is not None
        and places < 8
        and _side(Fraction(text), boundary) != _side(x, boundary)
    ):
        places += 1
        text = f"{float(x):.{places}f}"
    return text.replace("-", MINUS)


def signed(x: Fraction, places: int = 2, boundary: Fraction | None = None) -> str:
    text = number(x, places, boundary)
    return text if text.startswith(MINUS) else f"+{text}"


def percent(x: Fraction, boundary: Fraction | None = None) -> str:
    """A relative change as a signed percentage, e.g. 3/25 → "+12%"."""
    scaled = None if boundary is None else boundary * 100
    return signed(x * 100, 0, scaled) + "%"


def limit(x: Fraction) -> str:
    """A threshold as the spec writes it: 1.5, 0.03, 5 — no trailing zeros."""
    return f"{float(x):g}"


def plural(count: int, noun: str) -> str:
    """``3 model errors``, ``1 item``: a count read as a reason, not as ``1 item(s)``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"
