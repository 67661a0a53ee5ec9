"""Tool-selection accuracy (spec §9 measure 5) and abstention, read off a saved trajectory.

A decision point is one model selection: each turn's completion, then its re-selection after a
rejection, in order. The move of a policy reply is the tool it names (or ``ask_user``/``stop``);
a baseline reply's move is its first call mapped by ``gold_labels/FORMAT.md``. A reply that
names no move (malformed, prose) is an attempted selection that is not correct.
"""

from __future__ import annotations

from ..bench.gold import GoldLabel, baseline_moves, selection_correct
from ..current.prompt import parse_reply as parse_current
from ..policy.parse import parse_reply as parse_policy
from ..types import Observation, Trajectory

DECISION_POINTS = 3


def moves(trajectory: Trajectory) -> list[frozenset[str]]:
    """The move set of each decision point (empty: the reply named no move)."""
    if _external(trajectory):
        return _external_moves(trajectory)
    out: list[frozenset[str]] = []
    changed = False  # whether the code had been changed before a baseline `submit`
    for turn in trajectory.turns:
        for record in (turn.completion, *turn.extra_selections):
            if not record or record.get("error"):  # a failed call: the model chose nothing
                continue
            text = str(record.get("text", ""))
            if trajectory.arm == "policy":
                parsed = parse_policy(text)
                if parsed.kind == "call":
                    out.append(frozenset({parsed.call.tool}))
                elif parsed.kind == "terminal":
                    out.append(frozenset({parsed.outcome.outcome}))
                else:
                    out.append(frozenset())
            else:
                calls, _ = parse_current(text)
                out.append(
                    baseline_moves(calls[0].tool, calls[0].args, changed=changed)
                    if calls
                    else frozenset()
                )
        changed = changed or any(_is_edit(o) for o in turn.observations)
    return out


def replies_parsed(trajectory: Trajectory) -> tuple[int, int]:
    """(replies that parsed as the arm's call format, replies): each arm by its own parser, a
    failed call not counted as a reply. A parsed reply may still name a tool that is not there."""
    parsed = replies = 0
    if _external(trajectory):
        # An external agent's replies are in its own format: parsed where it acted on them (a
        # reported step), not by the built-in loop's parser; unknown where its steps are hidden.
        if not trajectory.meta.get("calls_observable"):
            return 0, 0
        replied = [t for t in trajectory.turns if t.completion and not t.completion.get("error")]
        return sum(1 for t in replied if t.executed), len(replied)
    for turn in trajectory.turns:
        for record in (turn.completion, *turn.extra_selections):
            if not record or record.get("error"):
                continue
            text = str(record.get("text", ""))
            replies += 1
            if trajectory.arm == "policy":
                parsed += parse_policy(text).kind != "noop"
            else:
                parsed += parse_current(text)[1] is None
    return parsed, replies


def _external(trajectory: Trajectory) -> bool:
    return trajectory.meta.get("agent") not in (None, "builtin")


def _external_moves(trajectory: Trajectory) -> list[frozenset[str]]:
    """An external agent's reply in its own format: its move is the first tool call it reported
    of it, mapped as the stock loop's are; a reply it acted on with none named no move. Its
    steps hidden (a command agent): no decision point is known, so none is scored."""
    if not trajectory.meta.get("calls_observable"):
        return []
    # Its edits are not seen one by one: the run's patch says whether a `submit` came after a
    # change (it ends the run, so the final patch is what it submitted).
    changed = bool(trajectory.patch)
    return [
        baseline_moves(t.executed[0].tool, t.executed[0].args, changed=changed)
        if t.executed
        else frozenset()
        for t in trajectory.turns
        if t.completion and not t.completion.get("error")
    ]


def _is_edit(observation: Observation) -> bool:
    # A baseline `bash` that rewrites files is not seen here: a shell command's effect on the
    # code is not knowable from its capture.
    return (
        observation.kind in ("edit_file", "write_file", "edit_entity")
        and isinstance(observation.data, dict)
        and bool(observation.data.get("ok"))
    )


def score(trajectory: Trajectory, gold: GoldLabel) -> tuple[int, int]:
    """(correct, attempted) over the first three decision points the run reached."""
    seen = moves(trajectory)[: min(DECISION_POINTS, len(gold.decisions))]
    correct = sum(selection_correct(m, ok) for m, ok in zip(seen, gold.decisions, strict=False))
    return correct, len(seen)


def abstained(trajectory: Trajectory) -> bool:
    """Ended by its own decision without changing the code: ``ask_user`` (policy), or
    ``stop``/``submit`` with an empty patch (both arms; the baseline has no question tool)."""
    outcome = trajectory.outcome.outcome
    return outcome == "ask_user" or (outcome == "stop" and not trajectory.patch.strip())
