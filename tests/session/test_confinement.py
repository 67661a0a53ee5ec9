"""Fail closed: which sessions may run without bubblewrap (``sim`` and ``scripted:``, or anyone
who opted in by name), which are refused and what the refusal tells them, and which directories
an external agent may not be shown. "Without bubblewrap" is a bwrap path that does not exist, or
one that runs and cannot make a sandbox; nothing is uninstalled."""

from __future__ import annotations

import os
import pwd
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.primitives.sandbox import Sandbox
from pytest_toolpolicy.session.confinement import (
    SandboxRefused,
    home_problem,
    session_sandbox,
    untrusted_runs,
)
from pytest_toolpolicy.session.settings import Settings, settings_from

MISSING = "/nonexistent/bwrap"


def make(env: dict[str, str] | None = None, **options: Any) -> Settings:
    got = settings_from({"toolpolicy": "ab", **options}.get, env or {})
    assert got is not None
    return got


@pytest.fixture
def scripted(tmp_path: Path) -> str:
    path = tmp_path / "replies.jsonl"
    path.write_text('{"text": "done"}\n')
    return f"scripted:{path}"


@pytest.fixture
def broken_bwrap(tmp_path: Path) -> str:
    """A bwrap that is installed and cannot create its namespaces, as in a locked-down host."""
    path = tmp_path / "bwrap"
    path.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n"
    )
    path.chmod(0o755)
    return str(path)


def test_only_a_real_model_or_an_external_agent_runs_what_no_one_wrote(scripted: str) -> None:
    assert untrusted_runs(make()) is None
    assert untrusted_runs(make(toolpolicy_model="sim:oracle")) is None
    assert untrusted_runs(make(toolpolicy_model=scripted)) is None
    assert untrusted_runs(make(toolpolicy_model="openai:gpt-x")) == "a real model (openai:gpt-x)"
    agent = make(toolpolicy_model=scripted, toolpolicy_current="cmd:true")
    assert untrusted_runs(agent) == "an external agent (--toolpolicy-current cmd:true)"


def test_a_real_model_without_bubblewrap_is_refused_saying_why_and_how_to_install_it() -> None:
    with pytest.raises(SandboxRefused) as caught:
        session_sandbox(make({"TOOLPOLICY_BWRAP": MISSING}, toolpolicy_model="openai:gpt-x"))
    message = str(caught.value)
    assert message.startswith("sandbox: a real model (openai:gpt-x) runs only in bubblewrap's")
    assert f"bubblewrap is not installed (bwrap not found at {MISSING})" in message
    assert "apt-get install bubblewrap" in message and "make sandbox" in message
    assert "opt in with TOOLPOLICY_SANDBOX=degraded (or --toolpolicy-sandbox=degraded)" in message


@pytest.mark.parametrize("policy", ["auto", "require"])
def test_a_bubblewrap_that_cannot_make_namespaces_gives_its_own_reason(
    broken_bwrap: str, policy: str
) -> None:
    settings = make({"TOOLPOLICY_BWRAP": broken_bwrap, "TOOLPOLICY_SANDBOX": policy},
                    toolpolicy_model="local:gemma3-270m", toolpolicy_cache="replay")  # fmt: skip
    with pytest.raises(SandboxRefused, match="cannot create its namespaces here .*No permissions"):
        session_sandbox(settings)


@pytest.mark.parametrize("source", ["env", "option"])
def test_a_real_model_runs_degraded_only_when_asked_by_name(source: str) -> None:
    env = {"TOOLPOLICY_BWRAP": MISSING}
    options = {"toolpolicy_model": "openai:gpt-x"}
    if source == "env":
        env["TOOLPOLICY_SANDBOX"] = "degraded"
    else:
        options["toolpolicy_sandbox"] = "degraded"
    settings = make(env, **options)
    assert session_sandbox(settings).mode == "degraded"
    assert settings.sandbox_source == ("TOOLPOLICY_SANDBOX" if source == "env" else
                                       "--toolpolicy-sandbox")  # fmt: skip


def test_sim_and_scripted_keep_running_degraded_with_the_note(scripted: str) -> None:
    for model in ("sim", scripted):
        sandbox = session_sandbox(make({"TOOLPOLICY_BWRAP": MISSING}, toolpolicy_model=model))
        assert sandbox.mode == "degraded"
        assert sandbox.notes == (f"degraded sandbox: bwrap not found at {MISSING}",)
    with pytest.raises(SandboxRefused, match="^--toolpolicy-sandbox=require: .*apt-get install"):
        session_sandbox(make({"TOOLPOLICY_BWRAP": MISSING, "TOOLPOLICY_SANDBOX": "require"}))


def test_an_external_agent_never_runs_degraded(scripted: str) -> None:
    agent = {"toolpolicy_model": scripted, "toolpolicy_current": "cmd:true"}
    with pytest.raises(SandboxRefused) as caught:
        session_sandbox(make({"TOOLPOLICY_BWRAP": MISSING}, **agent))
    assert "an external agent (--toolpolicy-current cmd:true) runs only in" in str(caught.value)
    assert "apt-get install bubblewrap" in str(caught.value)
    assert "degraded" not in str(caught.value)  # no opt-in offered: it would be refused anyway
    for env in ({"TOOLPOLICY_SANDBOX": "degraded"}, {"TOOLPOLICY_SANDBOX": "degraded",
                                                       "TOOLPOLICY_BWRAP": MISSING}):  # fmt: skip
        with pytest.raises(SandboxRefused, match=r"never degraded \(TOOLPOLICY_SANDBOX=degraded\)"):
            session_sandbox(make(env, **agent))


def test_with_bubblewrap_a_real_model_gets_it(bwrap_sandbox: Sandbox) -> None:
    settings = make({"TOOLPOLICY_BWRAP": bwrap_sandbox.bwrap}, toolpolicy_model="openai:gpt-x")
    assert session_sandbox(settings).mode == "bwrap"


def test_homes_and_the_root_are_not_shown_to_an_agent(tmp_path: Path) -> None:
    home = tmp_path / "me"
    home.mkdir()
    env = {"HOME": str(home)}
    for refused in (
        "/",
        "/root",
        "/home",
        "/home/alice",
        str(home),
        pwd.getpwuid(os.getuid()).pw_dir,
    ):
        assert home_problem(refused, env), refused
    assert home_problem("/", env) == "the root directory, which holds every file of this host"
    for shown in ("/home/alice/project", str(home / "project"), str(tmp_path)):
        assert home_problem(shown, env) is None, shown
    (tmp_path / "link").symlink_to(home)
    assert home_problem(str(tmp_path / "link"), env)  # a home reached through a link
