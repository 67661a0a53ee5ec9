"""The lines under the compact table: the verdict, one line per candidate and per ablated gate,
the gold labels, the trials' spread, the prefix cache, the replies' format, the counterfactual
spend, the endpoint's errors and the harness faults."""

from __future__ import annotations

import math

import pandas as pd

from .cells import count, model_errors, num
from .decision import no_decision_reason
from .fmt import plural
from .measures import row_of
from .notes import label_lines, trial_lines
from .rejections import shown as rejection_rules
from .sample import OWN
from .variants import candidate_of, gate_of

UNDECIDED = ("no decision", "no paired verdict", "no verdict")


def _stats(r: pd.Series) -> str:
    return f"McNemar p = {num(r['mcnemar_p'], '.4g')} (b={r['mcnemar_b']}, c={r['mcnemar_c']})"


def _ratios(r: pd.Series) -> str:
    return f"cost {num(r['cost_ratio'], '.2f')}\u00d7, tokens {num(r['tokens_ratio'], '.2f')}\u00d7"


def _power(r: pd.Series) -> list[str]:
    """The power of the verdict's resolve comparison, and its interval, under it."""
    note = r.get("power_note")
    if not isinstance(note, str):
        return []
    low, high = r.get("resolve_ci_low"), r.get("resolve_ci_high")
    interval = ""
    if isinstance(low, float) and not math.isnan(low):
        by = r.get("ci_clustered_by")
        how = f", clustered by {by}" if isinstance(by, str) else ""
        interval = f"; resolve difference 95% CI [{low:+.3f}, {high:+.3f}]{how}"
    return [f"  {note}{interval}"]


def _acted(r: pd.Series) -> str:
    """How often the gate acted in the full policy's runs: never is no evidence."""
    acts, blocked = r.get("gate_acts"), r.get("gate_blocked")
    if not isinstance(acts, (int, float)) or math.isnan(acts):
        return ""
    if acts:
        return f" (acted {int(acts)}\u00d7)"
    why = (
        f": its model could not be loaded ({int(blocked)}\u00d7)"
        if isinstance(blocked, (int, float)) and blocked
        else ""
    )
    return f" (never acted here{why}: no change is no evidence either way)"


def undecided(verdict: object) -> bool:
    return str(verdict).startswith(UNDECIDED)


def _no_verdict(r: pd.Series, shown: str | None) -> str:
    """A variant's missing verdict, not repeated when the policy's line already gave it."""
    return "no verdict (as above)" if r["verdict"] == shown else str(r["verdict"])


def summary_lines(table: pd.DataFrame) -> list[str]:
    """The verdict, one line per ablated gate, the counterfactual spend and the harness faults."""
    lines = []
    reason = no_decision_reason(list(table.index))
    shown = None
    if reason:
        lines.append(reason)
    elif undecided(table.loc["policy", "verdict"]):
        shown = str(table.loc["policy", "verdict"])
        details = table.loc["policy", "details"]
        lines += [shown, *([details] if isinstance(details, str) else [])]
    else:
        p = row_of(table, "policy")
        lines.append(f"verdict: {p['verdict']} | {_stats(p)}; {_ratios(p)}")
        lines += _power(p)
    for variant, r in table.iterrows():
        name = candidate_of(str(variant))
        if name is None:
            continue
        if undecided(r["verdict"]):
            lines.append(f"candidate {name}: {_no_verdict(r, shown)}")
        else:
            beyond = r.get("acted_beyond")
            acted = (
                f" (acting beyond the policy: {beyond})"
                if isinstance(beyond, str) and beyond
                else ""
            )
            lines.append(f"candidate {name}: {r['verdict']}{acted} | {_stats(r)}; {_ratios(r)}")
            lines += _power(r)
            against = r.get("verdict_vs_policy")
            if isinstance(against, str) and against:
                lines.append(f"  against the policy (the same rule): {against}")
        bandit = r.get("bandit")
        if isinstance(bandit, str) and bandit:
            lines.append(f"  {bandit}")
    for variant, r in table.iterrows():
        gate = gate_of(str(variant))
        if gate is None:
            continue
        if not undecided(r["verdict"]):
            lines.append(f"gate {gate}: {r['verdict']}{_acted(r)} | {_stats(r)}")
        else:  # no statistics exist without pairs; a reason already printed is not repeated
            lines.append(f"gate {gate}: {_no_verdict(r, shown)}")
    lines += label_lines(table)
    lines += trial_lines(table)
    if (
        "cached_share" in table
        and pd.to_numeric(table["cached_share"], errors="coerce").gt(0).any()
    ):
        shown = ", ".join(
            f"{variant} {num(r['cached_share'] * 100, '.0f')}%" for variant, r in table.iterrows()
        )
        lines.append(f"prompt tokens served from the prefix cache: {shown}")
    lines += rejection_lines(table)
    if "replies" in table and table["replies"].sum():
        shown = ", ".join(
            f"{variant} {int(r['replies_parsed'])}/{int(r['replies'])}"
            for variant, r in table.iterrows()
        )
        lines.append(f"replies that parsed as the arm's call format: {shown}")
    cf = table[["cf_cost_usd", "cf_model_calls", "cf_tool_executions"]].sum()
    if cf["cf_model_calls"] or cf["cf_tool_executions"]:
        lines.append(
            f"counterfactual reruns (not in the measures): ${cf['cf_cost_usd']:.4f}, "
            f"{int(cf['cf_model_calls'])} model calls, {int(cf['cf_tool_executions'])} tool executions"
        )
    if model_errors(table):
        shown = ", ".join(f"{v} {count(r['model_errors'])}" for v, r in table.iterrows())
        lines.append(
            f"endpoint errors (the endpoint, not the arm, ended the run): {shown}; each measured"
            " as not resolved, its instance kept in every variant, and no verdict where counting"
            " them resolved could change it"
        )
    errors = int(table["n_errors"].sum())
    if errors and (table["sample"] == OWN).any():
        lines.append(
            f"unmeasured items (harness fault or infra error): {errors}; no instance"
            " was measured in every variant, so a row marked unpaired shows its own measured items"
            " and no verdict compares them"
        )
    elif errors:
        lines.append(
            f"unmeasured items (harness fault or infra error): {errors}; their instances are"
            " left out of every variant's measures, so all variants share one sample"
        )
    return lines


def rejection_lines(table: pd.DataFrame) -> list[str]:
    """What validation refused, per variant that refused anything: by rule, then how often
    the model chose again."""
    if "rejections" not in table:  # a table written before the column existed
        return []
    parts = [
        f"{variant} {by_rule} ({plural(count(r.get('reselections')), 're-selection')})"
        for variant, r in table.iterrows()
        if (by_rule := rejection_rules(r.get("rejections")))
    ]
    return [f"calls rejected by validation, by rule: {'; '.join(parts)}"] if parts else []
