"""FsPolicy's answers for removing and moving entries, and what the memory backend does
with them: a file is removed or moved (or overwritten by a move) only at the version its
owner observed; a directory, a link or nothing needs no observation."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pluggy
import pytest
from dsh_fs import (
    AtVersion,
    CreateIfAbsent,
    FsErrorCode,
    FsTarget,
    MoveGuard,
    NotAFile,
    make_plugin_manager,
)
from dsh_fs.testing._expect import expect_fs_error
from dsh_fs_memory import MemoryFileSystem
from dsh_fs_policy import FsPolicy

pytestmark = pytest.mark.anyio


class Owner:
    """A stand-in for a tool host's session: hashable by identity, weakly referenceable."""


def actor_of(owner: Any) -> SimpleNamespace:
    return SimpleNamespace(session=owner, tool="test")


class Stack:
    """The policy on a plugin manager over ``/w`` with ``a.txt``, ``b.txt`` and ``d/``."""

    def __init__(self) -> None:
        self.fs = MemoryFileSystem(cwd="/w", files={"a.txt": "alpha\n", "b.txt": "beta\n"})
        self.fs.mkdir("d")
        self.policy = FsPolicy()
        self.pm: pluggy.PluginManager = make_plugin_manager()
        self.pm.register(self.policy)

    async def read(self, actor: Any, path: str) -> str | None:
        """What the read tool does: stat, then ``fs_observed`` (``None`` when absent)."""
        target = await self.fs.resolve(path)
        info = await self.fs.stat(target)
        version = None if info is None else info.version
        self.pm.hook.fs_observed(target=target, version=version, actor=actor)
        return version

    async def delete_intent(self, actor: Any, path: str) -> Any:
        target = await self.fs.resolve(path)
        return self.pm.hook.fs_delete_intent(target=target, actor=actor)

    async def move_intent(self, actor: Any, source: str, destination: str) -> Any:
        src, dst = await self.fs.resolve(source), await self.fs.resolve(destination)
        return self.pm.hook.fs_move_intent(source=src, destination=dst, actor=actor)

    async def delete(self, actor: Any, path: str) -> FsTarget:
        """What a removing tool does: the intent, ``delete``, then ``fs_observed(…, None)``."""
        target = await self.fs.resolve(path)
        guard = self.pm.hook.fs_delete_intent(target=target, actor=actor)
        await self.fs.delete(target, expected=guard)
        self.pm.hook.fs_observed(target=target, version=None, actor=actor)
        return target


# -- the intents ------------------------------------------------------------------------


async def test_delete_of_an_observed_entry_is_guarded_by_its_observed_version() -> None:
    stack = Stack()
    actor = actor_of(Owner())
    version = await stack.read(actor, "a.txt")
    assert version is not None
    assert await stack.delete_intent(actor, "a.txt") == AtVersion(version)


async def test_delete_of_an_unobserved_entry_asks_that_it_is_not_a_file() -> None:
    stack = Stack()
    assert await stack.delete_intent(actor_of(Owner()), "a.txt") == NotAFile()


async def test_delete_of_an_entry_seen_absent_asks_that_it_is_not_a_file() -> None:
    stack = Stack()
    actor = actor_of(Owner())
    assert await stack.read(actor, "gone.txt") is None
    assert await stack.delete_intent(actor, "gone.txt") == NotAFile()


async def test_without_an_owner_nothing_authorizes_a_removal() -> None:
    stack = Stack()
    await stack.read(actor_of(None), "a.txt")
    assert await stack.delete_intent(actor_of(None), "a.txt") == NotAFile()


async def test_one_owners_observation_never_authorizes_another() -> None:
    stack = Stack()
    reader, other = actor_of(Owner()), actor_of(Owner())
    version = await stack.read(reader, "a.txt")
    assert version is not None
    assert await stack.delete_intent(other, "a.txt") == NotAFile()
    assert await stack.move_intent(other, "a.txt", "c.txt") == MoveGuard(NotAFile(), NotAFile())
    assert await stack.delete_intent(reader, "a.txt") == AtVersion(version)


async def test_move_guards_each_side_by_what_its_owner_observed() -> None:
    stack = Stack()
    actor = actor_of(Owner())
    a, b = await stack.read(actor, "a.txt"), await stack.read(actor, "b.txt")
    assert a is not None and b is not None
    assert await stack.move_intent(actor, "a.txt", "b.txt") == MoveGuard(AtVersion(a), AtVersion(b))
    assert await stack.move_intent(actor, "a.txt", "new.txt") == MoveGuard(AtVersion(a), NotAFile())
    assert await stack.move_intent(actor, "d", "b.txt") == MoveGuard(NotAFile(), AtVersion(b))


# -- with the backend ------------------------------------------------------------------------


async def test_a_never_read_file_is_not_removed() -> None:
    stack = Stack()
    await expect_fs_error(
        stack.delete(actor_of(Owner()), "a.txt"),
        FsErrorCode.FS_NOT_OBSERVED,
        'cannot delete "/w/a.txt" without reading it first',
    )
    assert stack.fs.get_bytes("a.txt") == b"alpha\n"


async def test_a_file_read_at_its_current_version_is_removed() -> None:
    stack = Stack()
    actor = actor_of(Owner())
    await stack.read(actor, "a.txt")
    await stack.delete(actor, "a.txt")
    assert stack.fs.names() == ["b.txt", "d"]


async def test_a_file_changed_since_it_was_read_is_not_removed() -> None:
    stack = Stack()
    actor = actor_of(Owner())
    await stack.read(actor, "a.txt")
    stack.fs.put_text("a.txt", "changed behind the model's back\n")
    await expect_fs_error(
        stack.delete(actor, "a.txt"),
        FsErrorCode.FS_STALE_VERSION,
        'cannot delete "/w/a.txt": file changed since it was read',
    )
    assert stack.fs.get_bytes("a.txt") == b"changed behind the model's back\n"


async def test_a_directory_is_removed_unread() -> None:
    stack = Stack()
    await stack.delete(actor_of(Owner()), "d")
    assert stack.fs.names() == ["a.txt", "b.txt"]


async def test_after_a_removal_the_owner_may_create_the_file_again_but_not_clobber_one() -> None:
    stack = Stack()
    actor = actor_of(Owner())
    await stack.read(actor, "a.txt")
    target = await stack.delete(actor, "a.txt")
    assert stack.pm.hook.fs_write_intent(target=target, actor=actor) == CreateIfAbsent()
    assert stack.policy.observed_absent(actor.session, target.target_key)


async def test_a_move_onto_an_unread_file_is_refused_and_onto_a_read_one_allowed() -> None:
    stack = Stack()
    actor = actor_of(Owner())
    await stack.read(actor, "a.txt")
    src, dst = await stack.fs.resolve("a.txt"), await stack.fs.resolve("b.txt")
    guard = await stack.move_intent(actor, "a.txt", "b.txt")
    await expect_fs_error(
        stack.fs.move(src, dst, replace=True, expected=guard),
        FsErrorCode.FS_NOT_OBSERVED,
        'cannot overwrite existing "/w/b.txt" without reading it first',
    )
    await stack.read(actor, "b.txt")
    guard = await stack.move_intent(actor, "a.txt", "b.txt")
    outcome = await stack.fs.move(src, dst, replace=True, expected=guard)
    assert outcome.replaced
    assert stack.fs.files() == {"/w/b.txt": b"alpha\n"}
