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

from .results_column import Column, Source
from .results_item import ITEM_COLUMNS
from .results_spend import SPEND_COLUMNS

__all__ = [
    "COLUMNS", "GOLD_DERIVED", "GOLD_HAND", "GOLD_NONE", "GOLD_SOURCES", "OPTIONAL_COLUMNS",
    "SPECS", "Column", "Source",
]  # fmt: skip

# The row's columns, in order: what each holds and how it is read off its run's trajectory
# (``Source``: the trajectory and what is derived from it once). ``run/row.py`` applies them.
SPECS: tuple[Column, ...] = (*ITEM_COLUMNS, *SPEND_COLUMNS)
COLUMNS: dict[str, str] = {c.name: c.doc for c in SPECS}
# Present only when they apply (a resumed session; a harness fault).
OPTIONAL_COLUMNS: dict[str, str] = {
    "resumed": "bool — the row was kept from an earlier session by --toolpolicy-resume",
    "traceback": "str — where a harness fault was raised",
}

# The values of ``gold_source``, as ``bench/gold_source.py`` names them (a test holds them
# equal): written out, since importing bench would import the harness.
GOLD_HAND, GOLD_DERIVED, GOLD_NONE = "hand", "derived", "none"
GOLD_SOURCES = (GOLD_HAND, GOLD_DERIVED, GOLD_NONE)
