"""The history this package ships to mine (``example/tally.fi``: a small project with fixes, a
merged pull request and each kind of change mining drops), unpacked as the mirror
``DIR/example__tally`` to mine as any repository (``toolpolicy mine --example DIR``)."""

from __future__ import annotations

from pathlib import Path

from ..bench.bundled_repos import StreamError, import_stream

EXAMPLE = Path(__file__).parent / "example" / "tally.fi"
EXAMPLE_NAME = "example__tally"


class ExampleError(Exception):
    """The example cannot be unpacked there; the message says why."""


def unpack_example(into: Path) -> Path:
    """The example history as a new bare mirror ``into/example__tally``."""
    into = into.absolute()  # git runs in the mirror's parent: a relative path would nest
    mirror = into / EXAMPLE_NAME
    if mirror.exists():
        raise ExampleError(f"{mirror} exists: remove it, or mine it as it is")
    into.mkdir(parents=True, exist_ok=True)
    try:
        import_stream(EXAMPLE.read_bytes(), mirror, StreamError)
    except (OSError, StreamError) as exc:
        raise ExampleError(f"cannot unpack the example: {exc}") from None
    return mirror
