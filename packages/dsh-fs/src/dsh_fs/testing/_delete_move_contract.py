"""``DeleteMoveContract``: removing and moving entries, as one inheritable test class."""

from __future__ import annotations

from ._batch_contract import BatchContract
from ._delete_contract import DeleteContract
from ._entry_containment_contract import EntryContainmentContract
from ._entry_races_contract import EntryRacesContract
from ._move_contract import MoveContract


class DeleteMoveContract(
    DeleteContract, MoveContract, EntryContainmentContract, EntryRacesContract, BatchContract
):
    """``delete``, ``move`` and ``apply_changes``: every message and code, the guards,
    trees, symlinks, type clashes, containment, serialization with writes and edits,
    cancellation, batches, and that no temporary is left behind.

    Part of :class:`~dsh_fs.testing.FileSystemContract`; inherit it alone (or
    one of its parts: ``DeleteContract``, ``MoveContract``,
    ``EntryContainmentContract``, ``EntryRacesContract``, ``BatchContract``)
    to run only these. A backend that keeps the seam's refusing defaults of
    ``delete`` and ``move`` fails it.
    """
