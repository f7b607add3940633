"""dsh-fs-local: ``LocalFileSystem``, the host-filesystem backend of dsh-fs.

Realpath identity, strict UTF-8 reads that never block on special files,
one-``scandir`` listings and atomic, crash-safe, cross-process-locked writes.
"""

from ._local import LocalFileSystem
from ._publish import new_file_mode, process_umask

__version__ = "0.2.0"

__all__ = ["LocalFileSystem", "new_file_mode", "process_umask"]
