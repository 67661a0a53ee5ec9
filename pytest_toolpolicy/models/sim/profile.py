"""Fault profiles of the simulator: named rates, loaded from TOML (``default.toml`` documents
each rate and what counts as one opportunity for it)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, fields, replace
from importlib import resources
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ProfileError(ValueError):
    """A profile file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Profile:
    name: str = "default"
    malformed_json: float = 0.0
    multi_call: float = 0.0
    unknown_tool: float = 0.0
    bad_args: float = 0.0
    blind_edit: float = 0.0
    blind_wrong: float = 0.0
    wrong_patch: float = 0.0
    premature_success: float = 0.0
    guess: float = 0.0
    flaky_tool: float = 0.0

    def rates(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "name"}


RATE_NAMES = tuple(Profile().rates())
ORACLE = Profile(name="oracle")


def parse_profile(text: str, name: str, origin: str, base: Profile | None = None) -> Profile:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{origin}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - set(RATE_NAMES))
    if unknown:
        raise ProfileError(f"{origin}: unknown keys {unknown}; rates: {', '.join(RATE_NAMES)}")
    for key, value in data.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            raise ProfileError(f"{origin}: {key} must be a number in [0, 1], not {value!r}")
    return replace(base or Profile(), name=name, **{k: float(v) for k, v in data.items()})


def default_profile() -> Profile:
    text = resources.files(__package__).joinpath("default.toml").read_text(encoding="utf-8")
    return parse_profile(text, "default", "default.toml")


def load_profile(arg: str | None) -> Profile:
    """``None``/``default`` → the default profile, ``oracle`` → no faults, else a TOML file whose
    keys override the default rates."""
    if arg in (None, "", "default"):
        return default_profile()
    if arg == "oracle":
        return ORACLE
    path = Path(arg)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProfileError(f"cannot read sim profile {arg}: {exc.strerror or exc}") from None
    return parse_profile(text, path.stem, str(path), default_profile())
