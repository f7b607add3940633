"""dsh-tool-fs-editor: Claude's text editor and memory tools for :class:`dsh_tool_fs.ToolFs`.

Claude models are trained on two client-side tools whose schemas live in the
model: the text editor (``text_editor_20250728``, tool name
``str_replace_based_edit_tool``) and the memory tool (``memory_20250818``).
Installed next to ``dsh-tool-fs``, both are offered by the host and every
``dsh-fs`` command through the ``dsh_tool_fs.tools`` entry points; from
Python::

    toolfs = ToolFs.from_entry_points(backend="local")                # every installed tool
    toolfs = ToolFs(fs, tools=(*TOOLS, TEXT_EDITOR, MEMORY),
                    tool_options={"memory_dir": "/abs/workspace/.memories"})

The ``anthropic`` wire format offers them as Anthropic's built-in tool types;
every other format as function tools. They run through the
:class:`dsh_fs.FileSystem` seam: contained to the workspace, atomic, and under
the policy read-before-edit. ``dsh_tool_fs_editor.anthropic_sdk`` (extra
``anthropic``) offers the ``anthropic`` SDK's abstract memory tool backed by
any dsh-fs backend.
"""

from .editor_tool import TEXT_EDITOR, TextEditorArgs
from .memory_tool import DEFAULT_MEMORY_DIR, MEMORIES, MEMORY, MemoryArgs

__version__ = "0.2.0"

__all__ = [
    "DEFAULT_MEMORY_DIR",
    "MEMORIES",
    "MEMORY",
    "TEXT_EDITOR",
    "MemoryArgs",
    "TextEditorArgs",
]
