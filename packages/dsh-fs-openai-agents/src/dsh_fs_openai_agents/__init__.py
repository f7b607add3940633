"""dsh-fs-openai-agents: the dsh-fs tools for the OpenAI Agents SDK.

::

    toolfs = ToolFs.from_entry_points(backend="local", cwd="/abs/project")
    agent = Agent(name="coder", instructions=toolfs.instructions,
                  tools=dsh_fs_function_tools(toolfs))

:func:`dsh_fs_function_tools` gives every tool of the
:class:`~dsh_tool_fs.ToolFs` (the installed ones, or the subset it was built
with) as a ``FunctionTool`` with its JSON Schema, bound to one conversation's
:class:`~dsh_tool_fs.Session`; every call's output is the host's exact text,
``Error: …`` included, and the run goes on. :class:`DshFsEditor` is the SDK's
``ApplyPatchEditor`` on the ``apply_patch`` engine of ``dsh-tool-fs-patch``
(all or nothing, contained, bytes kept), for its built-in apply-patch tool.
"""

from ._editor import DshFsEditor, apply_patch_tool
from ._session import SessionChoice
from ._tools import dsh_fs_function_tools, strict_compatible

__version__ = "0.2.0"

__all__ = [
    "DshFsEditor",
    "SessionChoice",
    "apply_patch_tool",
    "dsh_fs_function_tools",
    "strict_compatible",
]
