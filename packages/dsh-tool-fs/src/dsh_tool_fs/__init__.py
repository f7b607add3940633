"""dsh-tool-fs: the model-facing ``list``, ``read``, ``write`` and ``edit`` tools.

``ToolFs`` runs the tools over any :class:`dsh_fs.FileSystem`, with plugins
(such as the ``policy`` plugin) contributing through the ``fs_*`` hooks::

    toolfs = ToolFs.from_entry_points(backend="local", plugins=("policy",))
    session = Session(cwd="/abs/workspace")
    result = await toolfs.execute("read", {"file_path": "a.txt"}, session=session)
"""

from .arguments import ToolArgumentError
from .config import ToolFsConfig
from .definitions import PromptSection, ToolDefinition
from .formats import (
    instructions,
    to_anthropic_tools,
    to_mcp_tools,
    to_openai_tools,
    to_raw_tools,
    to_tools,
    tools_document,
)
from .host import Session, ToolCall, ToolError, ToolFs, ToolResult

__version__ = "0.2.0"

__all__ = [
    "PromptSection",
    "Session",
    "ToolArgumentError",
    "ToolCall",
    "ToolDefinition",
    "ToolError",
    "ToolFs",
    "ToolFsConfig",
    "ToolResult",
    "instructions",
    "to_anthropic_tools",
    "to_mcp_tools",
    "to_openai_tools",
    "to_raw_tools",
    "to_tools",
    "tools_document",
]
