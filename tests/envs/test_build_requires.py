"""The build requirements an isolated build fetches, as a checkout declares them, and when the
day's setuptools needs the day's pip for an editable install."""

from __future__ import annotations

from pytest_toolpolicy.envs.build_requires import LEGACY, build_requires, legacy_editable


def test_the_declared_requirements_or_pip_s_legacy_default() -> None:
    pyproject = '[build-system]\nrequires = ["setuptools>=42", "numpy==1.16.*", "cython"]\n'
    assert build_requires(pyproject) == ["setuptools>=42", "numpy==1.16.*", "cython"]
    assert build_requires(None) == list(LEGACY)  # a setup.py project
    assert build_requires("[project]\nname = 'x'\n") == list(LEGACY)
    assert build_requires("[build-system\n") == list(LEGACY)  # unreadable: as pip would fall back


def test_an_editable_install_needs_the_day_s_pip_below_setuptools_64() -> None:
    assert legacy_editable(["wheel==0.34.2", "setuptools==44.0.0"])
    assert not legacy_editable(["setuptools==64.0.3"])
    assert not legacy_editable(["wheel==0.40.0"])
