"""The seam: the async primitives every storage backend implements.

Eight are abstract; ``delete``, ``move`` and ``apply_changes`` (v5) have
defaults so that an older third-party backend keeps working: ``delete`` and
``move`` refuse until the backend implements them, ``apply_changes`` is
built on ``write_text`` and ``delete``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Sequence
from functools import partial
from typing import Final

import anyio

from ._errors import FsBatchError, FsError, FsErrorCode
from ._types import (
    DeleteChange,
    EditGuard,
    EntryGuard,
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
    WriteChange,
    WriteIntent,
)
from .held import HeldDirectory
from .overlap import in_order
from .preconditions import (
    check_delete,
    check_write,
    not_empty,
    over_read_limit,
    workspace_root,
)
from .streaming import close_stream
from .workspace import Workspace

READ_TEXTS_AT_ONCE: Final = 4
"""How many files the default :meth:`FileSystem.read_texts` reads at once."""


class FileSystem(ABC):
    """A storage backend, seen through eight ``async`` primitives.

    Rules every backend keeps (``dsh_fs.testing`` checks each one):

    1. **Atomic mutations.** A reader never sees a partly written file; a
       failed or cancelled write leaves the previous content intact and no
       temporary, backup or lock file behind.
    2. **Per-target serialization.** ``write_text`` and ``edit_text`` on one
       target run one at a time, in arrival order. Of two guarded mutations
       from the same version exactly one succeeds; the other fails
       ``FS_STALE_VERSION``.
    3. **Guard before match.** A stale guarded edit fails ``FS_STALE_VERSION``
       even when its ``old_string`` no longer matches.
    4. **The version moves on every change**, and a mutation returns the
       version a fresh ``stat`` would report.
    5. **Cancellation** (anyio cancel scopes) works at every await point; a
       cancelled mutation leaves the target unchanged and the cancellation
       exception propagates.
    6. **Text only.** Binary or non-UTF-8 content fails ``FS_NOT_TEXT``.

    Every failure is an :class:`~dsh_fs.FsError`; raw ``OSError`` and friends
    never escape. Backends know nothing about hooks or the model.
    """

    @property
    def workspace(self) -> Workspace | None:
        """The roots this backend is contained to, or ``None`` when it keeps none.

        Optional (the default is ``None``). A contained backend returns its
        :class:`~dsh_fs.workspace.Workspace`, so that a host can refuse a write
        or edit with ``read-only workspace`` before it asks the intent hooks: a
        workspace refusal comes before every other answer. Like ``resolve``'s
        refusal this is an early answer; the primitives still enforce the rule
        at their system calls.
        """
        return None

    async def hold_directory(self, target: FsTarget, *, verb: str) -> HeldDirectory | None:
        """The directory ``target`` held open for a native tool, or ``None`` (the default).

        Optional. A backend on the host's disk may return a
        :class:`~dsh_fs.held.HeldDirectory`: a readable descriptor of the
        directory, reached beneath the workspace by the backend's own
        containment mechanism (never a path checked first and used afterwards),
        and descriptors of every root it may read, so that a native program can
        be confined to them by the kernel (the search tools' ``rg`` fast path
        does this). The caller owns and closes it. A backend without one — or
        without containment to offer — returns ``None`` and callers go through
        the eight primitives. Failures are ``FsError`` with ``verb``, as
        ``list_dir``'s are (outside the workspace, not found, not a directory).
        """
        return None

    async def read_texts(
        self, targets: Sequence[FsTarget], *, max_bytes: int | None = None
    ) -> list[str | FsError]:
        """``read_text`` of each of ``targets``: its text or the ``FsError`` it raised, in order.

        Optional. ``max_bytes`` bounds the text the call holds: a file that
        would take the texts together past it comes back as ``FS_TOO_LARGE``
        (``cannot read "<p>": more text than this read may hold``) instead,
        for the caller to stream — a file may have grown since its size was
        listed. When all the files together hold at most ``max_bytes`` bytes,
        none is refused so.

        The default reads up to :data:`READ_TEXTS_AT_ONCE` of them at once (a
        network backend's requests overlap), with ``read_text``, or with
        ``stream_text`` when ``max_bytes`` is given. A backend whose every read
        costs a fixed overhead — the local backend's hop to a worker thread —
        may read them all in one go: a search reads many small files. Each file
        is read exactly as ``read_text`` reads it. Cancellation, and any
        exception other than ``FsError``, propagates.
        """
        read = self.read_text if max_bytes is None else _Budget(self, max_bytes).read
        texts: list[str | FsError] = []
        for start in range(0, len(targets), READ_TEXTS_AT_ONCE):
            batch = targets[start : start + READ_TEXTS_AT_ONCE]
            texts += await in_order([partial(read, target) for target in batch])
        return texts

    async def connect(self) -> None:  # noqa: B027 (optional: a no-op by default)
        """Reach the storage now, so that a bad address or workspace fails here.

        Optional (the default does nothing): a backend that reaches its
        storage lazily, over a network, opens its connection and checks its
        roots, raising ``ValueError`` for a root that is not a directory and
        ``FsError`` (``FS_IO_ERROR``) for a storage it cannot reach. A host
        calls it at start-up; the primitives connect by themselves anyway.
        """

    async def aclose(self) -> None:  # noqa: B027 (optional: a no-op by default)
        """Release what the backend holds open (a connection). Optional; the default does
        nothing, and a later call may reopen what was closed."""

    @abstractmethod
    async def resolve(self, path: str, *, cwd: str | None = None) -> FsTarget:
        """Resolve ``path`` (relative to ``cwd``, else the backend's default).

        An absolute path ignores both. An empty or whitespace-only path fails
        ``FS_NOT_FOUND`` ``file_path must be a non-empty string``. The path
        need not exist: the key of a missing file is stable across its creation.
        """

    @abstractmethod
    async def stat(self, target: FsTarget) -> FsInfo | None:
        """Version, type and size of ``target`` (symlinks followed), or ``None`` if absent.

        A parent segment that is a file also gives ``None``. Never reads content.
        """

    @abstractmethod
    async def lstat(self, path: str, *, cwd: str | None = None) -> FsPathInfo | None:
        """Like ``stat`` for a path, without following a final symlink."""

    @abstractmethod
    async def read_text(self, target: FsTarget) -> str:
        """The whole regular UTF-8 file, decoded byte for byte (a leading BOM omitted).

        Line endings are not normalized.
        """

    @abstractmethod
    def stream_text(self, target: FsTarget) -> AsyncIterator[str]:
        """The same text as ``read_text``, in decoded chunks of bounded size.

        Memory stays bounded by the chunk size whatever the file size; a
        multi-byte character split across chunks decodes correctly. Errors
        (absent, not a regular file, binary, invalid UTF-8) are raised from
        the iteration, possibly after some chunks were produced.
        """

    @abstractmethod
    async def list_dir(self, target: FsTarget, *, stat: bool = False) -> list[FsDirEntry]:
        """The direct children of one directory, in no particular order.

        Never opens a child. With ``stat=False`` entries carry name, type and
        target; with ``stat=True`` also version and, for files, size.
        """

    @abstractmethod
    async def write_text(
        self, target: FsTarget, content: str, expected: WriteIntent | None = None
    ) -> FsWriteOutcome:
        """Atomically create or replace ``target`` with ``content`` (UTF-8).

        ``expected`` is ``None`` (unconditional), ``CreateIfAbsent()`` or
        ``ReplaceIfVersion(v)``. Missing parent directories are created.
        """

    @abstractmethod
    async def edit_text(
        self, target: FsTarget, edit: FsEditRequest, expected: EditGuard | None = None
    ) -> FsEditOutcome:
        """Replace ``edit.old_string`` literally, inside one critical section.

        Matching is on LF-normalized text; the file's dominant line ending and
        BOM are restored on write-back (see :func:`dsh_fs.text.apply_edit`).
        """

    # -- removing and moving (v5) ---------------------------------------------

    async def delete(
        self, target: FsTarget, *, recursive: bool = False, expected: EntryGuard | None = None
    ) -> FsDeleteOutcome:
        """Remove the entry at ``target``: a file, a symlink (the link itself), an empty
        directory, or with ``recursive=True`` a whole directory tree.

        ``expected`` is ``None`` (unguarded), ``AtVersion(v)`` or ``NotAFile()``
        (:func:`dsh_fs.preconditions.check_delete` gives the order and the
        messages; verb ``delete``). A non-empty directory without
        ``recursive`` fails ``FS_NOT_EMPTY`` and is left untouched. A tree
        vanishes at once for every observer: it is renamed aside to a
        temporary name in its own parent, then deleted; a crash leaves only
        that temporary, which a later mutation's sweep removes. A workspace
        root is never removed (``FS_PERMISSION_DENIED``). Serialized with
        ``write_text`` and ``edit_text`` of the same target (the lock of
        ``target.target_key``). The entry is the one at
        ``target.display_path``, its final symlink not followed (as
        ``lstat`` finds it): a link is removed as itself.

        The default refuses (``FS_IO_ERROR``): a backend that can remove
        entries overrides it.
        """
        raise FsError.cannot(
            "delete", target.display_path, "not supported by this backend", FsErrorCode.FS_IO_ERROR
        )

    async def move(
        self,
        source: FsTarget,
        destination: FsTarget,
        *,
        replace: bool = False,
        expected: MoveGuard | None = None,
    ) -> FsMoveOutcome:
        """Move the entry at ``source`` (a file, a symlink, a directory) to ``destination``
        with one atomic rename; missing parents of ``destination`` are created.

        An existing destination is replaced only with ``replace=True``
        (otherwise ``FS_ALREADY_EXISTS`` ``cannot move to "<p>": already
        exists``), and a directory never replaces a non-empty directory.
        ``expected`` guards each side (:class:`~dsh_fs.MoveGuard`; messages in
        :mod:`dsh_fs.preconditions`, verbs ``move`` and ``move to``). Across
        filesystems a regular file is copied beside the destination, synced,
        published, and only then is the source removed; a directory is
        refused. Both targets' locks are taken in one fixed order
        (:meth:`dsh_fs.locks.TargetLocks.hold_all`). After any failure,
        cancellation or crash each path is as before or as after. Like
        :meth:`delete`, each side is the entry at its display path, a final
        symlink not followed: a link moves, or is replaced, as itself.

        The default refuses (``FS_IO_ERROR``): a backend that can move
        entries overrides it.
        """
        raise FsError.cannot(
            "move", source.display_path, "not supported by this backend", FsErrorCode.FS_IO_ERROR
        )

    async def apply_changes(
        self, changes: Sequence[FsChange]
    ) -> list[FsWriteOutcome | FsDeleteOutcome]:
        """Apply several writes and removals of distinct targets, all or nothing.

        Every change's guard is checked before anything is published; if one
        fails, that ``FsError`` is raised and nothing changed. Then each
        change is published in order, atomically, as ``write_text`` or
        ``delete`` would. A failure after the first publish (a full disk)
        raises :class:`~dsh_fs.FsBatchError` whose ``applied`` counts the
        changes that were published. Once publishing has begun the caller's
        cancellation waits for it to end (the batch is never left half done
        by a cancel).

        A backend that can hold every target's lock at once overrides this
        default (taking the locks in one fixed order, so two batches cannot
        deadlock, and checking the guards again under them); the default
        checks the workspace, the guards (with ``lstat`` and ``stat``) and
        that a directory removed without ``recursive`` is empty (``list_dir``),
        and then publishes with each change's own guard, so a change made in
        between is still never overwritten — it fails that change, with the
        ones before it applied.
        Two changes of one target raise ``ValueError``.
        """
        keys = [change.target.target_key for change in changes]
        if len(set(keys)) != len(keys):
            raise ValueError("apply_changes: two changes of one target")
        for change in changes:
            await self._check_change(change)
        outcomes: list[FsWriteOutcome | FsDeleteOutcome] = []
        with anyio.CancelScope(shield=True):
            for change in changes:
                try:
                    outcomes.append(await self._publish_change(change))
                except FsError as exc:
                    if not outcomes:
                        raise
                    raise FsBatchError(exc.message, exc.code, len(outcomes)) from exc
        return outcomes

    async def _check_change(self, change: FsChange) -> None:
        """Raise what ``change`` would be refused for against the target as it is now: the
        workspace (outside, read-only, a root), its guard, and a non-empty directory
        removed without ``recursive``."""
        target = change.target
        display = target.display_path
        verb = "write" if isinstance(change, WriteChange) else "delete"
        workspace = self.workspace
        if workspace is not None:
            workspace.check(verb, display, target.target_key, write=True)
            if verb == "delete" and target.target_key in (
                *(workspace.roots or ()),
                *workspace.read_only_roots,
            ):
                raise workspace_root(verb, display)
        if isinstance(change, WriteChange):
            info = await self.stat(target)
            current = None if info is None else (info.type, info.version)
            check_write(display, current, change.expected)
            return
        link = await self.lstat(display)
        if link is None:
            check_delete(display, None, change.expected)
            return
        info = await self.stat(target)
        check_delete(display, (link.type, None if info is None else info.version), change.expected)
        if link.type == "directory" and not change.recursive and await self.list_dir(target):
            raise not_empty(verb, display)

    async def _publish_change(self, change: FsChange) -> FsWriteOutcome | FsDeleteOutcome:
        if isinstance(change, DeleteChange):
            return await self.delete(
                change.target, recursive=change.recursive, expected=change.expected
            )
        return await self.write_text(change.target, change.content, change.expected)


class _Budget:
    """The bytes one bounded ``read_texts`` may still hold, shared by its reads."""

    def __init__(self, fs: FileSystem, max_bytes: int) -> None:
        self._fs = fs
        self._left = max_bytes

    async def read(self, target: FsTarget) -> str:
        """The text of ``target`` through ``stream_text``, refused (``FS_TOO_LARGE``) as soon as
        it passes the bytes left: no more than those and one chunk is ever held."""
        parts: list[str] = []
        taken = 0
        chunks = self._fs.stream_text(target)
        try:
            async for chunk in chunks:
                size = len(chunk.encode())
                if size > self._left:
                    raise over_read_limit("read", target.display_path)
                self._left -= size
                taken += size
                parts.append(chunk)
        except BaseException:
            self._left += taken  # what this file held is dropped
            raise
        finally:
            await close_stream(chunks)
        return "".join(parts)
