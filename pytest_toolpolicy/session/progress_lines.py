"""The lines of an A/B session's live progress, off the rows as they reach the controller: one
finished item, the running summary (resolved per group, the spend, the time left), and which
collected nodes are A/B items.

A row is read defensively (a harness fault's row carries only its identity, status and error; an
older session's may lack a column), because a progress line must never be why a session fails.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..decide.variants import ABLATION_PREFIX, CANDIDATE_PREFIX

ERROR_WIDTH = 70


def row_in(properties: Iterable[tuple[str, object]], name: str) -> dict[str, Any] | None:
    """The row a report's ``user_properties`` carry under ``name``, if any."""
    for key, value in properties:
        if key == name and isinstance(value, str):
            row = json.loads(value).get("row")
            return row if isinstance(row, dict) else None
    return None


def item_nodes(ids: Iterable[str], item_ids: Iterable[str]) -> set[str]:
    """The collected node ids that are A/B items: their parameter id names an item (a project's
    own test may add parameters of its own around it)."""
    wanted = set(item_ids)

    def is_item(node: str) -> bool:
        param = node.partition("[")[2].removesuffix("]")
        return bool(param) and (param in wanted or any(w in param for w in wanted))

    return {node for node in ids if "[" in node and is_item(node)}


def eta(elapsed: float, ran: int, remaining: int) -> float | None:
    """Seconds left at the pace so far (resumed items took no time: not counted in ``ran``)."""
    if ran <= 0 or remaining < 0:
        return None
    return elapsed / ran * remaining


def clock(seconds: float) -> str:
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def usd(x: float) -> str:
    return f"${x:.4f}" if x < 1 else f"${x:,.2f}"


def _num(row: Mapping[str, Any], key: str) -> float | None:
    value = row.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _short(text: object) -> str:
    one = " ".join(str(text).split())
    return one if len(one) <= ERROR_WIDTH else one[: ERROR_WIDTH - 3] + "..."


def item_line(row: Mapping[str, Any], done: int, total: int | None, *, trial: bool) -> str:
    """One finished item: where it stands, what it is, and what it cost."""
    label = f"{row.get('instance_id', '?')} {row.get('variant') or row.get('arm', '?')}"
    if trial:
        label += f" t{row.get('trial', 1)}"
    status = row.get("status")
    if status == "ok":
        head = "resolved" if row.get("resolved") is True else "unresolved"
        if isinstance(row.get("outcome"), str):
            head += f" ({row['outcome']})"
    else:
        head = f"{status} ({_short(row.get('error'))})"
    parts = [head]
    if (turns := _num(row, "turns")) is not None:
        parts.append(f"{turns:.0f} turns")
    if (tokens := _num(row, "tokens")) is not None:
        parts.append(f"{'>=' if row.get('tokens_unknown') else ''}{tokens:.0f} tokens")
    if "cost_usd" in row:
        cost = _num(row, "cost_usd")
        parts.append("unpriced" if cost is None else usd(cost))
        if (rerun := _num(row, "cf_cost_usd")) and cost is not None:
            parts[-1] += f" (+{usd(rerun)} reruns)"
    if row.get("resumed"):
        parts.append("resumed")
    elif (seconds := _num(row, "duration_s")) is not None:
        parts.append(f"{seconds:.1f} s")
    where = f"{done}/{total}" if total else str(done)
    return f"toolpolicy [{where}] {label}: {', '.join(parts)}"


def _group(variant: str) -> str:
    if variant.startswith(CANDIDATE_PREFIX):
        return "candidates"
    return "ablations" if variant.startswith(ABLATION_PREFIX) else variant


def resolved_by_group(rows: Iterable[Mapping[str, Any]]) -> list[tuple[str, int, int]]:
    """(group, resolved, measured): current and policy, then the candidates and the ablations
    each folded into one (a line with thirteen ablations would not be read)."""
    counts: dict[str, list[int]] = {}
    for row in rows:
        name = _group(str(row.get("variant") or row.get("arm") or "?"))
        c = counts.setdefault(name, [0, 0])
        if row.get("status") in ("ok", "model_error"):  # an endpoint's error: not resolved
            c[0] += row.get("status") == "ok" and row.get("resolved") is True
            c[1] += 1
    first = ("current", "policy", "candidates", "ablations")
    order = [g for g in first if g in counts] + sorted(g for g in counts if g not in first)
    return [(g, counts[g][0], counts[g][1]) for g in order]


def spend(rows: Iterable[Mapping[str, Any]]) -> str:
    """This session's model spend, the counterfactual reruns' included (money spent all the
    same); a resumed item's was spent by an earlier session."""
    priced, unpriced, total = 0, 0, 0.0
    for row in rows:
        if "cost_usd" not in row or row.get("resumed"):  # no cost known, or none spent now
            continue
        cost = _num(row, "cost_usd")
        if cost is None:
            unpriced += 1
            continue
        priced += 1
        total += cost + (_num(row, "cf_cost_usd") or 0.0)
    if unpriced and not priced:
        return "unpriced"
    return f"{usd(total)} spent" + (f" (+{unpriced} unpriced)" if unpriced else "")


def summary_line(
    rows: Sequence[Mapping[str, Any]],
    total: int | None,
    elapsed: float,
    *,
    final: bool,
    running: int = 0,
    waiting: Sequence[str] = (),
) -> str:
    """``waiting``: the items waiting for another process's lock, each as its wait says."""
    done = len(rows)
    resumed = sum(bool(row.get("resumed")) for row in rows)
    parts = [f"{done}/{total} items" if total else f"{done} items"]
    if resumed:
        parts[0] += f" ({resumed} resumed)"
    if running and not final:
        parts[0] += f", {running} running"
    if waiting and not final:
        parts.append("; ".join(waiting))
    groups = resolved_by_group(rows)
    parts.append("resolved " + (", ".join(f"{g} {r}/{n}" for g, r, n in groups) or "none yet"))
    # An endpoint's model error is measured (not resolved): only the rest is not.
    unmeasured = sum(row.get("status") not in ("ok", "model_error") for row in rows)
    if unmeasured:
        parts.append(f"{unmeasured} not measured")
    parts.append(spend(rows))
    if final and total and done >= total:
        parts.append(f"done in {clock(elapsed)}")
    else:
        left = None if final or not total else eta(elapsed, done - resumed, total - done)
        parts.append(clock(elapsed) + (f", ~{clock(left)} left" if left is not None else ""))
    return "toolpolicy progress: " + " | ".join(parts)
