"""The model options of ``toolpolicy run`` and ``complete``: the pytest session's endpoint and
request options under the same names less their ``--toolpolicy-`` prefix, read by the same
parsers, so a value means one thing wherever a model is named."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from ..ab.endpoint import OPTIONS as ENDPOINT_OPTIONS
from ..ab.endpoint import Endpoint, EndpointError, endpoint_from
from ..ab.generation import OPTIONS as GENERATION_OPTIONS
from ..ab.generation import Generation, GenerationError, generation_from

PREFIX = "--toolpolicy-"
MODEL_HELP = "openai:<model>, local:gemma3-270m, local:<file.gguf>, scripted:<file>, sim[:...]"


class ModelOptionsError(ValueError):
    """A bad value; the message names the option as the command spells it."""


@dataclass(frozen=True)
class ModelOptions:
    endpoint: Endpoint
    generation: Generation


def add_model_options(parser: argparse.ArgumentParser) -> None:
    for name, text in (*ENDPOINT_OPTIONS, *GENERATION_OPTIONS):
        dest = name[2:].replace("-", "_")  # the session's own names, for the shared parsers
        parser.add_argument("--" + name.removeprefix(PREFIX), dest=dest, default=None, help=text)


def model_options(ns: argparse.Namespace) -> ModelOptions:
    def get(name: str) -> object:
        return getattr(ns, name, None)

    try:
        return ModelOptions(endpoint_from(get), generation_from(get, str(ns.model)))
    except (EndpointError, GenerationError) as exc:
        raise ModelOptionsError(str(exc).replace(PREFIX, "--")) from None


def built_model(ns: argparse.Namespace, **kwargs: Any) -> Any:
    """The model ``ns.model`` names, on the endpoint terms the command's options give."""
    from ..models import build_model, load_prices

    endpoint = model_options(ns).endpoint
    return build_model(
        ns.model,
        base_url=endpoint.base_url,
        api_key_env=endpoint.api_key_env,
        prices=load_prices(endpoint.prices),
        timeout=endpoint.timeout_for(ns.model),
        max_retries=endpoint.retries_for(ns.model),
        **kwargs,
    )
