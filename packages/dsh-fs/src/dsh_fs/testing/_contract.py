"""``FileSystemContract``: the whole conformance kit as one inheritable test class."""

from __future__ import annotations

from ._absence_contract import AbsenceContract
from ._cancellation_contract import CancellationContract
from ._concurrency_contract import SerializationContract
from ._containment_contract import ContainmentContract
from ._delete_move_contract import DeleteMoveContract
from ._edit_contract import EditContract
from ._list_contract import ListContract
from ._paths_contract import ResolveContract, StatContract
from ._read_contract import ReadContract
from ._write_contract import WriteContract


class FileSystemContract(
    ResolveContract,
    StatContract,
    ReadContract,
    ListContract,
    WriteContract,
    EditContract,
    AbsenceContract,
    SerializationContract,
    CancellationContract,
    ContainmentContract,
    DeleteMoveContract,
):
    """Every rule of :class:`~dsh_fs.FileSystem`, every message a backend words
    itself (not the host's), and workspace containment.

    Inherit it in a class whose name starts with ``Test`` and give it one
    fixture, ``scratch``, returning a fresh :class:`~dsh_fs.testing.Scratch`::

        from dsh_fs.testing import FileSystemContract

        class TestMyBackend(FileSystemContract):
            @pytest.fixture
            def scratch(self, tmp_path): return MyScratch(tmp_path)

    The tests are ``async`` and run under anyio's pytest plugin, on the
    ``anyio_backend`` fixture of the suite that runs them (see
    :class:`ContractBase` for running on both anyio backends). A single
    concern can be run by inheriting one of the parts instead
    (``ResolveContract``, ``EditContract``, ``ContainmentContract``,
    ``DeleteMoveContract`` …). A
    backend without symlinks, special files or hard links says so with the
    capability flags (``supports_symlinks = False`` …); the tests that need
    one are skipped, naming the flag.
    """
