"""``toolpolicy envs resolve``: whether each spec's pinned packages resolve here as wheels,
without a checkout (``envs/resolve.py`` resolves), a line per spec as it ends and a table per
repository. Exit 1 when any failed."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from .errors import UsageError


def add_parser(actions: Any) -> None:
    resolve = actions.add_parser(
        "resolve",
        help="without a checkout: whether each spec's pinned packages resolve here as wheels",
    )
    resolve.add_argument(
        "--repo", nargs="+", dest="only_repos", metavar="OWNER/NAME",
        help="these repositories' specs (default: every repository's)",
    )  # fmt: skip
    resolve.add_argument(
        "--version", nargs="+", dest="only_versions", metavar="V", help="only these versions"
    )
    resolve.add_argument(
        "--record", metavar="FILE", help="append each outcome to this JSON Lines file"
    )
    resolve.set_defaults(func=_resolve)


def _resolve(ns: argparse.Namespace) -> int:
    from ..envs.resolve import (
        format_line,
        format_table,
        record_outcome,
        resolve_version,
        sandboxed,
        spec_pairs,
    )
    from ..envs.spec import EnvironmentSetupError, shipped_repos
    from ..input_files import end_torn_line
    from ..paths import cache_dir
    from ..primitives.sandbox import SandboxUnavailable
    from .inputs import check_env_specs, say

    check_env_specs()
    repos = ns.only_repos or shipped_repos()
    pairs = spec_pairs(repos, ns.only_versions)
    if not pairs:
        wanted = " ".join(ns.only_versions or ["any"])
        raise UsageError(f"no spec for {' '.join(repos)} at {wanted}")
    try:
        run = sandboxed(cache_dir() / "uv")
    except SandboxUnavailable as exc:
        raise UsageError(str(exc)) from None
    torn = end_torn_line(Path(ns.record)) if ns.record else None
    if torn:
        say(
            "envs resolve",
            f"{ns.record}:{torn}: cut short; outcomes are recorded from the next line on",
        )
    outcomes = []
    for repo, version in pairs:
        try:
            outcome = resolve_version(repo, version, run)
        except EnvironmentSetupError as exc:
            raise UsageError(str(exc)) from None
        print(format_line(outcome), flush=True)
        outcomes.append(outcome)
        if ns.record:
            record_outcome(Path(ns.record), outcome)
    print()
    print(format_table(outcomes))
    return 0 if all(o.status == "resolved" for o in outcomes) else 1
