"""Environments built for real: small git repositories of our own, each package built by an
in-tree PEP 517 backend (so ``pip`` runs offline, ``PIP_NO_INDEX=1``), a venv per spec.
A build takes a few seconds; the src/ layout one is built once for this module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.bench.instance import Instance
from pytest_toolpolicy.bench.workspaces import materialize
from pytest_toolpolicy.envs import builder as envbuild
from pytest_toolpolicy.envs import cache as envs
from pytest_toolpolicy.envs import pipsettings, venvs
from pytest_toolpolicy.envs.cache import Environment, build_environment, environment_for
from pytest_toolpolicy.envs.records import builder_digest
from pytest_toolpolicy.envs.spec import SPECS_ENV, EnvironmentSetupError
from pytest_toolpolicy.primitives.sandbox import Sandbox

from ..bench.gitmirrors import git, write

# Writes a real wheel (build_wheel) or a .pth to the project (build_editable); what backend.json
# says it also does at build time: generate files, try to write host paths, fail.
BACKEND = r"""import json, os, zipfile

CONF = json.load(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "backend.json")))
for _module in CONF.get("imports", []):  # a setup.py importing what the venv has
    __import__(_module)


def _wheel(directory, files):
    name = CONF["name"]
    info = name + "-1.0.dist-info/"
    files = dict(files)
    requires = "".join("Requires-Dist: %s\n" % r for r in CONF.get("requires", []))
    files[info + "METADATA"] = "Metadata-Version: 2.1\nName: %s\nVersion: 1.0\n%s" % (name, requires)
    files[info + "WHEEL"] = "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[info + "RECORD"] = "".join(p + ",,\n" for p in [*files, info + "RECORD"])
    wheel = name + "-1.0-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, wheel), "w") as out:
        for path, text in files.items():
            out.writestr(path, text)
    return wheel


def _hooks():
    for path, text in CONF.get("generate", {}).items():
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "w") as handle:
            handle.write(text)
    for path in CONF.get("escape", []):
        try:
            with open(path, "w") as handle:
                handle.write("escaped\n")
        except OSError:
            pass
    if CONF.get("fail"):
        raise SystemExit("backend: " + CONF["fail"])


def _compile():
    # "compile": {module: source}: a stand-in for a C extension, its bytes from its source's
    out = {}
    for target, source in CONF.get("compile", {}).items():
        text = "compiled from: " + open(source).read()
        with open(target, "w") as handle:
            handle.write(text)
        out[target] = text
    return out


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _hooks()
    _compile()
    root = os.path.normpath(os.path.join(os.getcwd(), CONF.get("root", "")))
    return _wheel(wheel_directory, {CONF["name"] + ".pth": root + "\n"})


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _hooks()
    base = os.path.join(os.getcwd(), CONF.get("root", ""))
    files = _compile()
    for top in CONF["modules"]:
        for folder, _, names in os.walk(os.path.join(base, top)):
            for name in names:
                full = os.path.join(folder, name)
                files[os.path.relpath(full, base)] = open(full).read()
        if os.path.isfile(os.path.join(base, top)):
            files[top] = open(os.path.join(base, top)).read()
    return _wheel(wheel_directory, files)
"""
PYPROJECT = '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
# Every repo gets the harness's interpreter and nothing from an index (there is none).
SPECS = """[default]
python = ""
pip_packages = []
[repo."acme/envc"]
requirements = ["requirements.txt"]
"""


def package(name: str, **conf: object) -> dict[str, str]:
    conf = {"name": name, "modules": [name], **conf}
    return {"pyproject.toml": PYPROJECT, "backend.py": BACKEND, "backend.json": json.dumps(conf)}


def make_repo(root: Path, *commits: dict[str, str]) -> list[str]:
    """A repository with one commit per ``files`` mapping; their ids, oldest first."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    ids = []
    for n, files in enumerate(commits):
        write(root, files)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"commit {n}")
        ids.append(git(root, "rev-parse", "HEAD"))
    return ids


def instance(repo: str, base: str, env_commit: str | None = None) -> Instance:
    return Instance(
        instance_id=repo.replace("/", "__") + "-1",
        repo=repo,
        base_commit=base,
        problem_statement="x",
        patch="",
        test_patch="",
        FAIL_TO_PASS=("tests/test_x.py::test_x",),
        PASS_TO_PASS=(),
        version="1.0",
        environment_setup_commit=env_commit,
        source="local",
    )


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache for the module's builds (each its own repository): the venv template, made
    once per interpreter, is then made once."""
    return tmp_path_factory.mktemp("shared") / "cache"


@pytest.fixture
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    specs = tmp_path / "specs.toml"
    specs.write_text(SPECS, encoding="utf-8")
    monkeypatch.setenv(SPECS_ENV, str(specs))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    return tmp_path / "mirrors"


SRC_PKG = {
    **package(
        "pkg",
        root="src",
        generate={
            "src/pkg/_version.py": "version = '1.0'\n",
            "src/pkg/_build_info.py": "built = True\n",  # generated, yet not ignored
            "build/lib/junk.py": "x = 1\n",
        },
    ),
    ".gitignore": "src/pkg/_version.py\nbuild/\n",
    "src/pkg/__init__.py": "from ._version import version\nfrom ._build_info import built\n",
    "tests/test_x.py": "def test_x():\n    import pkg\n    assert pkg.version == '1.0'\n",
}


@pytest.fixture(scope="module")
def src_env(
    tmp_path_factory: pytest.TempPathFactory, shared_cache: Path
) -> Iterator[tuple[Path, Instance, Path]]:
    """(mirrors, instance, cache) of a src/ layout package whose install generates files."""
    tmp = tmp_path_factory.mktemp("src-env")
    with pytest.MonkeyPatch.context() as mp:
        (tmp / "specs.toml").write_text(SPECS, encoding="utf-8")
        mp.setenv(SPECS_ENV, str(tmp / "specs.toml"))
        mp.setenv("PIP_NO_INDEX", "1")
        (base,) = make_repo(tmp / "mirrors" / "acme__pkg", SRC_PKG)
        item = instance("acme/pkg", base)
        build = build_environment(item, repos=tmp / "mirrors", cache_dir=shared_cache)
        assert build.status == "built", build.reason
        yield tmp / "mirrors", item, shared_cache


@pytest.fixture
def src_specs(src_env: tuple[Path, Instance, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    mirrors = src_env[0]
    monkeypatch.setenv(SPECS_ENV, str(mirrors.parent / "specs.toml"))


def run_in(env: Environment, root: Path, code: str) -> subprocess.CompletedProcess[str]:
    """``code`` under the env's interpreter in the workspace ``root``, as the sandbox would."""
    extra = env.sandbox_env(root)
    base = {"PATH": "/usr/bin:/bin", "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [env.python, "-c", code], cwd=root, env={**base, **extra}, capture_output=True, text=True
    )


@pytest.mark.slow  # a src/ project built with setuptools_scm: ~9 s
def test_src_layout_and_generated_files(
    src_env: tuple[Path, Instance, Path], src_specs: None, tmp_path: Path
) -> None:
    mirrors, item, cache = src_env
    again = build_environment(item, repos=mirrors, cache_dir=cache)
    assert again.status == "cached" and again.seconds < 2
    env = again.env
    assert env is not None and env.repo_paths == ("src",)
    assert env.generated == ("src/pkg/_build_info.py", "src/pkg/_version.py")  # not build/
    ws = materialize(item, tmp_path / "items", repos=mirrors, cache_dir=cache)
    assert not (ws.root / "src/pkg/_version.py").exists()
    assert run_in(env, ws.root, "import pkg").returncode != 0  # the item's clone lacks them
    assert env.seed(ws.root) == ("src/pkg/_build_info.py", "src/pkg/_version.py")
    assert env.seed(ws.root) == ()  # only what the workspace lacks
    probe = run_in(env, ws.root, "import pkg; print(pkg.__file__, pkg.version)")
    assert probe.stdout.split() == [str(ws.root / "src/pkg/__init__.py"), "1.0"], probe.stderr
    # Neither file is part of what the agent changed, ignored by .gitignore or not.
    assert ws.patch() == "" and ws.changed_files() == []
    ref = ws.checkpoint()
    ws.restore(ref)
    assert (ws.root / "src/pkg/_build_info.py").is_file()


def test_the_agent_runs_where_grading_runs(
    src_env: tuple[Path, Instance, Path],
    src_specs: None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_toolpolicy.run.arms import prepare

    mirrors, item, cache = src_env
    monkeypatch.setenv("TOOLPOLICY_CACHE_DIR", str(cache))
    env = environment_for(item, repos=mirrors)  # the environment stage, before the item
    prepared = prepare(item, workdir=tmp_path / "work", env=env, repos=mirrors)
    box = prepared.toolbox
    assert prepared.env is not None and box.python == prepared.env.python
    command = "python -c 'import pkg, sys; print(pkg.__file__, pkg.version, sys.prefix)'"
    envelope = box.run_test(command)
    assert envelope["ok"], envelope
    out = envelope["data"]["output"].split()
    # The installed package is the workspace, seen at /testbed (without bubblewrap: the
    # workspace first on PYTHONPATH, at its own path).
    seen = "/testbed" if prepared.sandbox.mode == "bwrap" else str(box.root)
    assert out[:2] == [f"{seen}/src/pkg/__init__.py", "1.0"], envelope
    assert out[2].endswith(envs.VENV)
    # execute: the same interpreter and package, the workspace readable but not writable.
    code = "import pkg, pathlib; print(pkg.version)\npathlib.Path(pkg.__file__).write_text('')"
    ran = box.execute(code)
    assert ran["ok"] and ran["data"]["stdout"].strip() == "1.0", ran
    if prepared.sandbox.mode == "bwrap":
        assert "Read-only file system" in ran["data"]["stderr"], ran
        assert (box.root / "src/pkg/__init__.py").read_text().startswith("from ._version")
    # The baseline's bash, likewise.
    from pytest_toolpolicy.current.tools import call_tool

    bash = call_tool(box, "bash", {"command": "python -c 'import pkg; print(pkg.version)'"})
    assert bash["ok"] and bash["data"]["exit_code"] == 0, bash
    assert bash["data"]["output"].split() == ["1.0"], bash


def test_a_repo_with_no_packaging_runs_from_its_checkout(
    offline: Path, tmp_path: Path, shared_cache: Path
) -> None:
    files = {"mod.py": "def f():\n    return 1\n", "tests/test_x.py": "from mod import f\n"}
    (base,) = make_repo(offline / "acme__flat", files)
    item = instance("acme/flat", base)
    build = build_environment(item, repos=offline, cache_dir=shared_cache)
    assert build.status == "built", build.reason
    env = build.env
    assert env is not None and env.repo_paths == (".",) and env.generated == ()
    meta = json.loads((shared_cache / f"envs/{build.name}.json").read_text())
    assert meta["spec"]["install"] == "" and meta["commit"] == base
    ws = materialize(item, tmp_path / "items", repos=offline, cache_dir=shared_cache)
    probe = run_in(env, tmp_path, "import mod; print(mod.__file__)")
    assert probe.returncode != 0  # nothing was installed ...
    probe = run_in(env, ws.root, "import mod; print(mod.__file__)")
    assert probe.stdout.strip() == str(ws.root / "mod.py"), probe.stderr  # ... it runs from there


def wheel(directory: Path, name: str, module: str) -> Path:
    """A real wheel of one module, for pip's find-links (there is no index)."""
    import zipfile

    directory.mkdir(parents=True, exist_ok=True)
    info = f"{name}-1.0.dist-info/"
    files = {
        f"{name}.py": module,
        info + "METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
    }
    files[info + "WHEEL"] = (
        "Wheel-Version: 1.0\nGenerator: t\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    files[info + "RECORD"] = "".join(f"{p},,\n" for p in [*files, info + "RECORD"])
    path = directory / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as out:
        for rel, text in files.items():
            out.writestr(rel, text)
    return path


def setup_commit_files() -> dict[str, str]:
    """A later commit of ``app`` (the environment's): a requirements file naming a local
    package ``extra``, which the base commit does not have."""
    later = {"requirements.txt": "./deps/extra\n", "app/__init__.py": "x = 2\n"}
    later |= {"backend.json": package("app")["backend.json"]}
    later |= {f"deps/extra/{k}": v for k, v in package("extra", modules=["extra.py"]).items()}
    later["deps/extra/extra.py"] = "value = 'extra'\n"
    return later


@pytest.mark.slow  # two commits' environments built: ~8 s
def test_built_at_the_environment_setup_commit(
    offline: Path, tmp_path: Path, shared_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As in SWE-bench: the environment is the setup commit's (a later one, which adds a
    requirements file), and what the base commit's own install requires beyond it (a
    dependency the setup commit dropped) comes on top, for that base commit only."""
    monkeypatch.setenv(
        "PIP_FIND_LINKS", str(wheel(tmp_path / "wheels", "basedep", "v = 7\n").parent)
    )
    first = {**package("app", requires=["basedep"]), "app/__init__.py": "x = 1\n"}
    base, env_commit = make_repo(offline / "acme__envc", first, setup_commit_files())
    item = instance("acme/envc", base, env_commit)
    build = build_environment(item, repos=offline, cache_dir=shared_cache)
    assert build.status == "built", build.reason
    meta = json.loads((shared_cache / f"envs/{build.name}.json").read_text())
    assert meta["commit"] == env_commit and meta["spec"]["requirements"] == ["requirements.txt"]
    env = build.env
    assert env is not None and len(env.extra_paths) == 1
    layer = json.loads((shared_cache / f"envs/{build.name}/layers/{base}.json").read_text())
    assert layer["packages"] == ["basedep==1.0"]
    assert layer["requirements_from"] == "pip's report"  # read without running a resolution
    ws = materialize(item, tmp_path / "items", repos=offline, cache_dir=shared_cache)
    assert not (ws.root / "requirements.txt").exists()  # the item is at its base commit
    probe = run_in(env, ws.root, "import extra, app, basedep; print(extra.value, app.x, basedep.v)")
    assert probe.stdout.split() == ["extra", "1", "7"], probe.stderr
    # The setup commit as a base commit: the same environment, from the cache, nothing on top.
    other = build_environment(
        instance("acme/envc", env_commit, env_commit), repos=offline, cache_dir=shared_cache
    )
    assert (other.status, other.name) == ("cached", build.name)
    assert other.env is not None and other.env.extra_paths == ()
    assert build_environment(item, repos=offline, cache_dir=shared_cache).status == "cached"


@pytest.mark.slow  # two commits' environments built: ~8 s
def test_a_base_commit_whose_build_needs_the_venv(
    offline: Path, tmp_path: Path, shared_cache: Path
) -> None:
    """astropy 1.3's setup.py imports the astropy_helpers the venv has: its build fails in an
    isolated environment, and the base commit's dry run is made in the venv, as pip's
    `setup.py develop` built it."""
    first = {**package("app", imports=["extra"]), "app/__init__.py": "x = 1\n"}
    base, env_commit = make_repo(offline / "acme__envc", first, setup_commit_files())
    item = instance("acme/envc", base, env_commit)
    build = build_environment(item, repos=offline, cache_dir=shared_cache)
    assert build.status == "built", build.reason
    layer = json.loads((shared_cache / f"envs/{build.name}/layers/{base}.json").read_text())
    assert layer["packages"] == []


@pytest.mark.slow  # two commits' environments built: ~8 s
def test_a_base_commit_whose_requirements_cannot_be_read(
    offline: Path, tmp_path: Path, shared_cache: Path
) -> None:
    """Neither dry run can read them (astropy 1.3's setup.py under a 2017 setuptools): the
    layer adds nothing and says why; the tests then show what the base commit lacks."""
    first = {**package("app", fail="no metadata here"), "app/__init__.py": "x = 1\n"}
    later = {"app/__init__.py": "x = 2\n", "backend.json": package("app")["backend.json"]}
    base, env_commit = make_repo(offline / "acme__envc", first, later)
    build = build_environment(instance("acme/envc", base, env_commit), repos=offline,
                              cache_dir=shared_cache)  # fmt: skip
    assert build.status == "built", build.reason
    layer = json.loads((shared_cache / f"envs/{build.name}/layers/{base}.json").read_text())
    assert layer["packages"] == [] and "no metadata here" in layer["note"], layer
    assert layer["requirements_from"] == ""


def test_a_uv_step_reads_the_cache_first_and_the_index_for_what_it_lacks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[list[str]] = []
    missing = {"yes"}

    def step(self: envbuild.Builder, what: str, argv: list[str], **kw: object) -> str:
        calls.append(argv)
        if argv[-1] == "--offline" and missing:
            raise EnvironmentSetupError(f"{what}: not in the cache, and the network is off")
        return what

    monkeypatch.setattr(envbuild.Builder, "_step", step)
    builder = envbuild.Builder.__new__(envbuild.Builder)  # only its steps are used
    assert builder._from_cache_first("resolving", ["uv", "pip", "compile"]) == "resolving"
    assert calls == [["uv", "pip", "compile", "--offline"], ["uv", "pip", "compile"]]
    calls.clear()
    missing.clear()
    found = builder._from_cache_first("resolving", ["uv", "pip", "compile"])
    assert found == "resolving, from uv's cache" and calls == [
        ["uv", "pip", "compile", "--offline"]
    ]


def test_a_failed_build_is_remembered(
    offline: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, shared_cache: Path
) -> None:
    (base,) = make_repo(offline / "acme__bad", {**package("bad", fail="no wheel today")})
    item = instance("acme/bad", base)
    cache = shared_cache
    steps: list[str] = []
    real_step = envbuild.Builder._step

    def spy(self: envbuild.Builder, what: str, argv: list[str], **kw: Any) -> str:
        steps.append(what)
        return real_step(self, what, argv, **kw)

    monkeypatch.setattr(envbuild.Builder, "_step", spy)
    first = build_environment(item, repos=offline, cache_dir=cache)
    assert first.status == "failed" and "no wheel today" in (first.reason or "")
    assert steps and steps[-1].startswith("install")
    record = json.loads((cache / f"envs/{first.name}.failed.json").read_text())
    assert "no wheel today" in record["error"] and record["spec_key"] and record["time"]
    assert not (cache / "envs" / first.name).exists()  # the half-built env is gone
    steps.clear()
    with pytest.raises(
        EnvironmentSetupError, match=r"(?s)acme__bad-1: .*no wheel today.*remembered"
    ):
        environment_for(item, repos=offline, cache_dir=cache)
    assert steps == []  # failed at once: no pip, no venv
    again = build_environment(item, repos=offline, cache_dir=cache, rebuild=True)
    assert again.status == "failed" and steps  # tried again
    # What another builder (an older release of the build code) failed at, this one tries.
    failed_file = cache / f"envs/{first.name}.failed.json"
    record = json.loads(failed_file.read_text())
    assert record["builder"] == builder_digest()
    failed_file.write_text(json.dumps({**record, "builder": "an older one"}))
    steps.clear()
    assert build_environment(item, repos=offline, cache_dir=cache).status == "failed" and steps


def test_the_builds_setup_code_runs_in_the_sandbox(
    offline: Path, tmp_path: Path, bwrap_sandbox: Sandbox, shared_cache: Path
) -> None:
    host = tmp_path / "host-file"
    neighbour = shared_cache / "repos" / "note.txt"
    files = {**package("evil", escape=[str(host), str(neighbour)]), "evil/__init__.py": ""}
    (base,) = make_repo(offline / "acme__evil", files)
    build = build_environment(
        instance("acme/evil", base), repos=offline, cache_dir=shared_cache,
        sandbox=bwrap_sandbox,
    )  # fmt: skip
    assert build.status == "built", build.reason
    assert not host.exists() and not neighbour.exists()


def test_interpreter_problems_are_infrastructure_errors(
    offline: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (base,) = make_repo(offline / "acme__calc", {"calc.py": "x = 1\n"})
    monkeypatch.setenv("TOOLPOLICY_PYTHON", "acme/calc=/bin/false")
    with pytest.raises(EnvironmentSetupError, match=r"acme__calc-1: .*does not run as Python"):
        environment_for(instance("acme/calc", base), repos=offline, cache_dir=tmp_path / "c")


def test_bundled_instances_use_the_harness_interpreter(tmp_path: Path) -> None:
    from ..bench.gitmirrors import make_bundled

    make_bundled(tmp_path / "instances", "bundled__calc-1")
    from pytest_toolpolicy.bench import load_instances

    (item,) = load_instances(f"bundled:{tmp_path / 'instances'}").instances
    env = environment_for(item)
    assert env == Environment(sys.executable, plugin_autoload=False)
    assert env.sandbox_env(tmp_path) == {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


def test_pip_and_venv_get_no_host_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret")
    monkeypatch.setenv("PIP_INDEX_URL", "https://pypi.invalid/simple")
    dump = "import json, os; print(json.dumps(dict(os.environ)))"
    seen = json.loads(venvs.host_step("dump", [sys.executable, "-c", dump], 60))
    assert "OPENAI_API_KEY" not in seen
    assert seen["PIP_INDEX_URL"] == "https://pypi.invalid/simple" and seen["PATH"]
    build = pipsettings.build_environ()
    assert "OPENAI_API_KEY" not in build and build["PIP_INDEX_URL"].endswith("invalid/simple")
    assert build["PIP_CONSTRAINT"] == "/dev/null"  # the spec's pins decide, not the machine's
    with pytest.raises(EnvironmentSetupError, match=r"(?s)install x failed.*no-such-package"):
        pip = [sys.executable, "-m", "pip", "install", "--no-index", "no-such-package-xyz"]
        venvs.host_step("install x", pip, timeout=60)


def test_pip_paths_bind_what_pip_config_names(tmp_path: Path) -> None:
    wheels, index = tmp_path / "wheels", tmp_path / "pypi" / "simple"
    wheels.mkdir()
    index.mkdir(parents=True)
    conf = tmp_path / "pip.conf"
    conf.write_text(f"[global]\nextra-index-url = file://{index} https://x.invalid/simple\n")
    environ = {"PIP_CONFIG_FILE": str(conf), "PIP_FIND_LINKS": str(wheels), "HOME": "/nowhere"}
    paths = envs.pip_paths(environ)
    assert {str(conf), str(wheels), str(index.parent)} <= set(paths)
    assert not any(p.startswith("https") or p == "/" for p in paths)
    assert pipsettings.build_environ(environ)["PIP_CONFIG_FILE"] == str(conf)


def test_an_environment_commit_missing_from_the_mirror(offline: Path, shared_cache: Path) -> None:
    from pytest_toolpolicy.bench.workspaces import WorkspaceSetupError

    (base,) = make_repo(offline / "acme__lost", {"calc.py": "x = 1\n"})
    item = instance("acme/lost", base, "2" * 40)
    with pytest.raises(WorkspaceSetupError, match=r"acme__lost-1: environment setup commit 2{40}"):
        build_environment(item, repos=offline, cache_dir=shared_cache)


def test_the_host_never_runs_what_the_build_left_in_the_venv(
    src_env: tuple[Path, Instance, Path], src_specs: None, tmp_path: Path
) -> None:
    """A .pth in site-packages runs at every interpreter start: the host asks the venv for its
    prefixes with -S, so it never runs there (the sandbox binds the venv all the same)."""
    from pytest_toolpolicy.primitives import bwrap

    mirrors, item, cache = src_env
    env = environment_for(item, repos=mirrors, cache_dir=cache)
    (site,) = Path(env.home, envs.VENV).glob("lib/python*/site-packages")
    marker = tmp_path / "ran-on-the-host"
    pth = site / "zz-evil.pth"
    pth.write_text(f"import os; open({str(marker)!r}, 'w')\n")
    try:
        bwrap.python_prefixes.cache_clear()
        prefixes = bwrap.python_prefixes(env.python)
    finally:
        pth.unlink()
    assert not marker.exists()
    assert str(Path(env.home, envs.VENV)) in prefixes


def test_the_venv_start_up_files_are_put_back_after_the_build(
    offline: Path, shared_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    specs = Path(os.environ[SPECS_ENV])
    specs.write_text(
        SPECS
        + '[repo."acme/sly"]\n'
        + "install = 'python -m pip install -e . && cd "
        + '"$(dirname "$(dirname "$(command -v python)")")"'
        + " && echo home = /tmp/elsewhere > pyvenv.cfg && ln -sf /bin/sh bin/python'\n"
    )
    (base,) = make_repo(offline / "acme__sly", package("sly"))
    build = build_environment(instance("acme/sly", base), repos=offline, cache_dir=shared_cache)
    assert build.status == "built", build.reason
    venv = Path(build.env.home if build.env else "", envs.VENV)
    assert "home = /tmp/elsewhere" not in (venv / "pyvenv.cfg").read_text()
    assert os.path.realpath(venv / "bin/python") != "/bin/sh"


def test_the_network_option_of_the_sandbox(tmp_path: Path) -> None:
    from pytest_toolpolicy.primitives.bwrap import SandboxLimits, bwrap_argv

    argv = ["/bin/true"]
    closed = bwrap_argv("bwrap", argv, tmp_path, tmp_path, {}, sys.executable, SandboxLimits())
    assert "--share-net" not in closed and "/etc/resolv.conf" not in closed
    ro = str(tmp_path / "wheels")
    shared = bwrap_argv(
        "bwrap", argv, tmp_path, tmp_path, {}, sys.executable, SandboxLimits(),
        network=True, ro_binds=(ro,),
    )  # fmt: skip
    assert "--share-net" in shared
    if os.path.exists("/etc/resolv.conf"):
        assert "/etc/resolv.conf" in shared
    assert "/etc/ssl/private" not in shared
    # After the writable directory: a path inside it is read-only.
    assert shared.index(ro) > shared.index("--bind")


def test_a_link_the_build_planted_never_steers_the_layer(
    offline: Path, shared_cache: Path, tmp_path: Path
) -> None:
    """The install (repository code, run in the sandbox where the environment's directory is
    writable) makes the directory the base commits' layers go in a link to a host directory:
    the host's layer step for another base commit must neither delete nor write there."""
    outside = tmp_path / "outside"
    home = '"$(dirname "$(dirname "$(dirname "$(command -v python)")")")"'
    specs = Path(os.environ[SPECS_ENV])
    specs.write_text(
        SPECS
        + '[repo."acme/linky"]\n'
        + f"install = 'python -m pip install -e . && ln -s {outside} {home}/layers'\n"
    )
    first = {**package("linky"), "linky/__init__.py": "x = 1\n"}
    base, env_commit = make_repo(offline / "acme__linky", first, {"linky/__init__.py": "x = 2\n"})
    (outside / base).mkdir(parents=True)
    (outside / base / "keep.txt").write_text("a file of the host's\n")
    build = build_environment(
        instance("acme/linky", base, env_commit), repos=offline, cache_dir=shared_cache
    )
    assert (outside / base / "keep.txt").read_text() == "a file of the host's\n"
    assert sorted(p.name for p in (outside / base).iterdir()) == ["keep.txt"]
    assert sorted(p.name for p in outside.iterdir()) == [base]
    assert build.status == "built", build.reason  # the planted link went, the layer was made
    layers = shared_cache / "envs" / build.name / "layers"
    assert layers.is_dir() and not layers.is_symlink()


def test_the_builds_own_files_never_go_through_a_link_a_step_planted(tmp_path: Path) -> None:
    """A build step can write in its TMP; a link it leaves where the harness writes its next
    requirement or constraint file is replaced, never followed, and one it leaves where the
    harness reads uv's output is refused."""
    host = tmp_path / "host.txt"
    host.write_text("host\n")
    builder = envbuild.Builder.__new__(envbuild.Builder)  # only its file helpers are used
    builder.home = tmp_path / "env"
    (builder.home / "tmp").mkdir(parents=True)
    planted = builder.home / "tmp" / "tool-bounds.txt"  # a name the harness writes each round
    planted.symlink_to(host)
    builder._write(planted, "setuptools<71\n")
    assert host.read_text() == "host\n" and not planted.is_symlink()
    assert planted.read_text() == "setuptools<71\n"
    resolved = builder.home / "tmp" / "resolved-0.txt"
    resolved.symlink_to(host)
    with pytest.raises(EnvironmentSetupError, match="resolved-0.txt: refusing"):
        builder._as_constraints(str(resolved))
    assert host.read_text() == "host\n"
