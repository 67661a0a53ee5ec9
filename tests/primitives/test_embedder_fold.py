"""The embedding graph folded once ahead of loading: the same vectors, bit for bit, from a
directory made beside the shipped one; a graph that does not fold is loaded as shipped."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np

from pytest_toolpolicy.primitives import embedder
from pytest_toolpolicy.primitives.embedder import JSON_FILES, MODEL_FILES, Embedder, folded_dir

TEXTS = [
    "method memstore.MemStore.forget: def forget(self, key) — Drop a key | items deadlines",
    "function parser.parse_config: def parse_config(text) — Turn key = value lines into a dict",
    "a short one",
]


def test_the_folded_graph_gives_the_same_vectors(assembled: Path) -> None:
    folded = folded_dir(assembled)
    assert folded != assembled and folded.parent == assembled.parent
    assert sorted(p.name for p in folded.iterdir()) == sorted(MODEL_FILES)
    assert (folded / "model.onnx").read_bytes() != (assembled / "model.onnx").read_bytes()
    as_shipped = Embedder(assembled, fold=False).embed(TEXTS)
    from_folded = Embedder(assembled).embed(TEXTS)
    assert np.array_equal(as_shipped, from_folded)
    # One model id for both: vectors cached from either are the other's.
    assert Embedder(assembled).model_id == Embedder(assembled, fold=False).model_id


def test_a_graph_that_does_not_fold_is_used_as_shipped(assembled: Path, tmp_path: Path) -> None:
    for name in JSON_FILES:
        shutil.copy(assembled / name, tmp_path / name)
    (tmp_path / "model.onnx").write_bytes(b"not an onnx graph")
    embedder._FOLDED.pop(str(tmp_path.resolve()), None)
    assert folded_dir(tmp_path) == tmp_path
    assert [p.name for p in tmp_path.parent.iterdir() if ".folded-" in p.name] == []
