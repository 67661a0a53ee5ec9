"""The report header's facts (model, dataset, instances, seed, whether sim ran) for a results
frame: as the session recorded them in ``results.parquet``, else read off the rows."""

from __future__ import annotations

from typing import Any

import pandas as pd


def meta_from(results: pd.DataFrame, **overrides: Any) -> dict[str, Any]:
    """The report header's facts: as recorded by :func:`.report_files.write_report`, else read off the rows."""
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
