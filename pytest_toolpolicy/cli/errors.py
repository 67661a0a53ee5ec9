"""The one error of the shell: input a command cannot use at all.

Every command raises ``UsageError``; ``cli.main`` prints it as one line on stderr,
``toolpolicy: <message>`` (or ``toolpolicy <command>: <message>`` for a command that names
itself), and exits 2. The logic below the shell raises errors of its own modules, never this
one: a command translates them here, so nothing below ``cli/`` imports the shell.
"""

from __future__ import annotations


class UsageError(Exception):
    """Input the command cannot use at all: exit 2 with one line."""

    def __init__(self, message: str, command: str | None = None) -> None:
        super().__init__(message)
        self.command = command  # the line's prefix names it: "toolpolicy mine: ..."

    def line(self) -> str:
        """The line ``main`` prints (and escapes: a message may quote what a file held)."""
        where = f"toolpolicy {self.command}" if self.command else "toolpolicy"
        return f"{where}: {self}"
