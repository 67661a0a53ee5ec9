"""Live progress of an A/B session, off the rows as they reach the controller and the items
that start and end there.

Pure: the hooks feed in rows, items and the clock, and write out the lines; ``ticker.py`` asks
on a clock whether a summary is due while items run. A row is read defensively
(a harness fault's row carries only its identity, status and error; an older session's may lack
a column), because a progress line must never be why a session fails.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .schema import ABLATION_PREFIX, CANDIDATE_PREFIX, item_of

Level = Literal["items", "summary", "off"]
# A summary at least this often while items run (on a clock: ticker.py), and at every tenth of
# the items: a long real-model run still says it is alive, a short one says so at every tenth
# without flooding.
INTERVAL_S = 30.0
STEPS = 10
# How often the clock looks, while items run, for one waiting on another process's lock: a
# wait is said at once, not at the next summary.
WAIT_POLL_S = 1.0
ERROR_WIDTH = 70


def level_for(verbosity: int) -> Level:
    """``-v``: a line per item; default and ``-q``: the running summary; ``-qq``: nothing."""
    if verbosity >= 1:
        return "items"
    return "summary" if verbosity >= -1 else "off"


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


@dataclass
class Progress:
    """The rows so far (by item: a rerun item replaces its row), the items running (by node
    id, from their start until their row or their end), those of them waiting for another
    process's lock (by item id: what the wait says) and when the summary showed."""

    total: int | None = None  # the A/B items to run; None until collection says
    started: float = 0.0
    trial: bool = False  # name the trial in item lines (several trials ran)
    interval: float = INTERVAL_S
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)
    running: set[str] = field(default_factory=set)
    waiting: dict[str, str] = field(default_factory=dict)
    shown_at: float = 0.0
    shown_done: int = 0

    def start(self, total: int, now: float) -> None:
        self.total, self.started, self.shown_at = total, now, now

    def begin(self, node: str) -> None:
        self.running.add(node)

    def end(self, node: str) -> None:
        self.running.discard(node)

    def tick_due(self, now: float) -> bool:
        """A summary on the clock: an interval since the last one while items run, whether
        or not one finished since."""
        return bool(self.running) and now - self.shown_at >= self.interval

    def next_tick(self, now: float) -> float:
        """Seconds until a summary on the clock can next be due."""
        return max(0.0, self.shown_at + self.interval - now)

    def wait(self, waits: Mapping[str, str]) -> list[str]:
        """Take the items waiting now (item id -> "waiting for ... held by pid N since T"):
        a line for each wait not said before."""
        new = [text for item, text in waits.items() if self.waiting.get(item) != text]
        self.waiting = dict(waits)
        return [f"toolpolicy: {text}" for text in new]

    def add(self, row: dict[str, Any]) -> str:
        """Take a row; its item line."""
        self.rows[item_of(row)] = row
        self.waiting.pop(item_of(row), None)
        return item_line(row, len(self.rows), self.total, trial=self.trial)

    def due(self, now: float, *, steps: bool) -> bool:
        """A summary mid-run: after ``INTERVAL_S``, or (``steps``) at another tenth of the
        items. The last item's waits for ``summary(final=True)`` at the loop's end."""
        done = len(self.rows)
        if done == self.shown_done or (self.total and done >= self.total):
            return False
        if now - self.shown_at >= self.interval:
            return True
        if not steps or not self.total:
            return False
        step = max(1, math.ceil(self.total / STEPS))
        return done // step > self.shown_done // step

    def summary(self, now: float, *, final: bool = False) -> str:
        self.shown_at, self.shown_done = now, len(self.rows)
        rows, running = list(self.rows.values()), len(self.running)
        return summary_line(
            rows, self.total, now - self.started, final=final, running=running,
            waiting=list(self.waiting.values()),
        )  # fmt: skip
