"""Bar charts as inline SVG: the notebook's plots without a plotting library at view time.

Pure functions from (label, value) pairs to markup; labels are escaped, values are numbers.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

WIDTH = 300
BAR = 18
GAP = 6
LABEL = 120  # room for the variant names on the left


def bars(title: str, values: Sequence[tuple[str, float | None]], fmt: str = ".3f") -> str:
    """Horizontal bars from a zero line; negative values go left of it (a delta chart)."""
    shown = [(label, v) for label, v in values if v is not None and not math.isnan(v)]
    height = GAP + len(values) * (BAR + GAP)
    low = min([0.0, *(v for _, v in shown)])
    high = max([0.0, *(v for _, v in shown)])
    span = (high - low) or 1.0
    plot = WIDTH - LABEL - 60
    zero = LABEL + plot * (-low / span)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" role="img"'
        f' aria-label="{html.escape(title)}">'
    ]
    for n, (label, value) in enumerate(values):
        y = GAP + n * (BAR + GAP)
        parts.append(
            f'<text x="{LABEL - 6}" y="{y + BAR * 0.7:.1f}" text-anchor="end">'
            f"{html.escape(label[:22])}</text>"
        )
        if value is None or math.isnan(value):
            parts.append(f'<text x="{zero + 4:.1f}" y="{y + BAR * 0.7:.1f}">n/a</text>')
            continue
        x = zero + plot * (min(value, 0.0) / span)
        width = plot * abs(value) / span
        color = "#b3261e" if value < 0 else "#4a78c2"
        parts.append(
            f'<rect x="{x:.1f}" y="{y}" width="{max(width, 1.0):.1f}" height="{BAR}"'
            f' fill="{color}"><title>{html.escape(label)}: {format(value, fmt)}</title></rect>'
        )
        parts.append(
            f'<text x="{max(x + width, zero) + 4:.1f}" y="{y + BAR * 0.7:.1f}">'
            f"{format(value, fmt)}</text>"
        )
    parts.append(f'<line x1="{zero:.1f}" x2="{zero:.1f}" y1="0" y2="{height}" stroke="#888"/>')
    parts.append("</svg>")
    return f"<figure>{''.join(parts)}<figcaption>{html.escape(title)}</figcaption></figure>"
