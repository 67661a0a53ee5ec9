"""``sim`` and ``sim:<profile-or-file>`` as a model backend (``models/backends.py``): the
simulator over the instances it will be asked about (it knows their gold patches), its faults
drawn from the session's seed."""

from __future__ import annotations

from ..backends import BuildOptions
from .model import SimModel
from .profile import load_profile


def build(arg: str | None, options: BuildOptions) -> SimModel:
    return SimModel(options.instances or {}, load_profile(arg), options.seed, prices=options.prices)


def check(arg: str | None) -> None:
    """The profile reads and parses, as ``build`` will load it (plain Python, no network)."""
    if arg in (None, "default", "oracle"):
        return
    try:
        load_profile(arg)
    except UnicodeDecodeError:
        raise ValueError(f"cannot read sim profile {arg}: not UTF-8 text") from None
