"""``LocalFileSystem`` runs the whole conformance kit of ``dsh_fs.testing``.

The ``scratch`` fixture (a ``LocalScratch`` over ``tmp_path``) comes from
this directory's ``conftest.py``.
"""

from __future__ import annotations

from dsh_fs.testing import FileSystemContract


class TestLocalFileSystemContract(FileSystemContract):
    """Every rule of SPEC 2.3 and every host-independent message of SPEC 3.1."""
