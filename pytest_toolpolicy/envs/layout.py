"""Where the parts of a built environment lie, under ``$TOOLPOLICY_CACHE_DIR/envs/``.

``<name>/`` holds, side by side: ``repo/``, the environment's own checkout at its setup commit
(a local clone), which every sandboxed step sees at ``TESTBED`` (``/testbed``, as in
SWE-bench's images), so the repository's editable install points there; ``venv/``, the venv;
``tmp/``, a build step's scratch space (``TMPDIR``, a private uv cache); and
``layers/<commit>/site``, what an instance's base commit needs beyond the environment, and
``layers/<commit>/ext``, its compiled modules where its C sources differ (``extensions.py``).

At test time an item's workspace is what a sandboxed run sees at ``/testbed``: the installed
package is the workspace, with no second tree on the path. ``<name>.json`` beside the
directory publishes a finished build, ``<name>.failed.json`` remembers a failed one, and
``<name>/layers/<commit>.json`` (``.failed.json``) records a base commit's layer (``cache.py``
says how they are used); ``.<name>.lock`` is its build's lock. ``../uv/`` is the uv cache every
build shares (``builder.py`` says which steps may write it).
"""

from __future__ import annotations

REPO = "repo"
VENV = "venv"
TMP = "tmp"
LAYERS = "layers"
TESTBED = "/testbed"


def layer_site(base: str) -> str:
    """The base commit's ``--target`` directory, relative to the environment's directory."""
    return f"{LAYERS}/{base}/site"


def layer_ext(base: str) -> str:
    """The base commit's compiled modules, at their checkout paths, relative to the
    environment's directory."""
    return f"{LAYERS}/{base}/ext"
