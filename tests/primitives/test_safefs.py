"""safefs against a workspace that is out to get the harness: links to host files and
directories, FIFOs, files where directories should be, files larger than the read limit."""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_toolpolicy.primitives import safefs
from pytest_toolpolicy.primitives.envelope import PrimitiveError
from pytest_toolpolicy.primitives.safefs import UnsafePath

HOST = "host content: must never be read or written through the workspace\n"


@pytest.fixture
def host(tmp_path: Path) -> Path:
    directory = tmp_path / "host"
    directory.mkdir()
    (directory / "secret.py").write_text(HOST)
    return directory


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("x = 1\n")
    return root


def within(seconds: float, fn: Callable[[], Any]) -> Any:
    """``fn()``'s result, failing the test if it has not returned in ``seconds`` (a blocked
    open of a FIFO never returns: the daemon thread is left behind)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the test below
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still blocked after {seconds} s"
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_unsafe_path_is_a_primitive_error():
    assert issubclass(UnsafePath, PrimitiveError)  # so a tool answers it as an envelope


@pytest.mark.parametrize("rel", ["/etc/passwd", "../host/secret.py", "pkg/../../x", "", "a\0b"])
def test_paths_that_leave_the_workspace_are_refused(ws: Path, rel: str):
    with pytest.raises(UnsafePath, match="leaves the workspace"):
        safefs.inside(ws, rel)


def test_a_file_replaced_by_a_link_to_a_host_file_is_refused(ws: Path, host: Path):
    (ws / "pkg" / "mod.py").unlink()
    (ws / "pkg" / "mod.py").symlink_to(host / "secret.py")
    with pytest.raises(UnsafePath, match=r"^refusing pkg/mod.py: it is a symbolic link$"):
        safefs.read_bytes(ws, "pkg/mod.py")
    with pytest.raises(UnsafePath):
        safefs.read_text(ws, "pkg/mod.py")


def test_a_link_pointing_inside_the_workspace_is_refused_too(ws: Path):
    (ws / "alias.py").symlink_to(ws / "pkg" / "mod.py")  # may be retargeted out later
    with pytest.raises(UnsafePath, match="it is a symbolic link"):
        safefs.read_bytes(ws, "alias.py")


def test_a_directory_replaced_by_a_link_to_a_host_directory_is_refused(ws: Path, host: Path):
    (ws / "pkg" / "mod.py").unlink()
    (ws / "pkg").rmdir()
    (ws / "pkg").symlink_to(host)
    with pytest.raises(UnsafePath, match=r"^refusing pkg/secret.py: pkg is a symbolic link$"):
        safefs.read_bytes(ws, "pkg/secret.py")
    with pytest.raises(UnsafePath, match="pkg is a symbolic link"):
        safefs.write_bytes(ws, "pkg/secret.py", b"overwritten")
    with pytest.raises(UnsafePath, match="pkg is a symbolic link"):
        safefs.remove(ws, "pkg/secret.py")
    assert (host / "secret.py").read_text() == HOST


def test_a_file_where_a_directory_should_be_is_refused(ws: Path):
    with pytest.raises(UnsafePath, match=r"^refusing pkg/mod.py/x.py: pkg/mod.py is not a dir"):
        safefs.read_bytes(ws, "pkg/mod.py/x.py")
    with pytest.raises(UnsafePath, match="is not a directory"):
        safefs.write_bytes(ws, "pkg/mod.py/x.py", b"")


def test_a_fifo_is_refused_without_blocking(ws: Path):
    os.mkfifo(ws / "pkg" / "pipe.py")
    with pytest.raises(UnsafePath, match=r"^refusing pkg/pipe.py: not a regular file$"):
        within(5, lambda: safefs.read_bytes(ws, "pkg/pipe.py"))


def test_a_device_is_refused_without_being_opened(ws: Path):
    try:
        os.mknod(ws / "null.py", stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs CAP_MKNOD")
    with pytest.raises(UnsafePath, match="not a regular file"):
        within(5, lambda: safefs.read_bytes(ws, "null.py"))


def test_a_file_over_the_limit_is_refused_with_its_size(ws: Path):
    (ws / "big.py").write_bytes(b"#" * 1001)
    with pytest.raises(UnsafePath, match=r"1001 bytes, over the 1000-byte read limit"):
        safefs.read_bytes(ws, "big.py", limit=1000)
    assert safefs.read_bytes(ws, "big.py", limit=1001) == b"#" * 1001


def test_a_missing_file_is_file_not_found(ws: Path):
    with pytest.raises(FileNotFoundError):
        safefs.read_bytes(ws, "pkg/gone.py")


def test_writing_over_a_link_replaces_the_link_never_its_target(ws: Path, host: Path):
    (ws / "pkg" / "mod.py").unlink()
    (ws / "pkg" / "mod.py").symlink_to(host / "secret.py")
    safefs.write_text(ws, "pkg/mod.py", "x = 2\r\n", mode=0o755)
    path = ws / "pkg" / "mod.py"
    assert not path.is_symlink() and path.read_bytes() == b"x = 2\r\n"  # newline kept
    assert stat.S_IMODE(path.stat().st_mode) == 0o755
    assert (host / "secret.py").read_text() == HOST
    assert sorted(p.name for p in (ws / "pkg").iterdir()) == ["mod.py"]  # no temporary left


def test_write_makes_parents_and_refuses_a_directory(ws: Path):
    safefs.write_bytes(ws, "new/sub/m.py", b"y = 1\n")
    assert (ws / "new" / "sub" / "m.py").read_bytes() == b"y = 1\n"
    assert stat.S_IMODE((ws / "new" / "sub" / "m.py").stat().st_mode) == 0o644
    with pytest.raises(UnsafePath, match="it is a directory"):
        safefs.write_bytes(ws, "pkg", b"")


def test_remove_takes_the_link_away_and_leaves_its_target(ws: Path, host: Path):
    (ws / "link.py").symlink_to(host / "secret.py")
    safefs.remove(ws, "link.py")
    assert not (ws / "link.py").is_symlink() and (host / "secret.py").read_text() == HOST
    safefs.remove(ws, "link.py")  # already gone: fine


def test_lstat_does_not_follow_the_last_link(ws: Path, host: Path):
    (ws / "link.py").symlink_to(host / "secret.py")
    assert stat.S_ISLNK(safefs.lstat(ws, "link.py").st_mode)


def test_scan_follows_no_link_and_names_what_it_refused(ws: Path, host: Path):
    (ws / "pkg" / "alias.py").symlink_to(ws / "pkg" / "mod.py")
    (ws / "hostpkg").symlink_to(host)
    os.mkfifo(ws / "pkg" / "pipe.py")
    (ws / "pkg" / "sub").mkdir()
    (ws / "pkg" / "sub" / "deep.py").write_text("")
    (ws / "a.py").write_text("")
    (ws / ".hidden").mkdir()
    (ws / ".hidden" / "h.py").write_text("")
    files, refused = within(
        5, lambda: safefs.scan(ws, ".py", lambda name: not name.startswith("."))
    )
    assert list(files) == ["a.py", "pkg/mod.py", "pkg/sub/deep.py"]  # top-down, sorted
    assert refused == {
        "hostpkg": "refusing hostpkg: it is a symbolic link",
        "pkg/alias.py": "refusing pkg/alias.py: it is a symbolic link",
        "pkg/pipe.py": "refusing pkg/pipe.py: not a regular file",
    }
    assert files["pkg/mod.py"].st_ino == os.lstat(ws / "pkg" / "mod.py").st_ino


def test_make_dirs_refuses_a_link_on_the_way(ws: Path, host: Path) -> None:
    (ws / "venv").mkdir()
    (ws / "venv" / "layers").symlink_to(host)
    with pytest.raises(safefs.UnsafePath, match="venv/layers is a symbolic link"):
        safefs.make_dirs(ws, "venv/layers/abc")
    assert os.listdir(host) == ["secret.py"]
    made = safefs.make_dirs(ws, "venv/other/abc")
    assert made == ws / "venv/other/abc" and made.is_dir()


def test_remove_tree_refuses_a_link_above_and_removes_one_at_the_path(ws: Path, host: Path) -> None:
    (ws / "venv").mkdir()
    (ws / "venv" / "layers").symlink_to(host)
    with pytest.raises(safefs.UnsafePath, match="venv/layers is a symbolic link"):
        safefs.remove_tree(ws / "venv" / "layers" / "abc", within=ws)
    safefs.remove_tree(ws / "venv" / "layers", within=ws)  # the link itself: unlinked
    assert not os.path.lexists(ws / "venv" / "layers")
    assert os.listdir(host) == ["secret.py"]
    with pytest.raises(safefs.UnsafePath, match="not below"):
        safefs.remove_tree(host, within=ws)
