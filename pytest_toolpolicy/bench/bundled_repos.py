"""The bundled benchmark's repositories: one git history per project, as ``git fast-import`` text.

``bench/bundled/repos/<project>.fi`` (the instances directory's sibling ``repos/``) holds the project's
whole history, SWE-bench style: one commit per instance base, chained in instance-number order,
each named in its message and tagged ``base/<instance_id>``, ``main`` at the last. Text, so a
change to a bundled project is reviewable as a diff; identical files are one blob, so 25 copies
of five projects are stored as their distinct file versions. The commits have a fixed identity
and date (``hostgit.IDENTITY``): their ids are a function of the content, and ``build`` (run by
``python -m pytest_toolpolicy.bench.bundled_repos``) writes the same bytes again from the same trees.

A bundled instance's mirror is a bare repository imported from its project's stream (the cache
and its atomic publication are ``workspaces``'); from there it is a mirror like a real one:
cached checkout, then a shared clone per item.

The stream is written with ``--show-original-ids`` (each object names its id, which fast-import
ignores) and ``--use-done-feature`` (a cut-off stream fails to import instead of importing part
of the history). The loader checks an instance's base commit against those ids without importing
anything; a stream edited so that it no longer makes them is caught when it is imported (the base
commit is then missing from the mirror).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..paths import write_atomic
from ..primitives import hostgit

SUFFIX = ".fi"
EXPORT = [
    *("fast-export", "--all", "--reencode=yes", "--signed-tags=strip"),
    *("--show-original-ids", "--use-done-feature"),
]
_JUNK = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
_NUMBER = re.compile(r"-(\d+)$")

Error = Callable[[str], Exception]


class StreamError(Exception):
    """A stream that cannot be read or built; the message names the file."""


def repos_dir(instances_dir: Path) -> Path:
    return Path(instances_dir).parent / "repos"


def stream_path(instance_dir: Path, repo: str) -> Path:
    """``<instances>/<id>`` of repo ``bundled/<project>`` -> ``<instances>/../repos/<project>.fi``."""
    return repos_dir(Path(instance_dir).parent) / f"{repo.rpartition('/')[2]}{SUFFIX}"


def stream_commits(data: bytes, name: object = "stream") -> frozenset[str]:
    """The commit ids a stream records (its commits' ``original-oid``), payloads skipped unread."""
    found: set[str] = set()
    pos, in_commit = 0, False
    while pos < len(data):
        end = data.find(b"\n", pos)
        end = len(data) if end < 0 else end
        line, pos = data[pos:end], end + 1
        if line.startswith(b"data "):
            size = line[5:]
            if not size.isdigit():
                raise StreamError(f"{name}: not a git fast-export stream (data {size[:20]!r})")
            pos = end + 1 + int(size)
        elif line.startswith((b"commit ", b"blob", b"tag ", b"reset ")):
            in_commit = line.startswith(b"commit ")
        elif in_commit and line.startswith(b"original-oid "):
            found.add(line[13:].decode("ascii", "replace").strip().lower())
    return frozenset(found)


def import_stream(data: bytes, git_dir: Path, error: Error) -> None:
    """A new bare repository at ``git_dir`` holding the stream's history."""
    _init(git_dir, error)
    hostgit.run(["fast-import", "--quiet"], cwd=git_dir, env=_env(git_dir), stdin=data, error=error)


def _init(git_dir: Path, error: Error) -> None:
    hostgit.run(
        ["init", "-q", "--bare", "-b", "main", str(git_dir)], cwd=git_dir.parent, error=error
    )


def build(instances_dir: Path) -> dict[str, str]:
    """Rewrite each project's stream from its instances' trees; returns instance id -> commit.
    An instance's tree is its ``repo/`` directory when it has one (a new or changed instance),
    else its base commit in the current stream. Each ``instance.json``'s ``base_commit`` is set
    to the new commit; consecutive instances with identical trees share one commit."""
    instances_dir = Path(instances_dir)
    projects: dict[str, list[tuple[int, Path, dict[str, object]]]] = {}
    for spec in sorted(instances_dir.glob("*/instance.json")):
        row = json.loads(spec.read_text(encoding="utf-8"))
        number = _NUMBER.search(spec.parent.name)
        if number is None or not isinstance(row.get("repo"), str):
            raise StreamError(f"{spec}: expected <project>-<n> and a repo field")
        project = str(row["repo"]).rpartition("/")[2]
        projects.setdefault(project, []).append((int(number[1]), spec.parent, row))
    commits: dict[str, str] = {}
    for project, members in sorted(projects.items()):
        members.sort(key=lambda member: member[0])
        stream = repos_dir(instances_dir) / f"{project}{SUFFIX}"
        commits |= _build_project(stream, [(path, row) for _, path, row in members])
    for spec in sorted(instances_dir.glob("*/instance.json")):
        if spec.parent.name in commits:
            _set_base(spec, commits[spec.parent.name])
    return commits


def _build_project(stream: Path, members: list[tuple[Path, dict[str, object]]]) -> dict[str, str]:
    def error(message: str) -> StreamError:
        return StreamError(f"{stream}: {message}")

    with tempfile.TemporaryDirectory(prefix="toolpolicy-bundled-") as scratch:
        git_dir = Path(scratch) / "git"
        if stream.exists():
            import_stream(stream.read_bytes(), git_dir, error)
        else:
            _init(git_dir, error)
        trees = [_tree(git_dir, path, row, error) for path, row in members]
        ids = [path.name for path, _ in members]
        # Consecutive instances with one tree share a commit, named after all of them.
        groups: list[tuple[str, list[str]]] = []
        for name, tree in zip(ids, trees, strict=True):
            if groups and groups[-1][0] == tree:
                groups[-1][1].append(name)
            else:
                groups.append((tree, [name]))
        commits: dict[str, str] = {}
        parent: list[str] = []
        for tree, names in groups:
            message = "base of " + ", ".join(names)
            args = ["commit-tree", tree, *parent, "-m", message]
            commit = _git(git_dir, error, *args).strip()
            commits |= dict.fromkeys(names, commit)
            parent = ["-p", commit]
        old = _git(git_dir, error, "for-each-ref", "--format=delete %(refname)").splitlines()
        new = [f"create refs/tags/base/{name} {commit}" for name, commit in commits.items()]
        new.append(f"create refs/heads/main {commits[ids[-1]]}")
        for batch in (old, new):  # one transaction may not both delete and create a ref
            _git(git_dir, error, "update-ref", "--stdin", stdin="".join(f"{c}\n" for c in batch))
        data = hostgit.run(EXPORT, cwd=git_dir, env=_env(git_dir), error=error).stdout
    stream.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(stream, lambda tmp: _write(tmp, data))
    return commits


def _write(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    path.chmod(0o644)  # a file of the repository, not mkstemp's private 0600


def _tree(git_dir: Path, path: Path, row: dict[str, object], error: Error) -> str:
    """The tree of ``path/repo`` as ``Workspace.create`` commits it, else of its base commit."""
    source = path / "repo"
    if not source.is_dir():
        base = row.get("base_commit")
        found = hostgit.run(
            ["rev-parse", "--verify", "-q", f"{base}^{{tree}}"],
            cwd=git_dir, env=_env(git_dir), error=error, ok=(0, 1),
        )  # fmt: skip
        if found.returncode:
            raise error(f"{path.name} has no repo/ and its base_commit {base} is not in the stream")
        return found.text.strip()
    with tempfile.TemporaryDirectory(prefix="toolpolicy-tree-") as scratch:
        copy, index = Path(scratch) / "tree", Path(scratch) / "index"
        shutil.copytree(source, copy, ignore=_JUNK)
        env = {**_env(git_dir), "GIT_WORK_TREE": str(copy), "GIT_INDEX_FILE": str(index)}
        hostgit.run(["add", "-A", "."], cwd=copy, env=env, error=error)
        return hostgit.run(["write-tree"], cwd=copy, env=env, error=error).text.strip()


def _set_base(spec: Path, commit: str) -> None:
    """Only the value changes: the rest of the file stays as its author wrote it."""
    text = spec.read_text(encoding="utf-8")
    old = json.loads(text).get("base_commit")
    new, count = re.subn(
        r'("base_commit"\s*:\s*)"[^"]*"', lambda m: f'{m[1]}"{commit}"', text, count=1
    )
    if count == 0 or json.loads(new).get("base_commit") != commit:
        raise StreamError(f"{spec}: cannot set its base_commit (now {old!r}) to {commit}")
    if new != text:
        spec.write_text(new, encoding="utf-8")


def _git(git_dir: Path, error: Error, *args: str, stdin: str | None = None) -> str:
    return hostgit.run(args, cwd=git_dir, env=_env(git_dir), error=error, stdin=stdin).text


def _env(git_dir: Path) -> dict[str, str]:
    return {"GIT_DIR": str(git_dir)}


def main(argv: list[str]) -> int:
    """``python -m pytest_toolpolicy.bench.bundled_repos [INSTANCES_DIR]``: rewrite the
    bundled projects' histories from their instances (default: the package's own).

    Each project's instances (``bundled__<project>-<n>``) become one chain of commits in
    instance-number order, and each ``instance.json`` gets its commit as ``base_commit``. An
    instance's tree is its ``repo/`` directory when it has one, else its base commit in the
    current stream; so to add or change an instance, put its files in
    ``instances/<id>/repo/``, run this, check the diff, and delete ``repo/``. With nothing
    changed it rewrites the same bytes."""
    from .load import BUNDLED_DIR

    instances = Path(argv[0]) if argv else BUNDLED_DIR
    try:
        commits = build(instances)
    except StreamError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for name, commit in sorted(commits.items()):
        print(f"{commit}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
