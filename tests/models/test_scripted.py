from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import pytest

from pytest_toolpolicy.models.base import Completion, Model, ModelError, ModelRequest, Usage
from pytest_toolpolicy.models.scripted import ScriptedModel, ScriptError


def ask(item: str = "inst-1", turn: int = 0) -> ModelRequest:
    return ModelRequest(messages=({"role": "user", "content": "go"},), item=item, turn=turn)


def test_replies_from_a_list_come_in_order_and_are_free() -> None:
    model = ScriptedModel(["read_entity src/a.py", "submit"])
    first, second = model.complete(ask()), model.complete(ask(turn=1))

    assert isinstance(model, Model) and model.name == "scripted"
    assert first == Completion("read_entity src/a.py", Usage(), 0.0, 0.0, model="scripted")
    assert second.text == "submit"
    assert (model.used, model.remaining) == (2, 0)


def test_an_object_reply_passes_usage_cost_and_latency_through() -> None:
    model = ScriptedModel(
        [
            {
                "text": "ok",
                "usage": {
                    "prompt_tokens": 900,
                    "completion_tokens": 12,
                    "cached_prompt_tokens": 800,
                },
                "cost_usd": 0.0031,
                "latency_s": 2.5,
            },
            {"text": "price unknown", "cost_usd": None},
        ],
        name="fake-pro",
    )
    reply, unknown = model.complete(ask()), model.complete(ask())
    assert reply.usage == Usage(prompt_tokens=900, completion_tokens=12, cached_prompt_tokens=800)
    assert (reply.cost_usd, reply.latency_s, reply.model) == (0.0031, 2.5, "fake-pro")
    assert unknown.cost_usd is None and unknown.usage == Usage()


def test_replies_from_a_jsonl_file(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    lines = [json.dumps("first"), "", json.dumps({"text": "second", "cost_usd": 0.5})]
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")

    model = ScriptedModel.from_file(str(script))
    assert [model.complete(ask()).text for _ in range(2)] == ["first", "second"]
    assert ScriptedModel(script).complete(ask()).text == "first"


def test_running_out_of_replies_names_item_turn_and_count() -> None:
    model = ScriptedModel(["only"])
    model.complete(ask())
    with pytest.raises(ModelError) as caught:
        model.complete(ask(item="astropy-12907", turn=3))
    assert str(caught.value) == (
        "scripted model has no reply left for item astropy-12907 turn 3 (used 1 of 1)"
    )


def test_a_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    script = tmp_path / "bad.jsonl"
    script.write_text('"fine"\n{"text": "unterminated\n', encoding="utf-8")
    with pytest.raises(ScriptError, match=rf"^{script}:2: not a JSON value: "):
        ScriptedModel(script)


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        (42, "a string or an object with a string 'text'"),
        ({"txt": "typo"}, "a string or an object with a string 'text'"),
        ({"text": "x", "cost": 1}, r"unknown field\(s\) cost"),
        ({"text": "x", "usage": {"prompt": 3}}, r"unknown field\(s\) usage.prompt"),
        ({"text": "x", "cost_usd": "cheap"}, "must be non-negative numbers"),
        ({"text": "x", "usage": {"prompt_tokens": 1.5}}, "must be non-negative integers"),
    ],
)
def test_a_malformed_reply_is_refused_when_the_script_is_read(reply: object, problem: str) -> None:
    with pytest.raises(ScriptError, match=rf"^reply 1: .*{problem}"):
        ScriptedModel(["fine", reply])  # type: ignore[list-item]


def test_a_path_string_is_not_mistaken_for_a_reply_list() -> None:
    with pytest.raises(TypeError, match="from_file"):
        ScriptedModel("script.jsonl")  # type: ignore[arg-type]


def test_threads_share_the_replies_without_repeats() -> None:
    model = ScriptedModel([f"r{i}" for i in range(400)])
    seen: list[str] = []

    def take() -> None:
        for _ in range(100):
            seen.append(model.complete(ask()).text)

    threads = [threading.Thread(target=take) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(seen) == sorted(f"r{i}" for i in range(400))
    assert model.remaining == 0


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b'"fine"\n"caf\xe9"\n', r":2: not UTF-8 text \(byte 5\)$"),
        (
            b'"fine"\n\n' + b"[" * 100_000 + b"]" * 100_000 + b"\n",
            r":3: not a reply: nested deeper than 64 levels$",
        ),
        (b'"a \xe2\x80\xa8 b"\n{"text": \n', r":2: not a JSON value: "),
        (
            b'{"text": "x", "usage": {"prompt_tokens": ' + b"9" * 5000 + b"}}\n",
            r":1: not a JSON value: Exceeds the limit \(4300 digits\) for integer string",
        ),
        (b'"fine"\n{"text": "x", "cost_usd": NaN}\n', r":2: .*non-negative numbers$"),
        (b'{"text": "x", "latency_s": -1}\n', r":1: .*non-negative numbers$"),
        (b'{"text": "x", "usage": {"prompt_tokens": -3}}\n', r":1: .*non-negative integers$"),
        (b'{"text": "x", "usage": {"completion_tokens": true}}\n', r":1: .*integers$"),
        (b'{"text": "x", "usage": {"estimated": 1}}\n', r":1: .*must be booleans$"),
    ],
)
def test_a_bad_line_of_a_script_is_named(tmp_path: Path, content: bytes, problem: str) -> None:
    script = tmp_path / "bad.jsonl"
    script.write_bytes(content)
    with pytest.raises(ScriptError, match=rf"^{re.escape(str(script))}{problem}"):
        ScriptedModel(script)


def test_a_bom_a_line_separator_and_a_lone_surrogate_are_read(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_bytes(b'\xef\xbb\xbf"first \\ud800"\n"a \xe2\x80\xa8 b"\n{"text": "t"}\n')
    model = ScriptedModel(script)
    texts = [model.complete(ask()).text for _ in range(model.remaining)]
    assert texts == ["first \ud800", "a \u2028 b", "t"]


def test_a_reply_text_holding_deep_json_is_read_as_text(tmp_path: Path) -> None:
    # The nesting bound is the script's JSON's: JSON inside the text is the arm's to parse.
    deep = "[" * 200_000 + "]" * 200_000
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps(deep) + "\n" + json.dumps({"text": deep}) + "\n")
    model = ScriptedModel(script)
    assert [model.complete(ask()).text for _ in range(2)] == [deep, deep]
