"""dsh-fs-langchain: the dsh-fs tools for LangChain, and a deepagents backend.

::

    toolfs = ToolFs.from_entry_points(backend="local", cwd="/abs/project")
    tools = dsh_fs_tools(toolfs)                 # StructuredTools, one session
    agent = create_agent(model, tools=tools, system_prompt=toolfs.instructions)

:func:`dsh_fs_tools` gives every tool of the :class:`~dsh_tool_fs.ToolFs`
(the installed ones, or the subset it was built with) as a
:class:`DshFsTool`, a ``StructuredTool`` whose ``args_schema`` is the
tool's pydantic model, bound to one conversation's
:class:`~dsh_tool_fs.Session`; a failed call is a ``ToolMessage`` with
``status="error"`` and the host's exact ``Error: …`` text, and the agent
goes on. :class:`dsh_fs_langchain.deepagents.DshFsBackend` (the
``deepagents`` extra) is deepagents' ``BackendProtocol`` over any dsh-fs
backend.
"""

from ._tools import DshFsTool, dsh_fs_tools

__version__ = "0.2.0"

__all__ = ["DshFsTool", "dsh_fs_tools"]
