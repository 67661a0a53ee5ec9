"""The decision table as text: the terminal summary, Markdown and HTML.

Every rendering opens with the same header, because a resolve rate means nothing without the
model, the dataset, whether the agent could see the FAIL_TO_PASS tests, and whether the "model"
was the fault-injecting simulator.
"""

from __future__ import annotations

import html
import math
from typing import Any

import pandas as pd

from .decision import no_decision_reason
from .measures import NONE, OWN, row_of
from .schema import gate_of

SIM_DISCLAIMER = (
    "sim is a fault-injecting simulator, not a language model: these figures measure the harness "
    "and its gates under injected faults, not a model's skill"
)
LOCAL_DISCLAIMER = (
    "a local model served by llama.cpp on this machine: real tokens and latencies; temperature 0"
    " is not bit-reproducible across runs, a recording (--toolpolicy-cache) is"
)
LOCAL_DISCLAIMERS = {
    "local:gemma3-270m": "local:gemma3-270m is google/gemma-3-270m, a tiny 270M-parameter *base*"
    " model (no instruction tuning) on this machine's CPU: real tokens and latencies, not a"
    " strong model's skill; temperature 0 is not bit-reproducible across runs, a recording is"
}
COMPACT = ("arm/variant", "resolve", "$/inst", "tok/inst", "call-prec", "sel-acc", "abstain")
# A row not on the shared sample says so where it is read first: its name.
SAMPLE_LABELS = {OWN: " (own items, unpaired)", NONE: " (none measured)"}
UNDECIDED = ("no decision", "no paired verdict", "no verdict")


def header_lines(meta: dict[str, Any]) -> list[str]:
    visible = "visible" if meta.get("tests_visible") else "NOT visible"
    lines = [
        f"A/B decision (spec \u00a79) \u2014 model {meta.get('model')}, dataset {meta.get('dataset')}",
        f"{meta.get('n_instances')} instances ({meta.get('n_underspecified')} under-specified), "
        f"seed {meta.get('seed')}; FAIL_TO_PASS tests were {visible} to the agent",
    ]
    if meta.get("is_sim"):
        profile = meta.get("sim_profile")
        lines.append(SIM_DISCLAIMER + (f" (profile {profile})" if profile else ""))
    model = str(meta.get("model") or "")
    if model.startswith("local:"):
        lines.append(LOCAL_DISCLAIMERS.get(model, LOCAL_DISCLAIMER))
    if meta.get("structured") is not None:
        lines.append(_requests_line(meta))
    if meta.get("sandbox") == "degraded":
        lines.append("sandbox: DEGRADED (no bubblewrap): tests and commands ran unconfined")
    if meta.get("load_errors"):
        lines.append(f"instances that could not be loaded: {len(meta['load_errors'])} (not run)")
    if meta.get("excluded"):
        shown = "; ".join(meta["excluded"][:3]) + ("; ..." if len(meta["excluded"]) > 3 else "")
        lines.append(f"excluded (cannot run here): {len(meta['excluded'])}: {shown}")
    if meta.get("ablation_skipped"):
        skipped = ", ".join(meta["ablation_skipped"])
        lines.append(f"not ablated (off in the candidate policy): {skipped}")
    return lines


def _requests_line(meta: dict[str, Any]) -> str:
    """What every request carried, since it changes what a model can do."""
    structured = (
        "json (each arm's call format as a JSON schema)"
        if meta.get("structured") == "json"
        else "off"
    )
    limits = meta.get("max_output") or {}
    shown = ", ".join(f"{arm} {n}" for arm, n in sorted(limits.items()))
    seed = meta.get("model_seed")
    return (
        f"requests: structured output {structured}; output limit {shown or 'default'} tokens;"
        f" logprobs {'top ' + str(meta['logprobs']) if meta.get('logprobs') else 'off'};"
        f" model seed {'none' if seed is None else seed}"
    )


def _num(x: float, spec: str) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def _frac(x: float, num: int, den: int) -> str:
    return f"{_num(x, '.3f')} ({num}/{den})"


def compact_rows(table: pd.DataFrame) -> list[list[str]]:
    return [
        [
            str(variant) + SAMPLE_LABELS.get(str(r.get("sample")), ""),
            _frac(r["resolve"], r["resolved"], r["n"]),
            _num(r["cost"], ".4f"),
            _num(r["tokens"], ".0f"),
            _frac(r["call_precision"], r["necessary"], r["calls"]),
            _frac(r["selection_accuracy"], r["sel_correct"], r["sel_attempted"]),
            _frac(r["abstention"], r["abstained_correct"], r["underspecified"]),
        ]
        for variant, r in table.iterrows()
    ]


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _stats(r: pd.Series) -> str:
    return f"McNemar p = {_num(r['mcnemar_p'], '.4g')} (b={r['mcnemar_b']}, c={r['mcnemar_c']})"


def _undecided(verdict: object) -> bool:
    return str(verdict).startswith(UNDECIDED)


def summary_lines(table: pd.DataFrame) -> list[str]:
    """The verdict, one line per ablated gate, the counterfactual spend and the harness faults."""
    lines = []
    reason = no_decision_reason(list(table.index))
    shown = None
    if reason:
        lines.append(reason)
    elif _undecided(table.loc["policy", "verdict"]):
        shown = str(table.loc["policy", "verdict"])
        details = table.loc["policy", "details"]
        lines += [shown, *([details] if isinstance(details, str) else [])]
    else:
        p = row_of(table, "policy")
        ratios = f"cost {_num(p['cost_ratio'], '.2f')}\u00d7, tokens {_num(p['tokens_ratio'], '.2f')}\u00d7"
        lines.append(f"verdict: {p['verdict']} | {_stats(p)}; {ratios}")
    for variant, r in table.iterrows():
        gate = gate_of(str(variant))
        if gate is None:
            continue
        if not _undecided(r["verdict"]):
            lines.append(f"gate {gate}: {r['verdict']} | {_stats(r)}")
        else:  # no statistics exist without pairs; a reason already printed is not repeated
            lines.append(
                f"gate {gate}: {'no verdict (as above)' if r['verdict'] == shown else r['verdict']}"
            )
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
    errors = int(table["n_errors"].sum())
    if errors and (table["sample"] == OWN).any():
        lines.append(
            f"unmeasured items (harness fault, model error or infra error): {errors}; no instance"
            " was measured in every variant, so a row marked unpaired shows its own measured items"
            " and no verdict compares them"
        )
    elif errors:
        lines.append(
            f"unmeasured items (harness fault, model error or infra error): {errors}; their instances are"
            " left out of every variant's measures, so all variants share one sample"
        )
    return lines


def failure_lines(results: pd.DataFrame, limit: int = 20) -> list[str]:
    """What was not measured and why, one aligned line per item (the first ``limit``)."""
    if not len(results) or "status" not in results:
        return []
    failed = results[results["status"] != "ok"]
    if not len(failed):
        return []
    rows = [["item", "status", "error"]]
    for _, r in failed.head(limit).iterrows():
        error = str(r.get("error") or "").strip().splitlines() or [""]
        reason = error[0] if len(error[0]) <= 160 else error[0][:159] + "\u2026"
        rows.append([f"{r['instance_id']}-{r['variant']}", str(r["status"]), reason])
    lines = [f"not measured: {len(failed)} of {len(results)} items", *_aligned(rows)]
    if len(failed) > limit:
        lines.append(f"... and {len(failed) - limit} more (results.parquet has them all)")
    return lines


def render_text(table: pd.DataFrame, meta: dict[str, Any]) -> str:
    body = _aligned([list(COMPACT), *compact_rows(table)]) if len(table) else ["(no results)"]
    return "\n".join([*header_lines(meta), "", *body, "", *summary_lines(table)]) + "\n"


def render_markdown(table: pd.DataFrame, meta: dict[str, Any]) -> str:
    rows = compact_rows(table)
    lines = [f"# {header_lines(meta)[0]}", "", *(f"{line}  " for line in header_lines(meta)[1:])]
    lines += ["", "| " + " | ".join(COMPACT) + " |", "|" + "---|" * len(COMPACT)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    lines += ["", *(f"- {line}" for line in summary_lines(table))]
    # An undecided row's details are its reason, already in the summary, not criteria.
    details = [
        (v, r["details"])
        for v, r in table.iterrows()
        if isinstance(r["details"], str) and not _undecided(r["verdict"])
    ]
    if details:
        lines += ["", "## Criteria", ""]
        lines += [f"- **{v}**: {d}" for v, d in details]
    return "\n".join(lines) + "\n"


def render_html(table: pd.DataFrame, meta: dict[str, Any]) -> str:
    head = "".join(f"<p>{html.escape(line, quote=False)}</p>\n" for line in header_lines(meta))
    summary = "".join(
        f"<li>{html.escape(line, quote=False)}</li>\n" for line in summary_lines(table)
    )
    title = html.escape(header_lines(meta)[0])
    return (
        f'<!doctype html>\n<html><head><meta charset="utf-8"><title>{title}</title></head><body>\n'
        f"{head}<ul>\n{summary}</ul>\n{table.to_html(na_rep='')}\n</body></html>\n"
    )
