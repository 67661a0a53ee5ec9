from __future__ import annotations

import json
import subprocess
import sys
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
from pytest_toolpolicy.models.spec import validate_model_spec


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
        ("local:", "names no model"),
        ("", "unknown model spec ''"),
        ("litellm:gpt-4o", "unknown model spec"),
    ],
)
def test_other_forms_are_refused_listing_the_accepted_ones(text: str, hint: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_model_spec(text)
    message = str(raised.value)
    assert hint in message
    assert (
        "openai:<model>, local:gemma3-270m, local:<file.gguf>, scripted:<file>, sim,"
        " sim:<profile-or-file>"
    ) in message


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


def test_validate_accepts_every_form_that_builds(tmp_path: Path) -> None:
    script = tmp_path / "replies.jsonl"
    script.write_text(json.dumps("hi") + "\n")
    profile = tmp_path / "noisy.toml"
    profile.write_text("malformed_json = 0.5\n")
    for text in ("sim", "sim:oracle", "sim:default", f"sim:{profile}", f"scripted:{script}"):
        validate_model_spec(text)
    validate_model_spec("openai:any-name-the-endpoint-knows")


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("litellm:gpt-4o", "unknown model spec 'litellm:gpt-4o' (did you mean openai:gpt-4o?)"),
        ("openai:", "model spec 'openai:' names no model after openai:"),
        ("openai:   ", "names no model after openai:"),
        ("scripted:", "names no file after scripted:"),
        ("sim:", "names no profile after sim:"),
        ("scripted:{tmp}/nope.jsonl", "cannot read scripted file {tmp}/nope.jsonl: No such file"),
        ("scripted:{tmp}", "cannot read scripted file {tmp}: it is a directory"),
        ("scripted:{tmp}/binary.jsonl", "not UTF-8"),
        ("scripted:{tmp}/bad.jsonl", "{tmp}/bad.jsonl:2: not a JSON value"),
        ("sim:{tmp}/nope.toml", "cannot read sim profile {tmp}/nope.toml: No such file"),
        ("sim:{tmp}/broken.toml", "{tmp}/broken.toml: not valid TOML"),
        ("sim:{tmp}/keys.toml", "{tmp}/keys.toml: unknown keys ['noise']"),
    ],
)
def test_validate_refuses_a_bad_spec_naming_what_is_wrong(
    tmp_path: Path, text: str, complaint: str
) -> None:
    (tmp_path / "binary.jsonl").write_bytes(b"\xff\xfe\x00")
    (tmp_path / "bad.jsonl").write_text('"fine"\n{oops\n')
    (tmp_path / "broken.toml").write_text("guess = [\n")
    (tmp_path / "keys.toml").write_text("noise = 0.5\n")
    with pytest.raises(ValueError) as raised:
        validate_model_spec(text.format(tmp=tmp_path))
    message = str(raised.value)
    assert complaint.format(tmp=tmp_path) in message
    assert text.partition(":")[2].format(tmp=tmp_path).strip() in message  # the file, named


def test_validate_builds_no_client_and_loads_no_http_stack(tmp_path: Path) -> None:
    # The plugin calls it at configure time in every session: it must stay cheap and offline.
    script = tmp_path / "replies.jsonl"
    script.write_text(json.dumps("hi") + "\n")
    probe = (
        "import sys\n"
        "from pytest_toolpolicy.models.spec import validate_model_spec\n"
        f"for spec in ('openai:gpt-4o', 'sim', 'scripted:{script}'):\n"
        "    validate_model_spec(spec)\n"
        "heavy = ('openai', 'httpx', 'httpx2', 'httpcore', 'httpcore2')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"
