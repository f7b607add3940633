"""dsh-fs-pydantic-ai: the dsh-fs tools as one pydantic-ai toolset.

::

    toolfs = ToolFs.from_entry_points(backend="local", cwd="/abs/project")
    agent = Agent("anthropic:claude-sonnet-4-5", toolsets=[DshFsToolset(toolfs)])

:class:`DshFsToolset` offers every tool of the :class:`~dsh_tool_fs.ToolFs`
(the installed tool distributions, or the subset it was built with), with
their JSON Schemas, their guidance as the toolset's instructions, and one
:class:`~dsh_tool_fs.Session` per conversation. Every call goes through
:meth:`ToolFs.execute <dsh_tool_fs.ToolFs.execute>`, which validates the
arguments with the tool's pydantic model; whatever it answers — a refusal
included — is the tool's return value, so the model reads the exact
``Error: …`` text and the run goes on.
"""

from ._toolset import DshFsToolset, SessionChoice

__version__ = "0.2.0"

__all__ = ["DshFsToolset", "SessionChoice"]
