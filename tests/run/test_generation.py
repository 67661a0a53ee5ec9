"""The session's request settings: parsed from options, defaults per model kind, and each
arm's own call format as the schema."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.current import loop as current_loop
from pytest_toolpolicy.current.prompt import REPLY_SCHEMA as CURRENT_SCHEMA
from pytest_toolpolicy.policy import select
from pytest_toolpolicy.policy.parse import REPLY_SCHEMA as POLICY_SCHEMA
from pytest_toolpolicy.run.generation import (
    CURRENT_TOKENS,
    MAX_DEFAULT_SLOTS,
    POLICY_TOKENS,
    Generation,
    GenerationError,
    generation_from,
)


def parsed(model: str = "sim", **options: Any) -> Generation:
    return generation_from(lambda name: options.get(name.removeprefix("toolpolicy_")), model)


def test_the_written_out_limits_are_the_loops_own() -> None:
    assert (POLICY_TOKENS, CURRENT_TOKENS) == (
        select.MAX_COMPLETION_TOKENS,
        current_loop.MAX_COMPLETION_TOKENS,
    )


def test_defaults_structured_and_logprobs_on_for_local_off_otherwise() -> None:
    remote, local = parsed("openai:gpt-4o-mini"), parsed("local:gemma3-270m")
    assert (remote.structured, remote.logprobs) == ("off", 0)
    assert (local.structured, local.logprobs) == ("json", 5)
    assert remote.max_output == {"policy": 256, "current": 4096} == local.max_output
    options = remote.options_for("current")
    assert options.response_format is None and options.top_logprobs is None
    assert options.max_completion_tokens == 4096 and options.seed is None


def test_json_gives_each_arm_its_own_call_format() -> None:
    generation = parsed(structured="json", model_seed="11", logprobs="0")
    policy, current = generation.options_for("policy"), generation.options_for("current")
    assert policy.response_format is not None and current.response_format is not None
    assert policy.response_format["json_schema"]["schema"] == POLICY_SCHEMA
    assert current.response_format["json_schema"]["schema"] == CURRENT_SCHEMA
    assert policy.seed == current.seed == 11 and policy.top_logprobs is None
    # an external agent in the current arm writes its own format: no schema forced on it
    external = generation.options_for("current", external=True)
    assert external.response_format is None and external.seed == 11
    # its own max_tokens stands, under the cap (the bridge applies it)
    assert external.max_completion_tokens is None and generation.cap_for("current") == 4096
    assert generation.record() == {
        "structured": "json",
        "max_output": {"policy": 256, "current": 4096},
        "model_seed": 11,
        "logprobs": 0,
    }


@pytest.mark.parametrize(
    ("text", "limits"),
    [
        ("512", {"policy": 512, "current": 512}),
        ("current=1024", {"policy": 256, "current": 1024}),
        ("policy=128, current=300", {"policy": 128, "current": 300}),
    ],
)
def test_output_limits_for_both_or_per_arm(text: str, limits: dict[str, int]) -> None:
    assert parsed(max_output=text).max_output == limits


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"structured": "xml"}, "--toolpolicy-structured must be one of off, json"),
        ({"max_output": "baseline=5"}, "unknown arm 'baseline'"),
        ({"max_output": "0"}, "between 1 and"),
        ({"max_output": "policy=lots"}, "must be a whole number"),
        ({"logprobs": "99"}, "--toolpolicy-logprobs must be between 0 and 20"),
        ({"local_threads": "0"}, "--toolpolicy-local-threads must be between 1"),
        ({"local_chat_template": "/no/such.jinja"}, "/no/such.jinja"),
    ],
)
def test_bad_values_are_named(options: dict[str, str], message: str) -> None:
    with pytest.raises(GenerationError, match=message.replace("(", r"\(")):
        parsed(**options)


def test_a_chat_template_is_a_builtin_name_or_a_jinja_file(tmp_path: Path) -> None:
    assert parsed(local_chat_template="chatml").local.chat_template == "chatml"
    source = tmp_path / "mine.jinja"
    source.write_text("{% for m in messages %}{{ m.content }}{% endfor %}")
    assert parsed(local_chat_template=str(source)).local.chat_template == source.read_text()
    local = parsed(local_threads="2", local_ctx="4096").local
    assert (local.threads, local.ctx) == (2, 4096)
    server = local.server_settings()
    assert (server.threads, server.ctx, server.chat_template) == (2, 4096, None)
    default = parsed().local.server_settings()
    assert (default.threads, default.ctx) == (1, 8192)  # the server's own defaults


def test_a_local_server_has_a_slot_per_worker_unless_told() -> None:
    slots = [parsed().local.server_settings(n).parallel for n in (0, 1, 2, 4, 64)]
    assert slots == [1, 1, 2, MAX_DEFAULT_SLOTS, MAX_DEFAULT_SLOTS]
    assert parsed(local_parallel="3").local.server_settings(2).parallel == 3
    with pytest.raises(GenerationError, match="--toolpolicy-local-parallel must be between 1"):
        parsed(local_parallel="0")
