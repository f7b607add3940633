"""dsh-fs: the filesystem seam of the dsh tool stack.

``FileSystem`` is the abstract backend (async primitives), the value
types cross it, ``FsError`` is the one failure type, and the ``fs_*`` hook
specs are the events a tool host and its plugins share.
"""

from ._errors import FsBatchError, FsError, FsErrorCode
from ._filesystem import FileSystem
from ._types import (
    AtVersion,
    CreateIfAbsent,
    DeleteChange,
    EditGuard,
    EntryGuard,
    EntryType,
    FsChange,
    FsDeleteOutcome,
    FsDirEntry,
    FsEditOutcome,
    FsEditRequest,
    FsInfo,
    FsMoveOutcome,
    FsPathInfo,
    FsTarget,
    FsWriteOutcome,
    MoveGuard,
    NotAFile,
    PathType,
    ReplaceIfVersion,
    WriteChange,
    WriteIntent,
)
from .entry_points import (
    BACKENDS_GROUP,
    PLUGINS_GROUP,
    EntryPointNotFound,
    WorkspaceOptionsUnsupported,
    installed_names,
    load_backend,
    load_backend_factory,
    load_plugin,
)
from .held import HeldDirectory
from .hookspecs import FsHookSpecs, hookimpl, hookspec, make_plugin_manager

__version__ = "0.2.0"

__all__ = [
    "BACKENDS_GROUP",
    "PLUGINS_GROUP",
    "AtVersion",
    "CreateIfAbsent",
    "DeleteChange",
    "EditGuard",
    "EntryGuard",
    "EntryPointNotFound",
    "EntryType",
    "FileSystem",
    "FsBatchError",
    "FsChange",
    "FsDeleteOutcome",
    "FsDirEntry",
    "FsEditOutcome",
    "FsEditRequest",
    "FsError",
    "FsErrorCode",
    "FsHookSpecs",
    "FsInfo",
    "FsMoveOutcome",
    "FsPathInfo",
    "FsTarget",
    "FsWriteOutcome",
    "HeldDirectory",
    "MoveGuard",
    "NotAFile",
    "PathType",
    "ReplaceIfVersion",
    "WorkspaceOptionsUnsupported",
    "WriteChange",
    "WriteIntent",
    "hookimpl",
    "hookspec",
    "installed_names",
    "load_backend",
    "load_backend_factory",
    "load_plugin",
    "make_plugin_manager",
]
