"""End to end: ``sim`` (the seeded fault-injecting simulator) through both arms."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from pytest_toolpolicy.bench import load_instances
from pytest_toolpolicy.models.base import ModelRequest
from pytest_toolpolicy.models.sim.dice import REPLY_FAULTS, DecisionLog, Dice
from pytest_toolpolicy.models.sim.model import SimModel
from pytest_toolpolicy.models.sim.profile import Profile, default_profile
from pytest_toolpolicy.models.spec import build_model
from pytest_toolpolicy.policy.config import PolicyConfig
from pytest_toolpolicy.policy.ledger import Ledger, noop_observation
from pytest_toolpolicy.policy.parse import parse_reply
from pytest_toolpolicy.policy.prompt import build_prompt
from pytest_toolpolicy.policy.retrieve import Candidates
from pytest_toolpolicy.policy.validate import rejection_observation
from pytest_toolpolicy.run.pipeline import run_instance
from pytest_toolpolicy.types import Rejection

INSTANCES = load_instances("bundled").instances
BY_ID = {i.instance_id: i for i in INSTANCES}
RESOLVABLE = [i for i in INSTANCES if i.patch and not i.underspecified]
UNDERSPECIFIED = [i for i in INSTANCES if i.underspecified]


def _per_repo(instances, arm: str) -> list:
    """Every instance, ~2 s each: in ``make test`` each bundled repository's first resolvable
    instance, in one arm (the repositories alternate between the arms), the rest marked slow.
    Every gold patch's conversion to edits is checked for every instance in ``test_sim_gold.py``,
    and ``toolpolicy validate`` grades each gold patch; these runs add the arm's tools and the
    grading around them."""
    repos = sorted({i.repo for i in instances})
    mine = set(repos[0 if arm == "policy" else 1 :: 2])
    fast = {next(i for i in instances if i.repo == repo).instance_id for repo in mine}
    return [
        pytest.param(i, marks=() if i.instance_id in fast else pytest.mark.slow, id=i.instance_id)
        for i in instances
    ]


def _run(instance, arm: str, spec: str, tmp_path: Path, seed: int = 0):
    model = build_model(spec, instances=BY_ID, seed=seed)
    return run_instance(instance, arm, model, workdir=tmp_path)


@pytest.mark.parametrize("instance", _per_repo(RESOLVABLE, "policy"))
def test_oracle_resolves_in_the_policy_arm(instance, tmp_path: Path) -> None:
    assert _run(instance, "policy", "sim:oracle", tmp_path).resolved


@pytest.mark.parametrize("instance", UNDERSPECIFIED, ids=lambda i: i.instance_id)
def test_oracle_asks_on_underspecified_in_the_policy_arm(instance, tmp_path: Path) -> None:
    trajectory = _run(instance, "policy", "sim:oracle", tmp_path).trajectory.to_dict()
    assert "ask_user" in str(trajectory["outcome"])


@pytest.mark.parametrize("instance", _per_repo(RESOLVABLE, "current"))
def test_oracle_resolves_in_the_current_arm(instance, tmp_path: Path) -> None:
    assert _run(instance, "current", "sim:oracle", tmp_path).resolved


# --- determinism -------------------------------------------------------------------------
_TIMING = {"latency_s", "duration_s", "elapsed_s", "started_at", "finished_at", "wall_s"}
# The rendered prompts quote pytest output as capped JSON, with its durations and object
# addresses (``at 0x7f…``), which vary from run to run of the same code; so the prompts and the
# token and cost figures counted from them are left out. What the simulator decides (every
# completion text), every observation (durations and addresses masked), the outcome and the
# patch are compared.
_VOLATILE = _TIMING | {"usage", "cost_usd", "budget", "prompt"}


def _untimed(value):
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, (list, tuple)):
        return [_untimed(v) for v in value]
    if isinstance(value, str):  # pytest's own "2 passed in 0.67s", inside observations and prompts
        return _ADDRESS.sub(" at 0x?", _PYTEST_TIME.sub(" in <t>s", value))
    return value


_PYTEST_TIME = re.compile(r" in \d+(?:\.\d+)?s\b")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")


def _trajectory(instance, arm: str, seed: int, tmp_path: Path) -> dict:
    """One default-profile run, always in the same directory (tracebacks in test output carry
    the workspace path, and its length changes the prompt's token count)."""
    workdir = tmp_path / "run"
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir()
    return _untimed(_run(instance, arm, "sim", workdir, seed).trajectory.to_dict())


@pytest.mark.parametrize(
    ("instance", "arm"),
    [
        (RESOLVABLE[0], "policy"),
        pytest.param(RESOLVABLE[1], "current", marks=pytest.mark.slow),
        pytest.param(RESOLVABLE[2], "policy", marks=pytest.mark.slow),  # ~5 s a run
    ],
    ids=lambda v: getattr(v, "instance_id", v),
)
def test_same_seed_same_trajectory_other_seed_different(instance, arm, tmp_path: Path) -> None:
    """Default profile: a seed fixes the trajectory (see ``_VOLATILE`` for what is masked); of
    two other seeds at least one gives a different trajectory."""
    first = _trajectory(instance, arm, 1, tmp_path)
    assert _trajectory(instance, arm, 1, tmp_path) == first
    assert any(_trajectory(instance, arm, seed, tmp_path) != first for seed in (2, 3))


# --- fault rates ---------------------------------------------------------------------------


def test_fault_rates_of_the_decision_machinery() -> None:
    """Per-class rates on the decision machinery itself (``Dice``, the code every fault of the
    simulator goes through), with 20,000 opportunities per class: each observed rate is within
    ±30% of the default profile's configured rate. End to end over the whole bundled benchmark
    (seeds 0..9, opt-in for its ~6 minutes): ``tests/run/test_fault_rates.py``."""
    profile = default_profile()
    log = DecisionLog()
    n = 20_000
    for i in range(n):
        dice = Dice(7, profile, log, "policy", f"item{i % 50}")
        dice.reply_fault(f"turn{i}")
        for name in profile.rates():
            if name not in REPLY_FAULTS:
                dice.roll(name, f"k{i}")
    rates = log.rates()
    for name, configured in profile.rates().items():
        hits, chances = rates[name]
        assert chances == n, name
        assert abs(hits / chances - configured) <= 0.3 * configured, (name, hits, chances)


_E2E = RESOLVABLE[:4]


@pytest.mark.slow  # 8 runs, ~20 s; make test runs the default profile in the determinism checks
def test_default_profile_end_to_end(tmp_path: Path) -> None:
    """The default profile over 4 resolvable instances × both arms, seed 0, one model (so one
    DecisionLog). This run is too small for ±30% per fault class (that is checked above on the
    decision machinery with 20,000 draws per class); here each class must have had
    opportunities, and the reply-shape faults taken together (configured 0.33 per reply) must
    occur within ±30% of their configured rate over every reply the simulator wrote.

    Gates: in the policy arm at least one rejection and at least one post-patch ``test`` trigger
    observation (the trust gate: ``test_default_profile_trust_gate_end_to_end``).

    Tokens: estimates, prompt > 0, cached ≤ prompt, and on the same instance the baseline arm's
    growing history gets a larger cached share of its prompt tokens than the policy arm's
    re-assembled prompt."""
    model = build_model("sim", instances=BY_ID, seed=0)
    runs = {
        (i.instance_id, arm): run_instance(
            i, arm, model, workdir=tmp_path / f"{arm}-{n}"
        ).trajectory.to_dict()
        for n, i in enumerate(_E2E)
        for arm in ("policy", "current")
    }
    rates = model.log.rates()
    profile = default_profile()
    for name in profile.rates():
        if name != "guess":  # only under-specified instances offer it
            assert rates.get(name, (0, 0))[1] > 0, name
    hits = sum(rates[name][0] for name in REPLY_FAULTS)
    replies = rates[REPLY_FAULTS[0]][1]
    configured = sum(profile.rates()[name] for name in REPLY_FAULTS)
    assert replies >= 40
    assert abs(hits / replies - configured) <= 0.3 * configured, (hits, replies)

    policy_turns = [t for (_, arm), d in runs.items() if arm == "policy" for t in d["turns"]]
    assert any(t["rejections"] for t in policy_turns)
    assert any(
        o.get("kind") == "test" and o.get("source") == "trigger"
        for t in policy_turns
        for o in t["observations"]
    )

    for instance in _E2E:
        share = {}
        for arm in ("policy", "current"):
            usages = [t["completion"]["usage"] for t in runs[(instance.instance_id, arm)]["turns"]]
            assert usages and all(u["estimated"] for u in usages)
            assert all(u["prompt_tokens"] > 0 for u in usages)
            assert all(u["cached_prompt_tokens"] <= u["prompt_tokens"] for u in usages)
            prompt = sum(u["prompt_tokens"] for u in usages)
            share[arm] = sum(u["cached_prompt_tokens"] for u in usages) / prompt
        assert share["current"] > share["policy"], (instance.instance_id, share)


@pytest.mark.slow  # every resolvable instance: ~60 s
def test_default_profile_trust_gate_end_to_end(tmp_path: Path) -> None:
    """The default profile over every resolvable instance in the policy arm, seed 0: the trust
    gate leaves ``unverified`` only ``run_test`` observations, each with the exit-code caveat
    (``flaky_tool``: the simulator as a tool wrapper whose ``passed`` contradicts the real exit
    code; the run and its exit code are real), and at least one. The simulator does not take
    such a result at its word: at least once it runs the test again right away, and every stop
    it explains by the tests agrees with the last real exit code it was shown."""
    model = build_model("sim", instances=BY_ID, seed=0)
    unverified = rechecked = 0
    for k, instance in enumerate(RESOLVABLE):
        run = run_instance(
            instance, "policy", model, workdir=tmp_path / str(k)
        ).trajectory.to_dict()
        turns = run["turns"]
        codes = []  # the real exit code of every test result, in order
        for n, turn in enumerate(turns):
            for observation in turn["observations"]:
                codes += _exit_codes(observation)
                if observation["trust"] == "trusted":
                    continue
                unverified += 1
                assert observation["kind"] == "run_test"
                data = observation["data"]["data"]["data"]  # the wrapper's capture, as returned
                assert observation["caveat"] == (
                    f"exit_code: passed={str(data['passed']).lower()} but "
                    f"exit_code={data['exit_code']}"
                )
                following = turns[n + 1]["request"] if n + 1 < len(turns) else None
                rechecked += bool(following and following["tool"] == "run_test")
        reason = run["outcome"]["detail"].get("reason", "")
        if "the tests pass" in reason or "the tests still fail" in reason:
            assert ("the tests pass" in reason) == (codes[-1] == 0), (run["instance_id"], codes)
    assert unverified and rechecked


def _exit_codes(observation: dict) -> list[int]:
    """The real exit code of a test result (the post-patch trigger's, or a run_test's)."""
    if observation["kind"] == "test":
        return [observation["result"]["exit_code"]]
    if observation["kind"] == "run_test" and isinstance(observation["result"], dict):
        return [observation["result"]["exit_code"]]
    return []


def test_an_edit_refused_twice_for_the_same_reason_stops() -> None:
    from pytest_toolpolicy.models.sim.gold import Edit
    from pytest_toolpolicy.models.sim.policy_arm import _edit

    edit = Edit("m.py", "m.f", "a\n", "b\n")
    dice = Dice(0, default_profile(), DecisionLog(), "policy", "x")
    error = "edit_entity, m.f, error: search string not found in m.f (lines 1-3)"
    read = "read_entity, m.f, function def f():"
    call = _edit(edit, 0, [read, error, read, error], dice)
    assert call["tool"] == "stop" and "refused twice" in call["args"]["reason"]
    assert _edit(edit, 0, [read, error], dice)["tool"] == "edit_entity"


@pytest.mark.parametrize(
    ("latest", "correcting"),
    [
        (None, False),
        ("noop", True),  # told its reply was no call: it answers in shape
        ("rejected", True),
    ],
)
def test_in_the_policy_arm_a_reply_told_it_ran_nothing_carries_no_reply_fault(
    latest: str | None, correcting: bool
) -> None:
    instance = UNDERSPECIFIED[0]
    record = {
        "noop": noop_observation("reply is not JSON: Expecting value (char 0)"),
        "rejected": rejection_observation(Rejection("bash", "unknown tool: bash")),
    }
    ledger = Ledger().append(record[latest]) if latest else Ledger()
    tools = Candidates(tools=("read_entity",))
    messages = build_prompt(tools, ledger, instance.problem_statement, PolicyConfig())
    model = SimModel(BY_ID, Profile(name="broken", malformed_json=1.0))
    request = ModelRequest(messages=tuple(messages), item=instance.instance_id, turn=1)
    reply = model.complete(request)
    assert reply.extra["sim"]["fault"] == (None if correcting else "malformed_json")
    assert (parse_reply(reply.text).kind != "noop") == correcting


def test_logprobs_asked_of_sim_are_seeded_noise_marked_simulated() -> None:
    instance = UNDERSPECIFIED[0]  # asking needs no workspace to plan against
    tools = Candidates(tools=("read_entity",))
    messages = tuple(build_prompt(tools, Ledger(), instance.problem_statement, PolicyConfig()))
    model = SimModel(BY_ID, default_profile())
    plain = model.complete(ModelRequest(messages=messages, item=instance.instance_id))
    assert "logprobs" not in plain.extra  # not asked: none
    asked = ModelRequest(messages=messages, item=instance.instance_id, top_logprobs=3)
    first, again = model.complete(asked), model.complete(asked)
    assert first.extra["logprobs_simulated"] is True
    assert first.extra["logprobs"] == again.extra["logprobs"]  # seeded: the same each time
    token = first.extra["logprobs"][0]
    assert -3.0 <= token["logprob"] < 0 and len(token["top"]) == 3
