"""The benchmark harness's costs: materializing a workspace per item (bundled; a real repo from a
local mirror, cold cache and cached), and grading one instance against running the same tests
with bare pytest (target: grading <= 1.3x bare pytest).

Uses the first bundled instance under evals/instances when there is one, else a small synthetic
project. Runs are interleaved so that drift in machine load hits both sides alike.

    .venv/bin/python benchmarks/bench_bench.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from pytest_toolpolicy.bench import Instance, load_instances
from pytest_toolpolicy.bench.workspaces import materialize
from pytest_toolpolicy.grading.grade import grade_patch
from pytest_toolpolicy.primitives.sandbox import Sandbox, sandbox_env
from pytest_toolpolicy.primitives.workspace import Workspace

OPS = "def add(a, b):\n    return a + b\n"
TESTS = "from calc.ops import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
FILES = {"calc/__init__.py": "", "calc/ops.py": OPS, "tests/test_ops.py": TESTS}


def git(cwd: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
    }
    env["GIT_COMMITTER_EMAIL"] = "b@b"
    out = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def synthetic(tmp: Path, repo: str, path: Path | None) -> Instance:
    src = tmp / "src"
    for rel, text in FILES.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(text)
    base = Workspace.create(src).base
    return Instance(
        instance_id="synthetic-1", repo=repo, base_commit=base, problem_statement="",
        patch="", test_patch="", FAIL_TO_PASS=("tests/test_ops.py::test_add",),
        PASS_TO_PASS=(), version="1", source="bench", path=path,
    )  # fmt: skip


def median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def bare_pytest(instance: Instance, parent: Path) -> Callable[[], object]:
    """The same tests, bare: a workspace with the gold patch and test_patch applied, run by this
    interpreter with the sandbox's environment and the same plugin setting grading uses."""
    ws = materialize(instance, parent)
    for patch in (instance.patch, instance.test_patch):
        if patch.strip():
            subprocess.run(["git", "apply", "-"], cwd=ws.root, input=patch, text=True, check=True)
    env = {
        **sandbox_env(sys.executable, tempfile.gettempdir()),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    ids = list(dict.fromkeys([*instance.FAIL_TO_PASS, *instance.PASS_TO_PASS]))
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:toolpolicy"]
    return lambda: subprocess.run([*argv, *ids], cwd=ws.root, env=env, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    sandbox = Sandbox.from_env()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        bundled = [i for i in load_instances("bundled").instances if not i.underspecified][:1]
        if bundled:
            instance = bundled[0]
        else:
            print("(no bundled instances: a synthetic project stands in)")
            instance = synthetic(tmp / "bundled", "bundled/calc", None)
            shutil.copytree(
                tmp / "bundled/src",
                tmp / "bundled/inst/repo",
                ignore=shutil.ignore_patterns(".git"),
            )
            instance = Instance(**{**instance.__dict__, "path": tmp / "bundled/inst"})
        items = tmp / "items"
        ms = median_ms(lambda: materialize(instance, items), runs)
        print(f"materialize bundled ({instance.instance_id}): {ms:8.1f} ms per item")

        mirror_src = synthetic(tmp / "real", "acme/calc", None)
        (tmp / "mirrors").mkdir()
        git(tmp, "clone", "-q", "--bare", str(tmp / "real/src"), str(tmp / "mirrors/acme__calc"))
        cache, repos = tmp / "cache", tmp / "mirrors"
        start = time.perf_counter()
        materialize(mirror_src, items, repos=repos, cache_dir=cache)
        cold = (time.perf_counter() - start) * 1000
        warm = median_ms(lambda: materialize(mirror_src, items, repos=repos, cache_dir=cache), runs)
        print(f"materialize real from a mirror: {cold:8.1f} ms cold cache, {warm:.1f} ms cached")

        grade = lambda: grade_patch(instance, instance.patch, sandbox=sandbox, parent=tmp)  # noqa: E731
        assert grade().status == "resolved", grade()
        bare = bare_pytest(instance, tmp / "bare")
        bare()
        grades, bares = [], []
        for _ in range(runs):
            grades.append(median_ms(grade, 1))
            bares.append(median_ms(bare, 1))
        g, b = statistics.median(grades), statistics.median(bares)
        print(
            f"grade {instance.instance_id} ({sandbox.mode}): {g:.1f} ms vs bare pytest {b:.1f} ms"
            f" = {g / b:.2f}x (target <= 1.3x)"
        )


if __name__ == "__main__":
    main()
