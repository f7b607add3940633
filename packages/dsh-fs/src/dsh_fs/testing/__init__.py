"""The backend conformance kit: the contract of ``dsh_fs.FileSystem`` as pytest tests.

A backend runs the whole kit with one fixture::

    from dsh_fs.testing import FileSystemContract

    class TestMyBackend(FileSystemContract):
        @pytest.fixture
        def scratch(self, tmp_path): return MyScratch(tmp_path)

``scratch`` returns a :class:`Scratch`: the backend under test plus
out-of-band access to its tree, which the kit uses to set up scenarios and to
inspect the exact stored bytes.

The tests run under the ``anyio_backend`` fixture of the project that runs
them. anyio's own default differs between anyio releases (4.5 runs trio even
when it is not installed, recent releases every installed backend), so say
which; to run the kit on both anyio backends (``trio`` installed), add to
``conftest.py``::

    @pytest.fixture(params=["asyncio", "trio"])
    def anyio_backend(request): return request.param
"""

from . import _assert_rewrite  # first: before the contract modules are imported
from ._absence_contract import AbsenceContract
from ._base import ContractBase, requires
from ._batch_contract import BatchContract
from ._cancellation_contract import CancellationContract
from ._concurrency_contract import SerializationContract
from ._containment_contract import ContainmentContract, build_containment_tree
from ._contract import FileSystemContract
from ._delete_contract import DeleteContract
from ._delete_move_contract import DeleteMoveContract
from ._disk import DiskTree
from ._edit_contract import EditContract
from ._entry_containment_contract import EntryContainmentContract
from ._entry_races_contract import EntryRacesContract
from ._forwarding import ForwardingFileSystem
from ._list_contract import ListContract, build_listing_tree
from ._move_contract import MoveContract
from ._paths_contract import ResolveContract, StatContract
from ._read_contract import ReadContract
from ._scratch import Scratch
from ._write_contract import WriteContract

del _assert_rewrite

__all__ = [
    "AbsenceContract",
    "BatchContract",
    "CancellationContract",
    "ContainmentContract",
    "ContractBase",
    "DeleteContract",
    "DeleteMoveContract",
    "DiskTree",
    "EditContract",
    "EntryContainmentContract",
    "EntryRacesContract",
    "FileSystemContract",
    "ForwardingFileSystem",
    "ListContract",
    "MoveContract",
    "ReadContract",
    "ResolveContract",
    "Scratch",
    "SerializationContract",
    "StatContract",
    "WriteContract",
    "build_containment_tree",
    "build_listing_tree",
    "requires",
]
