"""Kept for one release: the A/B's old module paths (``pytest_toolpolicy.ab.<module>``), each a
thin re-export of where it lives now: the pytest wiring in ``session/``, one item's run in
``run/``, the pure analysis of rows into the decision table in ``decide/``. Importing this
package imports nothing else (no pytest)."""
