"""Candidate policies beyond single-gate ablations, named in a TOML file (``--toolpolicy-candidates``).

Each candidate is the session's policy (the spec's, with ``RETRIEVE``/``SYMBOL_CAMEL`` as set)
with a few things changed, run as its own variant ``cand:<name>`` on the same items, and judged
against ``current`` by the spec's decision rule, exactly as ``policy`` is::

    [candidate.issue-first]
    description = "the issue before the state: a prompt prefix that stays the same"
    prompt_order = ["issue", "tools", "state"]

    [candidate.embed]
    retrieve = "embed"              # the embedding fallback on ("map": off)

    [candidate.hybrid]
    retrieve = "hybrid"             # row 13: keyword hits first, ties and the rest by cosine

    [candidate.logprob-trigger]     # row 9: a call runs only where the model was unsure
    trigger = {feature = "lp_mean", tau = -1.5, necessary_when = "below"}

    [candidate.bandit]              # row 12: UCB1 picks tau run by run, paid by resolved
    bandit = {feature = "lp_mean", taus = [-2.0, -1.0, -0.5], necessary_when = "below"}

    [candidate.probe]               # row 10: `toolpolicy probe` writes it (local: models)
    probe = "probe.json"            # beside this file

    [candidate.lean]
    gates_off = ["trust.round_trip", "trigger.symbol"]
    gates_on = []

    [candidate.structured]
    structured = "json"             # this variant's replies kept to its call format's schema

The spec's own order and gates stay the ``policy`` variant; ``--toolpolicy-gate`` judges that
one. A file that cannot be read, an unknown key, gate or section name is a usage error naming it.

The file may also name the competitor every candidate must beat, in ``--toolpolicy-current``'s
words (``builtin``, ``python:MODULE:FACTORY``, ``cmd:COMMAND``, ``mini-swe-agent``,
``smolagents``), so a team's file holds its whole question::

    current = "python:our_agent:make_agent"
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

from ..policy.confidence import ConfidenceTrigger
from ..policy.config import GATES
from ..policy.probe import LinearProbe
from ..shown import SECTIONS, check_order
from .bandit import BanditSpec
from .candidates import Candidate, CandidateError

_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,39}$")
_KEYS = {"description", "gates_off", "gates_on", "retrieve", "prompt_order", "structured",
         "trigger", "probe", "bandit"}  # fmt: skip


def load_candidates(path: str | Path) -> tuple[Candidate, ...]:
    return read_candidates(path)[0]


def read_candidates(path: str | Path) -> tuple[tuple[Candidate, ...], str | None]:
    """The file's candidates, and the competitor it names (``current = ...``; None: unnamed)."""
    where = Path(path)
    try:
        data = tomllib.loads(where.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise CandidateError(f"{where}: {exc}") from None
    table = data.get("candidate")
    if set(data) - {"candidate", "current"}:
        extra = ", ".join(sorted(set(data) - {"candidate", "current"}))
        raise CandidateError(
            f"{where}: unknown key(s) or table(s) {extra}; expected [candidate.<name>] and,"
            ' at most, current = "AGENT"'
        )
    current = data.get("current")
    if current is not None and (not isinstance(current, str) or not current.strip()):
        raise CandidateError(f"{where}: current is an agent, as --toolpolicy-current names one")
    if not isinstance(table, dict) or not table:
        raise CandidateError(f"{where}: no [candidate.<name>] table")
    return tuple(_candidate(name, body, where) for name, body in table.items()), current


def _candidate(name: str, body: Any, where: Path) -> Candidate:
    at = f"{where}: candidate {name!r}"
    if not _NAME.match(name):
        raise CandidateError(f"{at}: a name is 1-40 of a-z, 0-9, '_', '.', '-'")
    if not isinstance(body, dict):
        raise CandidateError(f"{at}: expected a table")
    unknown = set(body) - _KEYS
    if unknown:
        raise CandidateError(
            f"{at}: unknown key(s) {', '.join(sorted(unknown))}; keys: {', '.join(sorted(_KEYS))}"
        )
    off = _gates(body.get("gates_off", []), f"{at}: gates_off")
    on = _gates(body.get("gates_on", []), f"{at}: gates_on")
    retrieve = body.get("retrieve")
    if retrieve not in (None, "map", "embed", "hybrid"):
        raise CandidateError(f"{at}: retrieve must be 'map', 'embed' or 'hybrid', got {retrieve!r}")
    if retrieve == "embed":
        on += ("retrieve.embed",)
    elif retrieve == "map":
        off += ("retrieve.embed",)
    both = set(on) & set(off)
    if both:
        raise CandidateError(f"{at}: {', '.join(sorted(both))} both on and off")
    order = body.get("prompt_order")
    if order is not None:
        if not isinstance(order, list) or not all(isinstance(s, str) for s in order):
            raise CandidateError(f"{at}: prompt_order is a list of {', '.join(SECTIONS)}")
        try:
            check_order(order)
        except ValueError as exc:
            raise CandidateError(f"{at}: {exc}") from None
    structured = body.get("structured")
    if structured not in (None, "off", "json"):
        raise CandidateError(f"{at}: structured must be 'off' or 'json', got {structured!r}")
    description = body.get("description", "")
    if not isinstance(description, str):
        raise CandidateError(f"{at}: description is a string")
    return Candidate(
        name=name,
        description=description,
        gates_off=tuple(dict.fromkeys(off)),
        gates_on=tuple(dict.fromkeys(on)),
        prompt_order=tuple(order) if order is not None else None,
        structured=structured,
        ranking="hybrid" if retrieve == "hybrid" else None,
        trigger=_trigger(body.get("trigger"), at),
        probe=_probe(body.get("probe"), at, where.parent),
        bandit=_bandit(body, at),
    )


def _bandit(body: dict[str, Any], at: str) -> BanditSpec | None:
    value = body.get("bandit")
    if value is None:
        return None
    if "trigger" in body:
        raise CandidateError(f"{at}: a bandit picks the trigger's tau itself; drop trigger")
    keys = {"feature", "taus", "necessary_when"}
    taus = value.get("taus") if isinstance(value, dict) else None
    if (
        not isinstance(value, dict)
        or not {"feature", "taus"} <= set(value) <= keys
        or not isinstance(taus, list)
        or not all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in taus)
    ):
        raise CandidateError(
            f"{at}: bandit is a table of feature, taus (a list of numbers) and (optional)"
            ' necessary_when, e.g. {feature = "lp_mean", taus = [-2.0, -1.0], necessary_when ='
            ' "below"}'
        )
    try:
        return BanditSpec(
            str(value["feature"]),
            tuple(float(t) for t in dict.fromkeys(taus)),
            str(value.get("necessary_when", "below")),
        )
    except ValueError as exc:
        raise CandidateError(f"{at}: bandit: {exc}") from None


def _probe(value: Any, at: str, base: Path) -> LinearProbe | None:
    """A probe file, named relative to the candidates file (or absolute)."""
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise CandidateError(f"{at}: probe is the path of a probe file (toolpolicy probe)")
    path = Path(value) if Path(value).is_absolute() else base / value
    try:
        return LinearProbe.load(path)
    except ValueError as exc:
        raise CandidateError(f"{at}: probe: {exc}") from None


def _trigger(value: Any, at: str) -> ConfidenceTrigger | None:
    if value is None:
        return None
    keys = {"feature", "tau", "necessary_when"}
    if not isinstance(value, dict) or not {"feature", "tau"} <= set(value) <= keys:
        raise CandidateError(
            f"{at}: trigger is a table of feature, tau and (optional) necessary_when, e.g."
            ' {feature = "lp_mean", tau = -1.5, necessary_when = "below"}'
        )
    tau = value["tau"]
    if not isinstance(tau, (int, float)) or isinstance(tau, bool):
        raise CandidateError(f"{at}: trigger.tau is a number, got {tau!r}")
    try:
        return ConfidenceTrigger(
            str(value["feature"]), float(tau), str(value.get("necessary_when", "below"))
        )
    except ValueError as exc:
        raise CandidateError(f"{at}: trigger: {exc}") from None


def _gates(value: Any, at: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(g, str) for g in value):
        raise CandidateError(f"{at} is a list of gate names")
    unknown = [g for g in value if g not in GATES]
    if unknown:
        raise CandidateError(f"{at}: unknown gate {', '.join(unknown)}; gates: {', '.join(GATES)}")
    return tuple(value)
