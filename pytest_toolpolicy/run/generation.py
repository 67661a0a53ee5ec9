"""What every model request of a session carries beyond the loops' own choices: a reply
format the server keeps to (structured output), each arm's output limit, a seed, logprobs;
and how a ``local:`` server runs. Options (each also an ini key), checked before anything runs.

Structured output is one setting for both arms: ``json`` sends each arm's own call format
(the policy's one object, the baseline's object or list) as a ``response_format`` JSON schema.
It is on by default for a ``local:`` model, whose tiny base model otherwise echoes the chat
template, and off for any other, whose users compare the loops they run today.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..models.local.server import ServerSettings
    from ..models.request_options import RequestOptions

# The loops' own limits (policy.select, current.loop; a test holds them equal), written out so
# that loading the plugin, which reads OPTIONS, imports none of the package.
POLICY_TOKENS, CURRENT_TOKENS = 256, 4096
# Each slot holds a whole context (Qwen at 8,192: ~0.9 GB), so `-n 64` alone does not ask for 64.
MAX_DEFAULT_SLOTS = 4
OPTIONS: tuple[tuple[str, str], ...] = (
    (
        "--toolpolicy-structured",
        "reply format the model must keep to, both arms alike: off, or json (each arm's call"
        " format as a response_format JSON schema); default json for local:, else off",
    ),
    (
        "--toolpolicy-max-output",
        f"completion-token limit per reply: N for both arms, or policy=N,current=M"
        f" (default policy={POLICY_TOKENS}, current={CURRENT_TOKENS})",
    ),
    ("--toolpolicy-model-seed", "seed sent with every model request (default: none)"),
    (
        "--toolpolicy-logprobs",
        "top alternatives per reply token to record with logprobs; 0 off (default 5 for local:)",
    ),
    ("--toolpolicy-local-threads", "threads of a local: model's server (default 1)"),
    ("--toolpolicy-local-ctx", "context size of a local: model's server (default 8192)"),
    (
        "--toolpolicy-local-parallel",
        "requests a local: model's server serves at once, each with the whole context"
        f" (default: one per xdist worker, at most {MAX_DEFAULT_SLOTS})",
    ),
    (
        "--toolpolicy-local-chat-template",
        "a local: server's chat template: a llama.cpp built-in name (gemma, chatml, ...) or a"
        " Jinja file (default: gemma for gemma3-270m, else the GGUF's own)",
    ),
)
STRUCTURED = ("off", "json")
DEFAULT_LIMITS = {"policy": POLICY_TOKENS, "current": CURRENT_TOKENS}


class GenerationError(ValueError):
    pass


@dataclass(frozen=True)
class LocalServerOptions:
    threads: int | None = None  # None: the server's default
    ctx: int | None = None
    chat_template: str | None = None
    parallel: int | None = None  # None: one slot per worker (``server_settings``)

    def server_settings(self, workers: int = 1) -> ServerSettings:
        """The server's settings: these options over its defaults. ``workers`` (xdist's, 1
        without it) ask the server at once: one slot each, unless ``parallel`` says otherwise,
        decodes their replies in one batch instead of queueing them."""
        from ..models.local.server import ServerSettings

        defaults = ServerSettings()
        return ServerSettings(
            threads=self.threads or defaults.threads,
            ctx=self.ctx or defaults.ctx,
            parallel=self.parallel or max(1, min(workers, MAX_DEFAULT_SLOTS)),
            chat_template=self.chat_template,
        )


@dataclass(frozen=True)
class Generation:
    structured: str = "off"
    max_output: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_LIMITS))
    seed: int | None = None
    logprobs: int = 0
    local: LocalServerOptions = field(default_factory=LocalServerOptions)

    def options_for(self, arm: str, trial: int = 1, *, external: bool = False) -> RequestOptions:
        """What ``arm``'s requests carry in repeated trial ``trial`` (1..K): a given seed moves
        on by one a trial, so a server that honours seeds answers each trial afresh.
        ``external``: the arm is an external agent, whose replies are in its own format, so
        the built-in loop's reply schema is never imposed on them."""
        from ..current.prompt import REPLY_SCHEMA as CURRENT_SCHEMA
        from ..models.request_options import RequestOptions, json_schema_format
        from ..policy.parse import REPLY_SCHEMA as POLICY_SCHEMA

        schemas = {"policy": POLICY_SCHEMA, "current": CURRENT_SCHEMA}
        schema = schemas[arm] if self.structured == "json" and not external else None
        return RequestOptions(
            # an external agent's own ask stands, under the same cap (``cap_for``)
            max_completion_tokens=None if external else self.max_output.get(arm),
            seed=None if self.seed is None else self.seed + trial - 1,
            response_format=json_schema_format(f"{arm}_reply", schema) if schema else None,
            top_logprobs=self.logprobs or None,
            trial=trial,
        )

    def cap_for(self, arm: str) -> int | None:
        """The most tokens a reply of ``arm`` may have (an external agent asks for less at will)."""
        return self.max_output.get(arm)

    def record(self) -> dict[str, Any]:
        """What the decision table states about the requests."""
        return {
            "structured": self.structured,
            "max_output": dict(self.max_output),
            "model_seed": self.seed,
            "logprobs": self.logprobs,
        }


def generation_from(get: Callable[[str], Any], model: str) -> Generation:
    local = model.startswith("local:")
    structured = get("toolpolicy_structured") or ("json" if local else "off")
    if structured not in STRUCTURED:
        raise GenerationError(
            f"--toolpolicy-structured must be one of {', '.join(STRUCTURED)}, got {structured!r}"
        )
    logprobs = _number(get("toolpolicy_logprobs"), "--toolpolicy-logprobs", 0, 20)
    return Generation(
        structured=structured,
        max_output=_limits(get("toolpolicy_max_output")),
        seed=_number(get("toolpolicy_model_seed"), "--toolpolicy-model-seed", 0, 2**63 - 1),
        logprobs=(5 if local else 0) if logprobs is None else logprobs,
        local=LocalServerOptions(
            threads=_number(get("toolpolicy_local_threads"), "--toolpolicy-local-threads", 1, 256),
            ctx=_number(get("toolpolicy_local_ctx"), "--toolpolicy-local-ctx", 256, 2**20),
            chat_template=_template(get("toolpolicy_local_chat_template")),
            parallel=_number(
                get("toolpolicy_local_parallel"), "--toolpolicy-local-parallel", 1, 64
            ),
        ),
    )


def _limits(value: Any) -> dict[str, int]:
    name = "--toolpolicy-max-output"
    limits = dict(DEFAULT_LIMITS)
    if value in (None, ""):
        return limits
    text = str(value).strip()
    if "=" not in text:
        number = _number(text, name, 1, 1_000_000)
        return dict.fromkeys(limits, number) if number else limits
    for part in filter(None, (p.strip() for p in text.split(","))):
        arm, _, count = part.partition("=")
        if arm.strip() not in limits:
            raise GenerationError(f"{name}: unknown arm {arm.strip()!r}; arms: policy, current")
        limits[arm.strip()] = _number(count, f"{name} {arm.strip()}", 1, 1_000_000) or 0
    return limits


def _number(value: Any, name: str, lo: int, hi: int) -> int | None:
    if value in (None, ""):
        return None
    try:
        number = int(str(value).strip())
    except ValueError:
        raise GenerationError(f"{name} must be a whole number, got {value!r}") from None
    if not lo <= number <= hi:
        raise GenerationError(f"{name} must be between {lo} and {hi}, got {number}")
    return number


def _template(value: Any) -> str | None:
    """A built-in template's name as is; a path's file read (a Jinja source)."""
    if value in (None, ""):
        return None
    text = str(value)
    path = Path(text).expanduser()
    if "/" in text or path.suffix in (".jinja", ".j2", ".txt"):
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise GenerationError(f"--toolpolicy-local-chat-template: {path}: {exc}") from None
    return text
