"""What a worker is handed: whether it shares the controller's disk decides whose memo it uses."""

from __future__ import annotations

import json
import os
import socket
import time
from pathlib import Path

import pytest

from pytest_toolpolicy.session.handover import KEY, TOKEN_FILE, Handover, reachable


def _handover(report: Path, token: str = "t0k3n") -> Handover:
    return Handover(
        ["a__b-1"], str(report), token, {"a__b-1-current": {"row": {"x": 1}, "attempt": "z"}}
    )


def test_it_travels_as_plain_json() -> None:
    handover = _handover(Path("/nowhere"))
    workerinput = json.loads(json.dumps({KEY: handover.to_input()}))
    assert Handover.from_input(workerinput) == handover
    assert Handover.from_input({}) is None


def test_a_worker_that_sees_the_token_shares_the_controllers_memo(tmp_path: Path) -> None:
    (tmp_path / TOKEN_FILE).write_text("t0k3n", encoding="utf-8")
    handover = _handover(tmp_path)
    assert handover.shares_disk() and handover.memo_path() == tmp_path / "memo.sqlite"


def test_any_other_keeps_a_memo_of_its_own_per_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPOLICY_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / TOKEN_FILE).write_text("another session's", encoding="utf-8")
    for report in (tmp_path, tmp_path / "not-here"):  # a stale token, or no directory at all
        handover = _handover(report)
        assert not handover.shares_disk()
        assert handover.memo_path() == tmp_path / "cache" / "memo" / "t0k3n.sqlite"


def test_memos_of_sessions_days_old_are_swept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPOLICY_CACHE_DIR", str(tmp_path))
    memos = tmp_path / "memo"
    memos.mkdir()
    old, recent = memos / "old.sqlite", memos / "recent.sqlite-wal"
    for path in (old, recent):
        path.write_bytes(b"x")
    three_days = time.time() - 3 * 86400
    os.utime(old, (three_days, three_days))
    _handover(tmp_path / "elsewhere").memo_path()
    assert not old.exists() and recent.exists()


def test_a_dead_address_is_not_reachable() -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert not reachable(f"http://127.0.0.1:{port}/v1", timeout=1)
