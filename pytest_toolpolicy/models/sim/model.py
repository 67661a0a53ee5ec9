"""``SimModel``: the fault-injecting simulator behind the Model protocol.

Stateless per request: the arm is told by the prompt (the policy's user message lists the
candidate tools: ``shown.is_policy``), the next action is derived from what the prompt shows
(read through ``shown.py``, the prompts' shown-state format), and every fault is a seeded
decision (``dice.py``) logged once per opportunity. A reply that answers a rejection or an error
carries no reply-shape fault: the simulator corrects what it was told was wrong (in the policy
arm the latest observation is a rejection, or a no-op turn's reason that its reply was no call;
in the baseline a result or format error).

What it knows besides the prompt: the instance (its gold patch) and the tree the agent started
from, which a run tells it (``attach``, from its ``tool_layer``), bundled or real alike.
A gold patch it cannot turn into edits is a ``ModelError`` naming the instance and the cause.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from ... import shown
from ...bench.instance import Instance
from ...primitives.envelope import Dispatch
from ...primitives.workspace import Workspace
from ..base import Completion, ModelError, ModelRequest
from ..prices import PriceTable, load_prices
from .base_tree import BaseTree, workspace_tree
from .baseline_arm import baseline_action
from .dice import DecisionLog, Dice
from .gold import GoldError
from .policy_arm import policy_action
from .profile import Profile
from .tokens import TokenCounter

PRICE_ENTRY = "sim"
_WRONG_TOOL = {"policy": "bash", "current": "run_tests"}
_NEXT_CHECK = {"policy": "run_test", "current": "bash"}
# The policy ledger's records of a reply that ran nothing: a rejected call, a no-op turn.
_TOLD_WRONG = ("rejected", "noop")


class SimModel:
    def __init__(
        self,
        instances: Mapping[str, Instance],
        profile: Profile,
        seed: int = 0,
        *,
        prices: PriceTable | None = None,
    ) -> None:
        self.instances = dict(instances)
        self.profile = profile
        self.seed = seed
        self.name = "sim" if profile.name == "default" else f"sim:{profile.name}"
        self.log = DecisionLog()
        self.tokens = TokenCounter()
        self.prices = prices if prices is not None else load_prices()
        self._trees: dict[str, BaseTree] = {}

    def attach(self, instance_id: str, workspace: Workspace) -> None:
        """The workspace a run of ``instance_id`` plays in: its base commit is planned against."""
        self._trees[instance_id] = workspace_tree(workspace)

    def tool_layer(
        self, dispatch: Dispatch, *, arm: str, item: str, workspace: Workspace | None
    ) -> Dispatch:
        """Told the run's workspace (its edits are planned against the base commit), and in
        the policy arm the unreliable tool wrapper of ``flaky_tool`` (``tool_faults.py``)."""
        from .tool_faults import wrap_dispatch

        return wrap_dispatch(self, dispatch, arm, item, workspace)

    def tree(self, instance: Instance) -> BaseTree | None:
        return self._trees.get(instance.instance_id)

    def complete(self, request: ModelRequest) -> Completion:
        start = time.monotonic()
        instance = self.instances.get(request.item)
        if instance is None:
            raise ModelError(f"sim knows no instance {request.item!r} (turn {request.turn})")
        messages = list(request.messages)
        user = next((m["content"] for m in messages if m.get("role") == "user"), "")
        arm = "policy" if shown.is_policy(user) else "current"
        dice = Dice(self.seed, self.profile, self.log, arm, instance.instance_id)
        tree = self.tree(instance)
        try:
            if arm == "policy":
                call = policy_action(instance, tree, user, dice)
            else:
                call = baseline_action(instance, tree, messages, dice)
        except GoldError as exc:
            raise ModelError(f"sim cannot plan instance {instance.instance_id}: {exc}") from None
        if arm == "policy":
            correcting = shown.read_policy(user).latest.get("kind") in _TOLD_WRONG
        else:
            last = messages[-1].get("content", "") if len(messages) > 2 else ""
            correcting = shown.mentions_error(last)
        key = f"turn{request.turn}:{'retry' if correcting else 'first'}"
        fault = None if correcting else dice.reply_fault(key)
        text = _render(call, fault, arm, instance)
        usage = self.tokens.usage((instance.instance_id, arm), messages, text)
        return Completion(
            text=text,
            usage=usage,
            cost_usd=self.prices.cost(PRICE_ENTRY, usage),
            latency_s=time.monotonic() - start,
            model=self.name,
            extra={
                "sim": {"fault": fault, "arm": arm, "tokens": self.tokens.method},
                **self._logprobs(request, text),
            },
        )

    def _logprobs(self, request: ModelRequest, text: str) -> dict[str, Any]:
        """Simulated logprobs where the request asked for them: seeded noise, marked so."""
        if not request.top_logprobs:
            return {}
        from .logprobs import simulated

        drawn = simulated(self.seed, request.item, request.turn, text, request.top_logprobs)
        return {"logprobs": drawn, "logprobs_simulated": True}


def _render(call: dict[str, Any], fault: str | None, arm: str, instance: Instance) -> str:
    if fault == "malformed_json":
        return json.dumps(call)[:-2]  # cut short, as a reply hitting a length limit is
    if fault == "unknown_tool":
        return json.dumps({"tool": _WRONG_TOOL[arm], "args": {"command": "pytest -x"}})
    if fault == "bad_args":
        return json.dumps({"tool": call["tool"], "args": _bad_args(call["args"])})
    if fault == "multi_call":
        target = instance.test_target or "tests"
        check = {"target": target} if arm == "policy" else {"command": f"python -m pytest {target}"}
        return json.dumps([call, {"tool": _NEXT_CHECK[arm], "args": check}])
    return json.dumps(call)


def _bad_args(args: dict[str, Any]) -> dict[str, Any]:
    """Missing, extra or mistyped, chosen by the arguments' own shape so it is deterministic."""
    if not args:
        return {"verbose": True}
    name, value = next(iter(args.items()))
    if len(args) > 1:
        return {k: v for k, v in args.items() if k != name}  # missing
    if isinstance(value, str):
        return {name: [value]}  # mistyped
    return {**args, "verbose": True}  # extra
