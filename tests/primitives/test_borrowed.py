"""A workspace's borrowed object store, shown to its sandboxed runs: git works inside them
(xarray's versioneer counts commits at import), and nothing else of the host is shown."""

from __future__ import annotations

import subprocess
from pathlib import Path

from pytest_toolpolicy.primitives.borrowed import borrowed_objects
from pytest_toolpolicy.primitives.sandbox import Sandbox

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return out.stdout.strip()


def shared_clone(tmp_path: Path) -> tuple[Path, Path]:
    """A cached checkout where the harness keeps them, and a workspace cloned --shared."""
    checkout = tmp_path / "cache/repos/acme__lib/history" / COMMIT
    checkout.mkdir(parents=True)
    git(checkout, "init", "-q", "-b", "main")
    (checkout / "a.py").write_text("x = 1\n")
    git(checkout, "add", "-A")
    git(checkout, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "base")
    work = tmp_path / "items/ws"
    work.parent.mkdir()
    git(tmp_path / "items", "clone", "-q", "--shared", str(checkout), str(work))
    return checkout, work


def test_the_checkout_store_is_borrowed(tmp_path: Path) -> None:
    checkout, work = shared_clone(tmp_path)
    assert borrowed_objects(work) == (str(checkout / ".git/objects"),)


def test_a_store_named_by_the_agent_elsewhere_is_not_shown(tmp_path: Path) -> None:
    checkout, work = shared_clone(tmp_path)
    alternates = work / ".git/objects/info/alternates"
    for named in ("/etc", "/root/.ssh", str(tmp_path / "cache/repos/acme__lib/x/.git/objects")):
        alternates.write_text(f"{named}\n")
        assert borrowed_objects(work) == (), named
    # The right name through a link: not shown either.
    (tmp_path / "repos").symlink_to(tmp_path / "cache/repos")
    alternates.write_text(f"{tmp_path}/repos/acme__lib/history/{COMMIT}/.git/objects\n")
    assert borrowed_objects(work) == ()
    alternates.unlink()  # no file: nothing borrowed
    assert borrowed_objects(work) == ()


def test_git_works_inside_the_sandbox(tmp_path: Path, bwrap_sandbox: Sandbox) -> None:
    _, work = shared_clone(tmp_path)
    result = bwrap_sandbox.run(
        ["git", "rev-list", "--count", "HEAD"],
        cwd=work,
        writable=work,
        stdin=None,
        timeout=60,
        merge_stderr=True,
    )
    assert (result.exit_code, result.stdout.strip()) == (0, b"1"), result.stdout
