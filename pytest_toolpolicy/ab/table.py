"""The decision table: measures, deltas, the §9 verdicts and the paired statistics, one row per
variant — and the report files written from it.

The verdict columns come only from the exact rules (:mod:`.decision`, :mod:`.ablation`); the
McNemar p and bootstrap intervals sit beside them for the reader and never change them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from .. import jsonsafe
from ..paths import write_atomic
from .ablation import ablate, no_change_flags
from .bandit import line_of
from .decision import decide, no_decision_reason
from .measures import MEASURES, SHARED, measures, row_of
from .paired import paired, unpaired_reason
from .power import power_of
from .render import render_html, render_markdown, render_text
from .results import conform, escape_strings
from .schema import gate_of, reference_of

__all__ = ["decision_table", "meta_from", "render_markdown", "render_text", "write_report"]


def _judge(variant: str, m: pd.DataFrame, unpaired: tuple[str, str | None]) -> dict[str, Any]:
    """Deltas, flags and verdict of one row against its reference (None where not applicable);
    ``unpaired`` is the verdict and details given when the two rows do not share one sample."""
    ref = reference_of(variant)
    out: dict[str, Any] = {"reference": ref}
    if ref is None:
        return out
    if ref not in m.index:
        reason = no_decision_reason(list(m.index)) or f"no verdict: the {ref} arm was not run"
        return {**out, "verdict": reason}
    row, base = row_of(m, variant), row_of(m, ref)
    if (m.loc[[variant, ref], "sample"] != SHARED).any():
        # Measures of different instances (or of none): a delta would compare unlike samples
        # and the rules would only report unknowns, so the row says why instead.
        verdict, details = unpaired
        return {**out, "verdict": verdict, "details": details}
    for name in MEASURES:
        out[f"d_{name}"] = row[name] - base[name]
    for name in ("cost", "tokens"):
        out[f"{name}_ratio"] = row[name] / base[name] if base[name] else float("nan")
    if ref == "current":  # the policy, or a candidate: the decision rule
        decision = decide(row, base)
        # pass_<criterion>: True, False, or None where the criterion was not judged.
        out |= {
            f"pass_{c.name}": c.passed if c.judged else None for c in decision.criteria.values()
        }
        details = "; ".join(c.detail for c in decision.criteria.values())
        if decision.undecided:  # the criteria as measured: each endpoint error not resolved
            details = f"as measured (endpoint errors not resolved): {details}"
        out |= {"verdict": decision.verdict, "details": details}
        out |= _judged_columns([c.name for c in decision.not_judged], decision.judged_note)
        if variant != "policy" and "policy" in m.index:
            policy = row_of(m, "policy")
            out["acted_beyond"] = _acted_beyond(row["acts"], policy["acts"])
            # The same rule with the spec's policy as the one to beat: a later round replaces
            # the deterministic stage only if it beats it too.
            out["verdict_vs_policy"] = decide(row, policy).verdict
    else:
        gate = gate_of(variant) or ""
        ablation = ablate(gate, row, base)
        out |= {f"same_{k}": v for k, v in no_change_flags(row, base).items()}
        out |= {"verdict": ablation.verdict, "details": ablation.detail or "no change"}
        out |= _judged_columns(list(ablation.not_judged), ablation.judged_note)
        # How often the gate acted where it was on (the full policy, same sample): a gate that
        # never acted cannot change a measure, so its "no change" shows nothing.
        out |= {
            "gate_acts": _count(base["acts"], gate),
            "gate_blocked": _count(base["blocked"], gate),
        }
    return out


def _judged_columns(skipped: list[str], note: str) -> dict[str, Any]:
    """How many of the rule's five measures were judged, and why the others were not."""
    return {"judged": len(MEASURES) - len(skipped), "not_judged": note or None}


def _acted_beyond(acts: object, policy: object) -> str:
    """The gates that acted in a candidate's runs and never in the policy's ("gate N×, ..."):
    a candidate that turns a gate on shows whether it did anything."""
    try:
        mine, theirs = json.loads(str(acts)), json.loads(str(policy))
    except ValueError:
        return ""
    return ", ".join(f"{g} {n}\u00d7" for g, n in sorted(mine.items()) if n and not theirs.get(g))


def _count(counts: object, gate: str) -> int:
    try:
        return int(json.loads(str(counts)).get(gate, 0))
    except (ValueError, AttributeError):
        return 0


def _stats(results: pd.DataFrame, variant: str, reference: str | None) -> dict[str, Any]:
    if reference is None or not (results["variant"] == reference).any():
        return {}
    p = paired(results, variant, reference)
    # Power of the paired resolve comparison, from this sample (every trial a pair).
    power = power_of(p.c, p.b, p.n_pairs)
    return {
        "n_pairs": p.n_pairs,
        "mcnemar_b": p.b,
        "mcnemar_c": p.c,
        "mcnemar_p": p.mcnemar_p,
        "resolve_ci_low": p.resolve_ci[0],
        "resolve_ci_high": p.resolve_ci[1],
        "cost_ci_low": p.cost_ci[0],
        "cost_ci_high": p.cost_ci[1],
        "tokens_ci_low": p.tokens_ci[0],
        "tokens_ci_high": p.tokens_ci[1],
        "ci_clustered_by": p.clustered_by,
        "detectable_delta": power.detectable_delta,
        "pairs_needed": power.pairs_needed,
        "power_note": power.line(),
    }


def decision_table(results: pd.DataFrame, meta: dict[str, Any] | None = None) -> pd.DataFrame:
    """One row per variant: current, policy, then the ablations (spec §9's order).

    ``meta`` is accepted for symmetry with the renderers; the table depends on ``results`` only.
    A frame that lacks schema columns (only error rows, say) is read as having them empty.
    """
    results = conform(results)
    m = measures(results)
    unpaired = unpaired_reason(results, m)
    extra = []
    for variant in m.index:
        judged = _judge(str(variant), m, unpaired)
        extra.append({**judged, **_stats(results, str(variant), judged["reference"])})
        extra[-1]["bandit"] = line_of(results[results["variant"] == variant]) or None
    columns = ["reference", "verdict", "details", "judged", "not_judged"]
    columns += [f"d_{name}" for name in MEASURES] + ["cost_ratio", "tokens_ratio"]
    columns += [f"pass_{name}" for name in MEASURES] + [f"same_{name}" for name in MEASURES]
    columns += ["gate_acts", "gate_blocked", "acted_beyond", "verdict_vs_policy", "bandit"]
    columns += ["n_pairs", "mcnemar_b", "mcnemar_c", "mcnemar_p"]
    columns += ["resolve_ci_low", "resolve_ci_high", "cost_ci_low", "cost_ci_high"]
    columns += ["tokens_ci_low", "tokens_ci_high", "ci_clustered_by"]
    columns += ["detectable_delta", "pairs_needed", "power_note"]
    judged_frame = pd.DataFrame(extra, index=m.index, columns=columns, dtype=object)
    return m.join(judged_frame)


def meta_from(results: pd.DataFrame, **overrides: Any) -> dict[str, Any]:
    """The report header's facts: as recorded by :func:`write_report`, else read off the rows."""
    recorded = dict(results.attrs.get("toolpolicy_meta") or {})
    # An error row may lack everything but its identity, so the facts come from a finished item.
    ok = results[results["status"] == "ok"] if len(results) else results
    rows = ok if len(ok) else results
    first = rows.iloc[0] if len(rows) else pd.Series(dtype=object)
    model = str(recorded.get("model", first.get("model", "")))
    derived = {
        "model": model,
        "dataset": first.get("dataset"),
        "n_instances": int(results["instance_id"].nunique()) if len(results) else 0,
        "n_underspecified": int(
            results.drop_duplicates("instance_id")["underspecified"].sum() if len(results) else 0
        ),
        "tests_visible": bool(first.get("tests_visible", False)),
        "seed": int(first["seed"]) if pd.notna(first.get("seed")) else None,
        "is_sim": model == "sim" or model.startswith("sim:"),
        "sim_profile": model[len("sim:") :] if model.startswith("sim:") else None,
        "report_dir": None,
    }
    return {**derived, **recorded, **overrides}


def _plain(value: Any) -> Any:
    return value.item() if hasattr(value, "item") else str(value)


def write_report(results: pd.DataFrame, meta: dict[str, Any], directory: Path) -> dict[str, Path]:
    """Write decision.md, decision.csv, decision.html and results.parquet into ``directory``."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    # JSON-plain, as parquet metadata must be (a numpy int or a Path would not serialize), and
    # valid UTF-8, as every file here must be (pyarrow refuses a lone surrogate outright).
    meta = json.loads(jsonsafe.dumps({**meta, "report_dir": str(directory)}, default=_plain))
    stored = escape_strings(conform(results))
    table = decision_table(stored, meta)
    # pandas keeps attrs in the parquet metadata, so the notebook renders the same header.
    stored.attrs["toolpolicy_meta"] = meta
    writers: dict[str, Callable[[Path], object]] = {
        "decision.md": lambda p: p.write_text(render_markdown(table, meta), encoding="utf-8"),
        "decision.csv": lambda p: table.to_csv(p),
        "decision.html": lambda p: p.write_text(render_html(table, meta), encoding="utf-8"),
        "results.parquet": lambda p: stored.to_parquet(p, index=False),
    }
    # Readers (the notebook, a second terminal) never see a half-written report file.
    return {name: write_atomic(directory / name, write) for name, write in writers.items()}
