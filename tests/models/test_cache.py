from __future__ import annotations

import contextlib
import hashlib
import json
import multiprocessing
import shutil
import sqlite3
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.models.base import Completion, ModelError, ModelRequest, Usage
from pytest_toolpolicy.models.cache import CachedModel, CacheError, CacheStats, request_key

FORK = multiprocessing.get_context("fork")


class EchoModel:
    """Answers with the last message; ``numbered`` makes every call's text different."""

    def __init__(self, name: str = "echo-1", numbered: bool = False) -> None:
        self.name = name
        self.numbered = numbered
        self.calls = 0
        self.failures: list[str] = []

    def complete(self, request: ModelRequest) -> Completion:
        self.calls += 1
        if self.failures:
            raise ModelError(self.failures.pop(0))
        text = f"re: {request.messages[-1]['content']} @{request.temperature}"
        if self.numbered:
            text += f" #{self.calls}"
        return Completion(
            text=text,
            usage=Usage(prompt_tokens=120, completion_tokens=7, cached_prompt_tokens=100),
            cost_usd=0.00042,
            latency_s=1.25,
            model=self.name,
            extra={"id": "cmpl-1"},
        )


def ask(content: str, *, item: str = "inst-1", turn: int = 0, **params: Any) -> ModelRequest:
    messages = ({"role": "system", "content": "be brief"}, {"role": "user", "content": content})
    return ModelRequest(messages=messages, item=item, turn=turn, **params)


def run_all(procs: list[Any], results: Any) -> list[Any]:
    """Start the processes, wait for them, and return what each put on ``results``."""
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=60)
    assert [proc.exitcode for proc in procs] == [0] * len(procs)
    return [results.get(timeout=5) for _ in procs]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "rec" / "models.sqlite"


def test_record_reads_through_and_serves_a_repeat_from_the_file(db: Path) -> None:
    inner = EchoModel(numbered=True)
    model = CachedModel(inner, db, "record")
    first = model.complete(ask("hi", turn=1))
    again = model.complete(ask("hi", item="inst-2", turn=5))

    assert model.name == "echo-1"
    assert first.text == "re: hi @0.0 #1" and not first.replayed
    assert inner.calls == 1
    assert again == replace(first, replayed=True)
    assert model.stats == CacheStats(hits=1, misses=1, stored=1)


def test_replay_serves_the_original_usage_cost_and_latency_without_a_model(db: Path) -> None:
    recorded = CachedModel(EchoModel(), db, "record").complete(ask("hi"))
    model = CachedModel(None, db, "replay", name="echo-1")
    replayed = model.complete(ask("hi", turn=3))

    assert replayed.replayed
    assert replayed == replace(recorded, replayed=True)
    assert replayed.usage == Usage(prompt_tokens=120, completion_tokens=7, cached_prompt_tokens=100)
    assert (replayed.cost_usd, replayed.latency_s, replayed.extra) == (
        0.00042,
        1.25,
        {"id": "cmpl-1"},
    )
    assert model.stats == CacheStats(hits=1, misses=0, stored=0)


def test_a_replay_miss_names_item_turn_and_model_and_never_calls_the_model(db: Path) -> None:
    CachedModel(EchoModel(), db, "record").complete(ask("hi"))
    inner = EchoModel()
    model = CachedModel(inner, db, "replay")

    with pytest.raises(ModelError) as caught:
        model.complete(ask("something else", item="django__django-11099", turn=4))
    assert str(caught.value) == (
        "replay miss for item django__django-11099 turn 4 (model echo-1): no recorded completion;"
        " record it with --toolpolicy-cache=record"
    )
    assert inner.calls == 0
    assert model.stats == CacheStats(hits=0, misses=1, stored=0)


def test_the_key_ignores_item_and_turn_but_not_messages_params_or_model() -> None:
    key, canonical = request_key("m", ask("hi"))
    assert request_key("m", ask("hi", item="other", turn=9))[0] == key
    variants = [
        request_key("m2", ask("hi")),
        request_key("m", ask("hi!")),
        request_key("m", ask("hi", temperature=0.7)),
        request_key("m", ask("hi", max_completion_tokens=512)),
    ]
    assert len({key} | {k for k, _ in variants}) == 5
    assert "inst-1" not in canonical and '"turn"' not in canonical


def test_every_request_field_but_the_metadata_is_in_the_key() -> None:
    # A parameter added to ModelRequest but left out of params() would let two different
    # requests share one recorded answer.
    # Every optional setting given, since an unset one is left out of params(); a new field
    # left out of ``settings`` fails here too, until it is given a value.
    tool = {"type": "function", "function": {"name": "bash"}}
    settings = {"response_format": {"type": "json_object"}, "seed": 7, "top_logprobs": 2,
                "stop": ("Observation:",), "tools": (tool,), "tool_choice": "auto"}  # fmt: skip
    names = {f.name for f in fields(ModelRequest)}
    keyed = set(ask("hi", **{k: v for k, v in settings.items() if k in names}).params())
    # ``trial`` is never sent: request_key adds it to the key itself (tests/session/test_trials.py).
    assert {f.name for f in fields(ModelRequest)} - {"messages", "item", "turn", "trial"} <= keyed


def test_another_model_id_misses(db: Path) -> None:
    CachedModel(EchoModel("echo-1"), db, "record").complete(ask("hi"))
    with pytest.raises(ModelError, match=r"\(model echo-2\)"):
        CachedModel(None, db, "replay", name="echo-2").complete(ask("hi"))


def test_a_failed_call_is_recorded_and_retried_when_recording(db: Path) -> None:
    inner = EchoModel()
    inner.failures.append("HTTP 503 after 4 retries")
    model = CachedModel(inner, db, "record")

    with pytest.raises(ModelError, match="503"):
        model.complete(ask("hi"))
    assert model.count() == 1  # the error entry (tests/models/test_cache_errors.py)
    assert model.complete(ask("hi")).text == "re: hi @0.0"
    assert (inner.calls, model.count()) == (2, 1)
    assert model.stats == CacheStats(hits=0, misses=2, stored=1, errors_stored=1)


def test_off_calls_the_model_every_time_and_writes_nothing(db: Path) -> None:
    inner = EchoModel(numbered=True)
    model = CachedModel(inner, db, "off")
    texts = [model.complete(ask("hi")).text for _ in range(2)]
    assert texts == ["re: hi @0.0 #1", "re: hi @0.0 #2"]
    assert not db.parent.exists()


def test_entries_hold_the_request_for_inspection_and_nothing_else(db: Path) -> None:
    model = CachedModel(EchoModel(), db, "record")
    model.complete(ask("hi", item="secret-item", temperature=0.2))
    model.complete(ask("bye"))

    entries = list(model.entries())
    assert [e.completion.text for e in entries] == ["re: hi @0.2", "re: bye @0.0"]
    first = entries[0]
    assert first.key == request_key("echo-1", ask("hi", temperature=0.2))[0]
    assert first.model == "echo-1"
    assert first.request["params"] == {"temperature": 0.2, "max_completion_tokens": 256}
    assert first.request["messages"][-1] == {"role": "user", "content": "hi"}
    assert first.completion.replayed
    model.close()
    assert b"secret-item" not in db.read_bytes()
    with sqlite3.connect(db) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert tables >= {"schema_version", "completions"}


def test_a_copied_file_replays_in_another_directory(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    recorder = CachedModel(EchoModel(), db, "record")
    originals = [recorder.complete(ask(f"q{i}")) for i in range(3)]
    # Only the main file is copied, while the recorder is still open: what a commit would take.
    elsewhere = tmp_path / "ci" / "checkout"
    elsewhere.mkdir(parents=True)
    shutil.copy(db, elsewhere / "models.sqlite")
    monkeypatch.chdir(elsewhere)

    model = CachedModel(None, Path("models.sqlite"), "replay", name="echo-1")
    assert [model.complete(ask(f"q{i}")) for i in range(3)] == [
        replace(c, replayed=True) for c in originals
    ]


def test_an_unknown_schema_version_is_a_clear_error(db: Path) -> None:
    CachedModel(EchoModel(), db, "record").close()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE schema_version SET version = 99")
    for mode in ("record", "replay"):
        with pytest.raises(CacheError, match=r"schema version 99; .* reads version 1 only"):
            CachedModel(EchoModel(), db, mode)  # type: ignore[arg-type]


def test_a_missing_or_foreign_file_is_a_clear_error(db: Path) -> None:
    with pytest.raises(CacheError, match="no cache file at .*record one with"):
        CachedModel(None, db, "replay", name="echo-1")
    db.parent.mkdir()
    db.write_text("not a database, just text " * 100)
    with pytest.raises(CacheError, match="is not a cache file"):
        CachedModel(EchoModel(), db, "record")
    other = db.with_name("other.sqlite")
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(CacheError, match="no schema_version table"):
        CachedModel(None, other, "replay", name="echo-1")
    with pytest.raises(CacheError, match="no schema_version table"):
        CachedModel(EchoModel(), other, "record")
    with sqlite3.connect(other) as conn:  # someone else's database is left as it was
        assert [row[0] for row in conn.execute("SELECT name FROM sqlite_master")] == ["t"]
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_bad_construction_is_refused(db: Path) -> None:
    with pytest.raises(ValueError, match="one of off, record, replay"):
        CachedModel(EchoModel(), db, "rerecord")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a model"):
        CachedModel(None, db, "record")
    with pytest.raises(ValueError, match="needs the model's name"):
        CachedModel(None, db, "replay")


def _record_range(db: Path, start: int, barrier: Any, results: Any) -> None:
    barrier.wait()
    model = CachedModel(EchoModel(), db, "record")  # every process sets up the fresh file at once
    for i in range(start, start + 50):
        model.complete(ask(f"prompt {i}", turn=i))
    results.put(model.stats)


def test_four_processes_record_into_one_fresh_file_at_once(db: Path) -> None:
    barrier, results = FORK.Barrier(4), FORK.Queue()
    procs = [
        FORK.Process(target=_record_range, args=(db, 25 * n, barrier, results)) for n in range(4)
    ]
    stats = run_all(procs, results)

    distinct = 25 * 3 + 50
    assert sum(s.hits + s.misses for s in stats) == 200
    assert sum(s.stored for s in stats) == distinct
    model = CachedModel(None, db, "replay", name="echo-1")
    assert model.count() == distinct
    texts = [model.complete(ask(f"prompt {i}")).text for i in range(distinct)]
    assert texts == [f"re: prompt {i} @0.0" for i in range(distinct)]
    assert model.stats == CacheStats(hits=distinct, misses=0, stored=0)


def _use_inherited(model: CachedModel, n: int, results: Any) -> None:
    assert model.file is not None
    inherited = model.file._conn  # SQLite forbids using a connection across fork()
    texts = [model.complete(ask(f"child {n} q{i}")).text for i in range(10)]
    results.put((texts, model.stats, model.file._conn is not inherited))


def test_a_model_used_before_a_fork_works_in_the_children_and_the_parent(db: Path) -> None:
    model = CachedModel(EchoModel(), db, "record")
    model.complete(ask("before the fork"))
    results = FORK.Queue()
    procs = [FORK.Process(target=_use_inherited, args=(model, n, results)) for n in range(3)]
    outputs = run_all(procs, results)

    for texts, stats, reconnected in outputs:
        assert reconnected
        assert stats == CacheStats(hits=0, misses=11, stored=11)  # the parent's miss, then its own
        assert len(texts) == 10 and all(t.startswith("re: child ") for t in texts)
    assert model.count() == 1 + 3 * 10
    assert model.complete(ask("before the fork")).replayed
    assert model.complete(ask("child 2 q9")).text == "re: child 2 q9 @0.0"


def test_a_clean_requests_key_is_what_it_always_was() -> None:
    """Recorded files stay valid: the key of a request without lone surrogates is unchanged."""
    request = ask("naïve ☃")
    payload = {"model": "m", "messages": list(request.messages), "params": request.params()}
    old = json.dumps(
        payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    assert request_key("m", request) == (hashlib.sha256(old.encode()).hexdigest(), old)


def test_lone_surrogates_are_recorded_and_replayed_exactly(db: Path) -> None:
    recorded = CachedModel(EchoModel(), db, "record").complete(ask("x\ud800y \udc80"))
    assert recorded.text == "re: x\ud800y \udc80 @0.0"
    replayed = CachedModel(None, db, "replay", name="echo-1").complete(ask("x\ud800y \udc80"))
    assert replayed == replace(recorded, replayed=True)
    # Not the same request as one whose text spells the escape out.
    assert request_key("m", ask("\ud800"))[0] != request_key("m", ask("\\ud800"))[0]
    with sqlite3.connect(db) as conn:
        conn.text_factory = bytes
        for row in conn.execute("SELECT request, completion FROM completions"):
            assert all(column.decode("utf-8") for column in row)  # valid UTF-8, strictly


def test_a_conversation_carrying_a_surrogate_reply_replays_every_turn(db: Path) -> None:
    """The reply's text goes into the next prompt: replay must give back the very text
    recorded, or the next turn's key would differ and miss."""

    def converse(model: CachedModel) -> list[str]:
        first = model.complete(ask("start \udfff"))
        messages = (*ask("start \udfff").messages, {"role": "assistant", "content": first.text})
        second = model.complete(ModelRequest((*messages, {"role": "user", "content": "go"})))
        return [first.text, second.text]

    live = converse(CachedModel(EchoModel(numbered=True), db, "record"))
    replayer = CachedModel(None, db, "replay", name="echo-1")
    assert converse(replayer) == live
    assert replayer.stats == CacheStats(hits=2, misses=0, stored=0)


class DeepExtraModel(EchoModel):
    def complete(self, request: ModelRequest) -> Completion:
        deep: Any = "leaf"
        for _ in range(3000):
            deep = {"k": [deep]}
        return replace(super().complete(request), extra={"raw": deep, "note": "\ud800"})


def test_a_completion_json_cannot_write_whole_is_still_recorded(db: Path) -> None:
    recorded = CachedModel(DeepExtraModel(), db, "record").complete(ask("hi"))
    replayed = CachedModel(None, db, "replay", name="echo-1").complete(ask("hi"))
    assert replayed.text == recorded.text and replayed.usage == recorded.usage
    assert replayed.extra["note"] == "\\ud800"
    assert "cut]" in json.dumps(replayed.extra["raw"])


def test_a_recording_replaced_mid_run_keeps_recording_into_the_new_file(db: Path) -> None:
    """``git stash`` or ``git checkout`` of a committed recording while a run records into it
    writes a new file at the path: the run goes on into that file, not into the unlinked one
    SQLite refuses ("attempt to write a readonly database"), losing every later answer."""
    recorder = CachedModel(EchoModel(), db, "record")
    recorder.complete(ask("before"))
    recorder.close()
    # as the committed Qwen recording is: a rollback journal, where SQLite checks the inode
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA journal_mode=DELETE")
    model = CachedModel(EchoModel(numbered=True), db, "record")
    assert model.complete(ask("before")).replayed
    fresh = db.with_name("checked-out.tmp")
    fresh.write_bytes(db.read_bytes())
    fresh.replace(db)  # what git does: a new file renamed over the path
    after = model.complete(ask("after"))
    assert not after.replayed
    replay = CachedModel(EchoModel(), db, "replay")
    assert replay.complete(ask("after")) == replace(after, replayed=True)


def test_a_replayed_recording_removed_mid_run_is_a_clear_error(db: Path) -> None:
    CachedModel(EchoModel(), db, "record").complete(ask("hi"))
    replay = CachedModel(EchoModel(), db, "replay")
    replay.complete(ask("hi"))
    db.unlink()
    with pytest.raises(CacheError, match="was removed while the run read it"):
        replay.complete(ask("hi"))
