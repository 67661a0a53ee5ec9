"""``toolpolicy envs resolve`` given a spec file it cannot read: one line and exit 2, before uv
is asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolpolicy.cli import main
from pytest_toolpolicy.envs.spec import SPECS_ENV

from ..malformed import one_line


def test_a_spec_file_it_cannot_read_is_one_line_and_exit_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    specs = tmp_path / "specs.toml"
    specs.write_text('[repo."acme/calc"]\npython = "3.11\n')  # cut short mid-string
    monkeypatch.setenv(SPECS_ENV, str(specs))
    assert main(["envs", "resolve", "--repo", "psf/requests"]) == 2  # before uv is asked
    assert one_line(capsys.readouterr().err) == (
        f"toolpolicy envs resolve: {specs}:2: not TOML: Illegal character '\\n'"
    )
