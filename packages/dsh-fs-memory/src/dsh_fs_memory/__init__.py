"""dsh-fs-memory: a complete in-memory ``dsh_fs.FileSystem`` for tests and sandboxes.

``MemoryFileSystem`` behaves like the local backend (same messages, codes and
BOM rule) over a tree held in a dict; ``MemoryScratch`` runs the conformance
kit (``dsh_fs.testing``) against it.
"""

from ._memory import MAX_SYMLINK_HOPS, STREAM_CHUNK_BYTES, MemoryFileSystem
from ._scratch import MemoryScratch

__version__ = "0.2.0"

__all__ = ["MAX_SYMLINK_HOPS", "STREAM_CHUNK_BYTES", "MemoryFileSystem", "MemoryScratch"]
