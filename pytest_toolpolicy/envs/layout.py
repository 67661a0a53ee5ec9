"""Where the parts of a built environment lie, under ``$TOOLPOLICY_CACHE_DIR/envs/``.

``<name>/`` is the environment's own checkout (a local clone at the commit, so what its
install generates stays with it), with the venv in ``.toolpolicy-venv`` inside it; a build
step's scratch space (``TMPDIR``, pip's cache) is ``.toolpolicy-tmp`` in whatever it may
write. What an instance's base commit needs beyond the environment goes in the venv's
``toolpolicy-base/<commit>/site`` (inside the venv, which every sandboxed run can see).
``<name>.json`` beside the directory publishes a finished build, ``<name>.failed.json``
remembers a failed one, and ``<name>/.toolpolicy-base-<commit>.json`` (``.failed.json``)
records a base commit's layer (``cache.py`` says how they are used); ``.<name>.lock`` is its
build's lock, and ``.templates/`` holds the per-interpreter venv templates (``venvs.py``).
"""

from __future__ import annotations

VENV = ".toolpolicy-venv"
TMP = ".toolpolicy-tmp"
LAYERS = "toolpolicy-base"  # in the venv: per base commit, what it needs beyond the env's


def layer_site(base: str) -> str:
    """The base commit's ``--target`` directory, relative to the venv."""
    return f"{LAYERS}/{base}/site"
