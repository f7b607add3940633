"""dsh-tool-fs: the model-facing ``list``, ``read``, ``write`` and ``edit`` tools.

``ToolFs`` runs the tools over any :class:`dsh_fs.FileSystem`, with plugins
(such as the ``policy`` plugin) contributing through the ``fs_*`` hooks::

    toolfs = ToolFs.from_entry_points(backend="local", plugins=("policy",))
    session = Session(cwd="/abs/workspace")
    result = await toolfs.execute("read", {"file_path": "a.txt"}, session=session)

Each tool is one :class:`ToolSpec` (:mod:`dsh_tool_fs.tools`): its argument
model (a pydantic model: schema and validation), description, guidance, MCP
metadata, body and renderer. Other distributions add tools through the
``dsh_tool_fs.tools`` entry points (:func:`installed_tools`).
"""

from .arguments import (
    FilePath,
    Integer,
    NonBlank,
    Setting,
    ToolArgumentError,
    ToolArguments,
    without_default,
)
from .config import ToolFsConfig, ToolFsConfigError
from .definitions import PromptSection, ToolAnnotations, ToolDefinition
from .execution import Execution, ProgressSink
from .formats import (
    instructions,
    to_anthropic_tools,
    to_mcp_tools,
    to_openai_responses_tools,
    to_openai_tools,
    to_raw_tools,
    to_tools,
    tools_document,
)
from .host import Session, ToolCall, ToolError, ToolFs, ToolResult
from .spec import ToolOutput, ToolSpec
from .tools import TOOLS, TOOLS_GROUP, UnknownToolError, installed_tools

__version__ = "0.2.0"

__all__ = [
    "TOOLS",
    "TOOLS_GROUP",
    "Execution",
    "FilePath",
    "Integer",
    "NonBlank",
    "ProgressSink",
    "PromptSection",
    "Session",
    "Setting",
    "ToolAnnotations",
    "ToolArgumentError",
    "ToolArguments",
    "ToolCall",
    "ToolDefinition",
    "ToolError",
    "ToolFs",
    "ToolFsConfig",
    "ToolFsConfigError",
    "ToolOutput",
    "ToolResult",
    "ToolSpec",
    "UnknownToolError",
    "installed_tools",
    "instructions",
    "to_anthropic_tools",
    "to_mcp_tools",
    "to_openai_responses_tools",
    "to_openai_tools",
    "to_raw_tools",
    "to_tools",
    "tools_document",
    "without_default",
]
