"""Model backends: the ``Model`` seam, the registry of backends by name (``backends.py``),
OpenAI-compatible endpoints, prices, budgets, specs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Completion, Model, ModelError, ModelRequest, Usage
from .budget import Budget
from .cache import CachedModel, CacheMode, CacheStats
from .cachefile import CacheError
from .prices import Price, PriceError, PriceTable, UnpricedWarning, load_prices
from .scripted import ScriptedModel, ScriptError
from .spec import ModelSpec, build_model, parse_model_spec
from .usage import usage_from

if TYPE_CHECKING:
    from .openai_model import OpenAIModel

__all__ = [
    "Budget",
    "CacheError",
    "CacheMode",
    "CacheStats",
    "CachedModel",
    "Completion",
    "Model",
    "ModelError",
    "ModelRequest",
    "ModelSpec",
    "OpenAIModel",
    "Price",
    "PriceError",
    "PriceTable",
    "ScriptError",
    "ScriptedModel",
    "UnpricedWarning",
    "Usage",
    "build_model",
    "load_prices",
    "parse_model_spec",
    "usage_from",
]


def __getattr__(name: str) -> Any:
    # The SDK takes half a second to import; the plugin loads this package in every pytest run.
    if name == "OpenAIModel":
        from .openai_model import OpenAIModel

        return OpenAIModel
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
