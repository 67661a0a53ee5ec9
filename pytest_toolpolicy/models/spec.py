"""Model spec strings, shared by the plugin and the CLI: parse one, build the model it names.

A spec is a backend's name and what follows it: ``openai:<model>`` is any OpenAI-compatible
endpoint (OpenAI, DeepSeek, vLLM, llama.cpp, Ollama); ``local:gemma3-270m`` or
``local:<file.gguf>`` is a model the harness serves on this machine with llama.cpp's server
(``models/local``); ``scripted:<file>`` replies from a JSON-lines file; ``sim`` and
``sim:<profile-or-file>`` are the fault-injecting simulator. Which names there are, and what
each builds, is the registry's (``backends.py``); the record/replay cache wraps any of them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from .backends import BACKENDS, Backend, BuildOptions, accepted_forms
from .base import Model
from .prices import PriceTable

if TYPE_CHECKING:
    from ..bench.instance import Instance

_CACHE_MODES = ("off", "record", "replay")


@dataclass(frozen=True)
class ModelSpec:
    kind: str  # a backend's name in ``backends.BACKENDS``
    arg: str | None = None  # the model name, script file, or sim profile

    def __str__(self) -> str:
        return self.kind if self.arg is None else f"{self.kind}:{self.arg}"

    @property
    def backend(self) -> Backend:
        return BACKENDS[self.kind]


def parse_model_spec(text: str) -> ModelSpec:
    text = text.strip()
    kind, colon, arg = text.partition(":")
    backend = BACKENDS.get(kind)
    if backend is not None:
        if backend.bare and not colon:
            return ModelSpec(kind)
        if arg.strip():
            return ModelSpec(kind, arg.strip())
        raise ValueError(
            f"model spec {text!r} names no {backend.what} after {kind}:; accepted:"
            f" {accepted_forms()}"
        )
    # A bare model name, or a provider as prefix ("deepseek:..."), is most likely meant for openai:.
    guess = arg.strip() if colon else text
    hint = f" (did you mean openai:{guess}?)" if guess and " " not in guess else ""
    raise ValueError(f"unknown model spec {text!r}{hint}; accepted: {accepted_forms()}")


def validate_model_spec(text: str, *, replay: bool = False) -> None:
    """Refuse ``text`` with a specific ``ValueError`` unless it names a model that can be built.

    For the plugin at configure time and the CLI, before anything runs: it checks the form, and
    what the backend checks before a build (that a ``scripted:`` or ``sim:`` file reads and
    parses, naming the file; that a ``local:`` model's weights are there). It builds no client
    and reads no key, so it never touches the network; an ``openai:`` name is checked only for
    form, since only its endpoint knows which names exist. A replay is answered by its
    recording: a backend it replaces is not checked.
    """
    spec = parse_model_spec(text)
    check = spec.backend.checker()
    if check is not None and not (replay and spec.backend.replayed):
        check(spec.arg)


def build_model(
    spec: str | ModelSpec,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    prices: PriceTable | None = None,
    cache_path: str | os.PathLike[str] | None = None,
    cache_mode: str = "off",
    timeout: float = 60,
    max_retries: int = 4,
    instances: Mapping[str, Instance] | None = None,
    seed: int = 0,
) -> Model:
    """The model ``spec`` names, behind the record/replay cache unless ``cache_mode`` is off.

    Building reads no API key: ``openai:`` reads it at each call, so a replay needs none.
    ``sim`` needs the ``instances`` it will be asked about (it knows their gold patches) and
    draws its faults from ``seed``.
    """
    if isinstance(spec, str):
        spec = parse_model_spec(spec)
    if cache_mode not in _CACHE_MODES:
        raise ValueError(f"cache mode must be one of {', '.join(_CACHE_MODES)}, not {cache_mode!r}")
    if cache_mode != "off" and cache_path is None:
        raise ValueError(f"cache mode {cache_mode!r} needs a cache file path")
    from .cache import CachedModel, CacheMode

    if cache_mode == "replay" and spec.backend.replayed:
        # The recording answers: no client, no server, no key (keyed by ``<name>:<arg>``, the
        # name such a backend's models go by).
        assert cache_path is not None  # checked above: every mode but off has a path
        return CachedModel(None, cache_path, "replay", name=str(spec))
    options = BuildOptions(base_url, api_key_env, prices, timeout, max_retries, instances, seed)
    model = spec.backend.builder()(spec.arg, options)
    if cache_mode == "off":
        return model
    assert cache_path is not None  # checked above: every mode but off has a path
    return CachedModel(model, cache_path, cast(CacheMode, cache_mode))
