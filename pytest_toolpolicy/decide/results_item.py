"""The columns of ``results.parquet`` that say which item ran and how it ended (``schema.py``
assembles them with the rest, in order)."""

from __future__ import annotations

import json

from .results_column import Column
from .variants import repo_of

ITEM_COLUMNS: tuple[Column, ...] = (
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
)
