"""The ``toolpolicy`` console script: thin glue over the library."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


class UsageError(Exception):
    """Input the command cannot use at all: exit 2 with one line."""


def _parse_request(text: str) -> tuple[str, dict[str, Any]]:
    if text == "-":
        text = sys.stdin.read()
    try:
        request = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(f"request is not valid JSON: {exc}") from None
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
    print(json.dumps(box.call(tool, args), indent=2, ensure_ascii=False))
    return 0


def _call(ns: argparse.Namespace) -> int:
    import os
    import tempfile
    from pathlib import Path

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
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"cannot read ledger {ledger_path}: {exc}") from None
    result, ledger = step(reply, box, ledger, config)
    if ledger_path:
        # Written whole or not at all: an interrupted call never leaves half a ledger.
        fd, tmp = tempfile.mkstemp(dir=ledger_path.parent or ".", prefix=".ledger-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(ledger.to_dict(), handle, default=str)
        os.replace(tmp, ledger_path)
    print(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    return 0


def _complete(ns: argparse.Namespace) -> int:
    from .models import CacheError, ModelError, ModelRequest, PriceError, build_model, load_prices

    try:
        model = build_model(
            ns.model,
            base_url=ns.base_url,
            api_key_env=ns.api_key_env,
            prices=load_prices(ns.prices),
            cache_path=ns.cache,
            cache_mode=ns.cache_mode,
            timeout=ns.timeout,
        )
    except (ValueError, NotImplementedError, PriceError, CacheError, OSError) as exc:
        raise UsageError(str(exc)) from None
    messages = ({"role": "user", "content": ns.prompt},)
    request = ModelRequest(messages, max_completion_tokens=ns.max_tokens, item="cli")
    try:
        completion = model.complete(request)
    except ModelError as exc:
        print(f"toolpolicy: model_error: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(completion.record(), indent=2, ensure_ascii=False))
    return 0


def _validate(ns: argparse.Namespace) -> int:
    from pathlib import Path

    from .bench import DatasetError, load_instances
    from .bench.validate import format_table, validate
    from .primitives.sandbox import Sandbox, SandboxUnavailable

    try:
        loaded = load_instances(ns.dataset, ids=ns.ids)
        sandbox = Sandbox.from_env()
    except (DatasetError, SandboxUnavailable, ValueError) as exc:
        raise UsageError(str(exc)) from None
    repos = Path(ns.repos) if ns.repos else None
    rows = validate(
        loaded.instances, sandbox=sandbox, jobs=ns.jobs, repos=repos, timeout=ns.timeout
    )
    print(format_table(rows, loaded.errors))
    return 1 if loaded.errors or not all(row.ok for row in rows) else 0


def _run(ns: argparse.Namespace) -> int:
    import tempfile
    from pathlib import Path

    from .ab.arms import run_instance
    from .bench.load import DatasetError, load_instances
    from .models import CacheError, PriceError, build_model, load_prices

    try:
        loaded = load_instances(ns.dataset, ids=[ns.instance])
    except DatasetError as exc:
        raise UsageError(str(exc)) from None
    if not loaded.instances:
        raise UsageError("; ".join(str(e) for e in loaded.errors) or f"no instance {ns.instance}")
    instance = loaded.instances[0]
    try:
        # sim needs the instance it simulates; other backends ignore it
        instances = {instance.instance_id: instance}
        model = build_model(ns.model, prices=load_prices(ns.prices), instances=instances)
    except (ValueError, NotImplementedError, PriceError, CacheError, OSError) as exc:
        raise UsageError(str(exc)) from None
    with tempfile.TemporaryDirectory(prefix="toolpolicy-run-") as tmp:
        repos = Path(ns.repos) if ns.repos else None
        result = run_instance(
            instance, ns.arm, model, workdir=Path(tmp), repos=repos, tests_visible=not ns.hide_tests
        )
    traj = result.trajectory
    out = Path(ns.out or f"reports/runs/{instance.instance_id}-{ns.arm}.jsonl")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("", encoding="utf-8")
    traj.save(out)
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
    return 0


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
    comp.add_argument("--model", required=True, help="openai:<model>, scripted:<file>, sim[:...]")
    comp.add_argument("--base-url", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL)")
    comp.add_argument("--api-key-env", help="variable holding the API key (OPENAI_API_KEY)")
    comp.add_argument("--prices", help="a TOML price file overriding the shipped prices")
    comp.add_argument("--cache", help="record/replay cache file (SQLite)")
    comp.add_argument("--cache-mode", choices=("off", "record", "replay"), default="off")
    comp.add_argument("--timeout", type=float, default=60.0, help="seconds per attempt")
    comp.add_argument("--max-tokens", type=int, default=256, help="max_completion_tokens")
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
    val.add_argument("--jobs", type=int, default=2, help="instances validated in parallel")
    val.add_argument("--timeout", type=float, default=300.0, help="seconds per test run")
    val.set_defaults(func=_validate)
    run = sub.add_parser("run", help="run one instance in one arm and write its trajectory")
    run.add_argument("--instance", required=True, help="instance id")
    run.add_argument("--arm", required=True, choices=("policy", "current"))
    run.add_argument("--model", required=True, help="openai:<model>, scripted:<file>, sim[:...]")
    run.add_argument("--dataset", default="bundled", help="bundled, a hub id, or a local file")
    run.add_argument("--repos", help="directory of git mirrors, one per repo: <owner>__<name>")
    run.add_argument("--prices", help="a TOML price file overriding the shipped prices")
    run.add_argument("--out", help="trajectory file (default reports/runs/<id>-<arm>.jsonl)")
    run.add_argument(
        "--hide-tests",
        action="store_true",
        help="start the agent without the FAIL_TO_PASS tests (default: visible, spec §3.1)",
    )
    run.set_defaults(func=_run)
    demo = sub.add_parser("demo", help="a short tour of the primitives on a bundled example repo")
    demo.set_defaults(func=_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    try:
        return ns.func(ns)
    except UsageError as exc:
        print(f"toolpolicy: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
