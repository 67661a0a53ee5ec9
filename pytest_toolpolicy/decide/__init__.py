"""Pure rows -> the spec §9 decision table: the results schema, the measures, the paired
statistics and power, the decision and ablation rules, the table's declared columns and their
renderings.

Importable from a notebook with nothing of the harness: no module here imports pytest, the
sandbox, git, a model or an arm (``tests/decide/test_pure.py`` holds it). The rows come from
``run/`` (``run/row.py``: one item's trajectory -> its row) or from a saved ``results.parquet``.
"""
