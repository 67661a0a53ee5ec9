"""One environment's build, step by step (``Builder``), each failure an ``EnvironmentSetupError``.

Before anything: what the spec needs of this machine (Debian packages) is checked
(``system.py``). Then the checkout (a local clone at the setup commit, in ``repo/``; the
submodules the spec names must be there), the venv (``uv venv --seed`` of the spec's
interpreter, ``venvs.py``), ``pip_first``, the requirement files, the pinned packages,
``pre_install`` and ``install``. Everything after the venv runs the repository's code
(setup.py, build backends) or third-party builds, so it runs in the Sandbox with the network
shared, only the environment's directory writable (the checkout's ``.git`` read-only), the
checkout seen at ``/testbed`` (its editable install then points where every item's workspace
is later seen) and the build's own disk bound (``spec.build_mb``).

Installs go through uv, each with the cutoff of the spec (``--exclude-newer``: releases no
newer than the setup commit's date by default, so the same spec builds the same next year; a
package the spec pins exactly keeps its pin, and build backends are never cut off). The
dependency steps share one uv cache (``envs/../uv``), read offline first, so a second version
of a repository reuses what the first downloaded and the index pages it read. The spec's own
``install`` (``pip install -e .``) runs as written with the venv's pip, as SWE-bench's images
run it, under constraints uv resolved at the cutoff (``Builder._install``). The checkout's own
requirements are read by the venv's pip without the network (``project_requires.py``) and
resolved as text on the shared cache; where its setup code runs in a resolution (a pip too
old to report), the cache is private: nothing it does can reach another environment's build.

After the install the venv's start-up files are put back (``venvs.restore_venv``), and the venv
is asked, in the sandbox, which ``sys.path`` entries and editable-finder mappings point into the
checkout (``.`` or ``src``); the files the install generated (setuptools_scm's ``_version.py``,
compiled extension modules) are recorded, to be copied into each workspace (``environment.py``).

SWE-bench installs the repository at each instance's base commit. Where the base commit's own
install requires what the environment lacks (pytest 5.4's early commits still need
``wcwidth``), uv's dry run at the base commit, in the sandbox, says what (``Builder.top_up``),
installed with ``--no-deps --target`` into ``layers/<commit>/site``, which goes on that
instance's ``PYTHONPATH`` (``Environment.extra_paths``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import time
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

from ..primitives import hostgit, safefs
from ..primitives.bwrap import SandboxLimits
from ..primitives.safefs import remove_tree
from ..primitives.sandbox import Sandbox
from ..primitives.workspace import Workspace, WorkspaceError
from .build_requires import LEGACY_PIP, build_requires, legacy_editable
from .constraints import install_constraints
from .constraints import normal as _normal
from .environment import generated_files
from .extensions import WHEEL_MAX_BYTES, changed_sources, is_extension, wheel_extensions
from .interpreters import interpreter_version
from .layout import LAYERS, REPO, TESTBED, TMP, VENV, layer_ext, layer_site
from .output import PROBE, checked_output, dry_run_packages, plugin_modules, repo_paths
from .pipsettings import build_environ, pip_paths
from .project_name import project_names
from .project_requires import REPORT_MAX_BYTES, UnreadableReport, report_argv, requirement_lines
from .requirements import swebench_requirements
from .spec import EnvironmentSetupError, EnvSpec
from .system import check_submodules, check_system
from .venvs import TOOL_BOUNDS, create_venv, pin_venv, restore_venv, uv_binary

# A build may take minutes and compile things: more room than a test run gets.
BUILD_LIMITS = SandboxLimits(
    memory_bytes=4 << 30, pids=1024, address_space_bytes=32 << 30, file_size_bytes=2 << 30,
    open_files=4096, tmpfs_bytes=512 << 20,
)  # fmt: skip
# What a checkout's own requirements are read from, by ``uv pip compile``.
_PROJECT_FILES = ("setup.py", "pyproject.toml", "setup.cfg")
_EDITABLE = re.compile(r"(?:^|\s)(?:-e|--editable)(?:\s|=)")
_RESOLVED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._\-]*)(?:\[[^\]]*\])?==")
# "    # via pytest", or one of the lines under a bare "    # via": "    #   pluggy".
_VIA = re.compile(r"^\s+#\s+(?:via\s+|\s+)(.*)$")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._\-]*")
# Never cut off: an isolated build gets today's, and these must agree with each other and with
# today's interpreter (a 2019 setuptools fails to import on Python 3.9).
_BUILD_TOOL_NAMES = frozenset({"setuptools", "wheel", "pip", "setuptools-scm"})
_PIP_INSTALL = re.compile(r"^(?:python3? -m )?pip3? install (?P<args>.+)$")
_SHELL = re.compile(r"[;&|<>`$()\n]")  # a shell command line, not one pip install
_EXTRAS = re.compile(r"(?:^|/)\.\[([^\]]+)\]$")  # ".[test,docs]": the checkout with extras


def build_sandbox(sandbox: Sandbox | None) -> Sandbox:
    """The caller's kind of sandbox (else the configured one), with a build's limits."""
    sandbox = sandbox or Sandbox.from_env()
    reason = sandbox.notes[0].removeprefix("degraded sandbox: ") if sandbox.notes else None
    return Sandbox(sandbox.mode, bwrap=sandbox.bwrap, limits=BUILD_LIMITS, reason=reason)


class Builder:
    """One environment's build, step by step; each failure an ``EnvironmentSetupError``.
    ``cutoff``: the ``--exclude-newer`` date of unpinned dependencies (None: none)."""

    def __init__(
        self,
        home: Path,
        spec: EnvSpec,
        interpreter: str,
        sandbox: Sandbox,
        timeout: float,
        cutoff: str | None = None,
        uv_cache: Path | None = None,
    ) -> None:
        self.home, self.spec, self.interpreter = home, spec, interpreter
        self.sandbox, self.timeout, self.cutoff = sandbox, timeout, cutoff
        # The build requirements of the day (``era_constraints``), once the install asks.
        self.era: list[str] = []
        self.repo, self.venv = home / REPO, home / VENV
        self.python = str(self.venv / "bin" / "python")
        self.uv_cache = uv_cache or home.parent.parent / "uv"
        # Where the build's steps see the checkout: /testbed in bwrap mode, its own path else.
        self.testbed = sandbox.mode == "bwrap"
        self.seen = TESTBED if self.testbed else str(self.repo)

    def build(self, checkout: Path, commit: str) -> dict[str, Any]:
        check_system(self.spec)
        remove_tree(self.home, within=self.home.parent)  # a build that died half-way
        self.home.mkdir(parents=True)
        workspace = self._clone(checkout, commit, self.repo)
        check_submodules(self.spec, self.repo)
        spec = self.spec.resolved(lambda rel: safefs.is_regular(self.repo, rel))
        create_venv(self.interpreter, self.venv)
        pinned = pin_venv(self.venv)
        (self.home / TMP).mkdir()
        if spec.pip_first:
            self._uv("pip_first", ["install", *spec.pip_first])
        if spec.requirements or spec.pip_packages:
            # Resolved as of the cutoff, then installed exactly as resolved; the spec's pins
            # win over the requirement file's (SWE-bench installs them after it).
            reqs = [self._requirements_file(rel) for rel in spec.requirements]
            pins = self._pins_file(spec.pip_packages)
            what = "the requirement files and pinned packages"
            resolved = self._resolve(what, [*reqs, pins], self._overrides(spec.pip_packages))
            # The resolution is complete (every dependency pinned) and was made with the pins
            # as overrides: installed as it is, not resolved again without them (xarray's
            # dask==2022.8.1 under a distributed of 2023, as SWE-bench's pip left it).
            install = ["install", "--no-deps", "-r", resolved]
            self._uv("install of the requirements and pinned packages", install)
        for command in spec.pre_install:
            self._step(f"pre_install `{command}`", ["/bin/bash", "-c", command])
        cutoff_note = self._install(spec) if spec.install else None
        restore_venv(self.venv, pinned)
        probe = self._step("read sys.path", [self.python, "-I", "-c", PROBE], network=False)
        remove_tree(self.home / TMP, within=self.home)
        return {
            "repo": spec.repo,
            "version": spec.version,
            "commit": commit,
            "spec_key": self.spec.key(),
            "spec": dataclasses.asdict(spec),
            "interpreter": self.interpreter,
            "python_version": interpreter_version(os.path.realpath(self.interpreter)),
            "testbed": self.testbed,
            "cutoff": self.cutoff,
            "cutoff_note": cutoff_note,
            "repo_paths": repo_paths(probe, Path(self.seen), self.repo),
            "pytest_plugins": plugin_modules(probe),
            "generated": generated_files(workspace, self.repo),
            "built_at": time.strftime("%Y-%m-%d %H:%M:%S"),
        }

    def plugins(self) -> list[str]:
        """The built environment's pytest plugins (``output.plugin_modules``), asked again of
        its venv: for an environment recorded before they were."""
        probe = self._step("read sys.path", [self.python, "-I", "-c", PROBE], network=False)
        return plugin_modules(probe)

    def _clone(self, checkout: Path, commit: str, into: Path) -> Workspace:
        # A local clone hard-links the cached objects; the sandbox keeps this .git read-only.
        clone = ["clone", "-q", "--no-checkout", str(checkout), str(into)]
        hostgit.run(clone, cwd=into.parent, error=_checkout_error)
        hostgit.neutralize_attributes(into / ".git")
        hostgit.run(["checkout", "-q", "--detach", commit], cwd=into, error=_checkout_error)
        try:
            return Workspace(into)
        except WorkspaceError as exc:
            raise EnvironmentSetupError(f"the environment's checkout: {exc}") from None

    def _install(self, spec: EnvSpec) -> str | None:
        """The spec's ``install``, run as written with the venv's pip (as SWE-bench's images
        run it: pip's editable installs work with the setuptools of any year), under
        constraints that hold the repository's own dependencies to the cutoff. Returns why the
        cutoff could not be applied (the command is no plain pip install of the checkout, or
        the checkout's requirements could not be resolved), or None."""
        command = spec.install
        found = _PIP_INSTALL.match(" ".join(command.split()))
        note = None
        if not self.cutoff:
            pass
        elif found is None or _SHELL.search(command):
            note = "the install command is not a plain pip install: no cutoff on what it adds"
        else:
            args = _shell_words(found["args"])
            extras = sorted(
                {e.strip() for a in args if (m := _EXTRAS.search(a)) for e in m[1].split(",")}
            )
            source = next((f for f in _PROJECT_FILES if safefs.is_regular(self.repo, f)), None)
            try:
                if source is None:
                    raise EnvironmentSetupError("the checkout has no setup.py or pyproject.toml")
                constraints, note = self._install_constraints(spec, source, extras)
            except EnvironmentSetupError as exc:
                note = f"the cutoff could not be applied to the install: {exc}"[:2000]
            else:
                command = f"{command} -c {constraints}"
                self.era = self.era_constraints(self._read(Path(constraints)))
                if legacy_editable(self.era) and _EDITABLE.search(command):
                    # The day's setuptools has no PEP 660 hook, and pip 25.3 dropped the
                    # ``setup.py develop`` fallback: a pip of that day installs it editable.
                    self._uv("an editable install's pip of its day", ["install", LEGACY_PIP])
        self._step(f"install `{command}`", ["/bin/bash", "-c", command])
        return note

    def era_constraints(self, install: str) -> list[str]:
        """The checkout's build requirements (``build_requires.py``) as of the cutoff, with
        wheels first (the newest release before the cutoff that has a wheel for the
        interpreter; any release where none resolves so), as ``name==version`` lines for the
        isolated builds' constraints; the install's own constraints (``install``: their text)
        and the spec's build constraints win where they name the same package."""
        wanted = build_requires(self._text("pyproject.toml"))
        if not wanted or not self.cutoff:
            return []
        tmp = self.home / TMP
        source, out = tmp / "build-requires.in", tmp / "build-requires.txt"
        self._write(source, "".join(f"{r}\n" for r in wanted))
        base = ["compile", "--quiet", "--output-file", str(out), str(source)]
        base += [f"--exclude-newer={self.cutoff}"]
        for binary in (["--only-binary", ":all:"], []):
            try:
                self._uv("resolving the build requirements of the day", [*base, *binary])
                break
            except EnvironmentSetupError:
                if not binary:
                    return []  # the day's requirements do not resolve here: today's, as before
        taken = {_normal(m[1]) for line in install.splitlines() if (m := _RESOLVED.match(line))}
        taken |= {_normal(m[1]) for c in self.spec.build_constraints if (m := _NAME.match(c))}
        return [
            line.strip()
            for line in self._read(out).splitlines()
            if (m := _RESOLVED.match(line)) and _normal(m[1]) not in taken
        ]

    def _install_constraints(
        self, spec: EnvSpec, source: str, extras: Sequence[str]
    ) -> tuple[str, str | None]:
        """Constraints for the repository's own install: what it needs, as of the cutoff, with
        the spec's pins and requirement files. No pin overrides the project here: where the
        project needs another version than the spec pins (pylint 3.0's setup commit requires
        astroid>=3.0.0a9, its spec pins 3.0.0a6), SWE-bench's ``pip install -e .`` upgraded it,
        and so does this one: resolved again from the project alone, with the names the spec
        pins left out of the constraints (pip keeps what is installed where it satisfies the
        project, and takes what the project needs where not)."""
        own = project_names(self._text, spec.repo)  # never constrained, however it arrives
        read = self._project_requires(self.repo, self.home, extras=extras)
        private = read is None  # the checkout's setup code runs in the resolution
        project = read or [f"{self.seen}/{source}", *(f"--extra={e}" for e in extras)]
        reqs = [self._requirements_file(r) for r in spec.requirements]
        pins = self._pins_file(spec.pip_packages)
        try:
            out = self._resolve("the install's dependencies", [*project, pins, *reqs], (), private)
        except EnvironmentSetupError as exc:
            first = str(exc).splitlines()[-1:] or [""]
        else:
            return self._as_constraints(out, own), None
        out = self._resolve("the install's own dependencies", project, (), private)
        pinned = {m[1] for p in spec.pip_packages if (m := _PIN.match(p))}
        why = f"the project needs other versions than the spec pins ({first[0][:300]})"
        return self._as_constraints(
            out, pinned | own
        ), f"the install resolved without the spec's pins: {why}"

    def _text(self, rel: str) -> str | None:
        """A file of the checkout as text (read without following links, bounded), or None."""
        try:
            return safefs.read_text(self.repo, rel, 1 << 20)
        except (OSError, safefs.UnsafePath, UnicodeDecodeError):
            return None

    def _requirements_file(self, rel: str) -> str:
        """The checkout's requirement file ``rel`` as SWE-bench installs it
        (``requirements.py``), written where the build's steps read it."""

        def read(name: str) -> str | None:
            try:
                return safefs.read_text(self.repo, name, 1 << 20)
            except (OSError, safefs.UnsafePath, UnicodeDecodeError):
                return None

        tmp = self.home / TMP
        path = tmp / f"requirements-{len(list(tmp.glob('requirements-*')))}.txt"
        self._write(path, swebench_requirements(read, rel) + "\n")
        return str(path)

    def _overrides(self, packages: Sequence[str]) -> list[str]:
        """uv's ``--override`` of the spec's exact pins: SWE-bench installs them after the
        requirement file, so where the two disagree (pylint 3.0's astroid) the pin wins. A
        bare name is no override: installed after, it leaves what is there."""
        exact = [p for p in packages if _PIN.match(p)]
        return ["--override", self._pins_file(exact)] if exact else []

    def _pins_file(self, pins: Sequence[str]) -> str:
        tmp = self.home / TMP
        path = tmp / f"pins-{len(list(tmp.glob('pins-*')))}.txt"
        self._write(path, "".join(f"{p}\n" for p in pins))
        return str(path)

    def _resolve(
        self, what: str, inputs: list[str], extra: Sequence[str] = (), private: bool = False
    ) -> str:
        """A file pinning what ``inputs`` (requirement files, ``setup.py``…) resolve to, each
        package that goes into the environment cut off at the cutoff date, except what the
        spec pins exactly and the test runner (pytest and its plugins, unless pinned: the
        runner of the day may not run on the spec's interpreter at all — requests' 2013 pytest
        on Python 3.9 — SWE-bench's images ran today's, and grading needs pytest 3.3 at least).
        The cutoff is given per package (``--exclude-newer-package``), the
        names found by resolving once without it: a build environment's own tools
        (setuptools_scm, tomli…) are not cut off, as pip's build isolation would have today's,
        and must agree with each other and with today's interpreter. New names the cut-off
        versions bring are cut off on the next round (three at most). ``private``: the
        checkout's setup code runs, so a cache of its own."""
        tmp = self.home / TMP
        out = f"{tmp}/resolved-{len(list(tmp.glob('resolved-*')))}.txt"
        cache = ["--cache-dir", f"{tmp}/uv-cache"] if private else []
        kept = pinned_names(inputs, self.repo, self.seen)
        bounds = Path(tmp / "tool-bounds.txt")
        self._write(bounds, "".join(f"{b}\n" for b in TOOL_BOUNDS))
        extra = [*extra, "--constraint", str(bounds)]
        names: set[str] = set()
        for _ in range(3):
            cutoffs = [f"--exclude-newer-package={n}={self.cutoff}" for n in sorted(names - kept)]
            argv = ["compile", "--quiet", "--output-file", out, *inputs, *extra, *cutoffs]
            if private:
                self._uv(f"resolving {what} (uv pip compile)", [*argv, *cache], shared=False)
            else:
                self._from_cache_first(f"resolving {what} (uv pip compile)", self._uv_argv(argv))
            compiled = self._read(Path(out))
            runners = runner_names(self.spec.test_cmd)
            if arrives_itself(compiled, project_names(self._text, self.spec.repo)):
                # The project is part of the runner's own stack (pluggy, iniconfig, packaging
                # under pytest): today's runner needs today's release of it, which the
                # checkout is not. The runner of the day, then, like everything else.
                runners = frozenset()
            found = cut_off_names(compiled, runners, kept)
            if not self.cutoff or found <= names:
                break
            names |= found
        return out

    def _from_cache_first(self, what: str, argv: list[str], **step: Any) -> str:
        """A uv step (``argv``) run on the shared cache alone (``--offline``) first, and against
        the index only where the cache lacks something. Index pages are revalidated on every
        online resolution (about 200 for xarray's pins: 15-40 s here), and they are what a
        second version of a repository would otherwise fetch again. What a cutoff holds back is
        the same either way (a page fetched after the cutoff lists every release before it);
        what is not cut off (build tools, the test runner) is as of the cache's pages."""
        step.setdefault("shared_cache", True)
        try:
            return self._step(f"{what}, from uv's cache", [*argv, "--offline"], **step)
        except EnvironmentSetupError:
            return self._step(what, argv, **step)

    def _project_requires(
        self, checkout: Path, writable: Path, ro: Sequence[str] = (), extras: Sequence[str] = ()
    ) -> list[str] | None:
        """The checkout's own requirements as a requirement file (``project_requires.py``),
        read in the sandbox without the network or a cache; None where the venv's pip cannot
        say (no ``--report`` before pip 22.2, a build that needs what the venv lacks)."""
        tmp = writable / TMP
        report = tmp / f"project-report-{len(list(tmp.glob('project-report-*')))}.json"
        target = "." + (f"[{','.join(extras)}]" if extras else "")
        argv = report_argv(self.python, target, str(report))
        try:
            self._step(
                "reading the project's requirements (pip's dry-run report)",
                argv, cwd=checkout, writable=writable, ro=ro, network=False,
            )  # fmt: skip
            lines = requirement_lines(self._read(report, REPORT_MAX_BYTES))
        except (EnvironmentSetupError, OSError, safefs.UnsafePath, UnicodeDecodeError):
            return None
        except UnreadableReport:  # not pip's report as this reads it: as if pip could not say
            return None
        # ``.in``: the project's exact pins are cut off like any of its requirements
        # (``pinned_names`` keeps a ``.txt`` of the harness's own from the cutoff).
        path = report.with_suffix(".in")
        self._write(path, "".join(f"{line}\n" for line in lines))
        return [str(path)]

    def _as_constraints(self, path: str, drop: Collection[str] = ()) -> str:
        """The resolution at ``path`` rewritten as constraints pip accepts (``constraints.py``)."""
        self._write(Path(path), install_constraints(self._read(Path(path)), drop))
        return path

    # The build's steps can write in its directory (TMP too): the harness's own files there are
    # written by a rename that replaces a link rather than following it, and read refusing one,
    # each path checked below the environment's directory.
    def _write(self, path: Path, text: str) -> None:
        try:
            safefs.write_text(self.home, path.relative_to(self.home), text)
        except (OSError, safefs.UnsafePath) as exc:
            raise EnvironmentSetupError(f"the build's own file {path.name}: {exc}") from None

    def _read(self, path: Path, limit: int = 16 << 20) -> str:
        try:
            return safefs.read_text(self.home, path.relative_to(self.home), limit)
        except (OSError, safefs.UnsafePath, UnicodeDecodeError) as exc:
            raise EnvironmentSetupError(f"the build's own file {path.name}: {exc}") from None

    def _uv(self, what: str, args: list[str], shared: bool = True) -> str:
        return self._step(what, self._uv_argv(args), shared_cache=shared)

    def _uv_argv(self, args: list[str]) -> list[str]:
        return [uv_binary(), "pip", *args[:1], "--python", self.python, *self._bounds(), *args[1:]]

    def _bounds(self) -> list[str]:
        """uv's ``--build-constraint`` of the spec's ``build_constraints`` (what an sdist's
        isolated build may use: astropy-helpers 3.2 needs a setuptools with pkg_resources and package_index)."""
        if not self.spec.build_constraints:
            return []
        path = self.home / TMP / "build-constraints.txt"
        if not path.exists():
            self._write(path, "".join(f"{c}\n" for c in self.spec.build_constraints))
        return ["--build-constraint", str(path)]

    def top_up(
        self,
        checkout: Path,
        base: str,
        commit: str = "",
        built: Sequence[str] = (),
        src_layout: bool = False,
    ) -> dict[str, Any]:
        """Install what the base commit's own install requires and the environment lacks
        (uv's dry run at the base commit says what) into ``layers/<base>/site``, with
        ``--no-deps --target``; where the environment has compiled modules (``built``: its
        generated files) and the base commit's C or Cython sources differ from the setup
        commit's (``commit``), build them at the base commit into ``layers/<base>/ext``
        (``extensions.py``). The base commit's requirements are read by pip's report, without
        the network, and resolved on the shared cache; where pip cannot say, uv's dry run builds
        the checkout (in isolation, else in the venv, with a cache of its own); where neither
        can read the requirements, nothing is added and the layer's ``note`` says why. Every
        path of the layer is checked below the environment's directory, never followed: the
        build wrote there."""
        rel = f"{LAYERS}/{base}"
        wanted: list[str] = []
        route = ""  # how the base commit's requirements were read
        note = ""  # why the base commit's requirements could not be read, if they could not
        compiled: list[str] = []
        stale = []
        if commit and any(is_extension(f) for f in built):
            stale = changed_sources(self.repo, commit, checkout, base)
        try:
            layer = safefs.inside(self.home, rel)
            remove_tree(layer, within=self.home)
            safefs.make_dirs(self.home, rel)
        except (OSError, safefs.UnsafePath) as exc:
            raise EnvironmentSetupError(f"the base commit's layer: {exc}") from None
        src = layer / "src"
        try:
            self._clone(checkout, base, src)
            (layer / TMP).mkdir()
            ro = (str(src / ".git"),)
            for command in self.spec.pre_install:
                argv = ["/bin/bash", "-c", command]
                self._step(f"pre_install `{command}`", argv, cwd=src, writable=layer, ro=ro)
            dry = [uv_binary(), "pip", "install", "--dry-run", "--python", self.python, "."]
            if self.spec.build_constraints:  # the layer's own copy: this step's TMP is its own
                bounds = layer / TMP / "build-constraints.txt"
                self._write(bounds, "".join(f"{c}\n" for c in self.spec.build_constraints))
                dry[4:4] = ["--build-constraint", str(bounds)]
            what = f"uv's dry run at the base commit {base[:12]}"
            read = self._project_requires(src, layer, ro)
            if read is not None:  # the requirements as text: resolved on the shared cache
                dry[-1:] = ["-r", read[0]]
                out = self._from_cache_first(what, dry, cwd=src, writable=layer, ro=ro)
                route = "pip's report"
            else:
                out, note = self._dry_run_building(what, dry, src, layer, ro)
                route = "uv's dry run" if out else ""
            wanted = dry_run_packages(out, src) if out else []
            if wanted:
                pip = [uv_binary(), "pip", "install", "--python", self.python, "--no-deps"]
                pip += ["--target", str(layer / "site"), *wanted]
                self._step(f"install of {' '.join(wanted)}", pip, writable=layer, shared_cache=True)
            if stale:
                compiled = self._extensions_at_base(src, layer, ro, len(stale), src_layout)
        except (OSError, safefs.UnsafePath) as exc:
            raise EnvironmentSetupError(f"the base commit's layer: {exc}") from None
        finally:
            for leftover in (src, layer / TMP):
                with contextlib.suppress(OSError, safefs.UnsafePath):
                    remove_tree(leftover, within=layer)
        return {
            "commit": base,
            "packages": wanted,
            "site": layer_site(base) if wanted else "",
            "ext": layer_ext(base) if compiled else "",
            "compiled": compiled,
            "stale_sources": len(stale),
            "requirements_from": route,
            **(
                {"note": f"the base commit's requirements could not be read ({note})"}
                if note
                else {}
            ),
        }

    def _dry_run_building(
        self, what: str, dry: list[str], src: Path, layer: Path, ro: Sequence[str]
    ) -> tuple[str, str]:
        """uv's dry run of the checkout ``src`` itself, which runs its setup code: with a cache
        of the layer's own. Isolated, else in the venv; the output, or "" and why neither ran."""
        try:
            return self._step(what, dry, cwd=src, writable=layer, ro=ro), ""
        except EnvironmentSetupError as isolated:
            # A setup.py that imports what the venv has (astropy 1.3's astropy_helpers)
            # builds only as pip's `setup.py develop` built it: in the venv, not isolated.
            dry = [*dry[:4], "--no-build-isolation", *dry[4:]]
            try:
                what = f"{what}, in the venv"
                return self._step(what, dry, cwd=src, writable=layer, ro=ro), ""
            except EnvironmentSetupError as in_venv:
                # Neither can read it (astropy 1.3: its setup.py needs the venv's
                # astropy_helpers, and the venv's setuptools of 2017 has no PEP 517
                # back-end for uv): nothing is added, and the layer says why. What the
                # base commit lacks then shows in its tests as an environment fault.
                first = str(isolated).strip().splitlines()[-1:] or [""]
                last = str(in_venv).strip().splitlines()[-1:] or [""]
                return "", f"isolated: {first[0][:300]}; in the venv: {last[0][:300]}"

    def _extensions_at_base(
        self, src: Path, layer: Path, ro: Sequence[str], stale: int, src_layout: bool
    ) -> list[str]:
        """Build the package at the base commit as a wheel (isolated, as the install built
        it) and keep its extension modules in the layer, at their paths in the checkout."""
        wheels = layer / TMP / "wheels"
        argv = [self.python, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", str(wheels), "."]
        what = f"build of the compiled modules at the base commit ({stale} changed sources)"
        self._step(what, argv, cwd=src, writable=layer, ro=ro)
        found = [
            e.name for e in os.scandir(safefs.below(layer, wheels))
            if e.name.endswith(".whl") and e.is_file(follow_symlinks=False)
        ]  # fmt: skip
        if len(found) != 1:
            raise EnvironmentSetupError(f"{what}: expected one wheel, found {found}")
        data = safefs.read_bytes(wheels, found[0], WHEEL_MAX_BYTES)
        prefix = "src/" if src_layout else ""
        modules = wheel_extensions(data, prefix)
        if not modules:
            raise EnvironmentSetupError(f"{what}: the wheel holds no compiled module")
        ext = safefs.make_dirs(layer, "ext")
        for rel, blob in sorted(modules.items()):
            safefs.write_bytes(ext, rel, blob, mode=0o755)
        return sorted(modules)

    def _step(
        self,
        what: str,
        argv: list[str],
        cwd: Path | None = None,
        writable: Path | None = None,
        ro: Sequence[str] = (),
        network: bool = True,
        shared_cache: bool = False,
    ) -> str:
        writable = writable or self.home
        tmp = str(writable / TMP)
        env = {**build_environ(), "TMPDIR": tmp, "PIP_CACHE_DIR": f"{tmp}/pip-cache"}
        bounding = [*self.spec.build_constraints, *self.era]
        if bounding:  # pip applies its constraints to isolated builds too
            bounds = writable / TMP / "build-constraints.txt"
            self._write(bounds, "".join(f"{c}\n" for c in bounding))
            env["PIP_CONSTRAINT"] = str(bounds)
        if self.era:  # a release's wheel before another's sdist, as builds of its day had
            env["PIP_PREFER_BINARY"] = "1"
        env |= {"UV_NO_PROGRESS": "1", "UV_PYTHON_DOWNLOADS": "never"}
        binds = [*pip_paths(), uv_binary(), *ro]
        rw: list[tuple[str, str]] = []
        if shared_cache:
            # Written by uv itself, for steps whose builds are third parties' (dependencies).
            self.uv_cache.mkdir(parents=True, exist_ok=True)
            rw.append((str(self.uv_cache), str(self.uv_cache)))
            env["UV_CACHE_DIR"] = str(self.uv_cache)
        else:
            env["UV_CACHE_DIR"] = f"{tmp}/uv-cache"
        if self.testbed and writable == self.home:
            rw.append((str(self.repo), TESTBED))
        result = self.sandbox.run(
            argv,
            cwd=cwd or (self.repo if writable == self.home else writable),
            writable=writable,
            stdin=None,
            timeout=self.timeout,
            merge_stderr=True,
            python=self.python,
            env=env,
            network=network,
            ro_binds=binds,
            rw_mounts=rw,
            disk_bytes=self.spec.build_mb << 20,
        )
        return checked_output(what, result, self.timeout)


_PIN = re.compile(
    r"^\s*([A-Za-z0-9][A-Za-z0-9._\-]*)(?:\[[^\]]*\])?\s*===?\s*[^\s;,*]+\s*(?:;.*)?$"
)


def runner_names(test_cmd: str) -> frozenset[str]:
    """The test runners of a spec: pytest, and the program its ``test_cmd`` starts where
    that is a package's command (sphinx's ``tox``), not a file of the repository."""
    words = test_cmd.split()
    first = next((w for w in words if "=" not in w), "")  # past "VAR=value" prefixes
    own = {_normal(first)} if _NAME.fullmatch(first) and not first.endswith(".py") else set()
    return frozenset({"pytest", *own})


def _test_runner(name: str, runners: frozenset[str]) -> bool:
    return any(name == r or name.startswith(f"{r}-") for r in runners)


def arrives_itself(compiled: str, own: Collection[str]) -> bool:
    """Whether a ``uv pip compile`` output pins the project itself (one of its ``own`` names),
    as something else's dependency."""
    names = {_normal(n) for n in own}
    return any(
        (m := _RESOLVED.match(line)) and _normal(m[1]) in names for line in compiled.splitlines()
    )


def cut_off_names(
    compiled: str,
    runners: frozenset[str] = frozenset({"pytest"}),
    pinned: Collection[str] = (),
) -> set[str]:
    """Of what a ``uv pip compile`` output pins, the names to cut off: everything but build
    tools, the test runners (``runner_names``: pytest, tox, and their plugins), the names
    pinned exactly (``pinned``) and what only those need (its ``# via`` lines say who needs
    what; a package needed by the project or a requirement file is cut off, runner's or not).
    A pin may be of a later date than the cutoff (sphinx 3's Jinja2==3.0.3, added by SWE-bench
    when the one of the day broke): what it needs is of its date, not the cutoff's."""
    needs: dict[str, set[str]] = {}
    current: str | None = None
    for line in compiled.splitlines():
        if found := _RESOLVED.match(line):
            current = _normal(found[1])
            needs[current] = set()
        elif current and (via := _VIA.match(line)) and via[1].strip():
            parent = via[1].strip()
            needs[current].add(_normal(parent) if _NAME.fullmatch(parent) else "<project>")
    exact = {_normal(n) for n in pinned}
    runner: set[str] = {n for n in needs if _test_runner(n, runners) or n in exact}
    changed = True
    while changed:  # what only the runner (or what only it needs) needs
        changed = False
        for name, parents in needs.items():
            if name not in runner and parents and parents <= runner:
                runner.add(name)
                changed = True
    return {n for n in needs if n not in runner and n not in _BUILD_TOOL_NAMES}


def pinned_names(args: Sequence[str], repo: Path, seen: str) -> set[str]:
    """The names pinned exactly by ``args`` and by the requirement files they name (``-r
    FILE``, read from the checkout ``repo``, seen by the step at ``seen``; nested ``-r`` lines
    too, once each)."""
    names: set[str] = set()
    files: list[str] = []
    pending = list(args)
    outside: list[Path] = []
    while pending:
        arg = pending.pop(0)
        if arg in ("-r", "--requirement") and pending:
            files.append(pending.pop(0))
        elif arg.endswith(".txt") and not arg.startswith(f"{seen}/"):
            outside.append(Path(arg))  # a requirement file of the harness's own (the pins)
        elif arg.endswith(".txt"):
            files.append(arg)
        elif found := _PIN.match(arg):
            names.add(_normal(found[1]))
    for path in outside:
        with contextlib.suppress(OSError, UnicodeDecodeError, safefs.UnsafePath):
            text = safefs.read_text(path.parent, path.name, 1 << 20)
            names |= {_normal(m[1]) for line in text.splitlines() if (m := _PIN.match(line))}
    read: set[str] = set()
    while files:
        name = files.pop(0)
        rel = name.removeprefix(f"{seen}/").removeprefix("./")
        if rel in read:
            continue
        read.add(rel)
        try:
            text = safefs.read_text(repo, rel, 1 << 20)
        except (OSError, safefs.UnsafePath, UnicodeDecodeError):
            continue
        for line in text.splitlines():
            words = line.split("#", 1)[0].split()
            if words[:1] in (["-r"], ["--requirement"]) and len(words) > 1:
                files.append(str(Path(rel).parent / words[1]))
            elif found := _PIN.match(" ".join(words)):
                names.add(_normal(found[1]))
    return names


def _shell_words(text: str) -> list[str]:
    import shlex

    try:
        return shlex.split(text)
    except ValueError as exc:
        raise EnvironmentSetupError(f"install command: {exc}: {text!r}") from None


def _checkout_error(message: str) -> EnvironmentSetupError:
    return EnvironmentSetupError(f"the environment's checkout: {message}")


__all__ = ["BUILD_LIMITS", "Builder", "build_sandbox", "VENV"]
