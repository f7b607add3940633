"""dsh-tool-fs-search: the ``glob`` and ``grep`` tools for :class:`dsh_tool_fs.ToolFs`.

Installed next to ``dsh-tool-fs``, the two tools are offered by the host and
every ``dsh-fs`` command through the ``dsh_tool_fs.tools`` entry points
``glob`` and ``grep``; from Python::

    toolfs = ToolFs.from_entry_points(backend="local")            # every installed tool
    toolfs = ToolFs(fs, tools=(*TOOLS, GLOB, GREP))                  # or by spec

They walk and read through the :class:`dsh_fs.FileSystem` seam, so every
backend works and the backend's workspace containment holds; git's ignore
rules come from ``pathspec``, regular expressions are RE2 (``google-re2``).
See ``docs/using/search.md`` for the semantics.
"""

from .glob_tool import GLOB, GlobArgs
from .grep_tool import GREP, GrepArgs

__version__ = "0.2.0"

__all__ = ["GLOB", "GREP", "GlobArgs", "GrepArgs"]
