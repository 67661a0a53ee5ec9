"""The header every rendering of the decision table opens with: a resolve rate means nothing
without the model, the dataset, whether the agent could see the FAIL_TO_PASS tests, and whether
the "model" was the fault-injecting simulator."""

from __future__ import annotations

from typing import Any

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
    " strong model's skill; temperature 0 is not bit-reproducible across runs, a recording is",
    "local:qwen2.5-coder-1.5b": "local:qwen2.5-coder-1.5b is Qwen2.5-Coder-1.5B-Instruct, a small"
    " *instruct* coding model, 4-bit (Q4_K_M), on this machine's CPU: a weak model that acts, real"
    " tokens and latencies; temperature 0 is not bit-reproducible across runs, a recording is",
}


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
