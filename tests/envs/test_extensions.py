"""Compiled modules at an instance's base commit: rebuilt where its C sources differ from the
setup commit's, carried where they do not; and what the host takes out of the build's wheel."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from pytest_toolpolicy.bench.workspaces import materialize
from pytest_toolpolicy.envs.cache import build_environment
from pytest_toolpolicy.envs.extensions import MEMBER_MAX_BYTES, wheel_extensions
from pytest_toolpolicy.envs.spec import SPECS_ENV, EnvironmentSetupError

from .test_cache import SPECS, instance, make_repo, package

TESTS = {"tests/test_x.py": "def test_x():\n    pass\n"}


def test_each_base_commit_gets_the_modules_of_its_own_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "specs.toml").write_text(SPECS)
    monkeypatch.setenv(SPECS_ENV, str(tmp_path / "specs.toml"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    offline = tmp_path / "mirrors"
    files = {
        **package("calc", compile={"calc/_speed.so": "calc/_speed.c"}),
        "calc/__init__.py": "",
        "calc/_speed.c": "v1\n",
        **TESTS,
    }
    old, mid, setup = make_repo(
        offline / "acme__ext",
        files,
        {"calc/_speed.c": "v2\n"},
        {"calc/__init__.py": "# Python only\n"},
    )
    cache = tmp_path / "cache"
    shown = {}
    for base in (old, mid, setup):
        build = build_environment(instance("acme/ext", base, setup), repos=offline, cache_dir=cache)
        assert build.env is not None, build.reason
        ws = materialize(instance("acme/ext", base, setup), tmp_path / base[:8], repos=offline)
        assert build.env.seed(ws.root) == ("calc/_speed.so",)
        shown[base] = ((ws.root / "calc/_speed.so").read_text(), build.env.overlay_files)
        assert "/calc/_speed.so" in (ws.root / ".git/info/exclude").read_text()
    assert shown == {
        old: ("compiled from: v1\n", ("calc/_speed.so",)),  # its own sources, rebuilt
        mid: ("compiled from: v2\n", ()),  # the setup commit's sources: carried
        setup: ("compiled from: v2\n", ()),
    }


def wheel(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def test_only_extension_modules_are_taken_under_their_checkout_paths() -> None:
    data = wheel({"pkg/_a.cpython-39-x86_64-linux-gnu.so": b"A", "pkg/mod.py": b"", "x.pyd": b"B"})
    assert wheel_extensions(data) == {"pkg/_a.cpython-39-x86_64-linux-gnu.so": b"A", "x.pyd": b"B"}
    assert wheel_extensions(data, "src/")["src/x.pyd"] == b"B"


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ({"../evil.so": b"x"}, "unsafe member '../evil.so'"),
        ({"/abs/evil.so": b"x"}, "unsafe member '/abs/evil.so'"),
        ({"pkg\\evil.so": b"x"}, "unsafe member"),
        ({"big.so": b"\0" * (MEMBER_MAX_BYTES + 1)}, "big.so is 268435457 bytes, over"),
    ],
)
def test_a_wheel_member_out_of_bounds_is_refused(members: dict[str, bytes], message: str) -> None:
    with pytest.raises(
        EnvironmentSetupError, match=message.replace("\\", "\\\\").replace(".", r"\.")
    ):
        wheel_extensions(wheel(members))


def test_not_a_wheel() -> None:
    with pytest.raises(EnvironmentSetupError, match="not a zip file"):
        wheel_extensions(b"garbage")
