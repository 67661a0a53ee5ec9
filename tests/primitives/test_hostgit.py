"""hostgit as an attacker meets it: what reaches a git process, and what git may start."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from pytest_toolpolicy.primitives import hostgit


class Boom(Exception):
    pass


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Host secrets and host git settings an unscrubbed git would pick up."""
    marker = tmp_path / "marker"
    hook = tmp_path / "evil.sh"
    hook.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\n')
    hook.chmod(0o755)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret")
    monkeypatch.setenv("GIT_SSH_COMMAND", str(hook))
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", str(hook))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "core.fsmonitor")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", str(hook))
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    return marker


def showenv(tmp_path: Path) -> dict[str, str]:
    # An alias is a program git itself starts: it sees exactly what git's children see.
    out = hostgit.run(["-c", "alias.showenv=!env -0", "showenv"], cwd=tmp_path, error=Boom)
    return dict(item.split("=", 1) for item in out.text.split("\0") if "=" in item)


def test_no_host_variable_reaches_git_or_its_children(secrets: Path, tmp_path: Path) -> None:
    env = showenv(tmp_path)
    leaked = {"OPENAI_API_KEY", "GIT_SSH_COMMAND", "GIT_EXTERNAL_DIFF", "GIT_CONFIG_COUNT"}
    assert not leaked & set(env)
    assert str(tmp_path) not in env["PATH"] and env["LC_ALL"] == "C"
    assert env["GIT_CONFIG_GLOBAL"] == "/dev/null" and env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert os.listdir(env["HOME"]) == [] and env["HOME"] != os.environ.get("HOME")
    # The overrides travel with every child git, so a nested repository's config is outranked.
    assert "'core.fsmonitor'='false'" in env["GIT_CONFIG_PARAMETERS"]
    assert "'core.hooksPath'='/dev/null'" in env["GIT_CONFIG_PARAMETERS"]


def test_callers_may_add_only_gits_own_variables() -> None:
    assert hostgit.environment({"GIT_INDEX_FILE": "/x"})["GIT_INDEX_FILE"] == "/x"
    with pytest.raises(ValueError, match="OPENAI_API_KEY"):
        hostgit.environment({"OPENAI_API_KEY": "sk"})


def test_only_the_named_transports_run(secrets: Path, tmp_path: Path) -> None:
    # ext:: runs a command; ssh would run GIT_SSH_COMMAND; https is for URL clones only.
    for url in (f"ext::sh -c touch% {secrets}", "ssh://host/x.git", "https://127.0.0.1:9/x"):
        with pytest.raises(Boom, match="not allowed"):
            hostgit.run(["clone", "-q", url, str(tmp_path / "c")], cwd=tmp_path, error=Boom)
    assert not secrets.exists()


def test_timeout_names_the_limit_and_kills_what_git_started(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPOLICY_LIMITS", "snapshot_s=1")
    late = tmp_path / "late"
    start = time.monotonic()
    with pytest.raises(Boom, match=r"timed out after 1s \(limit snapshot_s; TOOLPOLICY_LIMITS\)"):
        hostgit.run(["-c", f"alias.hang=!sleep 3; touch {late}", "hang"], cwd=tmp_path, error=Boom)
    assert time.monotonic() - start < 3
    time.sleep(3)
    assert not late.exists()  # the shell git started died with it


def test_failure_carries_gits_words(tmp_path: Path) -> None:
    with pytest.raises(Boom, match=r"^git rev-parse failed: fatal: not a git repository"):
        hostgit.run(["rev-parse", "HEAD"], cwd=tmp_path, error=Boom)
    assert hostgit.run(["rev-parse", "HEAD"], cwd=tmp_path, error=Boom, ok=(128,)).returncode
