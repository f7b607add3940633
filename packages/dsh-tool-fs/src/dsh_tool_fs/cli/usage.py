"""Exit statuses, and the usage errors a command reports as one stderr line with status 2."""

from __future__ import annotations

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """Bad usage found after argument parsing: reported on stderr, exit code 2.

    Every usage error of every command has one form, ``dsh-fs: <message>``
    (argparse's own errors too: :class:`~.parser.CommandParser`).
    """

    def line(self, command: str | None = None) -> str:
        """The one stderr line reporting it."""
        return f"dsh-fs: {self}"


class WorkspaceError(UsageError):
    """A workspace option the command cannot start with: ``dsh-fs: --cwd "<dir>": …``."""
