"""One A/B item as pytest hands it to a test: the ``toolpolicy_item`` fixture's value, whose
``run()`` runs the item in its session (what the run itself does is ``run/item.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from ..decide.variants import ItemSpec
from .session import ABSession


@dataclass
class ItemHandle:
    spec: ItemSpec
    session: ABSession
    node: pytest.Item

    def run(self) -> dict[str, Any]:
        return self.session.run(self.spec, self.node)
