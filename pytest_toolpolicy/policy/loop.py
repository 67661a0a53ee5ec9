"""The candidate loop: observe → select → validate → execute → trust gate → observe (spec §3–§6).

Everything here but ``select`` is deterministic. A patch is *fully formed* when, after one or more
committed edits, the model's next action is anything other than ``edit_entity`` (another tool, a
no-op turn, ``ask_user`` or ``stop``), or the run ends for any reason: the post-patch test fires
then, before that action runs or the loop halts, so the ledger always holds the real test result
of the final patch. It fires at most once per patch (keyed by the workspace's content hash).

A turn that runs nothing still leaves its reason in the ledger, so the next prompt shows it: each
rejection (the first, which the re-selection is shown, and a second one, which consumes the turn)
as its ``rejected`` observation, and a no-op turn as a ``noop`` observation with the parser's
reason. That is all they do: only a first rejection gets a re-selection (§3.2), a no-op turn is
never re-prompted (§5), and neither is text the symbol trigger scans (a rejected name is the
model's guess, not something the code or a run said), so neither escalates (§10 invariant 7).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

from ..arms.finish import failed, finish, spent, turn_cap
from ..models.base import Completion, Model, ModelError
from ..models.budget import Budget
from ..primitives.envelope import Dispatch
from ..primitives.toolbox import Toolbox
from ..types import Observation, Outcome, Rejection, Task, ToolCall, Trajectory, Turn
from .config import PolicyConfig
from .hidden import States
from .ledger import Ledger, noop_observation
from .observe import observe, texts_of
from .parse import Parsed, parse_reply
from .prompt import build_prompt
from .retrieve import retrieve
from .select import select
from .triggers import lint_trigger, symbol_trigger, test_trigger
from .trust import trust_gate
from .validate import rejection_observation, validate

if TYPE_CHECKING:
    from ..arm_registry import ArmSetup


@dataclass
class _Run:
    """The mutable state of one run; every stage it calls is a pure function."""

    ledger: Ledger = field(default_factory=Ledger)
    budget: Budget = field(default_factory=Budget)
    pending_patch: bool = False
    edits: list[str] = field(default_factory=list)
    noops: int = 0


class PolicyLoop:
    """The candidate arm (``policy`` in the registry, ``arm_registry.py``)."""

    calls_removable: ClassVar[bool] = True
    own_requests: ClassVar[bool] = False

    @classmethod
    def build(cls, setup: ArmSetup) -> PolicyLoop:
        return cls(
            setup.toolbox,
            setup.model,
            setup.config,
            embedder=setup.embedder,
            variant=setup.variant or "policy",
            dispatch=setup.dispatch,
            suppress=setup.suppress,
        )

    @staticmethod
    def tools(toolbox: Toolbox) -> Dispatch:
        """The six primitives over ``toolbox``."""
        return toolbox.call

    def __init__(
        self,
        toolbox: Toolbox,
        model: Model,
        config: PolicyConfig | None = None,
        *,
        embedder: Any = None,
        variant: str = "policy",
        dispatch: Dispatch | None = None,
        suppress: Callable[[ToolCall], bool] | None = None,
        states: States | None = None,
    ) -> None:
        """``dispatch`` runs a tool (default ``toolbox.call``; the A/B puts its memo here);
        ``suppress`` says whether a model-requested call is removed (counterfactual reruns);
        ``states``: a prompt's hidden state, for a probe (default: the model's, if local)."""
        self.toolbox = toolbox
        self.model = model
        self.config = config or PolicyConfig()
        self.embedder = embedder
        self.variant = variant
        self.dispatch = dispatch or self.tools(toolbox)
        self.suppress = suppress
        self.states = states
        if states is None and self.config.probe is not None:
            from .hidden import states_for

            self.states = states_for(str(getattr(model, "name", "")))

    def run(self, task: Task) -> Trajectory:
        state = _Run(budget=Budget(max_usd=self.config.max_cost_usd))
        turns: list[Turn] = []
        new_texts = [task.issue_text]
        outcome: Outcome | None = None
        for index in range(self.config.max_turns):
            turn, outcome, new_texts = self._turn(task, state, index, new_texts)
            turns.append(turn)
            if outcome is not None:
                break
        outcome = outcome or turn_cap(self.config.max_turns)
        if state.pending_patch and outcome.outcome in ("budget_exhausted", "model_error"):
            observations = self._patch_formed(task, state)
            if observations and turns:
                last = turns[-1]
                turns[-1] = replace(last, observations=last.observations + tuple(observations))
        return finish(
            task,
            arm="policy",
            variant=self.variant,
            model=self.model,
            workspace=self.toolbox.workspace,
            turns=turns,
            outcome=outcome,
            meta={"gates": sorted(self.config.gates), "test_target": task.test_target},
            budget=state.budget,
        )

    # -- one turn -------------------------------------------------------------------------

    def _turn(
        self, task: Task, state: _Run, index: int, new_texts: list[str]
    ) -> tuple[Turn, Outcome | None, list[str]]:
        config = self.config
        observations: list[Observation] = []
        state.ledger, fired = symbol_trigger(new_texts, state.ledger, self.dispatch, config)
        observations += fired
        messages, completion, failure, retrieved = self._select(task, state, index)
        retrieval = [retrieved]
        turn: dict[str, Any] = {"index": index, "prompt": messages, "retrieval": retrieval}
        if completion is None:
            assert failure is not None
            turn["completion"] = failure.record()  # its tokens and cost: unknown, not zero
            return _turn(turn, observations), failed(failure), []
        turn["completion"] = completion.record()
        parsed = self._parse(completion.text)
        rejections: list[Rejection] = []
        extra: list[dict[str, Any]] = []
        if parsed.kind == "call":
            rejection = validate(parsed.call, state.ledger, self.toolbox.index, config)
            if rejection is not None:
                rejections.append(rejection)
                observations.append(_record(state, rejection_observation(rejection)))
                reselected = self._reselect(task, state, index, extra, retrieval)
                turn.update(rejections=tuple(rejections), extra_selections=tuple(extra))
                if isinstance(reselected, Outcome):  # the re-selection itself failed
                    return _turn(turn, observations), reselected, []
                parsed = reselected
                if parsed.kind == "call":
                    second = validate(parsed.call, state.ledger, self.toolbox.index, config)
                    if second is not None:  # a second rejection consumes the turn
                        rejections.append(second)
                        observations.append(_record(state, rejection_observation(second)))
                        turn.update(request=parsed.call, rejections=tuple(rejections))
                        return _turn(turn, observations), spent(state.budget), []
        turn.update(rejections=tuple(rejections), extra_selections=tuple(extra))
        if parsed.kind == "noop":
            state.noops += 1
            observations += self._patch_formed(task, state)  # the patch was formed before it
            observations.append(_record(state, noop_observation(parsed.reason)))
            turn["noop"] = parsed.reason
            outcome = spent(state.budget)
            if outcome is None and state.noops >= config.max_noop_turns:
                outcome = Outcome(
                    "budget_exhausted", {"reason": f"{state.noops} consecutive no-op turns"}
                )
            return _turn(turn, observations), outcome, []
        state.noops = 0
        if parsed.kind == "terminal":
            observations += self._patch_formed(task, state)
            return _turn(turn, observations), parsed.outcome, []
        calls = [parsed.call] if config.on("serialize") else [parsed.call, *parsed.deferred]
        turn["request"] = parsed.call
        if parsed.deferred and config.on("serialize"):
            turn["deferred"] = parsed.deferred
            names = ", ".join(c.tool for c in parsed.deferred)
            note = Observation(
                "deferred",
                names,
                "not executed: one call per turn",
                [c.__dict__ for c in parsed.deferred],
                source="harness",
            )
            observations.append(_record(state, note))
        texts: list[str] = []
        executed: list[ToolCall] = []
        suppressed: list[ToolCall] = []
        for call in calls:
            if call is not parsed.call:
                rejection = validate(call, state.ledger, self.toolbox.index, config)
                if rejection is not None:
                    observations.append(_record(state, rejection_observation(rejection)))
                    continue
            if self.suppress is not None and self.suppress(call):
                suppressed.append(call)  # removed: not run, no observation, as if never asked
                continue
            why = self._withheld(extra[-1] if extra else turn["completion"], messages)
            if why is not None:  # the learned trigger judged it not necessary: not run, said so
                suppressed.append(call)
                observations.append(
                    _record(state, Observation("withheld", call.tool, why, source="harness"))
                )
                continue
            new = self._execute(task, state, call)
            executed.append(call)
            observations += new
            texts += [t for o in new for t in texts_of(o)]
        turn.update(executed=tuple(executed), suppressed=tuple(suppressed))
        return _turn(turn, observations), spent(state.budget), texts

    def _withheld(self, record: dict[str, Any], messages: list[dict[str, str]]) -> str | None:
        """Why a learned stage (a candidate's) withholds the call, or None: it runs."""
        config = self.config
        if config.trigger is not None and (why := config.trigger.withhold(record)):
            return why
        if config.probe is not None and self.states is not None:
            return config.probe.withhold(self.states(messages))
        return None

    def _reselect(
        self,
        task: Task,
        state: _Run,
        index: int,
        extra: list[dict[str, Any]],
        retrieval: list[dict[str, Any]],
    ) -> Parsed | Outcome:
        """One re-selection on the same turn (spec §3.2), shown the rejection: the ledger's
        latest entry. Returns the new parse (the caller validates a call), or a model_error
        outcome if the model failed."""
        messages, completion, failure, retrieved = self._select(task, state, index)
        retrieval.append(retrieved)
        if completion is None:
            assert failure is not None
            extra.append({**failure.record(), "prompt": messages})
            return failed(failure)
        extra.append({**completion.record(), "prompt": messages})
        return self._parse(completion.text)

    def _parse(self, text: str) -> Parsed:
        return parse_reply(
            text,
            serialize=self.config.on("serialize"),
            affordances=self.config.on("noop.affordances"),
        )

    def _select(
        self, task: Task, state: _Run, index: int
    ) -> tuple[list[dict[str, str]], Completion | None, ModelError | None, dict[str, Any]]:
        latest = state.ledger.latest
        latest_text = latest.line() if latest else ""
        candidates = retrieve(task.issue_text, latest_text, self.config, self.embedder)
        messages = build_prompt(
            candidates,
            state.ledger,
            task.issue_text,
            self.config,
            affordances=self.config.on("noop.affordances"),
        )
        retrieved = {"tools": list(candidates.tools), "fallback": candidates.fallback}
        try:
            completion = select(self.model, messages, item=task.instance_id, turn=index)
        except ModelError as exc:
            return messages, None, exc, retrieved
        state.budget = state.budget.charge(completion)
        return messages, completion, None, retrieved

    def _execute(self, task: Task, state: _Run, call: ToolCall) -> list[Observation]:
        out: list[Observation] = []
        if call.tool != "edit_entity":
            out += self._patch_formed(task, state)
        state.ledger, executed, diff = execute_call(
            self.toolbox, state.ledger, call, self.config, self.dispatch
        )
        if diff is not None:
            state.pending_patch = True
            state.edits.append(diff)
        return out + executed

    def _patch_formed(self, task: Task, state: _Run) -> list[Observation]:
        if not state.pending_patch:
            return []
        state.pending_patch = False
        if not task.test_target:
            return []
        state.ledger, fired = test_trigger(
            self._patch_key(state), task.test_target, state.ledger, self.dispatch, self.config
        )
        return fired

    def _patch_key(self, state: _Run) -> str:
        if self.toolbox.workspace is not None:
            return self.toolbox.workspace.tree_hash()
        return hashlib.sha256("\n".join(state.edits).encode()).hexdigest()


def execute_call(
    toolbox: Toolbox,
    ledger: Ledger,
    call: ToolCall,
    config: PolicyConfig,
    dispatch: Dispatch | None = None,
) -> tuple[Ledger, list[Observation], str | None]:
    """Run one validated call, pass its capture through the trust gate, and fire the post-edit
    lint trigger when it committed an edit. Returns the ledger, the new observations, and the
    edit's diff when an edit was committed (else None)."""
    envelope = (dispatch or toolbox.call)(call.tool, call.args)
    verdict = trust_gate(call, envelope, config)
    observation = observe(call, envelope, verdict.observation, verdict.trusted, verdict.caveat)
    ledger = ledger.append(observation)
    data = envelope.get("data")
    committed = call.tool == "edit_entity" and envelope.get("ok")
    if not committed or not isinstance(data, dict) or not data.get("committed"):
        return ledger, [observation], None
    ledger, fired = lint_trigger(call.args["selector"], data["file"], toolbox.root, ledger, config)
    return ledger, [observation, *fired], str(data.get("diff", ""))


def _record(state: _Run, observation: Observation) -> Observation:
    """Append the harness's own record of what a turn did not run (a rejection, a no-op, the
    deferred calls) to the ledger."""
    state.ledger = state.ledger.append(observation)
    return observation


def _turn(fields: dict[str, Any], observations: list[Observation]) -> Turn:
    fields = {**fields, "retrieval": tuple(fields.get("retrieval", ()))}
    return Turn(**fields, observations=tuple(observations))


__all__ = ["Parsed", "PolicyLoop", "Task"]
