"""A repository the harness did not make is read through a git directory of the harness's own:
no program its configuration names ever runs on the host — neither one of the keys known to
run programs, nor any key git knows — while git itself, pointed at the repository, would run
them (each test's control shows it)."""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path

import pytest

from pytest_toolpolicy.bench.workspaces import materialize
from pytest_toolpolicy.mine.history import change, commits
from pytest_toolpolicy.mine.mine import Setup, mine_change
from pytest_toolpolicy.primitives.foreign import ForeignRepositoryError, foreign
from pytest_toolpolicy.primitives.sandbox import Sandbox

from ..bench.gitmirrors import BASE, FIXED_OPS, git, real_instance, write

SIGNATURES = {
    "openpgp": "-----BEGIN PGP SIGNATURE-----\n\niQEzBAABCAAdFiEE\n-----END PGP SIGNATURE-----",
    "ssh": "-----BEGIN SSH SIGNATURE-----\nU1NIU0lHAAAAAQ==\n-----END SSH SIGNATURE-----",
    "x509": "-----BEGIN SIGNED MESSAGE-----\nMIAGCSqGSIb3DQEH\n-----END SIGNED MESSAGE-----",
}


def program(tmp_path: Path) -> tuple[Path, Path]:
    """A program that leaves a mark when it runs (and reads the runner's environment, as the
    issue's did), and the mark."""
    mark = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f'#!/bin/sh\necho "$0 $*" >> {mark}\ncat /proc/$PPID/environ >> {mark}\n')
    script.chmod(0o755)
    return script, mark


def signed(root: Path, message: str, signature: str) -> str:
    """A commit on HEAD whose header carries ``signature`` (verifying it runs a program)."""
    tree = git(root, "write-tree")
    parent = git(root, "rev-parse", "HEAD")
    header = "\n ".join(signature.splitlines())
    raw = (
        f"tree {tree}\nparent {parent}\nauthor t <t@localhost> 1700000000 +0000\n"
        f"committer t <t@localhost> 1700000000 +0000\ngpgsig {header}\n\n{message}\n"
    )
    commit = subprocess.run(
        ["git", "hash-object", "-t", "commit", "-w", "--stdin"],
        cwd=root, input=raw, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    git(root, "update-ref", "HEAD", commit)
    return commit


def hostile(root: Path, script: Path) -> dict[str, str]:
    """A repository whose history holds a fix in signed commits (each signature format) and
    whose own config sets every key known to run a program to ``script``."""
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    write(root, BASE)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    base = git(root, "rev-parse", "HEAD")
    write(root, {"calc/ops.py": FIXED_OPS, "tests/test_ops.py": BASE["tests/test_ops.py"] + "\n"})
    git(root, "add", "-A")
    fixes = {}
    for kind, signature in SIGNATURES.items():
        fixes[kind] = signed(root, f"Fix #12: div returns a float ({kind} signed)", signature)
    hooks = root / "hooks"
    hooks.mkdir()
    for hook in ("post-checkout", "pre-auto-gc", "reference-transaction", "post-index-change"):
        (hooks / hook).symlink_to(script)
    (root / ".gitattributes").write_text("* diff=evil filter=evil merge=evil\n")
    (root / "more.config").write_text(
        f"[log]\n\tshowSignature = true\n[gpg]\n\tprogram = {script}\n"
    )
    keys = {
        "log.showSignature": "true",
        "gpg.program": str(script),
        "gpg.ssh.program": str(script),
        "gpg.x509.program": str(script),
        "gpg.ssh.allowedSignersFile": str(root / "allowed_signers"),
        "core.fsmonitor": str(script),
        "core.hooksPath": str(hooks),
        "core.pager": str(script),
        "core.editor": str(script),
        "core.askPass": str(script),
        "core.sshCommand": str(script),
        "core.alternateRefsCommand": str(script),
        "sequence.editor": str(script),
        "diff.external": str(script),
        "diff.evil.textconv": str(script),
        "diff.evil.command": str(script),
        "filter.evil.clean": str(script),
        "filter.evil.smudge": str(script),
        "filter.evil.process": str(script),
        "merge.evil.driver": str(script),
        "credential.helper": f"!{script}",
        "uploadpack.packObjectsHook": str(script),
        "include.path": str(root / "more.config"),
    }
    for key, value in keys.items():
        git(root, "config", key, value)
    (root / "allowed_signers").write_text(f"t@localhost {script}\n")
    return {"base": base, **fixes}


def test_git_itself_would_run_them(tmp_path: Path) -> None:
    """The control: the planted repository does make plain git run its program."""
    script, mark = program(tmp_path)
    commits_ = hostile(tmp_path / "repo", script)
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "SECRET_KEY": "sk-shown"}
    subprocess.run(
        ["git", "show", "-s", "--format=%B", commits_["ssh"]],
        cwd=tmp_path / "repo", env=env, capture_output=True, check=False,
    )  # fmt: skip
    assert mark.exists() and "sk-shown" in mark.read_text(errors="replace")


def test_mining_and_materializing_run_none_of_them(tmp_path: Path) -> None:
    script, mark = program(tmp_path)
    repo = tmp_path / "mirrors" / "acme__calc"
    made = hostile(repo, script)
    found = commits(repo)
    assert set(made.values()) - {made["base"]} <= set(found)
    for kind in SIGNATURES:
        assert f"({kind} signed)" in change(repo, made[kind]).message
    setup = Setup("acme/calc", repo.parent, Sandbox.from_env(), run=False)
    mined = mine_change(repo, made["openpgp"], setup)
    assert mined.row is not None, mined
    assert "PWNED" not in mined.row["problem_statement"]
    instance = real_instance("acme/calc", made["base"], "", "")
    ws = materialize(instance, tmp_path / "items", repos=repo.parent)
    assert ws.patch() == ""
    assert not mark.exists(), mark.read_text(errors="replace")


def every_key() -> list[str]:
    """Every configuration variable git knows (``git help --config``), placeholders filled."""
    out = subprocess.run(["git", "help", "--config"], capture_output=True, text=True).stdout
    keys = [line.strip() for line in out.splitlines() if re.fullmatch(r"[\w.<>*-]+", line.strip())]
    filled = [re.sub(r"<[^>]*>|\*", "evil", key) for key in keys if "." in key]
    assert len(filled) > 300, filled[:5]
    return sorted(set(filled))


def test_no_key_of_the_repository_s_config_is_read(tmp_path: Path) -> None:
    """Every key git knows, each set to the program: git pointed at the repository runs it or
    stops reading the config (most keys do not take a command); read through the shadow,
    nothing runs and nothing fails."""
    script, mark = program(tmp_path)
    repo = tmp_path / "mirrors" / "acme__calc"
    made = hostile(repo, script)
    config = repo / ".git" / "config"
    with config.open("a", encoding="utf-8") as handle:
        for key in every_key():
            section, _, name = key.rpartition(".")
            head, _, sub = section.partition(".")
            title = f'[{head} "{sub}"]' if sub else f"[{head}]"
            handle.write(f"{title}\n\t{name} = {script}\n")
    control = subprocess.run(
        ["git", "log", "--format=%H"], cwd=repo, capture_output=True, text=True,
        env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)},
    )  # fmt: skip
    assert control.returncode != 0 or mark.exists()
    if mark.exists():
        mark.unlink()
    assert change(repo, made["x509"]).message.startswith("Fix #12")
    foreign_repo = foreign(repo)
    log = foreign_repo.run(["log", "--format=%H %G?"], error=RuntimeError).text
    assert made["ssh"] in log
    assert not mark.exists()


def test_what_is_not_a_repository_or_not_readable_so_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ForeignRepositoryError, match="not a git repository"):
        foreign(tmp_path)
    repo = tmp_path / "linked"
    repo.mkdir()
    git(repo, "init", "-q")
    head = repo / ".git" / "HEAD"
    head.unlink()
    head.symlink_to("/etc/hostname")
    with pytest.raises(ForeignRepositoryError):
        foreign(repo)


def test_a_loose_ref_through_a_link_is_not_copied(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, BASE)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    secret = tmp_path / "secret"
    secret.write_text("0" * 40 + "\n")
    (repo / ".git/refs/tags").mkdir(exist_ok=True)
    (repo / ".git/refs/tags/leak").symlink_to(secret)
    shadow = foreign(repo).shadow
    assert not (shadow / "refs/tags/leak").exists()
    assert stat.S_ISREG(os.lstat(shadow / "refs/heads/main").st_mode)
