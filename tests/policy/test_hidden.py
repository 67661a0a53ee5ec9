"""The hidden-state server: started once per process with the threads it was asked for."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_toolpolicy.cli import main
from pytest_toolpolicy.models.local import server as server_module
from pytest_toolpolicy.models.local import weights as weights_module
from pytest_toolpolicy.models.local.server import ServerSettings
from pytest_toolpolicy.policy import hidden


class FakeServer:
    started: list[ServerSettings] = []

    def __init__(self, weights: Any, settings: ServerSettings) -> None:
        self.settings = settings
        self.base_url = "http://127.0.0.1:9/v1"

    def start(self) -> FakeServer:
        FakeServer.started.append(self.settings)
        return self

    def stop(self) -> None:
        pass


@pytest.fixture
def fake_server(monkeypatch: pytest.MonkeyPatch) -> list[ServerSettings]:
    FakeServer.started = []
    monkeypatch.setattr(server_module, "LocalServer", FakeServer)
    monkeypatch.setattr(weights_module, "resolve", lambda arg: arg)
    monkeypatch.setattr(hidden, "_servers", {})
    return FakeServer.started


def test_the_embeddings_server_runs_the_threads_it_was_asked_for(
    fake_server: list[ServerSettings],
) -> None:
    assert hidden._client("some-model", threads=2) is hidden._client("some-model", threads=2)
    (settings,) = fake_server  # one server for the process, however often asked
    assert settings.embedding and settings.threads == 2


def test_probe_refuses_no_threads(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["probe", str(tmp_path), "--model", "local:gemma3-270m", "--local-threads", "0"])
    assert "argument --local-threads: must be a positive integer, got 0" in capsys.readouterr().err
