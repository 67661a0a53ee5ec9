"""Every --toolpolicy option checked in one place, with a message naming the bad option."""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.decide.variants import FIRST_ABLATIONS
from pytest_toolpolicy.limits import ENV, parse_limits
from pytest_toolpolicy.policy.config import GATES
from pytest_toolpolicy.session.settings import (
    BARE,
    Settings,
    SettingsError,
    limits_from,
    settings_from,
)


def getter(**options: Any) -> Callable[[str], Any]:
    return options.get


def settings(env: dict[str, str] | None = None, **options: Any) -> Settings:
    result = settings_from(getter(**options), {} if env is None else env)
    assert result is not None
    return result


def test_off_when_nothing_is_given() -> None:
    assert settings_from(getter(), {}) is None
    assert settings_from(getter(toolpolicy="off"), {"TOOL_POLICY": "policy"}) is None
    assert settings_from(getter(), {"TOOL_POLICY": "off"}) is None


@pytest.mark.parametrize("arm", ["policy", "current"])
def test_the_environment_alone_never_turns_it_on(arm: str) -> None:
    assert settings_from(getter(), {"TOOL_POLICY": arm}) is None


def test_a_bare_option_runs_the_arm_the_flag_names_else_both() -> None:
    assert settings({"TOOL_POLICY": "policy"}, toolpolicy=BARE).arms == ("policy",)
    assert settings({"TOOL_POLICY": "current"}, toolpolicy=BARE).arms == ("current",)
    assert settings({}, toolpolicy=BARE).arms == ("current", "policy")
    assert settings({"TOOL_POLICY": ""}, toolpolicy=BARE).mode == "ab"
    with pytest.raises(SettingsError, match="^TOOL_POLICY must be policy or current"):
        settings_from(getter(toolpolicy=BARE), {"TOOL_POLICY": "both"})


def test_a_value_names_the_mode_whatever_the_flag_says() -> None:
    both = settings({"TOOL_POLICY": "policy"}, toolpolicy="ab")
    assert both.mode == "ab" and both.arms == ("current", "policy")


def test_a_path_taken_as_the_mode_says_how_to_write_it(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="write --toolpolicy=ab, or put the paths first"):
        settings_from(getter(toolpolicy=str(tmp_path)), {})


def test_defaults() -> None:
    got = settings(toolpolicy="current")
    assert (got.model, got.dataset, got.repos, got.sample, got.seed) == (
        "sim", "bundled", None, None, 0,
    )  # fmt: skip
    assert (got.ablate, got.cache, got.cache_file, got.max_turns) == ((), "off", None, 30)
    assert (got.gate, got.resume, got.memo, got.tests_visible) == (False, False, True, True)


def test_values_are_converted(tmp_path: Path) -> None:
    got = settings(
        toolpolicy="ab",
        toolpolicy_sample="5",
        toolpolicy_seed="-3",
        toolpolicy_max_turns=12,
        toolpolicy_cache="replay",
        toolpolicy_cache_file=str(tmp_path / "c.jsonl"),
        toolpolicy_repos=str(tmp_path),
        toolpolicy_report=str(tmp_path / "out"),
        toolpolicy_no_memo=True,
        toolpolicy_hide_tests=True,
        toolpolicy_gate=True,
        toolpolicy_resume=True,
    )
    assert (got.sample, got.seed, got.max_turns, got.cache) == (5, -3, 12, "replay")
    assert got.cache_file == tmp_path / "c.jsonl" and got.repos == tmp_path
    assert got.report == tmp_path / "out"
    assert (got.memo, got.tests_visible, got.gate, got.resume) == (False, False, True, True)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"toolpolicy": "both"}, "--toolpolicy must be one of"),
        ({"toolpolicy_sample": 0}, "--toolpolicy-sample"),
        ({"toolpolicy_sample": -1}, "--toolpolicy-sample"),
        ({"toolpolicy_sample": "x"}, "--toolpolicy-sample"),
        ({"toolpolicy_seed": "x"}, "--toolpolicy-seed"),
        ({"toolpolicy_max_turns": 0}, "--toolpolicy-max-turns"),
        ({"toolpolicy_max_turns": -5}, "--toolpolicy-max-turns"),
        ({"toolpolicy_max_turns": "1.5"}, "--toolpolicy-max-turns"),
        ({"toolpolicy_model": "gpt-4o"}, "--toolpolicy-model gpt-4o: unknown model spec"),
        ({"toolpolicy_model": "scripted:/no/such.jsonl"}, "--toolpolicy-model scripted:/no/"),
        ({"toolpolicy_model": "sim:/no/such.toml"}, "--toolpolicy-model sim:/no/such.toml: "),
        ({"toolpolicy_cache": "bogus"}, "--toolpolicy-cache"),
        ({"toolpolicy_ablate": "trust.schema,nope"}, "--toolpolicy-ablate: unknown gate nope"),
        ({"toolpolicy": "current", "toolpolicy_ablate": "serialize"}, "--toolpolicy-ablate"),
    ],
)
def test_bad_values_name_the_option(options: dict[str, Any], named: str) -> None:
    options = {"toolpolicy": "policy", **options}
    with pytest.raises(SettingsError) as caught:
        settings_from(getter(**options), {})
    assert str(caught.value).startswith(named)


def test_repos_must_be_a_directory(tmp_path: Path) -> None:
    not_dir = tmp_path / "file.txt"
    not_dir.write_text("x")
    for path in (not_dir, tmp_path / "missing"):
        with pytest.raises(SettingsError, match="^--toolpolicy-repos: not a directory"):
            settings_from(getter(toolpolicy="policy", toolpolicy_repos=str(path)), {})


def test_ablate_all_gives_every_gate_the_two_weakest_first() -> None:
    got = settings(toolpolicy="policy", toolpolicy_ablate="all")
    assert got.ablate[:2] == ("retrieve.embed", "trust.round_trip") == FIRST_ABLATIONS
    assert sorted(got.ablate) == sorted(GATES) and len(got.ablate) == len(GATES)


def test_named_gates_follow_the_ablation_order() -> None:
    got = settings(toolpolicy="ab", toolpolicy_ablate=" serialize , trust.round_trip,trigger.lint")
    assert got.ablate == ("trust.round_trip", "trigger.lint", "serialize")


def test_default_report_dir_is_deterministic_and_names_the_run() -> None:
    def report(**options: Any) -> Path:
        return settings(toolpolicy="ab", **options).report

    base = report(toolpolicy_seed="1", toolpolicy_sample="4")
    assert base == report(toolpolicy_seed="1", toolpolicy_sample="4")
    assert base == Path("reports") / "sim-bundled-seed1-n4"
    others = {
        report(toolpolicy_seed="2", toolpolicy_sample="4"),
        report(toolpolicy_seed="1", toolpolicy_sample="5"),
        report(toolpolicy_seed="1"),
        report(toolpolicy_seed="1", toolpolicy_sample="4", toolpolicy_model="openai:gpt-4o"),
    }
    assert len(others) == 4 and base not in others
    assert report(toolpolicy_model="openai:gpt 4o").name == "openai_gpt_4o-bundled-seed0"


def test_limits_are_parsed_over_the_environment_and_given_whole() -> None:
    assert limits_from(getter(), {}) is None
    text = limits_from(getter(toolpolicy_limits="read_mb=2"), {ENV: "search_s=5"})
    assert text is not None
    got = parse_limits(text)
    assert (got.read_mb, got.search_s, got.snapshot_s) == (2, 5, parse_limits("").snapshot_s)


@pytest.mark.parametrize(
    ("given", "env", "named"),
    [
        ("read_mb=0", {}, "--toolpolicy-limits: limit read_mb must be a positive"),
        ("read_mb=-1", {}, "--toolpolicy-limits: limit read_mb must be a positive"),
        ("read_mb=lots", {}, "--toolpolicy-limits: limit read_mb must be a number"),
        ("speed=3", {}, "--toolpolicy-limits: unknown limit 'speed=3'"),
        ("read_mb=2", {ENV: "bogus"}, f"{ENV}: unknown limit"),
    ],
)
def test_bad_limits_name_the_option(given: str, env: dict[str, str], named: str) -> None:
    with pytest.raises(SettingsError) as caught:
        limits_from(getter(toolpolicy_limits=given), env)
    assert str(caught.value).startswith(named)


def test_items_run_under_the_workdir_and_wait_for_a_lock_a_bounded_time(tmp_path: Path) -> None:
    got = settings(toolpolicy="ab")
    assert got.workdir == Path(tempfile.gettempdir()) / "toolpolicy-ab" and got.lock_wait == 600
    env = {"TOOLPOLICY_WORKDIR": str(tmp_path), "TOOLPOLICY_LOCK_WAIT": "2.5"}
    got = settings(env, toolpolicy="ab")
    assert (got.workdir, got.lock_wait) == (tmp_path, 2.5)
    for bad in ("soon", "-1", "inf", "nan"):
        with pytest.raises(SettingsError, match=f"^TOOLPOLICY_LOCK_WAIT must be .*{bad!r}"):
            settings_from(getter(toolpolicy="ab"), {"TOOLPOLICY_LOCK_WAIT": bad})


def test_the_sandbox_policy_says_who_chose_it() -> None:
    assert settings(toolpolicy="ab").sandbox_source == ""
    got = settings(
        {"TOOLPOLICY_SANDBOX": "degraded", "TOOLPOLICY_BWRAP": "/x/bwrap"}, toolpolicy="ab"
    )
    assert (got.sandbox, got.sandbox_source, got.bwrap) == (
        "degraded",
        "TOOLPOLICY_SANDBOX",
        "/x/bwrap",
    )
    got = settings(
        {"TOOLPOLICY_SANDBOX": "degraded"}, toolpolicy="ab", toolpolicy_sandbox="require"
    )
    assert (got.sandbox, got.sandbox_source) == ("require", "--toolpolicy-sandbox")


@pytest.mark.parametrize("where", ["home", "root"])
def test_an_external_agent_started_in_a_home_or_the_root_is_refused_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    directory = str(tmp_path) if where == "home" else "/"
    monkeypatch.chdir(directory)
    env = {"HOME": str(tmp_path)}
    with pytest.raises(SettingsError) as caught:
        settings_from(getter(toolpolicy="ab", toolpolicy_current="cmd:true"), env)
    what = "a home directory" if where == "home" else "the root directory"
    assert str(caught.value).startswith(
        f"--toolpolicy-current cmd:true: this session started in {directory}, {what}, which"
    )
    assert "start the session in your project's directory" in str(caught.value)
    assert (
        settings(env, toolpolicy="ab").current.kind == "builtin"
    )  # the stock loop is shown nothing
    monkeypatch.chdir(tmp_path.parent)  # not a home: allowed
    assert settings(env, toolpolicy="ab", toolpolicy_current="cmd:true").current.kind == "cmd"
