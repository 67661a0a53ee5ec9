"""Which instances of a dataset can run on this machine, and in words why the others cannot.

A seeded sample of a real dataset (the spec's §9 sample of 20 Verified instances) must be drawn
from instances that can run here, or it measures infrastructure instead of the arms: an
instance whose repository has no local mirror (when a mirror directory is given; nothing here
reaches GitHub) or no environment spec (how to install it, which Python, which test-id
conventions) is left out before sampling, and the session lists it with the reason. A row
mined from a repository's history (``toolpolicy mine``) needs no spec of its version: its
environment is fitted to what its checkout declares (``envs/unlisted.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..bench.instance import Instance
from ..bench.workspaces import mirror_name
from .spec import EnvSpecError, has_spec

Exclude = Callable[[Instance], str | None]


def runnable_here(repos: Path | None, user_specs: Path | None = None) -> Exclude:
    """Why ``instance`` cannot run with mirrors under ``repos`` (None: cloned on demand), or
    None when it can. Bundled instances always can."""

    def why(instance: Instance) -> str | None:
        if instance.path is not None:
            return None
        if repos is not None and not (repos / mirror_name(instance.repo)).exists():
            return f"no mirror of {instance.repo} at {repos / mirror_name(instance.repo)}"
        try:
            known = has_spec(instance.repo, instance.version, user_specs)
        except EnvSpecError as exc:
            return str(exc)
        if not known and instance.mined_from is None:  # a mined row's is fitted to it
            return (
                f"no environment spec for {instance.repo} {instance.version} "
                "(add one in a TOML file named by TOOLPOLICY_ENV_SPECS)"
            )
        return None

    return why
