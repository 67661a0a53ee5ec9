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
from .measures import NONE, OWN, row_of, unobservable
from .schema import CANDIDATE_PREFIX, gate_of, item_of


def candidate_of(variant: str) -> str | None:
    return variant[len(CANDIDATE_PREFIX) :] if variant.startswith(CANDIDATE_PREFIX) else None


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
COMPACT = (
    "arm/variant", "resolve", "$/inst", "tok/inst", "call-prec", "sel-acc", "abstain",
    "false-abst",
)  # fmt: skip
PASS_K = "pass^k"  # a column of its own only when instances ran several trials
# Items the endpoint ended, measured as not resolved: a column only when there are any
ENDPOINT_ERRORS = "endpoint-err"
# A row not on the shared sample says so where it is read first: its name.
SAMPLE_LABELS = {OWN: " (own items, unpaired)", NONE: " (none measured)"}
UNDECIDED = ("no decision", "no paired verdict", "no verdict")


def header_lines(meta: dict[str, Any]) -> list[str]:
    visible = "visible" if meta.get("tests_visible") else "NOT visible"
    # The instances measured (an item graded), then those that ran and those loaded where
    # they are more: a -k run of one item measured one instance of the 25 loaded.
    n, run, loaded = (meta.get(k) for k in ("n_instances", "n_instances_run", "n_instances_loaded"))
    count = f"{n} instance{'' if n == 1 else 's'} ({meta.get('n_underspecified')} under-specified)"
    if isinstance(run, int) and run != n:
        count += f" measured of {run} run"
    if isinstance(loaded, int) and loaded != (run if isinstance(run, int) else n):
        count += f"{',' if isinstance(run, int) and run != n else ''} of {loaded} loaded"
    lines = [
        f"A/B decision (spec \u00a79) \u2014 model {meta.get('model')}, dataset {meta.get('dataset')}",
        f"{count}, seed {meta.get('seed')}; FAIL_TO_PASS tests were {visible} to the agent",
    ]
    if meta.get("is_sim"):
        profile = meta.get("sim_profile")
        lines.append(SIM_DISCLAIMER + (f" (profile {profile})" if profile else ""))
    model = str(meta.get("model") or "")
    if model.startswith("local:"):
        lines.append(LOCAL_DISCLAIMERS.get(model, LOCAL_DISCLAIMER))
    if meta.get("structured") is not None:
        lines.append(_requests_line(meta))
    if meta.get("sandbox") == "degraded" and meta.get("sandbox_opt_in"):
        lines.append(
            "sandbox: DEGRADED \u2014 runs saw the host's files and network"
            f" ({meta['sandbox_opt_in']})"
        )
    elif meta.get("sandbox") == "degraded":
        lines.append("sandbox: DEGRADED (no bubblewrap): tests and commands ran unconfined")
    if errors := meta.get("load_errors"):
        listed = 5  # each names its instance and field; the rest are counted
        lines.append(f"instances that could not be loaded: {len(errors)} (not run)")
        lines += [f"  {error}" for error in errors[:listed]]
        if len(errors) > listed:
            lines.append(f"  ... and {len(errors) - listed} more")
    if meta.get("repositories"):
        how = "; ".join(n for n in meta.get("sampling") or () if not n.startswith("sample: "))
        lines.append(f"measured: {meta['repositories']}" + (f" ({how})" if how else ""))
    if meta.get("excluded"):
        lines.append(
            f"excluded (cannot run here): {len(meta['excluded'])}: {_why(meta['excluded'])}"
        )
    if isinstance(meta.get("trials"), int) and meta["trials"] > 1:
        lines.append(
            f"trials: {meta['trials']} runs of every item"
            + (" (sim: one seed a trial)" if meta.get("is_sim") else "")
        )
    for name, what in (meta.get("candidates") or {}).items():
        lines.append(f"candidate {name}: {what}")
    if meta.get("ablation_skipped"):
        skipped = ", ".join(meta["ablation_skipped"])
        lines.append(f"not ablated (off in the candidate policy): {skipped}")
    return lines


def _why(excluded: list[str]) -> str:
    """ "id: reason" notes as each reason with its count, commonest first: 231 instances of a
    repository with no mirror are one line, not 231."""
    counts: dict[str, int] = {}
    for note in excluded:
        why = note.partition(": ")[2] or note
        counts[why] = counts.get(why, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = [f"{why} ×{n}" for why, n in ranked[:4]]
    return "; ".join(shown) + (f"; ... {len(ranked) - 4} more reasons" if len(ranked) > 4 else "")


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


def _trials(table: pd.DataFrame) -> int:
    values = pd.to_numeric(table.get("trials", pd.Series(dtype=float)), errors="coerce")
    return int(values.max()) if len(values.dropna()) else 1


def _model_errors(table: pd.DataFrame) -> bool:
    """Any variant has items the endpoint ended (a table from before the count: none)."""
    return "model_errors" in table and any(_count(v) for v in table["model_errors"])


def compact_header(table: pd.DataFrame) -> list[str]:
    several, errors = _trials(table) > 1, _model_errors(table)
    return [*COMPACT, *([PASS_K] if several else []), *([ENDPOINT_ERRORS] if errors else [])]


def compact_rows(table: pd.DataFrame) -> list[list[str]]:
    several, errors = _trials(table) > 1, _model_errors(table)
    return [
        [
            str(variant) + SAMPLE_LABELS.get(str(r.get("sample")), ""),
            _frac(r["resolve"], r["resolved"], r["n"]),
            _num(r["cost"], ".4f"),
            _num(r["tokens"], ".0f"),
            _precision_cell(r),
            _selection_cell(r),
            _frac(r["abstention"], r["abstained_correct"], r["underspecified"]),
            _frac(r["false_abstention"], r["abstained_false"], r["resolvable"]),
            *([_frac(r["pass_k"], r["passed_all"], r["instances"])] if several else []),
            *([f"{_count(r['model_errors'])}/{_count(r['n'])}"] if errors else []),
        ]
        for variant, r in table.iterrows()
    ]


def _selection_cell(r: pd.Series) -> str:
    if why := unobservable(r, "selection_accuracy"):
        if why.startswith("no gold labels"):
            return "n/a (no labels)"  # not 0/0 attempts: there was nothing to score them on
        return "not observable"  # an external agent's hidden calls: the header says why
    return _frac(r["selection_accuracy"], r["sel_correct"], r["sel_attempted"])


def _precision_cell(r: pd.Series) -> str:
    if unobservable(r, "call_precision"):
        return "not observable"  # never 0 or 1: which calls were necessary is not known
    return _frac(r["call_precision"], r["necessary"], r["calls"])


LABEL_COUNTS = ("labelled_hand", "labelled_derived", "unlabelled")


def _count(value: object) -> int:
    """A count cell as an int (0 where a table from before the column has none)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0
    return 0 if math.isnan(number) else int(number)


def label_lines(table: pd.DataFrame) -> list[str]:
    """Which gold labels selection accuracy was scored on, when any was not hand-written."""
    if not set(LABEL_COUNTS) <= set(table.columns):
        return []
    counts = {str(v): tuple(_count(r[c]) for c in LABEL_COUNTS) for v, r in table.iterrows()}
    if not any(derived or none for _, derived, none in counts.values()):
        return []

    def said(hand: int, derived: int, none: int) -> str:
        return (
            f"{derived} instances scored on labels derived from the gold patch"
            f" (gold_labels/FORMAT.md), {hand} on hand-written ones, {none} without a label"
            " (left out of selection accuracy)"
        )

    if len(set(counts.values())) == 1:
        return ["gold labels: " + said(*next(iter(counts.values())))]
    return ["gold labels:", *(f"  {variant}: {said(*c)}" for variant, c in counts.items())]


def _aligned(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in rows
    ]


def _stats(r: pd.Series) -> str:
    return f"McNemar p = {_num(r['mcnemar_p'], '.4g')} (b={r['mcnemar_b']}, c={r['mcnemar_c']})"


def _ratios(r: pd.Series) -> str:
    return (
        f"cost {_num(r['cost_ratio'], '.2f')}\u00d7, tokens {_num(r['tokens_ratio'], '.2f')}\u00d7"
    )


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


def _trial_lines(table: pd.DataFrame) -> list[str]:
    """With several trials: each variant's spread, the standard deviation over trials."""
    k = _trials(table)
    if k <= 1:
        return []
    lines = [
        f"trials: {k} per instance; pass^k = instances resolved in all {k}; spread = sd over trials:"
    ]
    for variant, r in table.iterrows():
        spread = ", ".join(
            f"{name} \u00b1{_num(r[f'sd_{name}'], fmt)}"
            for name, fmt in (
                ("resolve", ".3f"),
                ("cost", ".4f"),
                ("tokens", ".0f"),
                ("call_precision", ".3f"),
                ("selection_accuracy", ".3f"),
            )
        )
        lines.append(f"  {variant}: {spread}")
    return lines


def _undecided(verdict: object) -> bool:
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
    elif _undecided(table.loc["policy", "verdict"]):
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
        if _undecided(r["verdict"]):
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
        if not _undecided(r["verdict"]):
            lines.append(f"gate {gate}: {r['verdict']}{_acted(r)} | {_stats(r)}")
        else:  # no statistics exist without pairs; a reason already printed is not repeated
            lines.append(f"gate {gate}: {_no_verdict(r, shown)}")
    lines += label_lines(table)
    lines += _trial_lines(table)
    if (
        "cached_share" in table
        and pd.to_numeric(table["cached_share"], errors="coerce").gt(0).any()
    ):
        shown = ", ".join(
            f"{variant} {_num(r['cached_share'] * 100, '.0f')}%" for variant, r in table.iterrows()
        )
        lines.append(f"prompt tokens served from the prefix cache: {shown}")
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
    if _model_errors(table):
        shown = ", ".join(f"{v} {_count(r['model_errors'])}" for v, r in table.iterrows())
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


def failure_lines(results: pd.DataFrame, limit: int = 20) -> list[str]:
    """What was not measured and why, and what the endpoint ended (measured as not resolved),
    one aligned line per item (the first ``limit``)."""
    if not len(results) or "status" not in results:
        return []
    failed = results[results["status"] != "ok"]
    if not len(failed):
        return []
    ended = int((failed["status"] == "model_error").sum())
    rows = [["item", "status", "error"]]
    for _, r in failed.head(limit).iterrows():
        error = str(r.get("error") or "").strip().splitlines() or [""]
        reason = error[0] if len(error[0]) <= 160 else error[0][:159] + "\u2026"
        rows.append([item_of(r), str(r["status"]), reason])
    head = f"not measured: {len(failed) - ended} of {len(results)} items"
    if ended:
        head += f"; ended by the endpoint (measured as not resolved): {ended}"
    lines = [head, *_aligned(rows)]
    if len(failed) > limit:
        lines.append(f"... and {len(failed) - limit} more (results.parquet has them all)")
    return lines


def render_text(table: pd.DataFrame, meta: dict[str, Any]) -> str:
    body = (
        _aligned([compact_header(table), *compact_rows(table)]) if len(table) else ["(no results)"]
    )
    return "\n".join([*header_lines(meta), "", *body, "", *summary_lines(table)]) + "\n"


def render_markdown(table: pd.DataFrame, meta: dict[str, Any]) -> str:
    rows = compact_rows(table)
    header = compact_header(table)
    lines = [f"# {header_lines(meta)[0]}", "", *(f"{line}  " for line in header_lines(meta)[1:])]
    lines += ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
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
