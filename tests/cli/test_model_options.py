"""``run``'s and ``complete``'s model options (``cli/model_options.py``): the pytest session's,
read by its parsers, named as the command spells them."""

import pytest

from pytest_toolpolicy.cli import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--timeout", "-1"], "--timeout must be a positive number of seconds, got '-1'"),
        (["--timeout=0"], "--timeout must be a positive number of seconds, got '0'"),
        (["--timeout", "nan"], "--timeout must be a positive number of seconds, got 'nan'"),
        (["--retries", "-1"], "--retries must be a whole number ≥ 0, got '-1'"),
        (["--structured", "yaml"], "--structured must be one of off, json, got 'yaml'"),
        (["--max-output", "current=x"], "--max-output current must be a whole number"),
    ],
)
def test_model_options_are_the_sessions_and_say_what_is_wrong(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``run`` and ``complete`` read their model options with the pytest session's parsers."""
    for command in (["complete", "--model", "sim", *argv, "hi"],
                    ["run", "--instance", "x", "--arm", "policy", "--model", "sim", *argv]):  # fmt: skip
        assert main(command) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"toolpolicy: {message}") and "--toolpolicy-" not in err
