"""Model spec strings, shared by the plugin and the CLI: parse one, build the model it names.

``openai:<model>`` is any OpenAI-compatible endpoint (OpenAI, DeepSeek, vLLM, llama.cpp, Ollama);
``local:gemma3-270m`` or ``local:<file.gguf>`` is a model the harness serves on this machine with
llama.cpp's server (``models/local``); ``scripted:<file>`` replies from a JSON-lines file; ``sim``
and ``sim:<profile-or-file>`` are the fault-injecting simulator.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, cast, get_args

from .base import Model
from .prices import PriceTable, load_prices

if TYPE_CHECKING:
    from ..bench.instance import Instance

ModelKind = Literal["openai", "local", "scripted", "sim"]
ACCEPTED_FORMS = (
    "openai:<model>, local:gemma3-270m, local:<file.gguf>, scripted:<file>, sim,"
    " sim:<profile-or-file>"
)
_CACHE_MODES = ("off", "record", "replay")
_WHAT = {
    "openai": "model after openai:",
    "local": "model after local:",
    "scripted": "file after scripted:",
    "sim": "profile after sim:",
}


@dataclass(frozen=True)
class ModelSpec:
    kind: ModelKind
    arg: str | None = None  # the model name, script file, or sim profile

    def __str__(self) -> str:
        return self.kind if self.arg is None else f"{self.kind}:{self.arg}"


def parse_model_spec(text: str) -> ModelSpec:
    text = text.strip()
    if text == "sim":
        return ModelSpec("sim")
    kind, colon, arg = text.partition(":")
    arg = arg.strip()
    if kind in get_args(ModelKind):
        if arg:
            return ModelSpec(cast(ModelKind, kind), arg)
        raise ValueError(f"model spec {text!r} names no {_WHAT[kind]}; accepted: {ACCEPTED_FORMS}")
    # A bare model name, or a provider as prefix ("deepseek:..."), is most likely meant for openai:.
    guess = arg if colon else text
    hint = f" (did you mean openai:{guess}?)" if guess and " " not in guess else ""
    raise ValueError(f"unknown model spec {text!r}{hint}; accepted: {ACCEPTED_FORMS}")


def validate_model_spec(text: str, *, replay: bool = False) -> None:
    """Refuse ``text`` with a specific ``ValueError`` unless it names a model that can be built.

    For the plugin at configure time and the CLI, before anything runs: it checks the form, and
    that a ``scripted:`` or ``sim:`` file reads and parses (the message names the file). It builds
    no client and reads no key, so it never touches the network; an ``openai:`` name is checked
    only for form, since only its endpoint knows which names exist.
    """
    spec = parse_model_spec(text)
    if spec.kind == "scripted" and spec.arg is not None:
        from .scripted import ScriptedModel

        try:
            ScriptedModel.from_file(spec.arg)
        except OSError as exc:
            raise ValueError(_unreadable("scripted file", spec.arg, exc)) from None
        except UnicodeDecodeError:
            raise ValueError(f"cannot read scripted file {spec.arg}: not UTF-8 text") from None
    elif spec.kind == "local" and spec.arg is not None and not replay:
        # A replay is answered by its recording: it needs neither the extra nor the file.
        from .local.weights import WeightsError, resolve

        try:
            resolve(spec.arg)  # the extra is installed and the file is there and as published
        except WeightsError as exc:
            raise ValueError(str(exc)) from None
    elif spec.kind == "sim" and spec.arg not in (None, "default", "oracle"):
        # Checked as build_model will load it; the simulator is plain Python, no network.
        from .sim.profile import load_profile

        try:
            load_profile(spec.arg)
        except UnicodeDecodeError:
            raise ValueError(f"cannot read sim profile {spec.arg}: not UTF-8 text") from None


def _unreadable(what: str, path: str, exc: OSError) -> str:
    reason = "it is a directory" if isinstance(exc, IsADirectoryError) else exc.strerror or exc
    return f"cannot read {what} {path}: {reason}"


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
    if spec.kind == "sim":
        from .sim import SimModel, load_profile

        model: Model = SimModel(instances or {}, load_profile(spec.arg), seed, prices=prices)
    elif cache_mode == "replay" and spec.kind in ("openai", "local"):
        from .cache import CachedModel

        # The recording answers: no client, no server, no key. (Both name themselves
        # ``<kind>:<arg>``, the model id their recordings are keyed by.)
        assert cache_path is not None  # checked above: every mode but off has a path
        return CachedModel(None, cache_path, "replay", name=f"{spec.kind}:{spec.arg}")
    else:
        model = _backend(spec, base_url, api_key_env, prices, timeout, max_retries)
    if cache_mode == "off":
        return model
    from .cache import CachedModel, CacheMode

    assert cache_path is not None  # checked above: every mode but off has a path
    return CachedModel(model, cache_path, cast(CacheMode, cache_mode))


def _backend(
    spec: ModelSpec,
    base_url: str | None,
    api_key_env: str | None,
    prices: PriceTable | None,
    timeout: float,
    max_retries: int,
) -> Model:
    arg = spec.arg or ""
    if spec.kind == "local":
        from .local.model import local_model

        return local_model(arg, base_url=base_url, timeout=timeout, max_retries=max_retries)
    if spec.kind == "openai":
        from .openai_model import OpenAIModel

        return OpenAIModel(
            arg,
            base_url=base_url,
            api_key_env=api_key_env or "OPENAI_API_KEY",
            timeout=timeout,
            max_retries=max_retries,
            prices=prices if prices is not None else load_prices(),
        )
    from .scripted import ScriptedModel

    return ScriptedModel.from_file(arg)
