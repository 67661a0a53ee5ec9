"""The record/replay cache records a ``ModelError`` and replays it as the same error."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.models.base import Completion, ModelError, ModelRequest, Usage
from pytest_toolpolicy.models.cache import CachedModel, CacheStats, request_key

FORK = multiprocessing.get_context("fork")
SPENT = Usage(prompt_tokens=900, completion_tokens=31, cached_prompt_tokens=512)


class ScriptedModel:
    """Plays its script, one step per call: a reply's text, or a ``ModelError`` to raise.
    Past the end of the script it answers ``"ok #<call>"``."""

    def __init__(self, *script: str | ModelError, name: str = "scripted-1") -> None:
        self.name = name
        self.script = list(script)
        self.calls = 0
        self.raised: list[ModelError] = []

    def complete(self, request: ModelRequest) -> Completion:
        self.calls += 1
        step = self.script.pop(0) if self.script else f"ok #{self.calls}"
        if isinstance(step, ModelError):
            self.raised.append(step)
            raise step
        return Completion(
            text=step,
            usage=Usage(prompt_tokens=100, completion_tokens=5),
            cost_usd=0.0003,
            latency_s=0.5,
            model=self.name,
        )


def ask(content: str, *, item: str = "inst-1", turn: int = 0) -> ModelRequest:
    messages = ({"role": "system", "content": "be brief"}, {"role": "user", "content": content})
    return ModelRequest(messages=messages, item=item, turn=turn)


def replayer(db: Path) -> CachedModel:
    return CachedModel(None, db, "replay", name="scripted-1")


def rows(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(db) as conn:
        return list(conn.execute("SELECT key, completion FROM completions ORDER BY rowid"))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "rec" / "models.sqlite"


@pytest.mark.parametrize("usage", [SPENT, None], ids=["usage", "no-usage"])
def test_a_recorded_error_replays_with_its_message_and_usage(db: Path, usage: Usage | None) -> None:
    message = "scripted-1 at http://127.0.0.1:9/v1: malformed response: no choices"
    inner = ScriptedModel(ModelError(message, usage=usage))
    recorder = CachedModel(inner, db, "record")
    with pytest.raises(ModelError) as recorded:
        recorder.complete(ask("hi"))
    assert recorded.value is inner.raised[0]  # the inner model's own error, raised on
    assert recorder.stats == CacheStats(misses=1, errors_stored=1)

    with pytest.raises(ModelError) as replayed:
        replayer(db).complete(ask("hi", item="inst-9", turn=4))
    assert str(replayed.value) == message
    assert replayed.value.usage == usage
    assert type(replayed.value.usage) is type(usage)


def test_a_refused_request_replays_as_refused_and_an_old_entry_as_the_endpoints(
    db: Path,
) -> None:
    """Whose fault an error was is recorded with it: a replayed run ends where, and as, the
    recorded one did. An entry without the key (every one written before it) is the endpoint's."""
    refused = ModelError("request rejected (400): context too long", blame="request")
    recorder = CachedModel(ScriptedModel(refused, ModelError("HTTP 503")), db, "record")
    for question in ("long", "hi"):
        with pytest.raises(ModelError):
            recorder.complete(ask(question))
    stored = dict(rows(db))
    assert sum('"error_blame": "request"' in text for text in stored.values()) == 1
    assert all(text.startswith('{"error": ') for text in stored.values())  # still error entries
    for question, blame in (("long", "request"), ("hi", "endpoint")):
        with pytest.raises(ModelError) as replayed:
            replayer(db).complete(ask(question))
        assert replayed.value.blame == blame
    assert sorted(e.error_blame for e in replayer(db).entries()) == ["endpoint", "request"]
    with sqlite3.connect(db) as conn:  # a blame that is neither is an unreadable entry
        conn.execute("UPDATE completions SET completion = replace(completion, 'request', 'x')")
    with pytest.raises(ModelError, match="'error_blame' is neither"):
        replayer(db).complete(ask("long"))


def test_a_replayed_error_is_a_hit_not_a_miss(db: Path) -> None:
    with pytest.raises(ModelError):
        CachedModel(ScriptedModel(ModelError("HTTP 503 after 4 retries")), db, "record").complete(
            ask("hi")
        )
    inner = ScriptedModel()
    model = CachedModel(inner, db, "replay")
    for _ in range(2):
        with pytest.raises(ModelError, match="^HTTP 503 after 4 retries$"):
            model.complete(ask("hi"))
    assert inner.calls == 0
    assert model.stats == CacheStats(hits=2, misses=0, stored=0, errors_replayed=2)


def test_recording_again_retries_a_stored_error_and_a_success_replaces_it(db: Path) -> None:
    first = CachedModel(ScriptedModel("before"), db, "record")
    first.complete(ask("q0"))
    with pytest.raises(ModelError):
        CachedModel(ScriptedModel(ModelError("timed out after 120 s")), db, "record").complete(
            ask("q1")
        )
    first.complete(ask("q2"))

    inner = ScriptedModel("fixed")
    second = CachedModel(inner, db, "record")
    assert second.complete(ask("q1")).text == "fixed"
    assert inner.calls == 1
    assert second.stats == CacheStats(hits=0, misses=1, stored=1)
    assert second.count() == 3  # replaced in place, still in its recording position
    assert [e.completion and e.completion.text for e in second.entries()] == [
        "before",
        "fixed",
        "ok #2",
    ]
    assert replayer(db).complete(ask("q1")).text == "fixed"


def test_a_new_error_replaces_a_stored_error(db: Path) -> None:
    for message in ("HTTP 503 after 4 retries", "HTTP 429 after 4 retries"):
        model = CachedModel(ScriptedModel(ModelError(message, usage=None)), db, "record")
        with pytest.raises(ModelError):
            model.complete(ask("hi"))
        assert model.stats == CacheStats(misses=1, errors_stored=1)
    with pytest.raises(ModelError, match="^HTTP 429 after 4 retries$"):
        replayer(db).complete(ask("hi"))
    assert len(rows(db)) == 1


def test_an_error_never_replaces_a_completion(db: Path) -> None:
    CachedModel(ScriptedModel("the answer"), db, "record").complete(ask("hi"))
    before = rows(db)
    # A recording hit never calls the model, so only the file's own rule stands in the way.
    model = CachedModel(ScriptedModel(), db, "record")
    assert model.file is not None
    key, canonical = request_key("scripted-1", ask("hi"))
    assert not model.file.put_error(key, "scripted-1", canonical, ModelError("late failure"))
    other = replace(model.complete(ask("hi")), text="another answer", replayed=False)
    assert not model.file.put(key, "scripted-1", canonical, other)
    assert rows(db) == before
    assert replayer(db).complete(ask("hi")).text == "the answer"


class RacedModel(ScriptedModel):
    """Fails, but only after another process's recorder stored this very request's answer."""

    def __init__(self, db: Path) -> None:
        super().__init__()
        self.db = db

    def complete(self, request: ModelRequest) -> Completion:
        CachedModel(ScriptedModel("the other writer's"), self.db, "record").complete(request)
        raise ModelError("HTTP 500 after 4 retries", usage=SPENT)


def test_an_error_raised_after_another_writer_stored_the_answer_leaves_it(db: Path) -> None:
    model = CachedModel(RacedModel(db), db, "record")
    with pytest.raises(ModelError, match="HTTP 500"):
        model.complete(ask("hi"))
    assert model.stats == CacheStats(misses=1)  # nothing stored by this one
    assert model.complete(ask("hi")).text == "the other writer's"


def test_a_file_with_error_rows_reopens_in_a_fresh_model(db: Path) -> None:
    recorder = CachedModel(
        ScriptedModel("a", ModelError("bad \ud800 body", usage=SPENT), "c"), db, "record"
    )
    recorder.complete(ask("q0"))
    with pytest.raises(ModelError):
        recorder.complete(ask("q1"))
    recorder.complete(ask("q2"))
    recorder.close()

    model = replayer(db)
    assert model.complete(ask("q0")).text == "a"
    with pytest.raises(ModelError) as caught:
        model.complete(ask("q1"))
    assert (str(caught.value), caught.value.usage) == ("bad \ud800 body", SPENT)
    assert model.complete(ask("q2")).text == "c"
    assert model.stats == CacheStats(hits=3, errors_replayed=1)
    for _, text in rows(db):
        text.encode("utf-8")  # a lone surrogate in a message is stored as valid UTF-8

    again = CachedModel(ScriptedModel("b"), db, "record")
    assert [again.complete(ask(f"q{i}")).text for i in range(3)] == ["a", "b", "c"]
    assert again.stats == CacheStats(hits=2, misses=1, stored=1)


def test_entries_over_a_file_with_error_rows(db: Path) -> None:
    model = CachedModel(
        ScriptedModel("a", ModelError("HTTP 503", usage=SPENT), ModelError("no usage")),
        db,
        "record",
    )
    model.complete(ask("q0"))
    for prompt in ("q1", "q2"):
        with pytest.raises(ModelError):
            model.complete(ask(prompt))

    entries = list(model.entries())
    assert [e.key for e in entries] == [
        request_key("scripted-1", ask(f"q{i}"))[0] for i in range(3)
    ]
    assert entries[0].completion is not None and entries[0].completion.text == "a"
    assert (entries[0].error, entries[0].error_usage) == (None, None)
    assert [(e.completion, e.error, e.error_usage) for e in entries[1:]] == [
        (None, "HTTP 503", SPENT),
        (None, "no usage", None),
    ]
    assert all(e.model == "scripted-1" for e in entries)
    assert entries[1].request["messages"][-1] == {"role": "user", "content": "q1"}
    error = entries[1].model_error()
    assert error is not None and (str(error), error.usage) == ("HTTP 503", SPENT)


def test_an_error_entry_is_the_documented_json_and_completions_are_unchanged(db: Path) -> None:
    model = CachedModel(ScriptedModel("a", ModelError("HTTP 503", usage=None)), db, "record")
    model.complete(ask("q0"))
    with pytest.raises(ModelError):
        model.complete(ask("q1"))
    completion, error = (text for _, text in rows(db))
    assert error == '{"error": "HTTP 503", "usage": null}'
    assert json.loads(completion) == {
        "cost_usd": 0.0003,
        "extra": {},
        "latency_s": 0.5,
        "model": "scripted-1",
        "text": "a",
        "usage": {
            "cached_prompt_tokens": 0,
            "completion_tokens": 5,
            "estimated": False,
            "missing": False,
            "prompt_tokens": 100,
        },
    }
    assert completion.startswith('{"cost_usd": ')


def test_a_file_written_before_error_entries_still_replays(db: Path) -> None:
    """A version 1 file as the cache wrote it before error entries existed (made here by hand),
    with a completion missing today's ``missing`` usage field."""
    key, canonical = request_key("scripted-1", ask("old"))
    old = {
        "cost_usd": 0.01,
        "extra": {"id": "cmpl-old"},
        "latency_s": 2.0,
        "model": "scripted-1",
        "text": "from the old days",
        "usage": {"cached_prompt_tokens": 0, "completion_tokens": 3, "prompt_tokens": 10},
    }
    db.parent.mkdir()
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        conn.execute(
            "CREATE TABLE completions (key TEXT PRIMARY KEY, model TEXT NOT NULL,"
            " request TEXT NOT NULL, completion TEXT NOT NULL)"
        )
        conn.execute("INSERT INTO schema_version VALUES (1)")
        conn.execute(
            "INSERT INTO completions VALUES (?,?,?,?)",
            (key, "scripted-1", canonical, json.dumps(old, sort_keys=True)),
        )
    replayed = replayer(db).complete(ask("old"))
    assert (replayed.text, replayed.usage, replayed.replayed) == (
        "from the old days",
        Usage(prompt_tokens=10, completion_tokens=3),
        True,
    )
    # And a failing recording run over it keeps the old completion.
    recorder = CachedModel(ScriptedModel(ModelError("down")), db, "record")
    assert recorder.complete(ask("old")).text == "from the old days"
    assert [e.error for e in recorder.entries()] == [None]


class EchoOrFail(ScriptedModel):
    """Answers ``re: <prompt>``, or (``fail``) raises an error naming the prompt."""

    def __init__(self, fail: bool) -> None:
        super().__init__()
        self.fail = fail

    def complete(self, request: ModelRequest) -> Completion:
        content = request.messages[-1]["content"]
        self.script = [ModelError(f"HTTP 503 on {content}") if self.fail else f"re: {content}"]
        return super().complete(request)


def _record_shared(db: Path, fail: bool, barrier: Any, results: Any) -> None:
    model = CachedModel(EchoOrFail(fail), db, "record")
    barrier.wait()
    for i in range(30):
        with contextlib.suppress(ModelError):
            model.complete(ask(f"prompt {i}"))
    results.put(model.stats)


def test_processes_failing_and_succeeding_on_the_same_requests_leave_the_answers(
    db: Path,
) -> None:
    CachedModel(ScriptedModel(), db, "record").close()  # the file exists before they race
    barrier, results = FORK.Barrier(4), FORK.Queue()
    procs = [
        FORK.Process(target=_record_shared, args=(db, n % 2 == 0, barrier, results))
        for n in range(4)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=60)
    assert [proc.exitcode for proc in procs] == [0] * 4
    stats = [results.get(timeout=5) for _ in procs]

    assert sum(s.stored for s in stats) == 30  # each answer stored once, whatever failed first
    model = replayer(db)
    assert [model.complete(ask(f"prompt {i}")).text for i in range(30)] == [
        f"re: prompt {i}" for i in range(30)
    ]
    assert [e.error for e in model.entries()] == [None] * 30
