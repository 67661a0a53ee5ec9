"""Agents other than the built-in loop as the current arm: the protocol a Python agent keeps
(``protocol.py``), how one is named (``spec.py``), how each starts (its adapter, ``adapters/``),
the bridge its model calls go through (``bridge.py``), its run in the sandbox (``external.py``)
and that run as the arm (``loop.py``). Importing this package imports none of them."""
