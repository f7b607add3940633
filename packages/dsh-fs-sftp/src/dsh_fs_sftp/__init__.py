"""dsh-fs-sftp: a dsh-fs workspace on another machine, over SSH/SFTP.

``SftpFileSystem`` implements the primitives of ``dsh_fs.FileSystem`` (the
eight of reading and writing, and delete, move and apply_changes) on a
remote directory through asyncssh, with the contract of the local backend:
the same messages, atomic and durable writes, versions that move on every
change (also within one second), serialization across clients, and
workspace containment checked on the server. It runs under asyncio and trio.
"""

from ._sftp import SftpFileSystem, parse_url, sftp_backend

__version__ = "0.2.0"

__all__ = ["SftpFileSystem", "parse_url", "sftp_backend"]
