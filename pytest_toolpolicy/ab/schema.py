"""The schema of ``results.parquet``: one row per item (instance × arm × variant).

Everything downstream of the runs (measures, statistics, the §9 decision and ablation rules, the
decision table, the notebook) reads only these columns, so this file is the contract between the
runner that produces rows and the pure functions that judge them.

Harness faults (``status == "error"``) and items whose grading could not run here
(``"infra_error"``: an environment that does not install, tests that need the network) are kept
as rows so they are counted and reported, but they are excluded from every measure: a crashed
harness or an ungradable instance says nothing about the arm. Such a row may carry only its
identity, ``status`` and ``error`` (``results.conform`` gives a frame every column), and every
text cell is valid UTF-8 (a lone surrogate is stored as its escape).

An item the endpoint ended (``"model_error"``: a 5xx, a timeout, no connection, a replay miss) is
measured, as not resolved, at what it spent, and its instance stays in every variant; the
decision table counts such items per variant, and gives no verdict where counting them resolved
instead could change it (``decision.endpoint_doubt``). A request the endpoint refused as bad is
the arm's own failure: its item is ``"ok"``, ended ``budget_exhausted``. (Results saved before
this kept endpoint errors as ``"error"`` with a ``"model error: ..."`` reason, left out.)

The counterfactual reruns (``cf_*``) that decide which calls were necessary spend money and
tokens of their own; that spend is reported apart and never enters the five measures.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .row import Source


@dataclass(frozen=True)
class Column:
    name: str
    doc: str  # its type and meaning, as the notebook's reader needs them
    read: Callable[[Source], Any]


def item_of(row: Any) -> str:
    """A row's item id (rows saved before the ``item`` column: instance and variant)."""
    item = row.get("item") if hasattr(row, "get") else None
    if isinstance(item, str) and item:
        return item
    return f"{row['instance_id']}-{row['variant']}"


def repo_of(instance_id: str) -> str:
    """An instance's repository by SWE-bench's id convention (``owner__name-number``; the
    bundled ones are ``bundled__project-N``), for rows whose trajectory does not name it."""
    owner, sep, rest = instance_id.partition("__")
    name = rest.rsplit("-", 1)[0] if "-" in rest else rest
    return f"{owner}/{name}" if sep else instance_id.rsplit("-", 1)[0]


def _nan_if_none(value: float | None) -> float:
    return math.nan if value is None else float(value)


# The row's columns, in order: what each holds and how it is read off its run's trajectory
# (``row.Source``: the trajectory and what is derived from it once). ``row_of`` applies them.
SPECS: tuple[Column, ...] = (
    Column(
        "instance_id",
        "str — the benchmark instance",
        lambda s: s.trajectory.instance_id,
    ),
    Column(
        "item",
        "str — the item's id: <instance>-<variant>, and -t<trial> when items ran several trials",
        lambda s: s.spec.id,
    ),
    Column(
        "arm",
        'str — "policy" or "current"',
        lambda s: s.spec.arm,
    ),
    Column(
        "variant",
        'str — "current", "policy", "cand:<name>" (a candidate policy of'
        ' --toolpolicy-candidates), or "policy-no:<gate>" (the policy with one gate removed)',
        lambda s: s.spec.variant,
    ),
    Column(
        "gate",
        "str or None — the ablated gate of a policy-no:<gate> variant, else None",
        lambda s: s.spec.gate,
    ),
    Column(
        "model",
        "str — the model spec both arms ran with",
        lambda s: s.trajectory.model,
    ),
    Column(
        "seed",
        "int — the run's RNG seed",
        lambda s: s.meta.get("seed"),
    ),
    Column(
        "trial",
        "int — which of the --toolpolicy-trials runs of this instance and variant (1..K)",
        lambda s: int(s.meta.get("trial") or 1),
    ),
    Column(
        "repo",
        "str — the instance's repository (owner/name); intervals are clustered by it",
        lambda s: s.meta.get("repo") or repo_of(s.trajectory.instance_id),
    ),
    Column(
        "dataset",
        "str — where the instances came from",
        lambda s: s.meta.get("dataset"),
    ),
    Column(
        "tests_visible",
        "bool — the FAIL_TO_PASS tests were visible to the agent",
        lambda s: bool(s.meta.get("tests_visible")),
    ),
    Column(
        "sandbox",
        "str — the sandbox mode the tools ran under",
        lambda s: s.meta.get("sandbox"),
    ),
    Column(
        "status",
        'str — "ok"; "model_error": the endpoint ended the run (a 5xx, a timeout, no'
        " connection, an auth failure, a malformed reply, a replay miss): measured as not"
        ' resolved, its instance kept in every arm; "error": a harness fault; "infra_error":'
        " grading could not run here (neither of these two measured, and the instance is left"
        " out of every arm)",
        lambda s: s.status,
    ),
    Column(
        "error",
        "str or None — why the item was not measured, or (model_error) why it was measured"
        ' as not resolved ("harness fault: ...", "infra error: ...", "model error: ...")',
        lambda s: s.error,
    ),
    Column(
        "resolved",
        "bool — the graded FAIL_TO_PASS and PASS_TO_PASS tests pass (a model_error item is"
        " measured as not resolved whatever its workspace graded)",
        lambda s: bool(s.grade.get("resolved")),
    ),
    Column(
        "grade_reverted",
        "str — JSON list: what of the model's changes took no part in grading, each"
        ' "<path>: <why>" (conftest files, test configuration, test files, shadowing modules)',
        lambda s: json.dumps(list(s.grade.get("reverted") or [])),
    ),
    Column(
        "grade_flagged",
        "str — JSON list: product code the model changed that the test run executes and"
        ' grading cannot vouch for (a plugin module, pytest hooks), each "<path>: <why>"',
        lambda s: json.dumps(list(s.grade.get("flagged") or [])),
    ),
    Column(
        "grade_tampering",
        "str — JSON list: why the run's word could not be trusted, each a reason; any entry"
        " leaves the instance unresolved: product code the model changed that reaches into the"
        ' harness ("<path>: reaches into the harness (...)"), or the run\'s own signals'
        " disagreeing (exit status, pytest's summary, the runner's log against its reporter)",
        lambda s: json.dumps(list(s.grade.get("tampering") or [])),
    ),
    Column(
        "outcome",
        "str — how the loop ended: stop, ask_user, budget_exhausted (a cap, or the arm's own"
        " failure: a crash, a request the endpoint or the bridge refused), model_error (the"
        " endpoint's failure)",
        lambda s: s.trajectory.outcome.outcome,
    ),
    Column(
        "underspecified",
        "bool — the instance is genuinely under-specified (gold label)",
        lambda s: bool(s.meta.get("underspecified")),
    ),
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
COLUMNS: dict[str, str] = {c.name: c.doc for c in SPECS}
# Present only when they apply (a resumed session; a harness fault).
OPTIONAL_COLUMNS: dict[str, str] = {
    "resumed": "bool — the row was kept from an earlier session by --toolpolicy-resume",
    "traceback": "str — where a harness fault was raised",
}

ARMS = ("current", "policy")
ABLATION_PREFIX = "policy-no:"
CANDIDATE_PREFIX = "cand:"
# Spec §9: the ablation rule is applied first to the two weakest a-priori cases.
FIRST_ABLATIONS = ("retrieve.embed", "trust.round_trip")


def ablation_variant(gate: str) -> str:
    return f"{ABLATION_PREFIX}{gate}"


def gate_of(variant: str) -> str | None:
    return variant[len(ABLATION_PREFIX) :] if variant.startswith(ABLATION_PREFIX) else None


def variant_order(variants: list[str] | set[str]) -> list[str]:
    """current, policy, the candidates by name, then the ablations: the spec's first two, then
    the rest by name."""
    present = set(variants)
    head = [v for v in ARMS if v in present]
    candidates = sorted(v for v in present if v.startswith(CANDIDATE_PREFIX))
    gates = sorted(g for v in present if (g := gate_of(v)) is not None)
    gates.sort(
        key=lambda g: FIRST_ABLATIONS.index(g) if g in FIRST_ABLATIONS else len(FIRST_ABLATIONS)
    )
    others = sorted(
        v
        for v in present
        if v not in ARMS and gate_of(v) is None and not v.startswith(CANDIDATE_PREFIX)
    )
    return head + candidates + [ablation_variant(g) for g in gates] + others


def reference_of(variant: str) -> str | None:
    """What a variant is judged against: the policy and each candidate against current (the
    decision rule), an ablation against the policy (the ablation rule)."""
    if variant == "policy" or variant.startswith(CANDIDATE_PREFIX):
        return "current"
    return "policy" if gate_of(variant) is not None else None
