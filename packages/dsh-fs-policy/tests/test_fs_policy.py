"""FsPolicy through a pluggy manager, on MemoryFileSystem: every rule of SPEC 4."""

from __future__ import annotations

import gc
from types import SimpleNamespace
from typing import Any

import pluggy
import pytest
from dsh_fs import (
    CreateIfAbsent,
    EditGuard,
    FsEditRequest,
    FsError,
    FsErrorCode,
    FsTarget,
    ReplaceIfVersion,
    hookimpl,
    make_plugin_manager,
)
from dsh_fs_memory import MemoryFileSystem
from dsh_fs_policy import FsPolicy

pytestmark = pytest.mark.anyio


class Owner:
    """A stand-in for a tool host's session: hashable by identity, weakly referenceable."""


def actor_of(owner: Any) -> SimpleNamespace:
    return SimpleNamespace(session=owner, tool="test")


class Stack:
    def __init__(self, *plugins: object) -> None:
        self.fs = MemoryFileSystem(cwd="/w", files={"/w/a.txt": "alpha\n"})
        self.policy = FsPolicy()
        self.pm: pluggy.PluginManager = make_plugin_manager()
        self.pm.register(self.policy)
        for plugin in plugins:
            self.pm.register(plugin)

    async def target(self, path: str = "a.txt") -> FsTarget:
        return await self.fs.resolve(path)

    async def observe(self, actor: Any, path: str = "a.txt") -> str:
        """What the read tool does after a successful read: stat, then fs_observed."""
        target = await self.target(path)
        info = await self.fs.stat(target)
        assert info is not None
        self.pm.hook.fs_observed(target=target, version=info.version, actor=actor)
        return info.version

    async def read(self, actor: Any, path: str = "a.txt") -> str | None:
        """What the read tool does: stat, then fs_observed — with ``None`` when absent."""
        target = await self.target(path)
        info = await self.fs.stat(target)
        version = None if info is None else info.version
        self.pm.hook.fs_observed(target=target, version=version, actor=actor)
        return version

    def write_intent(self, target: FsTarget, actor: Any) -> Any:
        return self.pm.hook.fs_write_intent(target=target, actor=actor)

    def edit_intent(self, target: FsTarget, actor: Any) -> Any:
        return self.pm.hook.fs_edit_intent(target=target, actor=actor)


async def test_write_without_observation_is_create_if_absent() -> None:
    stack = Stack()
    target = await stack.target("new.txt")
    assert stack.write_intent(target, actor_of(Owner())) == CreateIfAbsent()


async def test_create_without_observation_succeeds() -> None:
    stack = Stack()
    actor = actor_of(Owner())
    target = await stack.target("new.txt")
    outcome = await stack.fs.write_text(target, "x", stack.write_intent(target, actor))
    assert outcome.operation == "create"


async def test_overwrite_without_observation_fails_not_observed() -> None:
    stack = Stack()
    target = await stack.target()
    with pytest.raises(FsError) as info:
        await stack.fs.write_text(target, "x", stack.write_intent(target, actor_of(Owner())))
    assert info.value.code == FsErrorCode.FS_NOT_OBSERVED
    assert str(info.value) == 'cannot overwrite existing "/w/a.txt" without reading it first'
    assert stack.fs.get_bytes("/w/a.txt") == b"alpha\n"


async def test_write_after_observation_is_replace_if_version() -> None:
    stack = Stack()
    actor = actor_of(Owner())
    version = await stack.observe(actor)
    target = await stack.target()
    assert stack.write_intent(target, actor) == ReplaceIfVersion(version)
    outcome = await stack.fs.write_text(target, "beta\n", stack.write_intent(target, actor))
    assert outcome.operation == "update"


async def test_edit_without_observation_fails_with_the_exact_message() -> None:
    stack = Stack()
    target = await stack.target()
    with pytest.raises(FsError) as info:
        stack.edit_intent(target, actor_of(Owner()))
    assert info.value.code == FsErrorCode.FS_NOT_OBSERVED
    assert str(info.value) == 'edit requires reading "/w/a.txt" first'


async def test_edit_after_observation_is_guarded_by_the_observed_version() -> None:
    stack = Stack()
    actor = actor_of(Owner())
    version = await stack.observe(actor)
    target = await stack.target()
    guard = stack.edit_intent(target, actor)
    assert guard == EditGuard(version)
    outcome = await stack.fs.edit_text(target, FsEditRequest("alpha", "beta"), guard)
    assert outcome.after == "beta\n"


async def test_observing_the_mutation_outcome_authorizes_the_next_edit() -> None:
    stack = Stack()
    actor = actor_of(Owner())
    target = await stack.target("new.txt")
    outcome = await stack.fs.write_text(target, "one\n", stack.write_intent(target, actor))
    stack.pm.hook.fs_observed(target=target, version=outcome.version, actor=actor)
    guard = stack.edit_intent(target, actor)
    assert guard == EditGuard(outcome.version)
    edited = await stack.fs.edit_text(target, FsEditRequest("one", "two"), guard)
    stack.pm.hook.fs_observed(target=target, version=edited.version, actor=actor)
    assert stack.edit_intent(target, actor) == EditGuard(edited.version)


async def test_a_change_behind_the_back_makes_the_guarded_write_stale() -> None:
    stack = Stack()
    actor = actor_of(Owner())
    await stack.observe(actor)
    stack.fs.put_text("/w/a.txt", "changed\n")
    target = await stack.target()
    with pytest.raises(FsError) as info:
        await stack.fs.write_text(target, "mine\n", stack.write_intent(target, actor))
    assert info.value.code == FsErrorCode.FS_STALE_VERSION
    assert str(info.value) == 'cannot write "/w/a.txt": file changed since it was read'
    with pytest.raises(FsError) as edit_info:
        await stack.fs.edit_text(
            target, FsEditRequest("changed", "x"), stack.edit_intent(target, actor)
        )
    assert str(edit_info.value) == 'cannot edit "/w/a.txt": file changed since it was read'


async def test_a_read_that_found_nothing_makes_the_write_create_if_absent() -> None:
    stack = Stack()
    actor = actor_of(Owner())
    await stack.observe(actor)
    stack.fs.remove("/w/a.txt")
    assert await stack.read(actor) is None
    target = await stack.target()
    assert stack.write_intent(target, actor) == CreateIfAbsent()
    assert stack.policy.observed_absent(actor.session, target.target_key)


async def test_an_edit_after_a_read_that_found_nothing_is_not_found() -> None:
    stack = Stack()
    actor = actor_of(Owner())
    await stack.read(actor, "gone.txt")
    target = await stack.target("gone.txt")
    with pytest.raises(FsError) as info:
        stack.edit_intent(target, actor)
    assert info.value.code == FsErrorCode.FS_NOT_FOUND
    assert str(info.value) == 'cannot edit "/w/gone.txt": not found'


async def test_absence_never_authorizes_overwriting_a_file_that_appeared_since() -> None:
    stack = Stack()
    actor = actor_of(Owner())
    await stack.read(actor, "new.txt")
    stack.fs.put_text("/w/new.txt", "someone else's\n")
    target = await stack.target("new.txt")
    with pytest.raises(FsError) as info:
        await stack.fs.write_text(target, "mine\n", stack.write_intent(target, actor))
    assert info.value.code == FsErrorCode.FS_NOT_OBSERVED
    assert str(info.value) == 'cannot overwrite existing "/w/new.txt" without reading it first'
    assert stack.fs.get_bytes("/w/new.txt") == b"someone else's\n"


async def test_a_deleted_file_is_recreated_edited_and_deleted_again() -> None:
    stack = Stack()
    actor = actor_of(Owner())
    target = await stack.target()
    version = await stack.read(actor)  # 1. present
    assert version is not None
    assert stack.write_intent(target, actor) == ReplaceIfVersion(version)
    stack.fs.remove("/w/a.txt")
    with pytest.raises(FsError, match="file no longer exists"):  # stuck until read again
        await stack.fs.write_text(target, "x\n", stack.write_intent(target, actor))
    assert await stack.read(actor) is None  # 2. absent (read)
    created = await stack.fs.write_text(target, "one\n", stack.write_intent(target, actor))
    assert created.operation == "create"  # 3. recreated by write
    stack.pm.hook.fs_observed(target=target, version=created.version, actor=actor)
    read_version = await stack.read(actor)  # 4. edited after a read
    assert read_version is not None
    guard = stack.edit_intent(target, actor)
    assert guard == EditGuard(read_version)
    edited = await stack.fs.edit_text(target, FsEditRequest("one", "two"), guard)
    stack.pm.hook.fs_observed(target=target, version=edited.version, actor=actor)
    assert stack.fs.get_bytes("/w/a.txt") == b"two\n"
    stack.fs.remove("/w/a.txt")  # 5. deleted again
    assert await stack.read(actor) is None
    with pytest.raises(FsError) as info:
        stack.edit_intent(target, actor)
    assert info.value.code == FsErrorCode.FS_NOT_FOUND
    again = await stack.fs.write_text(target, "three\n", stack.write_intent(target, actor))
    assert again.operation == "create"


async def test_a_read_that_found_nothing_authorizes_no_other_owner() -> None:
    stack = Stack()
    a, b = actor_of(Owner()), actor_of(Owner())
    await stack.read(a, "gone.txt")
    target = await stack.target("gone.txt")
    with pytest.raises(FsError) as info:
        stack.edit_intent(target, b)
    assert info.value.code == FsErrorCode.FS_NOT_OBSERVED


async def test_the_same_file_through_another_path_shares_the_observation() -> None:
    stack = Stack()
    actor = actor_of(Owner())
    version = await stack.observe(actor, "/w/a.txt")
    other = await stack.fs.resolve("/w/./sub/../a.txt")
    assert stack.edit_intent(other, actor) == EditGuard(version)


async def test_owner_a_never_authorizes_owner_b() -> None:
    stack = Stack()
    a, b = actor_of(Owner()), actor_of(Owner())
    await stack.observe(a)
    target = await stack.target()
    assert stack.write_intent(target, b) == CreateIfAbsent()
    with pytest.raises(FsError, match="edit requires reading"):
        stack.edit_intent(target, b)
    assert isinstance(stack.edit_intent(target, a), EditGuard)


@pytest.mark.parametrize("actor", [None, object(), SimpleNamespace(session=None)])
async def test_without_an_owner_nothing_is_recorded_or_authorized(actor: Any) -> None:
    stack = Stack()
    await stack.observe(actor)
    target = await stack.target()
    assert stack.policy.owner_count() == 0
    assert stack.write_intent(target, actor) == CreateIfAbsent()
    with pytest.raises(FsError) as info:
        stack.edit_intent(target, actor)
    assert info.value.code == FsErrorCode.FS_NOT_OBSERVED


async def test_a_discarded_owner_frees_its_state() -> None:
    stack = Stack()
    owner = Owner()
    await stack.observe(actor_of(owner))
    assert stack.policy.owner_count() == 1
    del owner
    gc.collect()
    assert stack.policy.owner_count() == 0


async def test_reset_drops_all_state() -> None:
    stack = Stack()
    owner = Owner()
    actor = actor_of(owner)
    await stack.observe(actor)
    stack.policy.reset()
    target = await stack.target()
    assert stack.write_intent(target, actor) == CreateIfAbsent()
    assert stack.policy.owner_count() == 0


async def test_a_new_instance_starts_empty() -> None:
    stack = Stack()
    owner = Owner()
    actor = actor_of(owner)
    await stack.observe(actor)
    stack.pm.unregister(stack.policy)
    fresh = FsPolicy()
    stack.pm.register(fresh)
    target = await stack.target()
    assert stack.write_intent(target, actor) == CreateIfAbsent()
    assert fresh.owner_count() == 0


class LaterDecider:
    """A decider that must never be reached while the policy is registered."""

    def __init__(self) -> None:
        self.asked = 0

    @hookimpl
    def fs_write_intent(self, target: FsTarget, actor: Any) -> Any:
        self.asked += 1
        return ReplaceIfVersion("from-later-decider")

    @hookimpl
    def fs_edit_intent(self, target: FsTarget, actor: Any) -> Any:
        self.asked += 1
        return EditGuard("from-later-decider")


async def test_the_policy_is_the_first_decider_even_when_registered_first() -> None:
    later = LaterDecider()
    stack = Stack(later)  # registered after the policy: pluggy would ask it first
    actor = actor_of(Owner())
    target = await stack.target()
    assert stack.write_intent(target, actor) == CreateIfAbsent()
    with pytest.raises(FsError):
        stack.edit_intent(target, actor)
    assert later.asked == 0


async def test_the_policy_answers_before_a_decider_registered_earlier() -> None:
    later = LaterDecider()
    pm = make_plugin_manager()
    pm.register(later)
    pm.register(FsPolicy())
    fs = MemoryFileSystem(cwd="/w")
    target = await fs.resolve("a.txt")
    assert pm.hook.fs_write_intent(target=target, actor=actor_of(Owner())) == CreateIfAbsent()
    assert later.asked == 0


def test_the_hooks_are_marked_tryfirst() -> None:
    pm = make_plugin_manager()
    policy = FsPolicy()
    pm.register(policy)
    for name in ("fs_write_intent", "fs_edit_intent"):
        impls = getattr(pm.hook, name).get_hookimpls()
        assert [impl.tryfirst for impl in impls if impl.plugin is policy] == [True]


def test_observed_version_reads_the_record() -> None:
    policy = FsPolicy()
    owner = Owner()
    target = FsTarget("/k", "/k")
    policy.fs_observed(target=target, version="v1", actor=actor_of(owner))
    assert policy.observed_version(owner, "/k") == "v1"
    assert policy.observed_version(owner, "/other") is None
    assert policy.observed_version(None, "/k") is None
    assert not policy.observed_absent(owner, "/k")


def test_observed_absent_reads_a_record_of_absence() -> None:
    policy = FsPolicy()
    owner = Owner()
    target = FsTarget("/k", "/k")
    policy.fs_observed(target=target, version=None, actor=actor_of(owner))
    assert policy.observed_absent(owner, "/k")
    assert policy.observed_version(owner, "/k") is None
    assert not policy.observed_absent(owner, "/other")
    assert not policy.observed_absent(None, "/k")
    policy.fs_observed(target=target, version="v2", actor=actor_of(owner))
    assert not policy.observed_absent(owner, "/k")
