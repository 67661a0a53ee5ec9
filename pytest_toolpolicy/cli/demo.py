"""``toolpolicy demo``: the tour of the primitives (``demo/``), from the shell."""

from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> None:
    demo = sub.add_parser("demo", help="a short tour of the primitives on a bundled example repo")
    demo.set_defaults(func=_demo)


def _demo(ns: argparse.Namespace) -> int:
    from ..demo import run

    return run()
