from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_toolpolicy.models import (
    ModelRequest,
    ModelSpec,
    OpenAIModel,
    PriceTable,
    build_model,
    parse_model_spec,
)


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("openai:gpt-4o-mini", ModelSpec("openai", "gpt-4o-mini")),
        ("openai:qwen2.5-coder:7b", ModelSpec("openai", "qwen2.5-coder:7b")),
        (
            "openai:Qwen/Qwen2.5-Coder-7B-Instruct",
            ModelSpec("openai", "Qwen/Qwen2.5-Coder-7B-Instruct"),
        ),
        ("scripted:replies/a.jsonl", ModelSpec("scripted", "replies/a.jsonl")),
        (" sim ", ModelSpec("sim")),
        ("sim:oracle", ModelSpec("sim", "oracle")),
        ("sim:profiles/noisy.toml", ModelSpec("sim", "profiles/noisy.toml")),
    ],
)
def test_each_accepted_form_parses_and_prints_back(text: str, spec: ModelSpec) -> None:
    assert parse_model_spec(text) == spec
    assert str(spec) == text.strip()


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("gpt-4o", "did you mean openai:gpt-4o?"),
        ("deepseek:deepseek-v4-pro", "did you mean openai:deepseek-v4-pro?"),
        ("openai:", "names no model"),
        ("scripted", "names no file"),
        ("sim:", "names no profile"),
        ("", "unknown model spec ''"),
        ("litellm:gpt-4o", "unknown model spec"),
    ],
)
def test_other_forms_are_refused_listing_the_accepted_ones(text: str, hint: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_model_spec(text)
    message = str(raised.value)
    assert hint in message
    assert "openai:<model>, scripted:<file>, sim, sim:<profile-or-file>" in message


def test_openai_builds_without_reading_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    model = build_model(
        "openai:deepseek-v4-pro",
        base_url="https://api.deepseek.invalid/v1",
        api_key_env="DEEPSEEK_API_KEY",
        prices=PriceTable(),
    )
    assert isinstance(model, OpenAIModel)
    assert (model.name, model.base_url, model.api_key_env) == (
        "openai:deepseek-v4-pro",
        "https://api.deepseek.invalid/v1",
        "DEEPSEEK_API_KEY",
    )


def test_scripted_builds_from_its_file_and_can_sit_behind_the_cache(tmp_path: Path) -> None:
    from pytest_toolpolicy.models.cache import CachedModel

    script = tmp_path / "replies.jsonl"
    script.write_text(json.dumps("first") + "\n" + json.dumps("second") + "\n")
    request = ModelRequest(messages=({"role": "user", "content": "hi"},))
    assert build_model(f"scripted:{script}").complete(request).text == "first"

    cached = build_model(
        f"scripted:{script}", cache_path=tmp_path / "c.sqlite", cache_mode="record"
    )
    assert isinstance(cached, CachedModel) and cached.mode == "record"
    assert cached.complete(request).text == "first"
    assert cached.complete(request).replayed


def test_sim_builds_and_a_missing_profile_is_a_clear_error() -> None:
    from pytest_toolpolicy.bench import load_instances
    from pytest_toolpolicy.models.sim import ProfileError, SimModel

    instances = {i.instance_id: i for i in load_instances("bundled").instances}
    model = build_model("sim:oracle", instances=instances, prices=PriceTable())
    assert isinstance(model, SimModel) and model.name == "sim:oracle"
    with pytest.raises(ProfileError, match="cannot read sim profile nope.toml"):
        build_model("sim:nope.toml")


@pytest.mark.parametrize(
    ("kwargs", "complaint"),
    [
        ({"cache_mode": "replay"}, "needs a cache file path"),
        ({"cache_mode": "write", "cache_path": "c.sqlite"}, "must be one of off, record, replay"),
    ],
)
def test_bad_cache_settings_are_refused(kwargs: dict, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        build_model("openai:gpt-4o", prices=PriceTable(), **kwargs)
