"""dsh-tool-fs-patch: the ``apply_patch`` tool for :class:`dsh_tool_fs.ToolFs`.

OpenAI's patch dialect (V4A, as Codex's parser accepts it) applied on the
dsh guarantees: all or nothing, every path contained, the policy's
read-before-write, the file's bytes kept. Installed next to ``dsh-tool-fs``
it is offered through the ``dsh_tool_fs.tools`` entry point
``apply_patch``; from Python::

    toolfs = ToolFs.from_entry_points(backend="local")             # every installed tool
    toolfs = ToolFs(fs, plugins=[FsPolicy()], tools=(*TOOLS, APPLY_PATCH))

One file operation at a time (the Responses API's built-in tool, an Agents
SDK ``ApplyPatchEditor``): :func:`apply_file_operation` and
:func:`execute_apply_patch_call`. The pure parts are public too:
:func:`parse_patch` and :func:`apply_chunks`.
"""

from .engine import FileResult, Patched, apply_operations
from .grammar import (
    AddFile,
    Chunk,
    DeleteFile,
    Operation,
    PatchSyntaxError,
    UpdateFile,
    parse_patch,
)
from .locate import LocateError, apply_chunks
from .responses import FileOperation, apply_file_operation, execute_apply_patch_call
from .tool import APPLY_PATCH, ApplyPatchArgs

__version__ = "0.2.0"

__all__ = [
    "APPLY_PATCH",
    "AddFile",
    "ApplyPatchArgs",
    "Chunk",
    "DeleteFile",
    "FileOperation",
    "FileResult",
    "LocateError",
    "Operation",
    "PatchSyntaxError",
    "Patched",
    "UpdateFile",
    "apply_chunks",
    "apply_file_operation",
    "apply_operations",
    "execute_apply_patch_call",
    "parse_patch",
]
