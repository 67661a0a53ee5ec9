"""The ``toolpolicy`` console script: thin glue over the library."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from . import jsonsafe, limits
from .cli_inputs import command_of
from .cli_models import ModelOptionsError, add_model_options, model_options
from .input_files import InputError


class UsageError(Exception):
    """Input the command cannot use at all: exit 2 with one line."""


# Exit status of a harness fault: not the model's error (1), not the user's (2).
HARNESS_FAULT_EXIT = 3


def positive_int(text: str) -> int:
    """An argparse type: ``argument --jobs: must be a positive integer, got 0``."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def positive_number(text: str) -> float:
    """An argparse type: ``argument --timeout: must be a positive number, got -1``."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < math.inf:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def limits_text(text: str) -> str:
    """An argparse type for ``--limits NAME=VALUE,...``: checked here, exported by ``main``."""
    try:
        limits.parse_limits(text)
    except limits.LimitsError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


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


def _parse_request(text: str) -> tuple[str, dict[str, Any]]:
    if text == "-":
        text = sys.stdin.read()
    try:
        request = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"request is not valid JSON: {exc}") from None
    except RecursionError:
        raise UsageError("request is nested too deep to read") from None
    if not isinstance(request, dict) or not isinstance(request.get("tool"), str):
        raise UsageError('request must be a JSON object like {"tool": NAME, "args": {...}}')
    return request["tool"], request.get("args", {})


def _primitive(ns: argparse.Namespace) -> int:
    from .primitives import PrimitiveError, Toolbox

    tool, args = _parse_request(ns.request)
    try:
        box = Toolbox(ns.workspace)
    except PrimitiveError as exc:
        raise UsageError(str(exc)) from None
    print(jsonsafe.dumps(box.call(tool, args), indent=2))
    return 0


def _call(ns: argparse.Namespace) -> int:
    from .paths import write_atomic
    from .policy.config import PolicyConfig
    from .policy.ledger import Ledger
    from .policy.step import step
    from .primitives import PrimitiveError, Toolbox, Workspace, WorkspaceError

    reply = sys.stdin.read() if ns.reply == "-" else ns.reply
    try:
        root = Path(ns.workspace)
        workspace = Workspace(root) if (root / ".git").exists() else None
        box = Toolbox(root, workspace=workspace)
        config = PolicyConfig.from_env()
    except (PrimitiveError, WorkspaceError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    ledger = Ledger()
    ledger_path = Path(ns.ledger) if ns.ledger else None
    if ledger_path and ledger_path.exists():
        try:
            ledger = Ledger.from_dict(json.loads(ledger_path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
            raise UsageError(f"cannot read ledger {ledger_path}: {exc}") from None
    elif ledger_path and not ledger_path.parent.is_dir():
        raise UsageError(f"cannot write ledger {ledger_path}: no directory {ledger_path.parent}")
    result, ledger = step(reply, box, ledger, config)
    if ledger_path:
        # Written whole or not at all: an interrupted call never leaves half a ledger.
        text = jsonsafe.dumps(ledger.to_dict())
        write_atomic(ledger_path, lambda tmp: tmp.write_text(text, encoding="utf-8"))
    print(jsonsafe.dumps(result, indent=2))
    return 0


def _complete(ns: argparse.Namespace) -> int:
    from dataclasses import replace

    from .models import CacheError, ModelError, ModelRequest, PriceError

    try:
        model = _built(ns, cache_path=ns.cache, cache_mode=ns.cache_mode)
    except (ValueError, NotImplementedError, PriceError, CacheError, OSError) as exc:
        raise UsageError(str(exc)) from None
    messages = ({"role": "user", "content": ns.prompt},)
    request = ModelRequest(messages, max_completion_tokens=ns.max_tokens, item="cli")
    options = model_options(ns).generation.options_for(ns.arm)
    request = replace(options, max_completion_tokens=None).apply(request)
    try:
        completion = model.complete(request)
    except ModelError as exc:
        print(f"toolpolicy: model_error: {jsonsafe.escape(str(exc))}", file=sys.stderr)
        return 1
    print(jsonsafe.dumps(completion.record(), indent=2))
    return 0


def _built(ns: argparse.Namespace, **kwargs: Any) -> Any:
    """The model ``ns.model`` names, on the endpoint terms the command's options give."""
    from .models import build_model, load_prices

    endpoint = model_options(ns).endpoint
    return build_model(
        ns.model,
        base_url=endpoint.base_url,
        api_key_env=endpoint.api_key_env,
        prices=load_prices(endpoint.prices),
        timeout=endpoint.timeout_for(ns.model),
        max_retries=endpoint.retries_for(ns.model),
        **kwargs,
    )


def _validate(ns: argparse.Namespace) -> int:
    from .cli_inputs import check_env_specs, dataset_note, load_dataset, say
    from .grading.coverage import coverage, format_coverage, record_row, validation_log
    from .grading.validate import ValidationRow, format_table, validate
    from .input_files import end_torn_line
    from .primitives.sandbox import Sandbox, SandboxUnavailable

    check_env_specs()
    loaded = load_dataset(ns.dataset, ids=ns.ids)
    say("validate", dataset_note(ns.dataset, loaded.errors))
    try:
        sandbox = Sandbox.from_env()
    except SandboxUnavailable as exc:
        raise UsageError(str(exc)) from None
    repos = Path(ns.repos) if ns.repos else None
    log = Path(ns.record) if ns.record else validation_log()
    torn = end_torn_line(log)  # else the first row appended would join the torn line, and be lost
    if torn:
        say("validate", f"{log}:{torn}: cut short; the rows are recorded from the next line on")
    total = len(loaded.instances)
    done = [0]

    def finished(row: ValidationRow) -> None:
        record_row(log, row)  # kept whatever happens to the rest of the run
        done[0] += 1
        mark = "ok" if row.ok else f"{row.category}: {row.cause}"
        print(f"[{done[0]}/{total}] {row.instance_id} {row.seconds:.0f}s {mark}", flush=True)

    rows = validate(
        loaded.instances,
        sandbox=sandbox,
        jobs=ns.jobs,
        repos=repos,
        timeout=ns.timeout,
        on_row=finished,
    )
    print(jsonsafe.escape(format_table(rows, loaded.errors)))
    print(f"\ncoverage (rows recorded in {log}):")
    print(jsonsafe.escape(format_coverage(coverage(rows))))
    return 1 if loaded.errors or not all(row.ok for row in rows) else 0


def _run(ns: argparse.Namespace) -> int:
    import tempfile

    from .ab.confinement import SandboxRefused, confined, model_runs
    from .ab.pipeline import RunSetup, run_instance
    from .cli_inputs import check_env_specs, dataset_note, dataset_problem, load_dataset
    from .models import CacheError, PriceError
    from .paths import write_atomic

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
        model = _built(ns, instances=instances)
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
    with tempfile.TemporaryDirectory(prefix="toolpolicy-run-") as tmp:
        repos = Path(ns.repos) if ns.repos else None
        setup = RunSetup(
            sandbox=sandbox, repos=repos, tests_visible=not ns.hide_tests, generation=generation
        )
        result = run_instance(instance, ns.arm, model, Path(tmp), setup=setup)
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


def _demo(ns: argparse.Namespace) -> int:
    from .demo import run

    return run()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="toolpolicy", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    prim = sub.add_parser("primitive", help="run one primitive and print its envelope as JSON")
    prim.add_argument("--workspace", required=True, help="the workspace directory")
    prim.add_argument("request", help='{"tool": NAME, "args": {...}} as JSON, or - for stdin')
    prim.set_defaults(func=_primitive)
    call = sub.add_parser(
        "call", help="run one model reply through validation, execution and the trust gate"
    )
    call.add_argument("--workspace", required=True, help="the workspace directory")
    call.add_argument("--ledger", help="a JSON file keeping the ledgers between calls")
    call.add_argument(
        "reply", help='the model\'s reply, e.g. {"tool": ..., "args": {...}}; - for stdin'
    )
    call.set_defaults(func=_call)
    comp = sub.add_parser(
        "complete", help="send one prompt to a model and print the completion, usage and cost"
    )
    comp.add_argument(
        "--model",
        required=True,
        help="openai:<model>, local:gemma3-270m, local:<file.gguf>, scripted:<file>, sim[:...]",
    )
    add_model_options(comp)
    comp.add_argument("--cache", help="record/replay cache file (SQLite)")
    comp.add_argument("--cache-mode", choices=("off", "record", "replay"), default="off")
    comp.add_argument("--max-tokens", type=positive_int, default=256, help="max_completion_tokens")
    comp.add_argument(
        "--arm",
        choices=("policy", "current"),
        default="policy",
        help="whose call format --structured=json holds the reply to (default policy)",
    )
    comp.add_argument("prompt", help="the user message")
    comp.set_defaults(func=_complete)
    val = sub.add_parser(
        "validate", help="check that each instance's gold patch resolves it and no patch does not"
    )
    val.add_argument(
        "--dataset", required=True, help="bundled[:DIR], a .jsonl/.json/.parquet, a hub id"
    )
    val.add_argument("--repos", help="directory of git mirrors, DIR/<owner>__<name>")
    val.add_argument("--ids", nargs="+", help="only these instance ids")
    val.add_argument("--jobs", type=positive_int, default=2, help="instances validated in parallel")
    val.add_argument("--timeout", type=positive_number, default=300.0, help="seconds per test run")
    val.add_argument(
        "--record",
        help="append each row, as it finishes, to this JSON Lines file "
        "(default: the cache's validation/rows.jsonl, which `toolpolicy envs status` reads)",
    )
    _add_limits(val)
    val.set_defaults(func=_validate)
    run = sub.add_parser("run", help="run one instance in one arm and write its trajectory")
    run.add_argument("--instance", required=True, help="instance id")
    run.add_argument("--arm", required=True, choices=("policy", "current"))
    run.add_argument(
        "--model",
        required=True,
        help="openai:<model>, local:gemma3-270m, local:<file.gguf>, scripted:<file>, sim[:...]",
    )
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
    _add_limits(run)
    run.set_defaults(func=_run)
    demo = sub.add_parser("demo", help="a short tour of the primitives on a bundled example repo")
    demo.set_defaults(func=_demo)
    from .envs.cli import add_parser as add_envs_parser

    add_envs_parser(sub)
    from .mine.cli import add_parser as add_mine_parser

    add_mine_parser(sub)
    from .view.cli import add_parser as add_view_parser

    add_view_parser(sub)
    from .rounds.cli import add_parser as add_rounds_parser

    add_rounds_parser(sub)
    return parser


def _add_limits(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--limits",
        type=limits_text,
        metavar="NAME=VALUE,...",
        help=f"host-side bounds over {limits.ENV} ({', '.join(limits.NAMES)})",
    )


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    ns = parser.parse_args(argv)
    try:
        # Checked before anything runs: every command reads the limits somewhere inside.
        bounds = limits.current()
    except limits.LimitsError as exc:
        parser.error(f"environment variable {limits.ENV}: {exc}")
    if getattr(ns, "limits", None):
        # Over the environment's, and exported so that every step and subprocess sees them.
        os.environ[limits.ENV] = limits.parse_limits(ns.limits, bounds).text()
    try:
        with _served(ns):
            return ns.func(ns)
    except UsageError as exc:
        print(f"toolpolicy: {jsonsafe.escape(str(exc))}", file=sys.stderr)
        return 2
    except InputError as exc:  # a file the command cannot do without: named, with its line
        print(f"toolpolicy {command_of(ns)}: {jsonsafe.escape(str(exc))}", file=sys.stderr)
        return 2
    except Exception as exc:
        # Imported here, not at the top: the primitives cost a twentieth of a second to import,
        # and `toolpolicy --help` needs none of them.
        from .primitives.envelope import HarnessFault

        if not isinstance(exc, HarnessFault):
            raise
        line = " ".join(jsonsafe.escape(str(exc)).split()) or type(exc).__name__
        print(f"toolpolicy: harness fault: {line}", file=sys.stderr)
        return HARNESS_FAULT_EXIT


@contextmanager
def _served(ns: argparse.Namespace) -> Iterator[None]:
    """A ``local:`` model's server for the command's length (``models/local/session.py``)."""
    model = getattr(ns, "model", None)
    if not isinstance(model, str) or not model.startswith("local:"):
        yield
        return
    from .models.local.server import ServerError
    from .models.local.session import served
    from .models.local.weights import WeightsError

    try:
        options = model_options(ns)
    except ModelOptionsError as exc:
        raise UsageError(str(exc)) from None
    settings = options.generation.local.server_settings()
    with ExitStack() as stack:
        try:
            stack.enter_context(served(model, options.endpoint.base_url, settings))
        except (ServerError, WeightsError) as exc:
            raise UsageError(str(exc)) from None
        yield


if __name__ == "__main__":
    sys.exit(main())
