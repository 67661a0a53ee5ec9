"""Several processes creating one SQLite file at once: every one gets a working connection
(the race the A/B's workers met at the start of a session: "database is locked")."""

from __future__ import annotations

import multiprocessing
import sqlite3
from pathlib import Path

import pytest

from pytest_toolpolicy.run.memo import ExecutionMemo
from pytest_toolpolicy.sqlite_shared import open_shared


def _open_memo_and_write(path: str, n: int) -> None:
    memo = ExecutionMemo(Path(path))
    memo.put(f"key-{n}", {"n": n})
    memo.close()


def test_processes_creating_one_memo_at_once_all_get_it(tmp_path: Path) -> None:
    path = tmp_path / "memo.sqlite"
    context = multiprocessing.get_context("fork")
    for round_ in range(5):  # the race is timing-dependent: several fresh files
        path = tmp_path / f"memo-{round_}.sqlite"
        procs = [
            context.Process(target=_open_memo_and_write, args=(str(path), n)) for n in range(6)
        ]
        for proc in procs:
            proc.start()
        for proc in procs:
            proc.join(60)
        assert [proc.exitcode for proc in procs] == [0] * 6
        memo = ExecutionMemo(path)
        assert [memo.get(f"key-{n}") for n in range(6)] == [{"n": n} for n in range(6)]
        memo.close()


def test_a_lock_is_retried_and_any_other_error_raised_at_once(tmp_path: Path) -> None:
    calls = []

    def flaky(conn: sqlite3.Connection) -> None:
        calls.append(1)
        if len(calls) < 3:
            raise sqlite3.OperationalError("database is locked")

    open_shared(tmp_path / "a.sqlite", flaky).close()
    assert len(calls) == 3

    def broken(conn: sqlite3.Connection) -> None:
        calls.append(1)
        raise sqlite3.OperationalError("near 'TABLEE': syntax error")

    calls.clear()
    with pytest.raises(sqlite3.OperationalError, match="syntax error"):
        open_shared(tmp_path / "b.sqlite", broken)
    assert len(calls) == 1
