from __future__ import annotations

import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from pytest_toolpolicy.bench import load_instances
from pytest_toolpolicy.bench.bundled_repos import (
    StreamError,
    build,
    import_stream,
    repos_dir,
    stream_commits,
    stream_path,
)
from pytest_toolpolicy.bench.instance import Instance
from pytest_toolpolicy.bench.load import BUNDLED_DIR
from pytest_toolpolicy.bench.workspaces import WorkspaceSetupError, materialize

from .gitmirrors import BASE, FIXED_OPS, git, make_bundled

BUNDLED = load_instances("bundled").instances
PROJECTS = sorted({i.repo for i in BUNDLED})


def by_number(instances: list[Instance]) -> list[Instance]:
    return sorted(instances, key=lambda i: int(i.instance_id.rpartition("-")[2]))


@pytest.mark.parametrize("repo", PROJECTS)
def test_each_stream_imports_to_the_recorded_base_commits(repo: str, tmp_path: Path) -> None:
    members = by_number([i for i in BUNDLED if i.repo == repo])
    stream = stream_path(Path(members[0].path or ""), repo)
    assert stream.parent == BUNDLED_DIR.parent / "repos"
    data = stream.read_bytes()
    import_stream(data, tmp_path / "mirror.git", StreamError)
    mirror = tmp_path / "mirror.git"
    assert stream_commits(data) >= {i.base_commit for i in members}
    parent = None
    for instance in members:
        commit = git(mirror, "rev-parse", f"base/{instance.instance_id}^{{commit}}")
        assert commit == instance.base_commit
        assert instance.instance_id in git(mirror, "log", "-1", "--format=%s", commit)
        if parent and parent != commit:  # one chain, in instance-number order
            assert git(mirror, "rev-parse", f"{commit}^") == parent
        parent = commit
    assert git(mirror, "rev-parse", "main") == members[-1].base_commit


def test_the_streams_are_what_build_writes(tmp_path: Path) -> None:
    """Rebuilt from themselves, the streams and every instance.json come out byte for byte."""
    copy = tmp_path / "instances"
    for spec in BUNDLED_DIR.glob("*/instance.json"):
        (copy / spec.parent.name).mkdir(parents=True)
        shutil.copyfile(spec, copy / spec.parent.name / "instance.json")
    shutil.copytree(repos_dir(BUNDLED_DIR), repos_dir(copy), ignore=shutil.ignore_patterns("*.py"))
    commits = build(copy)
    assert commits == {i.instance_id: i.base_commit for i in BUNDLED}
    for stream in sorted(repos_dir(BUNDLED_DIR).glob("*.fi")):
        assert (repos_dir(copy) / stream.name).read_bytes() == stream.read_bytes(), stream.name
    for spec in BUNDLED_DIR.glob("*/instance.json"):
        assert (copy / spec.parent.name / "instance.json").read_bytes() == spec.read_bytes()


def calc(tmp_path: Path, *files: dict[str, str]) -> list[Instance]:
    """Instances of one project, ``bundled/calc``, one per tree."""
    root = tmp_path / "instances"
    for number, tree in enumerate(files, 1):
        make_bundled(root, f"bundled__calc-{number}", tree)
    return list(load_instances(f"bundled:{root}").instances)


def test_a_new_instance_is_a_commit_on_top_and_the_others_keep_theirs(tmp_path: Path) -> None:
    (one,) = calc(tmp_path, BASE)
    two = make_bundled(
        tmp_path / "instances", "bundled__calc-2", {**BASE, "calc/ops.py": FIXED_OPS}
    )
    after = {
        i.instance_id: i for i in load_instances(f"bundled:{tmp_path / 'instances'}").instances
    }
    assert after["bundled__calc-1"].base_commit == one.base_commit
    assert json.loads((two / "instance.json").read_text())["base_commit"] != one.base_commit


def test_concurrent_materializations_of_one_project_all_succeed(
    tmp_path: Path, cache: Path
) -> None:
    instances = calc(tmp_path, BASE, {**BASE, "calc/ops.py": FIXED_OPS})
    with ThreadPoolExecutor(4) as pool:
        futures = [
            pool.submit(materialize, instance, tmp_path / "items", cache_dir=cache)
            for instance in instances * 2
        ]
        workspaces = [future.result() for future in futures]
    assert [ws.base for ws in workspaces] == [i.base_commit for i in instances * 2]
    assert "a / b" in (workspaces[1].root / "calc/ops.py").read_text()
    mirrors = sorted(p.name for p in (cache / "repos").glob("*.git"))
    assert len(mirrors) == 1 and mirrors[0].startswith("bundled__calc-")
    checkouts = sorted(p.name for p in (cache / "repos" / "bundled__calc" / "history").iterdir())
    assert checkouts == sorted(i.base_commit for i in instances)  # no temporary left behind


def test_a_bundled_item_is_a_clone_with_its_own_refs(tmp_path: Path, cache: Path) -> None:
    (instance,) = calc(tmp_path, BASE)
    one = materialize(instance, tmp_path / "items", cache_dir=cache)
    two = materialize(instance, tmp_path / "items", cache_dir=cache)
    (one.root / "calc/ops.py").write_text("broken = True\n")
    ref = one.checkpoint("mine")
    assert git(one.root, "rev-parse", "--verify", ref)
    with pytest.raises(AssertionError, match="single revision"):
        git(two.root, "rev-parse", "--verify", ref)
    assert two.patch() == "" and (two.root / "calc/ops.py").read_text() == BASE["calc/ops.py"]


def corrupt(stream: Path, how: str) -> None:
    data = stream.read_bytes()
    if how == "missing":
        stream.unlink()
    elif how == "truncated":
        stream.write_bytes(data[: data.rindex(b"\ndone")])
    else:  # one byte of a file changed: still a stream, but of other commits
        stream.write_bytes(data.replace(b"a // b", b"a // c", 1))


@pytest.mark.parametrize(
    ("how", "message"),
    [
        ("missing", r"cannot read the bundled repository .*calc\.fi: No such file"),
        ("truncated", r"cannot import .*calc\.fi: git fast-import failed: .*stream ends early"),
        ("edited", r"base commit \w{40} not found in .*calc\.fi .*: the stream and instance"),
    ],
    ids=["missing", "truncated", "edited"],
)
def test_a_broken_stream_is_an_error_naming_the_instance(
    tmp_path: Path, cache: Path, how: str, message: str
) -> None:
    (instance,) = calc(tmp_path, BASE)
    corrupt(tmp_path / "repos" / "calc.fi", how)
    with pytest.raises(WorkspaceSetupError, match=rf"^bundled__calc-1: {message}"):
        materialize(instance, tmp_path / "items", cache_dir=cache)
    assert list((tmp_path / "items").iterdir()) == []
    imported = list((cache / "repos").glob("*.git"))
    assert len(imported) == (how == "edited")  # a stream that fails to import leaves nothing


def test_the_loader_names_an_instance_whose_stream_lacks_its_base(tmp_path: Path) -> None:
    calc(tmp_path, BASE)
    corrupt(tmp_path / "repos" / "calc.fi", "edited")  # original ids kept: loads, then fails
    assert load_instances(f"bundled:{tmp_path / 'instances'}").errors == ()
    corrupt(tmp_path / "repos" / "calc.fi", "missing")
    (error,) = load_instances(f"bundled:{tmp_path / 'instances'}").errors
    assert (error.instance_id, error.field) == ("bundled__calc-1", "repo")
    assert "no repository stream" in str(error) and "calc.fi" in str(error)


def test_stream_commits_skips_file_contents() -> None:
    blob = b"commit refs/heads/x\noriginal-oid " + b"f" * 40 + b"\n"
    data = b"blob\nmark :1\ndata %d\n%s\ncommit refs/heads/main\nmark :2\n" % (len(blob), blob)
    data += b"original-oid " + b"a" * 40 + b"\ndata 1\nm\nM 100644 :1 f\n\ndone\n"
    assert stream_commits(data) == {"a" * 40}
    with pytest.raises(StreamError, match="not a git fast-export stream"):
        stream_commits(b"blob\ndata -5\n")


def test_an_item_clone_holds_no_ref_to_later_commits(tmp_path: Path) -> None:
    """Instance 1's successor commits hold its fix: nothing in the item's clone may name them."""
    from pytest_toolpolicy.bench import load_instances
    from pytest_toolpolicy.bench.workspaces import materialize

    first = load_instances("bundled", ids=["bundled__cronparse-1"]).instances[0]
    ws = materialize(first, tmp_path / "items", cache_dir=tmp_path / "cache")
    refs = ws.git("for-each-ref", "--format=%(refname)").text.split()
    assert refs == ["refs/tags/base/bundled__cronparse-1"]  # its own start, and nothing later
    assert ws.git("log", "--all", "--format=%H").text.split() == [first.base_commit]
