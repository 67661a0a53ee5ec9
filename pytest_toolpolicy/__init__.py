"""pytest-toolpolicy: a reversible tool-calling policy for LLM coding agents, as a pytest plugin."""

__version__ = "0.1.0"
