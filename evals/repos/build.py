"""Write the bundled projects' git histories, ``evals/repos/<project>.fi``, from their instances.

    .venv/bin/python evals/repos/build.py [INSTANCES_DIR]   (default: evals/instances)

Each project's instances (``bundled__<project>-<n>``) become one chain of commits in
instance-number order, one per base (``pytest_toolpolicy/bench/bundled_repos.py`` says how they
are made), and each ``instance.json`` gets its commit as ``base_commit``. An instance's tree is
its ``repo/`` directory when it has one, else its base commit in the current stream; so to add
or change an instance, put its files in ``evals/instances/<id>/repo/``, run this, check the
diff, and delete ``repo/``. With nothing changed it rewrites the same bytes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pytest_toolpolicy.bench.bundled_repos import StreamError, build

DEFAULT = Path(__file__).resolve().parent.parent / "instances"


def main(argv: list[str]) -> int:
    instances = Path(argv[0]) if argv else DEFAULT
    try:
        commits = build(instances)
    except StreamError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for name, commit in sorted(commits.items()):
        print(f"{commit}  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
