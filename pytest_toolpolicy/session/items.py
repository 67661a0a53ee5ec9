"""The A/B items the plugin ships: with ``--toolpolicy=ab|policy|current`` any project's pytest
session collects them (``toolpolicy::test_instance[<instance>-<variant>]``) unless one of its own
tests already uses the ``toolpolicy_item`` fixture, as ``evals/test_ab.py`` here does.

Each instance × arm × variant is one item. It passes when its run completed and was measured
(an unresolved instance is a measurement, not a failure) and fails with the reason on a harness
fault or a model error.
"""

from typing import Any


def test_instance(toolpolicy_item: Any) -> None:
    toolpolicy_item.run()
