"""``toolpolicy run --instance ID --arm ARM --model SPEC``: one instance in one arm, its
trajectory written (``--out``, checked before the run) and a summary printed. Exit 1 when the
model's call failed (the run is kept) or the trajectory cannot be written."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from .. import jsonsafe
from .errors import UsageError
from .model_options import (
    MODEL_HELP,
    ModelOptionsError,
    add_model_options,
    built_model,
    model_options,
)
from .options import add_limits


def add_parser(sub: Any) -> None:
    run = sub.add_parser("run", help="run one instance in one arm and write its trajectory")
    run.add_argument("--instance", required=True, help="instance id")
    run.add_argument("--arm", required=True, choices=("policy", "current"))
    run.add_argument("--model", required=True, help=MODEL_HELP)
    run.add_argument("--dataset", default="bundled", help="bundled, a hub id, or a local file")
    run.add_argument("--repos", help="directory of git mirrors, one per repo: <owner>__<name>")
    add_model_options(run)
    run.add_argument(
        "--out",
        type=trajectory_file,
        help="trajectory file (default reports/runs/<id>-<arm>.jsonl); its directory is made"
        " only if its parent exists",
    )
    run.add_argument(
        "--hide-tests",
        action="store_true",
        help="start the agent without the FAIL_TO_PASS tests (default: visible, spec §3.1)",
    )
    add_limits(run)
    run.set_defaults(func=_run)


def trajectory_file(text: str) -> Path:
    """An argparse type for ``run --out``: a file whose directory exists or can be made as the
    last level of one that exists. Parents are never made: a typo must not plant a tree of
    directories somewhere."""
    path = Path(text)
    if path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a directory; --out names the trajectory file")
    if path.exists() and not path.is_file():
        raise argparse.ArgumentTypeError(f"{text} exists and is not a regular file")
    for directory in (path.parent, path.parent.parent):
        if directory.is_dir():
            if not os.access(directory, os.W_OK | os.X_OK):
                raise argparse.ArgumentTypeError(f"cannot write in directory {directory}")
            return path
        if directory.exists():
            raise argparse.ArgumentTypeError(f"{directory} exists and is not a directory")
    raise argparse.ArgumentTypeError(
        f"directory {path.parent.parent} does not exist (only the last directory of --out,"
        f" {path.parent.name}, is made)"
    )


def _run(ns: argparse.Namespace) -> int:
    import tempfile

    from ..ab.confinement import SandboxRefused, confined, model_runs
    from ..ab.pipeline import RunSetup, run_instance
    from ..bench.dataset_input import dataset_note, dataset_problem, load_dataset
    from ..envs.stage import resolve_environments
    from ..models import CacheError, PriceError
    from ..paths import write_atomic
    from .envs import say_now
    from .inputs import check_env_specs

    try:
        generation = model_options(ns).generation  # bad options first: nothing is loaded
    except ModelOptionsError as exc:
        raise UsageError(str(exc)) from None
    check_env_specs()
    loaded = load_dataset(ns.dataset, ids=[ns.instance])
    if not loaded.instances:
        if dataset_note(ns.dataset, loaded.errors):  # the instance asked for is malformed
            raise dataset_problem(ns.dataset, list(loaded.errors))
        raise UsageError("; ".join(str(e) for e in loaded.errors) or f"no instance {ns.instance}")
    instance = loaded.instances[0]
    try:
        # sim needs the instance it simulates; other backends ignore it
        instances = {instance.instance_id: instance}
        model = built_model(ns, instances=instances)
    except (ValueError, NotImplementedError, PriceError, CacheError, OSError) as exc:
        raise UsageError(str(exc)) from None
    try:  # fail closed: a real model's commands never run unsandboxed unless asked
        sandbox = confined(
            model_runs(ns.model),
            os.environ.get("TOOLPOLICY_SANDBOX") or "auto",
            os.environ.get("TOOLPOLICY_BWRAP"),
        )
    except (SandboxRefused, ValueError) as exc:
        raise UsageError(str(exc)) from None
    repos = Path(ns.repos) if ns.repos else None
    # The environment stage before the run (a bundled instance needs none: no line).
    ready = resolve_environments([instance], repos=repos, sandbox=sandbox, say=say_now)
    with tempfile.TemporaryDirectory(prefix="toolpolicy-run-") as tmp:
        setup = RunSetup(
            sandbox=sandbox, repos=repos, tests_visible=not ns.hide_tests, generation=generation
        )
        env = ready.get(instance.instance_id)
        result = run_instance(instance, ns.arm, model, Path(tmp), setup=setup, env=env)
    traj = result.trajectory
    out = ns.out or Path(f"reports/runs/{instance.instance_id}-{ns.arm}.jsonl")
    text = jsonsafe.dumps(traj.to_dict()) + "\n"
    try:
        # --out was checked before the run: at most its last directory is made. The default
        # is the project's own layout, made whole.
        out.parent.mkdir(parents=ns.out is None, exist_ok=True)
        write_atomic(out, lambda tmp: _write_shared(tmp, text))
    except OSError as exc:
        print(f"toolpolicy: cannot write the trajectory to {out}: {exc}", file=sys.stderr)
        return 1
    cost = "unknown" if traj.cost_usd is None else f"${traj.cost_usd:.6f}"
    resolved = "n/a (under-specified)" if instance.underspecified else str(result.resolved).lower()
    print(f"instance: {instance.instance_id}  arm: {ns.arm}  model: {traj.model}")
    print(f"outcome: {traj.outcome.record()}")
    print(f"resolved: {resolved}  turns: {len(traj.turns)}  tokens: {traj.tokens}  cost: {cost}")
    print(f"FAIL_TO_PASS tests visible to the agent: {'no' if ns.hide_tests else 'yes'}")
    if traj.model.startswith("sim"):
        print(
            "note: sim is a fault-injecting simulator, not a language model; its tokens and cost"
            " are estimates (tokenizer count, price table entry 'sim'), not a model's skill"
        )
    print(f"trajectory: {out}")
    if traj.outcome.outcome == "model_error":  # the run is kept and shown; the call failed
        reason = " ".join(str(traj.outcome.detail.get("reason", "")).split())
        print(f"toolpolicy: model_error: {reason}", file=sys.stderr)
        return 1
    return 0


def _write_shared(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    # The temporary file is private (0600); the trajectory gets the mode a plain write gives.
    umask = os.umask(0)
    os.umask(umask)
    path.chmod(0o666 & ~umask)
