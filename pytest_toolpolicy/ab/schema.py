"""The schema of ``results.parquet``: one row per item (instance × arm × variant).

Everything downstream of the runs (measures, statistics, the §9 decision and ablation rules, the
decision table, the notebook) reads only these columns, so this file is the contract between the
runner that produces rows and the pure functions that judge them.

Harness faults and model errors (``status == "error"``) and items whose grading could not run
here (``"infra_error"``: an environment that does not install, tests that need the network) are
kept as rows so they are counted and reported, but they are excluded from every measure: a
crashed harness or an ungradable instance says nothing about the arm. Such a row
may carry only its identity, ``status`` and ``error`` (``results.conform`` gives a frame every
column), and every text cell is valid UTF-8 (a lone surrogate is stored as its escape).

The counterfactual reruns (``cf_*``) that decide which calls were necessary spend money and
tokens of their own; that spend is reported apart and never enters the five measures.
"""

from __future__ import annotations

COLUMNS: dict[str, str] = {
    "instance_id": "str — the benchmark instance",
    "arm": 'str — "policy" or "current"',
    "variant": 'str — "current", "policy", or "policy-no:<gate>" (the policy with one gate removed)',
    "gate": "str or None — the ablated gate of a policy-no:<gate> variant, else None",
    "model": "str — the model spec both arms ran with",
    "seed": "int — the run's RNG seed",
    "dataset": "str — where the instances came from",
    "tests_visible": "bool — the FAIL_TO_PASS tests were visible to the agent",
    "sandbox": "str — the sandbox mode the tools ran under",
    "status": 'str — "ok"; "error": a harness fault or a model error; "infra_error": grading'
    " could not run here (not measured, and its instance is left out of every arm)",
    "error": "str or None — why the item was not measured"
    ' ("harness fault: ...", "model error: ...", "infra error: ...")',
    "resolved": "bool — the graded FAIL_TO_PASS and PASS_TO_PASS tests pass",
    "outcome": "str — how the loop ended: stop, ask_user, budget_exhausted, model_error",
    "underspecified": "bool — the instance is genuinely under-specified (gold label)",
    "cost_usd": "float — model spend in $; NaN when unknown (an unpriced model, a failed call)",
    "tokens": "int — prompt + completion tokens (a lower bound when tokens_unknown)",
    "prompt_tokens": "int — prompt tokens",
    "completion_tokens": "int — completion tokens",
    "cached_tokens": "int — prompt tokens served from the provider's prefix cache",
    "tokens_estimated": "bool — token counts were estimated, not reported by the endpoint",
    "tokens_unknown": "bool — some call's tokens are uncounted: the endpoint reported none, or"
    " the call failed (a timed-out generation spent tokens nobody reported)",
    "turns": "int — model turns",
    "replies": "int — model replies (re-selections included; failed calls not)",
    "replies_parsed": "int — replies that parsed as the arm's own call format",
    "calls": "int — executed model-requested tool calls",
    "necessary_calls": "int — calls whose suppression flips resolved → unresolved (0 if unresolved)",
    "selection_correct": "int — decision points whose chosen tool matches the gold label",
    "selection_attempted": "int — decision points scored against the gold labels (first 3)",
    "abstained": "bool — ended by its own decision without changing the code (ask_user, or stop/submit with an empty patch)",
    "cf_reruns": "int — counterfactual reruns made to score necessary_calls",
    "cf_model_calls": "int — requests those reruns sent to the model",
    "cf_model_calls_cached": "int — requests answered from the original run's record instead",
    "cf_tool_executions": "int — tool calls those reruns really executed",
    "cf_tool_memo_hits": "int — tool calls served by the execution memo instead",
    "cf_cost_usd": "float — the reruns' model spend in $ (reported apart, never in the measures)",
    "cf_tokens": "int — the reruns' tokens (reported apart, never in the measures)",
    "duration_s": "float — wall-clock seconds for the item",
}
# Present only when they apply (a resumed session; a harness fault).
OPTIONAL_COLUMNS: dict[str, str] = {
    "resumed": "bool — the row was kept from an earlier session by --toolpolicy-resume",
    "traceback": "str — where a harness fault was raised",
}

ARMS = ("current", "policy")
ABLATION_PREFIX = "policy-no:"
# Spec §9: the ablation rule is applied first to the two weakest a-priori cases.
FIRST_ABLATIONS = ("retrieve.embed", "trust.round_trip")


def ablation_variant(gate: str) -> str:
    return f"{ABLATION_PREFIX}{gate}"


def gate_of(variant: str) -> str | None:
    return variant[len(ABLATION_PREFIX) :] if variant.startswith(ABLATION_PREFIX) else None


def variant_order(variants: list[str] | set[str]) -> list[str]:
    """current, policy, then the ablations: the spec's first two, then the rest by name."""
    present = set(variants)
    head = [v for v in ARMS if v in present]
    gates = sorted(g for v in present if (g := gate_of(v)) is not None)
    gates.sort(
        key=lambda g: FIRST_ABLATIONS.index(g) if g in FIRST_ABLATIONS else len(FIRST_ABLATIONS)
    )
    others = sorted(v for v in present if v not in ARMS and gate_of(v) is None)
    return head + [ablation_variant(g) for g in gates] + others
