"""``LocalFileSystem`` runs the whole conformance kit of ``dsh_fs.testing``.

The ``scratch`` fixture is the public ``dsh_fs_local.testing.LocalScratch``
over ``tmp_path``, so this file runs as it is against an installed wheel (the
release check does). The kit runs twice: with the resolution the
kernel offers (``openat2`` where it has it), and with the component walk
alone, which is what a kernel without ``openat2`` gets. Its remove/move part
(``DeleteMoveContract``, inside ``FileSystemContract``) runs a third time
with ``roots=None``, but for its containment cases.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_fs.testing import (
    BatchContract,
    DeleteContract,
    EntryRacesContract,
    FileSystemContract,
    MoveContract,
    Scratch,
)
from dsh_fs_local import LocalFileSystem, _beneath
from dsh_fs_local.testing import LocalScratch


@pytest.fixture
def scratch(tmp_path: Path) -> LocalScratch:
    return LocalScratch(tmp_path)


class TestLocalFileSystemContract(FileSystemContract):
    """Every rule of SPEC 2.3 and every host-independent message of SPEC 3.1."""


class TestLocalFileSystemContractWalkOnly(FileSystemContract):
    """The same contract with every lookup made by the component walk (no ``openat2``)."""

    @pytest.fixture(autouse=True)
    def walk_only(self, monkeypatch: pytest.MonkeyPatch) -> None:
        # Autouse: set before the ``scratch`` fixture builds its backend.
        monkeypatch.setattr(_beneath, "default_mode", lambda: "walk")

    def test_the_backend_under_test_walks(self, scratch: Scratch) -> None:
        reach = scratch.fs._reach  # type: ignore[attr-defined]
        assert isinstance(reach, _beneath.Beneath) and reach.mode == "walk"


class _ScratchWithoutRoots(LocalScratch):
    """The kit's tree with a backend that has no workspace (``roots=None``)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self._fs = LocalFileSystem(cwd=self.root, roots=None)


class TestLocalDeleteMoveWithoutRoots(
    DeleteContract, MoveContract, EntryRacesContract, BatchContract
):
    """Removing and moving with ``roots=None``: the same system calls through each parent's
    descriptor, the parent found by path (the containment part needs roots)."""

    @pytest.fixture
    def scratch(self, tmp_path: Path) -> LocalScratch:
        return _ScratchWithoutRoots(tmp_path)

    @pytest.mark.skip(reason="roots=None: there is no workspace root to keep")
    async def test_the_workspace_root_is_never_deleted(
        self, scratch: Scratch, recursive: bool
    ) -> None: ...

    @pytest.mark.skip(reason="roots=None: there is no workspace root to keep")
    async def test_the_workspace_root_is_never_moved_or_replaced(
        self, scratch: Scratch
    ) -> None: ...
