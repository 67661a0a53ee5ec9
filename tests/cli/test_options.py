"""The argument types more than one command takes (``cli/options.py``): a bad value is
argparse's usage error, exit 2, before anything runs."""

import pytest

from pytest_toolpolicy.cli import main
from pytest_toolpolicy.cli.options import positive_int, positive_number


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["complete", "--model", "sim", "--max-tokens", "-5", "hi"],
            "--max-tokens: must be a positive integer, got -5",
        ),
        (
            ["complete", "--model", "sim", "--max-tokens", "1.5", "hi"],
            "--max-tokens: must be a positive integer, got 1.5",
        ),
        (
            ["validate", "--dataset", "bundled", "--jobs", "0"],
            "--jobs: must be a positive integer, got 0",
        ),
        (
            ["validate", "--dataset", "bundled", "--timeout", "inf"],
            "--timeout: must be a positive number, got inf",
        ),
        (
            ["validate", "--dataset", "bundled", "--timeout", "soon"],
            "--timeout: must be a positive number, got soon",
        ),
        (
            ["validate", "--dataset", "bundled", "--limits", "read_mb=-1"],
            "--limits: limit read_mb must be a positive number, got '-1'",
        ),
        (
            ["run", "--instance", "x", "--arm", "policy", "--model", "sim", "--limits", "nope=1"],
            "--limits: unknown limit 'nope=1'",
        ),
    ],
)
def test_bad_numbers_and_limits_are_argparse_errors(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert f"error: argument {message}" in capsys.readouterr().err


def test_good_numbers_parse() -> None:
    assert (positive_int("3"), positive_number("0.5"), positive_number("2")) == (3, 0.5, 2.0)
