"""The harness's own data that carries answers (the bundled instances' gold patches, the
projects' histories) is an empty directory wherever a sandboxed run would see the harness's
package: an agent that reads what it can reads nothing of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_toolpolicy.primitives.bwrap import ANSWERS, masks
from pytest_toolpolicy.primitives.sandbox import Sandbox

SANDBOX = Sandbox.from_env()
PACKAGE = Path(__file__).resolve().parents[2] / "pytest_toolpolicy"


def test_each_view_of_a_hidden_directory_is_masked(tmp_path: Path) -> None:
    hidden = tmp_path / "site/pkg/bench/bundled"
    hidden.mkdir(parents=True)
    (tmp_path / "elsewhere").mkdir()
    shown = [
        (str(tmp_path / "site"), str(tmp_path / "site")),  # an interpreter's prefix
        (str(tmp_path / "site/pkg"), "/toolpolicy/lib/pkg"),  # the package mounted elsewhere
        (str(tmp_path / "elsewhere"), "/x"),  # nothing hidden inside
    ]
    assert masks(shown, [hidden, tmp_path / "absent"]) == [
        str(hidden),
        "/toolpolicy/lib/pkg/bench/bundled",
    ]


@pytest.mark.skipif(SANDBOX.mode != "bwrap", reason="needs bubblewrap")
def test_the_bundled_answers_are_not_readable_through_the_package(tmp_path: Path) -> None:
    assert PACKAGE / "bench" / "bundled" in ANSWERS
    gold = next((PACKAGE / "bench/bundled/instances").glob("*/instance.json"))
    assert '"patch"' in gold.read_text()  # on the host it is there
    lib = "/toolpolicy/lib/pytest_toolpolicy"
    script = (
        f"ls -A {lib}/bench/bundled | wc -l; ls {lib}/mine/example | wc -l; "
        f"test -f {lib}/bench/load.py && echo code-readable"
    )
    run = SANDBOX.run(
        ["/bin/sh", "-c", script],
        cwd=None,
        writable=None,
        stdin=None,
        timeout=30,
        merge_stderr=True,
        ro_mounts=((str(PACKAGE), lib),),
    )
    assert run.stdout.decode().split() == ["0", "0", "code-readable"], run.stdout
