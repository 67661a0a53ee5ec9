"""The baseline ("current") arm: the stock read/write/edit/bash loop users run today."""

from __future__ import annotations

from .loop import CurrentLoop
from .prompt import TOOL_SCHEMAS, parse_reply
from .tools import TOOL_NAMES, call_tool

__all__ = ["TOOL_NAMES", "TOOL_SCHEMAS", "CurrentLoop", "call_tool", "parse_reply"]
