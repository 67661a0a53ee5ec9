"""The columns of ``results.parquet`` that say what a run spent, how it called tools and chose
them, and what its counterfactual reruns cost (``schema.py`` assembles them with the rest)."""

from __future__ import annotations

import json
import math

from .rejections import rejections_by_rule, reselections
from .results_column import Column


def _nan_if_none(value: float | None) -> float:
    return math.nan if value is None else float(value)


SPEND_COLUMNS: tuple[Column, ...] = (
    Column(
        "cost_usd",
        "float — model spend in $; NaN when unknown (an unpriced model, a failed call); a"
        " model_error item's is what its answered calls cost (the failed call's own spend is"
        " unknown and not in it, as tokens_unknown says); a refused request costs $0",
        lambda s: _nan_if_none(s.cost_usd),
    ),
    Column(
        "tokens",
        "int — prompt + completion tokens (a lower bound when tokens_unknown)",
        lambda s: s.trajectory.tokens,
    ),
    Column(
        "prompt_tokens",
        "int — prompt tokens",
        lambda s: sum(u["prompt_tokens"] for u in s.usage),
    ),
    Column(
        "completion_tokens",
        "int — completion tokens",
        lambda s: sum(u["completion_tokens"] for u in s.usage),
    ),
    Column(
        "cached_tokens",
        "int — prompt tokens served from the provider's prefix cache",
        lambda s: sum(u.get("cached_prompt_tokens", 0) for u in s.usage),
    ),
    Column(
        "tokens_estimated",
        "bool — token counts were estimated, not reported by the endpoint",
        lambda s: any(u.get("estimated") for u in s.usage),
    ),
    Column(
        "tokens_unknown",
        "bool — some call's tokens are uncounted: the endpoint reported none, or"
        " the call failed (a timed-out generation spent tokens nobody reported)",
        lambda s: any(u.get("missing") for u in s.usage),
    ),
    Column(
        "turns",
        "int — model turns",
        lambda s: len(s.trajectory.turns),
    ),
    Column(
        "replies",
        "int — model replies (re-selections included; failed calls not)",
        lambda s: s.replies,
    ),
    Column(
        "replies_parsed",
        "int — replies that parsed as the arm's own call format",
        lambda s: s.replies_parsed,
    ),
    Column(
        "calls",
        "int — executed model-requested tool calls",
        lambda s: s.calls,
    ),
    Column(
        "agent",
        'str — who played the arm: "builtin" (the stock loop, the policy) or the external'
        ' agent of --toolpolicy-current ("cmd:...")',
        lambda s: str(s.meta.get("agent") or "builtin"),
    ),
    Column(
        "calls_observable",
        "bool — the arm's tool calls were visible to the harness (an external agent that does"
        " not report its steps: false, and its call precision and selection accuracy are not"
        " observable)",
        lambda s: bool(s.meta.get("calls_observable", True)),
    ),
    Column(
        "call_precision_observable",
        "bool — which of the arm's calls were necessary can be measured (counterfactual"
        " reruns: never for an external agent, whose calls cannot be removed one at a time)",
        lambda s: bool(s.meta.get("call_precision_observable", True)),
    ),
    Column(
        "necessary_calls",
        "int — calls whose suppression flips resolved → unresolved (0 if unresolved)",
        lambda s: int(s.cf.get("necessary", 0)),
    ),
    Column(
        "selection_correct",
        "int — decision points whose chosen tool matches the gold label",
        lambda s: s.selection_correct,
    ),
    Column(
        "selection_attempted",
        "int — decision points scored against the gold label (first 3; 0 without a label)",
        lambda s: s.selection_attempted,
    ),
    Column(
        "gold_source",
        'str — where the gold label selection was scored on came from: "hand" (written for'
        ' the instance), "derived" (from its gold patch, gold_labels/FORMAT.md), "none" (no'
        " label: the item is left out of selection accuracy)",
        lambda s: s.gold.source,
    ),
    Column(
        "gold_detail",
        "str or None — derived: the rules that gave the label; none: why there is no label",
        lambda s: s.gold.detail,
    ),
    Column(
        "abstained",
        "bool — ended by its own decision without changing the code (ask_user, or stop/submit with an empty patch)",
        lambda s: s.abstained,
    ),
    Column(
        "gate_acts",
        "str — JSON {gate: times it acted in this run} (policy arms; gate_acts.py says what an"
        ' act is); "{}" for the baseline',
        lambda s: json.dumps(s.acts, sort_keys=True),
    ),
    Column(
        "gate_blocked",
        "str — JSON {gate: times it had its chance and could not act} (the embedding fallback"
        " without its model)",
        lambda s: json.dumps(s.blocked, sort_keys=True),
    ),
    Column(
        "rejections",
        "str — JSON {rule: times} of the calls validation rejected (spec §3.2), by the rule"
        ' each broke (its reason without the offending value, decide/rejections.py); "{}" when'
        " none (always for an arm without the policy's validation)",
        lambda s: json.dumps(rejections_by_rule(s.trajectory), sort_keys=True),
    ),
    Column(
        "reselections",
        "int — selections made again after a rejection (at most one a turn)",
        lambda s: reselections(s.trajectory),
    ),
    Column(
        "cf_reruns",
        "int — counterfactual reruns made to score necessary_calls",
        lambda s: int(s.cf.get("reruns", 0)),
    ),
    Column(
        "cf_model_calls",
        "int — requests those reruns sent to the model",
        lambda s: int(s.cf.get("model_calls", 0)),
    ),
    Column(
        "cf_model_calls_cached",
        "int — requests answered from the original run's record instead",
        lambda s: int(s.cf.get("model_served", 0)),
    ),
    Column(
        "cf_tool_executions",
        "int — tool calls those reruns made that the item had not made before (what they"
        " would run with only the item's own results to reuse: independent of scheduling)",
        lambda s: int(s.cf.get("tool_executions", 0)),
    ),
    Column(
        "cf_tool_memo_hits",
        "int — tool calls the item had made before, which the execution memo serves",
        lambda s: int(s.cf.get("tool_calls", 0)) - int(s.cf.get("tool_executions", 0)),
    ),
    Column(
        "cf_cost_usd",
        "float — the reruns' model spend in $ (reported apart, never in the measures)",
        lambda s: float(s.cf.get("cost_usd", 0.0)),
    ),
    Column(
        "cf_tokens",
        "int — the reruns' tokens (reported apart, never in the measures)",
        lambda s: int(s.cf.get("tokens", 0)),
    ),
    Column(
        "bandit_arm",
        'str — the tau a bandit candidate\'s run was given ("none": withhold nothing); "" if none',
        lambda s: str((s.meta.get("bandit") or {}).get("arm", "")),
    ),
    Column(
        "bandit_seq",
        "int — that run's place in the order the bandit's runs began (0: no bandit)",
        lambda s: int((s.meta.get("bandit") or {}).get("seq", 0)),
    ),
    Column(
        "duration_s",
        "float — wall-clock seconds for the item",
        lambda s: s.duration_s,
    ),
)
