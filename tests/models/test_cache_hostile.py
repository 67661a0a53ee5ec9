"""A cache file is data from outside when it is replayed: an entry that is not one the cache
wrote is a ``ModelError`` naming the file and the entry, never a RecursionError or a crash."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy import jsonsafe
from pytest_toolpolicy.models.base import Completion, ModelError
from pytest_toolpolicy.models.cache import CachedModel, CacheEntryError, request_key

from .test_cache import EchoModel, ask

DEEP = "[" * 200_000 + "]" * 200_000


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "rec" / "models.sqlite"


def record(db: Path) -> str:
    """A file holding one recorded answer; its key."""
    CachedModel(EchoModel(), db, "record").complete(ask("hi"))
    return request_key("echo-1", ask("hi"))[0]


def overwrite(db: Path, column: str, text: str) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(f"UPDATE completions SET {column} = ?", (text,))


def stored(db: Path) -> dict[str, Any]:
    with sqlite3.connect(db) as conn:
        (text,) = conn.execute("SELECT completion FROM completions").fetchone()
    data: dict[str, Any] = json.loads(text)
    return data


GOOD = {
    "cost_usd": 0.1,
    "extra": {},
    "latency_s": 1.0,
    "model": "echo-1",
    "text": "t",
    "usage": {"prompt_tokens": 1, "completion_tokens": 1},
}


def entry(**fields: Any) -> str:
    return json.dumps({**GOOD, **fields}, sort_keys=True)


HOSTILE = [
    (
        entry(extra={"raw": "@"}).replace('"@"', DEEP),
        f"nested deeper than {jsonsafe.MAX_DEPTH} levels",
    ),
    ('{"error": ' + DEEP + "}", f"nested deeper than {jsonsafe.MAX_DEPTH} levels"),
    (
        entry(usage={"prompt_tokens": "@"}).replace('"@"', "9" * 5000),
        "Exceeds the limit (4300 digits)",
    ),
    (entry(usage={"prompt_tokens": -1}), "usage.prompt_tokens is -1, not a token count"),
    (entry(usage=[1]), "'usage' is not an object"),
    (entry(text=["t"]), "'text' is not a string"),
    (entry(extra="x"), "'extra' is not a JSON object"),
    (entry(cost_usd="cheap"), "'cost_usd' is not a number"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "text"}), "no 'text'"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "usage"}), "no 'usage'"),
    ('{"error": 7, "usage": null}', "'error' is not a string"),
    ("[1, 2]", "not a JSON object"),
    ("{not json", "not JSON (Expecting property name enclosed in double quotes at char 1)"),
]
IDS = [
    "200,000 deep", "a deep error", "a 5000-digit count", "a negative count", "usage a list",
    "text a list", "extra a string", "cost a string", "no text", "no usage", "error a number",
    "a list", "not JSON",
]  # fmt: skip


@pytest.mark.parametrize(("text", "reason"), HOSTILE, ids=IDS)
@pytest.mark.parametrize("mode", ["replay", "record"])
def test_a_hostile_entry_is_a_model_error_naming_the_file_and_the_entry(
    db: Path, mode: str, text: str, reason: str
) -> None:
    key = record(db)
    overwrite(db, "completion", text)
    inner = None if mode == "replay" else EchoModel()
    model = CachedModel(inner, db, mode, name="echo-1")  # type: ignore[arg-type]
    with pytest.raises(ModelError) as raised:
        model.complete(ask("hi"))
    assert str(raised.value).startswith(f"cache file {db}: entry {key} cannot be read: {reason}")
    # Listing the file names the same entry.
    with pytest.raises(CacheEntryError, match=f"^cache file {db}: entry {key} cannot be read"):
        list(model.entries())


def test_a_hostile_request_column_is_named_when_the_entries_are_listed(db: Path) -> None:
    key = record(db)
    overwrite(db, "request", DEEP)
    model = CachedModel(None, db, "replay", name="echo-1")
    assert model.complete(ask("hi")).text.startswith("re: hi")  # the request is not read to replay
    with pytest.raises(CacheEntryError) as raised:
        list(model.entries())
    assert str(raised.value) == (
        f"cache file {db}: entry {key} cannot be read: its request is not JSON"
        f" (nested deeper than {jsonsafe.MAX_DEPTH} levels)"
    )


class DeepExtraModel(EchoModel):
    """Answers with an ``extra`` of ``levels`` lists: deeper than replay reads, shallower than
    ``json.dumps`` can go."""

    def __init__(self, levels: int) -> None:
        super().__init__()
        self.levels = levels

    def complete(self, request: Any) -> Completion:
        deep: Any = "leaf"
        for _ in range(self.levels):
            deep = [deep]
        return replace(super().complete(request), extra={"raw": deep})


@pytest.mark.parametrize("levels", [100, 900])
def test_what_the_cache_writes_it_reads_back_an_extra_too_deep_is_cut(
    db: Path, levels: int
) -> None:
    recorded = CachedModel(DeepExtraModel(levels), db, "record").complete(ask("hi"))
    assert jsonsafe.depth(json.dumps(stored(db))) == jsonsafe.MAX_DEPTH
    replayed = CachedModel(None, db, "replay", name="echo-1").complete(ask("hi"))
    assert (replayed.text, replayed.usage) == (recorded.text, recorded.usage)
    assert "levels; cut]" in json.dumps(replayed.extra["raw"])


def test_an_extra_within_the_bound_is_stored_exactly(db: Path) -> None:
    CachedModel(DeepExtraModel(20), db, "record").complete(ask("hi"))
    replayed = CachedModel(None, db, "replay", name="echo-1").complete(ask("hi"))
    assert jsonsafe.depth(json.dumps(replayed.extra)) == 21 and "cut" not in json.dumps(
        replayed.extra
    )
