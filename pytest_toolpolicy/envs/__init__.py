"""Environments: what an instance's tests run in, built once per spec and setup commit, as a
stage of its own before a run's items (``stage.py``)."""
