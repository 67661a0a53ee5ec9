"""The pytest plugin (entry point ``toolpolicy``).

Loading it changes nothing about an ordinary pytest run: it registers no autouse fixture and no
hook that alters collection or reporting. The fixtures below are inert until a test asks for
them by name.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from .primitives import Toolbox, Workspace


@pytest.fixture
def toolpolicy_toolbox(tmp_path: Path) -> Callable[[dict[str, str]], Toolbox]:
    """A factory: ``toolpolicy_toolbox({"pkg/mod.py": source, ...})`` writes the files into a
    fresh git workspace (they become its base commit) and returns the six primitives over it;
    the workspace is ``toolbox.workspace``."""

    def make(files: dict[str, str]) -> Toolbox:
        root = tmp_path / f"workspace{len(list(tmp_path.glob('workspace*')))}"
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        root.mkdir(exist_ok=True)
        return Toolbox(root, workspace=Workspace.create(root))

    return make


@pytest.fixture
def toolpolicy_registry() -> dict[str, dict[str, Any]]:
    """The six-tool registry (spec §4.1), a copy a test may change freely."""
    from .policy.registry import REGISTRY

    return copy.deepcopy(REGISTRY)


@pytest.fixture
def trust_gate() -> Callable[..., Any]:
    """``trust_gate(call, envelope, config=None)`` → Verdict (spec §6.2), default gates on."""
    from .policy.config import PolicyConfig
    from .policy.trust import trust_gate as gate

    def check(call: Any, envelope: dict[str, Any], config: PolicyConfig | None = None) -> Any:
        return gate(call, envelope, config or PolicyConfig())

    return check


@pytest.fixture
def toolpolicy_loop(toolpolicy_toolbox: Callable[[dict[str, str]], Toolbox]) -> Callable[..., Any]:
    """A factory: ``toolpolicy_loop(files, model, config=None)`` → a PolicyLoop over a fresh
    workspace holding ``files``. ``model`` is any Model, or a list of reply strings for a
    ScriptedModel. Run it with ``loop.run(Task(instance_id, issue_text, test_target))``."""
    from .models.scripted import ScriptedModel
    from .policy.loop import PolicyLoop

    def make(files: dict[str, str], model: Any, config: Any = None) -> PolicyLoop:
        if isinstance(model, Sequence) and not isinstance(model, str):
            model = ScriptedModel(list(model))
        return PolicyLoop(toolpolicy_toolbox(files), model, config)

    return make
