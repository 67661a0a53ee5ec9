"""Model backends by name: the shipped four are records of one registry, and a new backend is
one record (an ``echo:`` backend defined in this file) that parses, validates, builds and sits
behind the record/replay cache like the shipped ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolpolicy.models.backends import BACKENDS, Backend, BuildOptions, accepted_forms
from pytest_toolpolicy.models.base import Completion, ModelRequest, Usage
from pytest_toolpolicy.models.cache import CachedModel
from pytest_toolpolicy.models.spec import (
    ModelSpec,
    build_model,
    parse_model_spec,
    validate_model_spec,
)

REQUEST = ModelRequest(messages=({"role": "user", "content": "hi"},))


class Echo:
    """Says its spec's text back, at a price of nothing."""

    def __init__(self, text: str, seed: int) -> None:
        self.name = f"echo:{text}"
        self.text = f"{text} #{seed}"

    def complete(self, request: ModelRequest) -> Completion:
        return Completion(self.text, Usage(3, 2), 0.0, 0.0, model=self.name)


def build(arg: str | None, options: BuildOptions) -> Echo:
    return Echo(arg or "", options.seed)


def check(arg: str | None) -> None:
    if arg and not arg.isalpha():
        raise ValueError(f"echo:{arg}: letters only")


@pytest.fixture
def echo(monkeypatch: pytest.MonkeyPatch) -> None:
    record = Backend(f"{__name__}:build", ("echo:<word>",), "word", check=f"{__name__}:check")
    monkeypatch.setitem(BACKENDS, "echo", record)  # the one record a new backend takes


def test_the_shipped_backends_and_how_a_spec_names_them() -> None:
    assert list(BACKENDS) == ["openai", "local", "scripted", "sim"]
    assert accepted_forms() == (
        "openai:<model>, local:gemma3-270m, local:<file.gguf>, scripted:<file>, sim,"
        " sim:<profile-or-file>"
    )
    assert [name for name, b in BACKENDS.items() if b.replayed] == ["openai", "local"]
    assert [name for name, b in BACKENDS.items() if b.check is None] == ["openai"]


def test_unregistered_a_backend_is_unknown() -> None:
    with pytest.raises(ValueError, match="unknown model spec 'echo:hello'"):
        parse_model_spec("echo:hello")


@pytest.mark.usefixtures("echo")
def test_a_new_backend_is_one_record(tmp_path: Path) -> None:
    assert parse_model_spec("echo:hello") == ModelSpec("echo", "hello")
    assert "sim:<profile-or-file>, echo:<word>" in accepted_forms()
    with pytest.raises(ValueError, match="names no word after echo:"):
        parse_model_spec("echo:")
    with pytest.raises(ValueError, match="echo:he11o: letters only"):
        validate_model_spec("echo:he11o")
    validate_model_spec("echo:hello")
    model = build_model("echo:hello", seed=7)
    assert isinstance(model, Echo) and model.complete(REQUEST).text == "hello #7"
    cached = build_model("echo:hello", cache_path=tmp_path / "c.sqlite", cache_mode="record")
    assert isinstance(cached, CachedModel)
    assert cached.complete(REQUEST).text == "hello #0"
    assert cached.complete(REQUEST).replayed  # the cache wraps it as any other
