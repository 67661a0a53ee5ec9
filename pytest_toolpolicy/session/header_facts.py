"""The decision table's header facts of a session: the model, the dataset and its instances
(measured, run, loaded), the sampling, the sandbox, the trials, the candidates and the requests'
settings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..bench.sampling import describe
from ..run.candidates import candidate_line

if TYPE_CHECKING:
    import pandas as pd

    from .session import ABSession


def header_facts(session: ABSession, results: pd.DataFrame) -> dict[str, Any]:
    """The header's facts. Its instances are those ``results`` measured (an item that ran
    and was graded); those that ran at all and those loaded are given beside them, so a
    ``-k`` run of one item says it measured one instance, not the 25 it loaded."""
    loaded = session.loaded()
    model = session.settings.model
    flags = {i.instance_id: i.underspecified for i in loaded.instances}
    measured = results[results["status"] == "ok"].drop_duplicates("instance_id")
    return {
        "model": model,
        "dataset": session.settings.dataset,
        "n_instances": len(measured),
        "n_underspecified": sum(
            flags.get(iid, _flag(value))
            for iid, value in zip(measured["instance_id"], measured["underspecified"], strict=True)
        ),
        "n_instances_run": int(results["instance_id"].nunique()),
        "n_instances_loaded": len(loaded.instances),
        "load_errors": [str(e) for e in loaded.errors],
        "excluded": [
            n.removeprefix("excluded ") for n in loaded.notes if n.startswith("excluded ")
        ],
        # "N repositories: a/x 4, ...", from the measured instances (a -k run says its own)
        "repositories": describe(
            {i.instance_id: i.repo for i in loaded.instances},
            [iid for iid in measured["instance_id"] if iid in flags],
        ),
        "sampling": [n for n in loaded.notes if n.startswith(("sample", "since"))],
        "tests_visible": session.settings.tests_visible,
        "seed": session.settings.seed,
        "is_sim": model == "sim" or model.startswith("sim:"),
        "sim_profile": (model.partition(":")[2] or "default") if model.startswith("sim") else None,
        "report_dir": str(session.settings.report),
        "ablation_skipped": list(session.skipped_ablations()),
        "memo": session.settings.memo,
        "sandbox": session.sandbox().mode,
        # degraded by the user's own choice, in the words they chose it with
        "sandbox_opt_in": f"{session.settings.sandbox_source}=degraded"
        if session.settings.sandbox == "degraded"
        else None,
        "trials": session.settings.trials,
        "candidates": {
            c.name: candidate_line(c, model, session.settings.generation.logprobs)
            for c in session.settings.candidates
        },
        **session.settings.generation.record(),
    }


def _flag(value: Any) -> bool:
    """A boolean cell of a frame: a numpy bool, or NaN / None / NA where the row lacks it."""
    try:
        return bool(value) and bool(value == value)
    except (TypeError, ValueError):
        return False
